"""Syntax newer than the running CPython, blanked so that CPython's parser reads the rest.

Python 3.12 added syntax that 3.11's parser rejects and libcst reads: type parameters and
``type`` statements (PEP 695), and f-strings whose replacement fields hold the f-string's own
quotes, backslashes or comments (PEP 701).  Under 3.11 such a file has no CPython tree.
:func:`blanked` gives its text with each of those constructs replaced by filler of the same
extent: a ``type`` statement by ``pass``, type parameters by spaces, an f-string by a plain
string of spaces.  Every other character stays where it was, on its line and at its column,
and a non-ASCII character inside the filler is kept as it is (a string may hold it) so that
byte columns stay too: CPython's tree of the blanked text places every other node as in the
file, and the engine analyses it as any file (``nanlint.source.syntax.precheck``), quoting
and fixing the file's own text.  What the filler replaces is not analysed: a type annotation
holds no hazard, an f-string's expressions (a message) rarely do.
"""

from __future__ import annotations

import re

import libcst as cst

from nanlint.source.codegen import _NEWLINE, positions  # libcst's line breaks, by which its positions count lines

_PREFIX = re.compile(r"[A-Za-z]*")


def blanked(module: cst.Module, text: str) -> str | None:
    """``text`` (whose libcst tree is ``module``) with its ``type`` statements, type
    parameters and f-strings replaced by filler of the same extent; None when a construct
    cannot be (type parameters over several lines, a single-quoted f-string over several
    lines: filler there would move lines or end a string)."""
    found: list[cst.CSTNode] = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if type(node).__name__ in ("TypeAlias", "TypeParameters") or isinstance(node, cst.FormattedString):
                found.append(node)
                return False  # the outermost: what it holds goes with it
            return True

    module.visit(Collect())
    if not found:
        return None
    starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]
    where = positions(module)
    chars = list(text)
    for node in found:
        r = where[node]
        a = starts[r.start.line - 1] + r.start.column
        b = starts[r.end.line - 1] + r.end.column
        span = text[a:b]
        multiline = _NEWLINE.search(span) is not None
        for i in range(a, b):
            c = chars[i]
            if c.isascii() and c not in "\r\n":
                chars[i] = " "
        kind = type(node).__name__
        if kind == "TypeAlias":
            chars[a:a + 4] = "pass"
        elif kind == "TypeParameters":
            if multiline:
                return None
        else:
            quote = span[_PREFIX.match(span).end():]  # type: ignore[union-attr]
            k = 3 if quote[:3] in ('"""', "'''") else 1
            if multiline and k == 1 or b - a < 2 * k:
                return None
            chars[a:a + k] = chars[b - k:b] = '"' * k
    return "".join(chars)
