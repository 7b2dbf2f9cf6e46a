"""What every format reads: the :class:`Run` of one invocation (its findings, fixes,
paths as shown) and the pieces several formats share (statistics rows, the fixes text,
rule URLs, colour)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import libcst as cst

from nanlint.findings import Finding
from nanlint.lint.notebook import cell_text
from nanlint.rules.base import by_code as rules_by_code
from nanlint.source.lines import split_lines

# Where the rule pages and the project are published, once they are (docs/RELEASING.md):
# no output links to an address that does not exist.  Until then JSON's ``url`` is null,
# SARIF has no helpUri/informationUri (its rules embed the whole page as ``help``) and
# `nanlint rule CODE` prints a page.
URL: str | None = None  # e.g. "https://HOST/OWNER/nanlint/blob/main/rules/{code}-{name}.md"
HOMEPAGE: str | None = None


def rule_url(code: str, name: str) -> str | None:
    return URL.format(code=code, name=name) if URL else None


@dataclass
class Run:
    """Everything a report needs about one invocation."""

    findings: list[Finding]
    fixed: int = 0
    unsafe_fixes: bool = False
    fix_mode: bool = False
    errors: list[str] = field(default_factory=list)
    files: int = 0
    cwd: Path = field(default_factory=Path.cwd)
    color: bool = False
    show_fixes: bool = False
    fixes_by_file: dict[str, dict[str, int]] = field(default_factory=dict)  # path -> code -> count
    # the paths given were files (pre-commit names a batch of them): a clean run counts
    # them rather than saying "All checks passed!", which would read as the verdict of all batches
    explicit_files: bool = False
    excluded: int = 0  # files named but excluded (--force-exclude)
    hidden: int = 0  # findings on weak evidence not shown (the may tier was not asked for)
    opt_in: list[str] = field(default_factory=list)  # opt-in rules not run whose ops the files hold
    _sources: dict = field(default_factory=dict, repr=False)

    def display_path(self, path: str) -> str:
        p = Path(path)
        try:
            return p.absolute().relative_to(self.cwd).as_posix()
        except ValueError:
            return path

    def location(self, f: Finding, row: int | None = None, col: int | None = None) -> str:
        """``path:line:col`` or, in a notebook, ``path:cell N:line L:col C``."""
        row = f.start[0] if row is None else row
        col = f.start[1] if col is None else col
        if f.cell is not None:
            return f"{self.display_path(f.path)}:cell {f.cell}:line {row}:col {col}"
        return f"{self.display_path(f.path)}:{row}:{col}"

    def set_source(self, path: str, source: bytes) -> None:
        """Give the source of ``path`` (standard input: not on disk, or not as read)."""
        self._sources[(path, None)] = split_lines(source.decode("utf-8", "replace"))

    def source_lines(self, f: Finding) -> list[str] | None:
        """The lines of the file (or notebook cell) the finding is in, as they are now."""
        key = (f.path, f.cell)
        if key not in self._sources:
            self._sources[key] = _read_lines(f.path, f.cell)
        return self._sources[key]


def _read_lines(path: str, cell: int | None) -> list[str] | None:
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    if cell is not None:
        try:
            cells = json.loads(data.decode("utf-8-sig"))["cells"]
            return split_lines(cell_text(cells[cell - 1].get("source", "")))
        except (ValueError, KeyError, IndexError, TypeError):
            return None
    try:
        return split_lines(cst.parse_module(data).code)
    except Exception:  # noqa: BLE001 - any file that does not parse: best effort
        return split_lines(data.decode("utf-8", "replace"))


def use_color(stream: IO | None, environ=None) -> bool:
    """Colour on a terminal only; ``NO_COLOR`` (any non-empty value) turns it off,
    ``FORCE_COLOR`` (non-empty, not ``0``) turns it on even when not a terminal."""
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    force = env.get("FORCE_COLOR")
    if force and force != "0":
        return True
    try:
        return bool(stream is not None and stream.isatty())
    except (AttributeError, ValueError):
        return False


def statistics_rows(run: Run) -> list[tuple[str, str, int, bool]]:
    """(code, name, count, fixable) per rule, most frequent first."""
    by_code: dict[str, list[Finding]] = {}
    for f in run.findings:
        by_code.setdefault(f.code, []).append(f)
    rows = [(code, fs[0].name, len(fs), any(f.fixable(run.unsafe_fixes) for f in fs))
            for code, fs in by_code.items()]
    return sorted(rows, key=lambda r: (-r[2], r[0]))


def fixes_text(run: Run) -> str:
    """``--show-fixes``: what ``--fix`` changed, per file and rule."""
    if not run.fixes_by_file:
        return ""
    total = sum(sum(c.values()) for c in run.fixes_by_file.values())
    lines = [f"Fixed {total} finding{'s' if total != 1 else ''}:"]

    rules = rules_by_code()
    for path in sorted(run.fixes_by_file):
        lines.append(f"- {run.display_path(path)}:")
        for code, n in sorted(run.fixes_by_file[path].items()):
            name = rules[code].name if code in rules else ""
            lines.append(f"    {n} \u00d7 {code} ({name})" if name else f"    {n} \u00d7 {code}")
    return "\n".join(lines) + "\n"
