"""Shapes read from CPython's tree for the gates that remain (:mod:`nanlint.analysis.gates.sites`):
NAN207's ``cancellation_site``, the named constants of a file (:class:`Constants`), a
call's name (:func:`callee`), a literal's value, and the lines a word or a call of some
names is on (the zero rules' site check reads them).

Every answer a gate builds from these must be True wherever its rule could report: a name
counts as a constant when it is assigned a constant-looking value anywhere in the file,
whatever the scope; a call counts as one of the named ops when its name is such a spelling,
and every call does when one of those names is bound to another name (``from torch import
clamp as c``). ``tests/test_speed.py`` compares runs with and without the site filter.
NAN105's, NAN401's, NAN402's, NAN503's and NAN112's gates are gone: the rules themselves,
run on the module CPython's tree gives (``nanlint.source.from_ast``), decide those files
at the cost the gates had (``bench/RESULTS.md``, addendum of 2026-12-06).
"""

from __future__ import annotations

import ast
import bisect

from nanlint.analysis.guards import NAMED_CONSTANTS
from nanlint.source.ast_tree import nodes, statements
from nanlint.vocabulary import ops as o

_NAMED = frozenset(q.rsplit(".", 1)[-1] for q in NAMED_CONSTANTS)  # pi, e, tau: what guards.constant knows
_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)
UNKNOWN = object()  # a constant whose value the syntax does not tell (a name bound to one)


class Constants:
    """Constant values as :func:`nanlint.analysis.guards.constant` finds them, on CPython's tree."""

    def __init__(self, tree: ast.Module, text: str) -> None:
        self.names = set(_NAMED)
        nodes = ast.walk(tree) if ":=" in text else statements(tree.body)  # walrus: anywhere in an expression
        for node in nodes:
            kind = type(node)
            if kind is ast.Assign:
                for target in node.targets:
                    self._bind(target, node.value)
            elif kind is ast.AnnAssign and node.value is not None:
                self._bind(node.target, node.value)
            elif kind is ast.NamedExpr:
                self._bind(node.target, node.value)
            elif kind is ast.ImportFrom:
                for alias in node.names:
                    if alias.name in _NAMED and alias.asname:
                        self.names.add(alias.asname)

    def _bind(self, target: ast.expr, value: ast.expr) -> None:
        if type(target) is ast.Name:
            if self.value(value, free=True) is not None:
                self.names.add(target.id)
        elif type(target) in (ast.Tuple, ast.List):
            pairs = value.elts if type(value) in (ast.Tuple, ast.List) and \
                len(value.elts) == len(target.elts) else [value] * len(target.elts)
            for t, v in zip(target.elts, pairs):
                self._bind(t, v)

    def value(self, node: ast.expr, free: bool = False):
        """The float value of a literal or literal arithmetic; UNKNOWN when a name or
        attribute in it may be bound to a constant (any name, given ``free``); None
        when it is not a constant."""
        kind = type(node)
        if kind is ast.Constant:
            v = node.value
            return float(v) if type(v) in (int, float) else None
        if kind is ast.Name:
            return UNKNOWN if free or node.id in self.names else None
        if kind is ast.Attribute:
            return UNKNOWN if free or node.attr in _NAMED else None
        if kind is ast.UnaryOp:
            if type(node.op) not in (ast.USub, ast.UAdd):
                return None
            inner = self.value(node.operand, free)
            if inner is None or inner is UNKNOWN:
                return inner
            return -inner if type(node.op) is ast.USub else inner
        if kind is ast.BinOp and type(node.op) in _ARITH:
            a = self.value(node.left, free)
            b = self.value(node.right, free) if a is not None else None
            if a is None or b is None:
                return None
            if a is UNKNOWN or b is UNKNOWN:
                return UNKNOWN
            try:
                op = type(node.op)
                if op is ast.Add:
                    return a + b
                if op is ast.Sub:
                    return a - b
                if op is ast.Mult:
                    return a * b
                if op is ast.Div:
                    return a / b
                return float(a ** b)
            except (ZeroDivisionError, OverflowError, TypeError):
                return None
        return None


def _terms(node: ast.expr) -> list[tuple[int, ast.expr]]:
    """``a + b - (c - d)`` as ``[(+1, a), (+1, b), (-1, c), (+1, d)]`` (as nanlint.semantic.literals.terms)."""
    out: list[tuple[int, ast.expr]] = []
    stack = [(1, node)]
    while stack:
        sign, n = stack.pop()
        if type(n) is ast.BinOp and type(n.op) in (ast.Add, ast.Sub):
            stack.append((sign if type(n.op) is ast.Add else -sign, n.right))
            stack.append((sign, n.left))
        else:
            out.append((sign, n))
    return out


def cancellation_site(tree: ast.Module, squares: frozenset[str], powers: frozenset[str], subtracts: frozenset[str]) -> bool:
    """Whether the file has a subtraction (``a - b``, a call spelled with ``subtracts``) and two
    squares (``b ** 2``, ``b * b``, a call spelled with ``squares``, or with ``powers`` and a
    literal 2): ``mean(x * x) - mean(x) ** 2`` needs a square on each side (one squares the
    values, the other the mean), so two distinct ones.  A name bound to one of those
    spellings (``from torch import square as sq``, ``sub = torch.sub``): any call may be it,
    so yes.  Where NAN207 can report."""
    spelled = squares | powers | subtracts
    found, subtracted = 0, False
    for n in nodes(tree, ast.BinOp, ast.Call, ast.alias, ast.Assign):
        kind = type(n)
        if kind is ast.BinOp:
            op = type(n.op)
            if op is ast.Sub:
                subtracted = True
            elif op is ast.Pow:
                found += literal(n.right) == 2
            elif op is ast.Mult:
                a, b = n.left, n.right
                found += type(a) is type(b) and (a.id == b.id if type(a) is ast.Name else ast.dump(a) == ast.dump(b))
        elif kind is ast.Call:
            name = callee(n.func)
            if name in squares or name in powers and any(literal(a) == 2 for a in [*n.args, *(k.value for k in n.keywords)]):
                found += 1
            subtracted = subtracted or name in subtracts
        elif renames(n, spelled):
            return True
        if subtracted and found >= 2:
            return True
    return False


_INF_WORDS = frozenset(q.rsplit(".", 1)[-1] for q in o.POS_INF | o.NEG_INF)  # inf, Inf, NINF, infty...
_INF_TEXTS = frozenset({"inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"})


def callee(func: ast.expr) -> str | None:
    """The name a call is spelled with: ``f`` of ``f(x)`` and of ``m.f(x)``."""
    return func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None


def renames(n: ast.AST, spelled: frozenset[str]) -> bool:
    """An import alias or an assignment that binds a new name to one of the ``spelled`` ops
    (``from torch import sqrt as s``, ``s = torch.sqrt``): any call of the file may be one."""
    kind = type(n)
    if kind is ast.alias:
        return bool(n.asname) and n.name.rsplit(".", 1)[-1] in spelled  # type: ignore[attr-defined]
    if kind is ast.Assign:
        return type(n.value) in (ast.Name, ast.Attribute) and callee(n.value) in spelled  # type: ignore[attr-defined]
    return False


def literal(node: ast.expr) -> float | None:
    """The value of a numeric literal (``2``, ``-0.5``), as nanlint.semantic.literals.number reads one."""
    sign = 1.0
    if type(node) is ast.UnaryOp and type(node.op) in (ast.USub, ast.UAdd):
        sign = -1.0 if type(node.op) is ast.USub else 1.0
        node = node.operand
    if type(node) is ast.Constant and type(node.value) in (int, float):
        return sign * node.value
    return None


_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def whole_word(text: str, i: int, n: int) -> bool:
    """Whether ``text[i:i + n]`` stands alone: no identifier character either side."""
    return (i == 0 or text[i - 1] not in _WORD) and text[i + n:i + n + 1] not in _WORD


def lines_of(text: str, offsets) -> list[int]:
    """The lines (sorted, each once) of the ``offsets`` in ``text`` (lines ending at \\n)."""
    lines: list[int] = []
    line, pos = 1, 0
    for i in sorted(offsets):
        line += text.count("\n", pos, i)
        pos = i
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines


def word_lines(text: str, names) -> list[int]:
    """The lines (sorted) where one of ``names`` is written as a whole word, found with
    ``str.find`` (a regex alternation of words costs several times more)."""
    hits: list[int] = []
    find = text.find
    for name in names:
        n = len(name)
        i = find(name)
        while i >= 0:
            if whole_word(text, i, n):
                hits.append(i)
            i = find(name, i + n)
    return lines_of(text, hits)


def calls(tree: ast.Module, text: str, names: frozenset[str]):
    """(call, its name) for the calls whose name (``f(...)``, ``x.f(...)``) is one of
    ``names``, and (node, None) for a node that binds or passes one of them otherwise
    (``from torch import clamp as c``, ``f = tf.math.log``, ``map(torch.log, xs)``).
    Only the statements on lines where one of the names is written are walked."""
    if not names:
        return
    if "\r" in text:  # CPython's lines end at \r too
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = word_lines(text, names)
    if not lines:
        return
    for node in on_lines(tree, lines):
        funcs = set()
        for n in walk_lines(node, lines):
            kind = type(n)
            if kind is ast.Call:
                func = n.func
                funcs.add(id(func))
                name = callee(func)
                if name in names:
                    yield n, name
            elif kind is ast.Name or kind is ast.Attribute:
                name = n.attr if kind is ast.Attribute else n.id
                if name in names and id(n) not in funcs:
                    yield n, None
            elif kind is ast.alias:
                if n.asname and n.name.rsplit(".", 1)[-1] in names:
                    yield n, None


def walk_lines(node: ast.AST, lines: list[int]):
    """``ast.walk`` of ``node`` that skips every subtree whose lines hold none of ``lines``
    (sorted): a token written on those lines is in a node on them (a large literal with one
    hit is not walked whole)."""
    stack = [node]
    while stack:
        n = stack.pop()
        first = getattr(n, "lineno", None)
        if first is not None:
            i = bisect.bisect_left(lines, first)
            if i == len(lines) or lines[i] > (n.end_lineno or first):
                continue
        yield n
        stack.extend(ast.iter_child_nodes(n))


def on_lines(tree: ast.Module, lines: list[int]):
    """The parts of the statements written on one of ``lines`` (sorted): simple
    statements whole, a compound statement's header without its bodies."""
    stack = list(tree.body)
    while stack:
        s = stack.pop()
        first = min([s.lineno] + [d.lineno for d in getattr(s, "decorator_list", ())])
        i = bisect.bisect_left(lines, first)
        if i == len(lines) or lines[i] > (s.end_lineno or s.lineno):
            continue
        if not any(hasattr(s, f) for f in _BODIES):
            yield s
            continue
        body = getattr(s, "body", None)
        # the header's lines: up to its body's first statement (a hit in the body alone is the body's)
        end = max(s.lineno, body[0].lineno - 1) if body and type(body) is list else (s.end_lineno or s.lineno)
        header = lines[i] <= end
        for field, value in ast.iter_fields(s):
            if field in ("body", "orelse", "finalbody"):
                stack.extend(value)
            elif field == "handlers":
                for h in value:
                    if h.type is not None:
                        yield h.type
                    stack.extend(h.body)
            elif field == "cases":
                for c in value:
                    yield c.pattern
                    if c.guard is not None:
                        yield c.guard
                    stack.extend(c.body)
            elif not header:
                continue
            elif isinstance(value, ast.AST):
                yield value
            elif isinstance(value, list):
                yield from (v for v in value if isinstance(v, ast.AST))
