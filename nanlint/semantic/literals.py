"""Facts about expression values that rules share: literals and constants."""

from __future__ import annotations

import ast
import functools

import libcst as cst

from nanlint.source.codegen import code_of
from nanlint.source.walk import empty_module


def number(expr: cst.BaseExpression | None) -> float | None:
    """The value of a numeric literal (``1``, ``1.``, ``1e-10``, ``-0.5``, ``(2)``), else None."""
    kind = type(expr)  # not isinstance: libcst's classes are ABCs, whose misses are slow (no subclasses)
    if kind is cst.Integer or kind is cst.Float:
        return _value(expr.value)  # type: ignore[union-attr]
    if kind is cst.UnaryOperation:
        inner = number(expr.expression)  # type: ignore[union-attr]
        if inner is None:
            return None
        operator = type(expr.operator)  # type: ignore[union-attr]
        if operator is cst.Minus:
            return -inner
        if operator is cst.Plus:
            return inner
    return None


@functools.lru_cache(maxsize=4096)
def _value(text: str) -> float:
    """A numeric literal's value (libcst's ``evaluated_value``: ``literal_eval``, a parse per
    call), remembered by its text: rules ask the same few literals hundreds of thousands of
    times a corpus."""
    return float(ast.literal_eval(text))


def is_one(expr: cst.BaseExpression | None) -> bool:
    return number(expr) == 1.0


def is_literal(expr: cst.BaseExpression | None) -> bool:
    """A number, or arithmetic on numbers only."""
    if expr is None:
        return False
    if number(expr) is not None:
        return True
    if isinstance(expr, cst.BinaryOperation):
        return is_literal(expr.left) and is_literal(expr.right)
    return False


def one_minus(expr: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """``a`` when ``expr`` is ``1 - a``."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Subtract) and is_one(expr.left):
        return expr.right
    return None


def terms(expr: cst.BaseExpression, ctx=None, scope=None) -> list[tuple[int, cst.BaseExpression]]:
    """``a + b - (c - d)`` as ``[(+1, a), (+1, b), (-1, c), (+1, d)]`` in evaluation order;
    given ``ctx``, ``add``/``subtract`` written as functions or methods (``torch.add(a, b)``,
    ``x.sub(y)``) are their operators."""
    if ctx is not None and scope is not None:
        expr = ctx.arithmetic(expr, scope)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract)):
        sign = 1 if isinstance(expr.operator, cst.Add) else -1
        return terms(expr.left, ctx, scope) + [(sign * s, t) for s, t in terms(expr.right, ctx, scope)]
    return [(1, expr)]


def normalized(expr: cst.BaseExpression) -> str:
    """The code of ``expr`` without its outer parentheses and without whitespace: two
    operands are the same expression when their normalized texts are equal."""
    if getattr(expr, "lpar", None):
        expr = expr.with_changes(lpar=[], rpar=[])
    return "".join(code_of(empty_module(), expr).split())


def same(a: cst.BaseExpression | None, b: cst.BaseExpression | None) -> bool:
    return a is not None and b is not None and normalized(a) == normalized(b)
