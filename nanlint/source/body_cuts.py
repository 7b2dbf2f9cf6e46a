"""A def or class larger than a chunk, compiled a slice of its body at a time.

:mod:`nanlint.source.chunks` cuts a large file between top-level statements; a generated
``def build(x):`` of 10 MB is one statement, and its tree alone was 2 GB.  Its body is cut at
line starts where a statement of the body begins (at the body's own indentation, at bracket
depth 0, outside strings, not after a backslash, not an ``else``/``elif``/``except``/
``finally``), about ``target`` characters apart, and each slice is compiled inside the
statement's own header: the first slice is the statement's text up to the first cut, slice k
is the header, blank lines standing for what lies between, and the body from cut k to the
next, so its lines are the file's.

Why the slices compile exactly when the statement does.  A slice is accepted only when its
tree is one def (or class) of the same kind and name at the same place as the first slice's,
and, from the second on, its body's first statement starts on the cut's line at the first
slice's body indentation.  From such a line on, CPython's tokenizer reads a slice as it reads
the file (the indentation stack is the header's and the body's in both, the cut being outside
any string, bracket or continuation, or the slice before it would not compile), and a body is
a sequence of statements: each slice is whole statements of it.  A clause a cut could split
from its statement (``else:``) cannot start a slice, a decorator cannot end one (neither
compiles).  The statements of all slices are therefore the statements of the body, which is
what compiling it whole proves; when a slice does not compile, the statement is compiled
whole, and a syntax error is CPython's own.
"""

from __future__ import annotations

import ast
import re

from nanlint.source.cuts import Tokens, line_starts, lines_in

_HEAD = re.compile(r"@|(?:async[ \t]+)?def[ \t]|class[ \t]")
_INDENT = re.compile(r"[ \t]*")
_CLAUSE = re.compile(r"(?:else|elif|except|finally)\b")
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_DECORATED = re.compile(r"(?:async[ \t]+)?def\b|class\b|@")


def _after_decorator(text: str, a: int, p: int) -> bool:
    """Whether the last line before ``p`` that is not blank or a comment is a decorator
    (a cut there would part the decorator from its def: the slice would not compile)."""
    end = p
    while end > a:
        start = max(text.rfind("\n", a, end - 1), text.rfind("\r", a, end - 1)) + 1
        line = text[start:end].strip()
        if line and not line.startswith("#"):
            return line.startswith("@")
        end = start
    return False


class BodySlices:
    """A def or class ``[a, b)`` of a text, its body starting at ``body``, cut at ``cuts``."""

    __slots__ = ("a", "body", "cuts", "b")

    def __init__(self, a: int, body: int, cuts: list[int], b: int) -> None:
        self.a, self.body, self.cuts, self.b = a, body, cuts, b

    def sources(self, text: str):
        """Each slice's source: the statement up to the first cut, then the header, blank
        lines for the body before the cut, and the body from the cut to the next."""
        yield text[self.a:self.cuts[0]]
        header = text[self.a:self.body]
        ends = self.cuts[1:] + [self.b]
        for cut, end in zip(self.cuts, ends):
            yield header + "\n" * lines_in(text, self.body, cut) + text[cut:end]


def body_cuts(text: str, a: int, b: int, target: int, tokens: Tokens) -> BodySlices | None:
    """The :class:`BodySlices` of the statement ``[a, b)`` when it is a def or class whose
    body holds two or more cuts about ``target`` apart, else None."""
    if not _HEAD.match(text, a):
        return None
    tokens.read_to(b)
    out: list[int] = []
    indent = None
    body = a

    def skip_to(p: int) -> int | None:  # between cuts: skip to the next
        return out[-1] + target - 1 if out and p < out[-1] + target and b - p > target else None

    for p, depth in line_starts(text, a, b, tokens, skip_to):
        if depth != 0:
            continue
        ws = _INDENT.match(text, p).group()  # type: ignore[union-attr]
        q = p + len(ws)
        if not ws or q >= b or text[q] in "#\r\n":
            continue  # the header's lines (column 0), a blank line, a comment
        if indent is None:
            indent, body = ws, p  # the body's first line
            continue
        if ws != indent or _CLAUSE.match(text, q) or text[max(a, p - 3):p].rstrip("\r\n").endswith("\\") \
                or _DECORATED.match(text, q) and _after_decorator(text, a, p):
            continue
        if p >= (out[-1] if out else body) + target:
            out.append(p)
    if indent is None or not out:
        return None
    return BodySlices(a, body, out, b)


def accepted(tree: ast.Module, k: int, slices: BodySlices, text: str, first: list) -> ast.stmt | None:
    """The def (or class) of slice ``k``'s ``tree`` when the slice is accepted (see the
    module), else None; ``first``: ``[]`` before the first slice, which fills it."""
    if len(tree.body) != 1 or not isinstance(tree.body[0], _DEFS):
        return None
    stmt = tree.body[0]
    if not stmt.body:
        return None
    shape = (type(stmt), stmt.name, stmt.lineno, stmt.col_offset)
    head = stmt.body[0]
    decorators = getattr(head, "decorator_list", ())
    start = min([head.lineno] + [d.lineno for d in decorators])
    col = min([head.col_offset] + [d.col_offset - 1 for d in decorators])
    if k == 0:
        first[:] = [shape, col]
        return stmt
    line = 1 + lines_in(text, slices.a, slices.cuts[k - 1])
    if shape != first[0] or start != line or col != first[1]:
        return None
    return stmt
