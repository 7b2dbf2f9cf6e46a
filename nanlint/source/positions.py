"""Where libcst nodes are in the text, computed one statement at a time.

libcst's ``PositionProvider`` generates the code of the whole module to place every node:
on a model file of a few thousand lines that is ~0.3 s, six times the parse, and it was
paid for one finding's line, or one "``p`` is assigned on line N" note (issue 22: 14 of
the training corpus's 93 profiled seconds).  :class:`Positions` answers ``positions[node]``
with the same ``CodeRange`` by generating the code of one *unit* that holds ``node``: a
statement of the module, or of the body of a ``def`` or ``class`` (a method, a statement
of a method), generated alone with the indentation of the blocks around it (so columns are
the file's), then moved to the unit's line, which CPython's tree of the same text gives:
its ``lineno`` is the first line of the statement proper, as libcst's position is (after
the comments and decorators above a ``def``).  The header of a ``def`` or ``class`` (its
decorators, parameters, bases) belongs to the whole statement.

A level whose statements the two trees do not pair up, a unit whose last line they
disagree on, a node outside every statement (the module's header and footer comments) or
a text CPython does not parse falls back to the whole module's positions: the same
answers, at the old cost.
"""

from __future__ import annotations

import ast
import dataclasses
import warnings

import libcst as cst

from nanlint.source.walk import child_nodes, node_types, positions as whole_positions, unit_positions

_DEFS = {"FunctionDef": (ast.FunctionDef, ast.AsyncFunctionDef), "ClassDef": (ast.ClassDef,)}


class Positions:
    """``node -> CodeRange`` of ``module`` (parsed from ``text``), computed per unit on first
    use; iterating it (every node) computes the whole module's map."""

    def __init__(self, module: cst.Module, text: str) -> None:
        self.module = module
        self.text = text
        self._whole: dict | None = None
        self._owner: dict[int, int] | None = None  # id(node) -> its unit
        self._units: list[tuple[cst.CSTNode, tuple[str, ...], tuple[int, int] | None]] = []
        self._done: dict[int, dict | None] = {}

    def __getitem__(self, node: cst.CSTNode):
        if self._whole is not None:
            return self._whole[node]
        if self._owner is None:
            self._owner = self._build()
        u = self._owner.get(id(node))
        found = self._unit(u) if u is not None else None
        return found[node] if found is not None else self.whole()[node]

    def __iter__(self):
        return iter(self.whole())

    def whole(self) -> dict:
        if self._whole is None:
            self._whole = whole_positions(self.module)
        return self._whole

    def _unit(self, u: int) -> dict | None:
        if u in self._done:
            return self._done[u]
        stmt, indents, lines = self._units[u]
        found = None
        got = unit_positions(self.module, stmt, indents) if lines is not None else None
        if got is not None and stmt in got:
            first, last = lines  # type: ignore[misc]
            r = got[stmt]
            shift = first - r.start.line
            if r.end.line + shift == last:
                found = got if not shift else {n: _moved(c, shift) for n, c in got.items()}
        self._done[u] = found
        return found

    def _build(self) -> dict[int, int]:
        """The units and ``id(node) -> unit`` for every node under the module's statements."""
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                body: list[ast.stmt] | None = ast.parse(self.text).body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            body = None
        block = node_types("IndentedBlock")[0]
        owner: dict[int, int] = {}
        work: list[tuple[list, list[ast.stmt] | None, tuple[str, ...]]] = [(list(self.module.body), body, ())]
        while work:
            stmts, asts, indents = work.pop()
            pairs = _pair(stmts, asts)
            for k, stmt in enumerate(stmts):
                u = len(self._units)
                first, last, twin = pairs[k] if pairs is not None else (0, 0, None)
                self._units.append((stmt, indents, (first, last) if pairs is not None else None))
                inner = getattr(stmt, "body", None) if twin is not None else None
                if not isinstance(inner, block) or not inner.body:
                    _mark(stmt, u, owner)
                    continue
                # a def's or class's header and its block's own nodes are this unit's; the
                # statements of its body are units of their own
                owner[id(stmt)] = u
                for child in child_nodes(stmt):
                    if child is not inner:
                        _mark(child, u, owner)
                owner[id(inner)] = u
                own = {id(s) for s in inner.body}
                for child in child_nodes(inner):
                    if id(child) not in own:
                        _mark(child, u, owner)
                indent = inner.indent if inner.indent is not None else self.module.default_indent
                work.append((list(inner.body), twin.body, indents + (indent,)))  # type: ignore[union-attr]
        return owner


def _mark(root: cst.CSTNode, u: int, owner: dict[int, int]) -> None:
    stack = [root]
    while stack:
        node = stack.pop()
        owner[id(node)] = u
        stack.extend(child_nodes(node))


def _moved(r, shift: int):
    return dataclasses.replace(r, start=dataclasses.replace(r.start, line=r.start.line + shift),
                               end=dataclasses.replace(r.end, line=r.end.line + shift))


def _pair(stmts: list, asts: list[ast.stmt] | None) -> list[tuple[int, int, ast.stmt | None]] | None:
    """For each libcst statement of a body, its first and last line from CPython's statements
    of the same body, and its CPython twin when it is a ``def`` or ``class`` (to pair their
    bodies); a ``SimpleStatementLine`` holds as many of CPython's statements as it has small
    statements (``a = 1; b = 2``).  None when the two do not pair up."""
    if asts is None:
        return None
    simple = node_types("SimpleStatementLine")[0]
    out: list[tuple[int, int, ast.stmt | None]] = []
    j = 0
    for stmt in stmts:
        k = len(stmt.body) if isinstance(stmt, simple) else 1
        if k < 1 or j + k > len(asts):
            return None
        head, tail = asts[j], asts[j + k - 1]
        twins = _DEFS.get(type(stmt).__name__)
        if twins is not None and not isinstance(head, twins):
            return None
        out.append((head.lineno, tail.end_lineno or tail.lineno, head if twins is not None else None))
        j += k
    return out if j == len(asts) else None
