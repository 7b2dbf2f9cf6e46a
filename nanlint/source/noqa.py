"""``# noqa`` directives, as written: the codes a line's ``# noqa`` lists, a file's
``# nanlint: noqa``, and each line directive as a libcst comment (NAN002 reads them).
What they silence is applied by :mod:`nanlint.lint.noqa`."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Callable, Iterable

import libcst as cst

from nanlint.source.walk import child_nodes, node_types

_CODES = r"[\w-]+(?:(?:[ \t]*,[ \t]*|[ \t]+)[\w-]+)*"
NOQA = re.compile(r"#\s*noqa(?::[ \t]*(?P<codes>" + _CODES + "))?", re.IGNORECASE)
_FILE = re.compile(r"^[ \t]*#[ \t]*nanlint[ \t]*:[ \t]*noqa"
                   r"(?:[ \t]*:[ \t]*(?P<codes>" + _CODES + r"))?[ \t]*\r?$",
                   re.IGNORECASE | re.MULTILINE)
NAN_CODE = re.compile(r"^NAN\d{3}$", re.IGNORECASE)


def may_hold(text: str) -> bool:
    """Whether ``text`` can hold a directive (``noqa`` in any case, as :data:`NOQA` and the
    file directive match it): else there is none for NAN002 to judge.  Remembered for the
    last text (the prefilter, the site filter and the engine ask of the same one)."""
    if _LAST[0] is not text:
        _LAST[:] = [text, "noqa" in text.lower()]  # 8x faster than a case-insensitive search
    return _LAST[1]


_LAST: list = [None, False]


def noqa_codes(line: str) -> set[str] | None:
    """None: no noqa; empty set: a blanket ``# noqa``; else the codes/names listed (upper case)."""
    m = NOQA.search(line)
    if m is None:
        return None
    codes = m.group("codes")
    if not codes:
        return set()
    return {c.strip().upper() for c in re.split(r"[\s,]+", codes) if c.strip()}


ALL = "ALL"


def file_directive(text: str | bytes) -> set[str] | str | None:
    """``ALL`` for ``# nanlint: noqa`` (skip the file), the set of codes for
    ``# nanlint: noqa: CODE, ...``, None when the file has neither."""
    if isinstance(text, bytes):
        if b"nanlint" not in text.lower():
            return None
        text = text.decode("utf-8", "replace")
    elif "nanlint" not in text.lower():
        return None
    codes: set[str] = set()
    for m in _FILE.finditer(text):
        if not m.group("codes"):
            return ALL
        codes.update(c.upper() for c in re.split(r"[\s,]+", m.group("codes")) if c)
    return codes or None


def matches(codes: Iterable[str], code: str, name: str) -> bool:
    codes = set(codes)
    return code.upper() in codes or name.upper() in codes


# --- line directives, as libcst comments ---------------------------------------------------
@dataclass(eq=False)
class Directive:
    row: int
    comment: cst.Comment | None  # None: read from tokens (a module made from CPython's tree)
    parent: cst.CSTNode | None  # the TrailingWhitespace or EmptyLine holding the comment
    codes: list[str] | None  # None: blanket; else the codes as written
    span: tuple[int, int]  # the ``# noqa...`` part within comment.value
    used: set[str] = field(default_factory=set)  # upper-case codes that suppressed a finding

    @property
    def blanket(self) -> bool:
        return self.codes is None

    def suppresses(self, code: str, name: str) -> str | None:
        """The code as written that suppresses (code, name), '' for a blanket noqa, or None."""
        if self.codes is None:
            return ""
        for c in self.codes:
            if c.upper() in (code.upper(), name.upper()):
                return c
        return None


def directives(module: cst.Module, positions) -> dict[int, Directive]:
    """Row -> the ``# noqa`` comment on it (real comments only, never text in a string), in
    the order of the rows; ``positions``: the module's node -> code range map (asked only for
    the statements holding such a comment: :mod:`nanlint.source.positions`)."""
    lines = node_types("TrailingWhitespace", "EmptyLine")
    found = []
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        if isinstance(node, lines) and node.comment is not None and "noqa" in node.comment.value.lower():  # type: ignore[attr-defined]
            found.append((node.comment, node))  # type: ignore[attr-defined]
        else:
            stack.extend(child_nodes(node))
    out: dict[int, Directive] = {}
    for row, comment, parent in sorted(((positions[c].start.line, c, p) for c, p in found), key=lambda t: t[0]):
        d = line_directive(row, comment.value, comment, parent)
        if d is not None:
            out[row] = d
    return out


def line_directive(row: int, text: str, comment: cst.Comment | None = None,
                   parent: cst.CSTNode | None = None) -> Directive | None:
    """The directive a comment ``text`` on line ``row`` writes, if any (``comment`` and
    ``parent``: its libcst nodes, which NAN002's fix edits; None when read from tokens)."""
    m = NOQA.search(text)
    if m is None or _FILE.match(text):
        return None
    codes = None
    if m.group("codes"):
        codes = [c for c in re.split(r"[\s,]+", m.group("codes")) if c]
    return Directive(row, comment, parent, codes, m.span())  # type: ignore[arg-type]


def from_tokens(text: str, line: Callable[[int], str],
                place: Callable[[cst.CSTNode, int, int, int], None]) -> dict[int, Directive]:
    """Row -> the ``# noqa`` comment on it, as :func:`directives` gives it, for a module
    made from CPython's tree (which holds no comment): read from the tokens of ``text``, each
    comment and the line holding it made as the libcst nodes libcst's parse has there (a
    ``TrailingWhitespace`` after code, an ``EmptyLine`` on a line of its own).
    ``line(row)``: the text of a line (CPython's lines); ``place(node, row, start, end)``
    notes where a node made here is (character columns)."""
    out: dict[int, Directive] = {}
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type != tokenize.COMMENT or "noqa" not in tok.string.lower():
            continue
        (row, start), end = tok.start, tok.end[1]
        before = line(row)[:start]
        comment = cst.Comment(tok.string)
        gap = cst.SimpleWhitespace(before[len(before.rstrip(" \t\f")):])
        if before.strip():
            parent: cst.CSTNode = cst.TrailingWhitespace(whitespace=gap, comment=comment)
        else:
            parent = cst.EmptyLine(indent=False, whitespace=cst.SimpleWhitespace(before), comment=comment)
        d = line_directive(row, tok.string, comment, parent)
        if d is not None:
            place(comment, row, start, end)
            place(parent, row, start, end)
            out[row] = d
    return out
