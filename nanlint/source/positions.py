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

A file whose findings and notes ask for more than ``MAX_UNITS`` units gets the whole map
once instead (one pass costs less than that many).  A level whose statements the two trees
do not pair up, a unit whose last line they disagree on, a node outside every statement
(the module's header and footer comments) or a text CPython does not parse falls back to
the whole module's positions: the same answers, at the old cost.
"""

from __future__ import annotations

import ast
import warnings
from typing import Callable

import libcst as cst

from nanlint.source.codegen import positions as whole_positions, unit_positions
from nanlint.source.ast_tree import compile_tree
from nanlint.source.walk import node_types

_DEFS = {"FunctionDef": (ast.FunctionDef, ast.AsyncFunctionDef), "ClassDef": (ast.ClassDef,)}
# units generated before the whole module's positions are cheaper (measured: a module of 2000
# findings, each in its own function, took 2.9 s by units, 2.7 s with the whole map)
MAX_UNITS = 64


class Positions:
    """``node -> CodeRange`` of ``module`` (parsed from ``text``; ``statements``: CPython's
    tree of it, when the caller has one), computed per unit on first use; iterating it
    (every node) computes the whole module's map.  ``parent(node)``: the
    node holding ``node`` (the file's parent map, which the rules build anyway); a node is
    placed by climbing from it to the module's statement that holds it, then down the
    bodies of the ``def``/``class`` statements on the way to the innermost unit."""

    def __init__(self, module: cst.Module, text: str, parent: Callable[[cst.CSTNode], cst.CSTNode | None],
                 statements: list[ast.stmt] | None = None) -> None:
        self.module = module
        self.text = text
        self.parent = parent
        self._whole: dict | None = None
        # CPython's statements of the module: the syntax check's tree when given, else parsed on first use
        self._asts: list[ast.stmt] | None | bool = statements if statements is not None else False
        self._pairs: dict[int, list | None] = {}  # id(body owner) -> its statements' lines and twins
        self._at: dict[int, dict[int, int]] = {}  # id(body owner) -> id(statement) -> its index
        self._done: dict[int, dict | None] = {}  # id(unit) -> its positions (None: not placed)

    def __getitem__(self, node: cst.CSTNode):
        if self._whole is not None:
            return self._whole[node]
        unit = self._unit_of(node)
        found = self._place(*unit) if unit is not None else None
        return found[node] if found is not None and node in found else self.whole()[node]

    def __iter__(self):
        return iter(self.whole())

    def whole(self) -> dict:
        if self._whole is None:
            self._whole = whole_positions(self.module)
        return self._whole

    def _unit_of(self, node: cst.CSTNode):
        """(the unit holding ``node``, the indentations around it, its first and last line),
        or None when it is outside the module's statements or its level is not paired."""
        chain = [node]
        while chain[-1] is not self.module:
            up = self.parent(chain[-1])
            if up is None:
                return None
            chain.append(up)
        chain.reverse()  # the module, its statement, ..., node
        if self._asts is False:
            self._asts = _module_statements(self.text)
        block = node_types("IndentedBlock")[0]
        owner, stmts, asts, indents, i = self.module, self.module.body, self._asts, (), 1
        while True:
            pairs = self._pairs.get(id(owner), False)
            if pairs is False:
                pairs = self._pairs[id(owner)] = _pair(stmts, asts)  # type: ignore[arg-type]
            k = self._index(owner, stmts).get(id(chain[i])) if i < len(chain) else None
            if pairs is None or k is None:
                return None
            stmt = chain[i]
            first, last, twin = pairs[k]
            inner = getattr(stmt, "body", None)
            if twin is None or not isinstance(inner, block) or i + 2 >= len(chain) or chain[i + 1] is not inner \
                    or id(chain[i + 2]) not in self._index(inner, inner.body):
                return stmt, indents, first, last  # not inside a def's or class's body: this statement
            indent = inner.indent if inner.indent is not None else self.module.default_indent
            owner, stmts, asts, indents, i = inner, inner.body, twin.body, indents + (indent,), i + 2

    def _index(self, owner: cst.CSTNode, stmts) -> dict[int, int]:
        """``id(statement) -> its index`` in the body ``stmts`` of ``owner`` (built once: a
        lookup costs the same whatever the number of statements)."""
        at = self._at.get(id(owner))
        if at is None:
            at = self._at[id(owner)] = {id(st): k for k, st in enumerate(stmts)}
        return at

    def _place(self, stmt: cst.CSTNode, indents: tuple[str, ...], first: int, last: int) -> dict | None:
        key = id(stmt)
        if key not in self._done and len(self._done) >= MAX_UNITS:
            return None  # a file with findings everywhere: one pass over the whole module costs less
        if key not in self._done:
            found = None
            got = unit_positions(self.module, stmt, indents)
            if got is not None and stmt in got:
                r = got[stmt]
                shift = first - r.start.line
                if r.end.line + shift == last:
                    found = got if not shift else got.moved(shift)
            self._done[key] = found
        return self._done[key]


def _module_statements(text: str) -> list[ast.stmt] | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return compile_tree(text).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


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
