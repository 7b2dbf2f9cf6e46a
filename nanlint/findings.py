"""What a lint produces, as data: a finding, its edits, one file's result, and the
applicabilities of a fix (as in ruff: safe, unsafe, display-only). Every layer may
import this module; it imports none of nanlint's."""

from __future__ import annotations

from dataclasses import dataclass, field

SAFE, UNSAFE, DISPLAY_ONLY = "safe", "unsafe", "display-only"
APPLICABILITIES = (SAFE, UNSAFE, DISPLAY_ONLY)
PARSE_ERROR = ("NAN001", "parse-error")  # the code and name of a file that does not parse


def allowed(applicability: str, unsafe: bool) -> bool:
    """Whether a fix of this applicability is applied (``unsafe``: with --unsafe-fixes)."""
    return applicability == SAFE or (unsafe and applicability == UNSAFE)


@dataclass
class Edit:
    content: str
    start: tuple[int, int]  # (row, column), 1-based
    end: tuple[int, int]


@dataclass
class Finding:
    code: str
    name: str
    message: str
    path: str
    start: tuple[int, int]  # (row, column), 1-based like ruff
    end: tuple[int, int]
    fix_applicability: str | None = None
    fix_message: str | None = None
    edits: list[Edit] = field(default_factory=list)
    snippet: str = ""  # the flagged source text (baseline fingerprints)
    cell: int | None = None  # notebooks: the cell number (rows are then within the cell)
    may: bool = False  # on weak evidence: reported only with the may tier (``--may``)
    # the fix has edits this run did not build (a check whose report shows none: the file
    # was not parsed with libcst, whose rewrite they are)
    edits_omitted: bool = False

    @property
    def noqa_row(self) -> int:
        return self.start[0]

    @property
    def has_edits(self) -> bool:
        """The fix has edits, whether this run built them or not."""
        return bool(self.edits) or self.edits_omitted

    def fixable(self, unsafe: bool) -> bool:
        return self.has_edits and allowed(self.fix_applicability or "", unsafe)

    def sort_key(self):
        return (self.path, self.cell or 0, self.start, self.code)


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    fixed: int = 0  # fixes applied
    fixed_codes: dict[str, int] = field(default_factory=dict)  # code -> fixes applied
    fixed_source: bytes | None = None  # new content when fixes changed it
    error: str | None = None  # a one-line error (the file could not be read or fixed)
    skipped: bool = False  # no enabled rule's triggers are in the file: it was not parsed with libcst
    reduced: bool = False  # a large file of which only the statements that can hold a finding were parsed
    hidden: int = 0  # findings on weak evidence not shown (the may tier was not asked for)
    opt_in: list[str] = field(default_factory=list)  # opt-in rules not run whose ops the file's text holds
