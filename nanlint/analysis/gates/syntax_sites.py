"""Shapes NAN111's gate (:mod:`nanlint.analysis.gates.statistic_sites`) reads from CPython's
tree: the named constants of a file (:class:`Constants`), a call's name (:func:`callee`) and
a literal's value.

Every answer a gate builds from these must be True wherever its rule could report: a name
counts as a constant when it is assigned a constant-looking value anywhere in the file,
whatever the scope.  ``tests/test_speed.py`` compares runs with and without the site filter.
The other rules' gates are gone: the rules themselves, run on the module CPython's tree
gives (``nanlint.source.from_ast``), decide those files at the cost the gates had
(``bench/RESULTS.md``, addenda of 2026-12-06 and 2026-12-07).
"""

from __future__ import annotations

import ast

from nanlint.analysis.guards import NAMED_CONSTANTS
from nanlint.source.ast_tree import statements

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


def callee(func: ast.expr) -> str | None:
    """The name a call is spelled with: ``f`` of ``f(x)`` and of ``m.f(x)``."""
    return func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None


def literal(node: ast.expr) -> float | None:
    """The value of a numeric literal (``2``, ``-0.5``), as nanlint.semantic.literals.number reads one."""
    sign = 1.0
    if type(node) is ast.UnaryOp and type(node.op) in (ast.USub, ast.UAdd):
        sign = -1.0 if type(node.op) is ast.USub else 1.0
        node = node.operand
    if type(node) is ast.Constant and type(node.value) in (int, float):
        return sign * node.value
    return None
