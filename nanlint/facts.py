"""Facts about values that rules ask for, decided over every value that reaches
an expression (:mod:`nanlint.reach`): a fact holds for a name only when it holds
for each of its reaching values.

* ``bounded_exponent``: ``exp(x)`` cannot overflow -- ``x`` is at most a constant
  below 88 (``-abs(.)``, ``-square(.)``, a clip or minimum, a ``where`` whose
  branches are non-positive where they are selected: ``where(x >= 0, -x, x)``).
"""

from __future__ import annotations

import libcst as cst

from nanlint import ops as o
from nanlint.context import FileContext
from nanlint.guards import constant
from nanlint.resolve import Scope

EXP_OVERFLOW = 88.0  # exp(x) is inf in float32 above ~88.72
NONNEGATIVE_OPS = (o.ABS, o.SQUARE, o.EXP, o.SOFTPLUS, o.SIGMOID, o.SOFTMAX, o.SQRT, o.NORM)


def bounded_exponent(ctx: FileContext, expr: cst.BaseExpression | None, scope: Scope, _depth: int = 4) -> bool:
    """``exp(expr)`` cannot overflow, for every value reaching ``expr``."""
    if expr is None or _depth < 0:
        return False
    reached = ctx.values(expr, scope, shape=True) if isinstance(expr, (cst.Name, cst.Attribute)) else None
    if reached is not None and not (len(reached) == 1 and reached[0].expr is expr):
        return all(r.ctx is None and _bounded(ctx, r.expr, r.scope, _depth - 1) for r in reached)
    return _bounded(ctx, expr, scope, _depth)


def _bounded(ctx: FileContext, expr: cst.BaseExpression, scope: Scope, depth: int) -> bool:
    value = constant(ctx, expr, scope)
    if value is not None:
        return value < EXP_OVERFLOW
    if nonpositive(ctx, expr, scope, depth):
        return True
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.Divide)):
        # -abs(d) * c (keras' logaddexp2): a non-positive exponent scaled by a factor that is
        # not a negative constant
        for a, b in ((expr.left, expr.right), (expr.right, expr.left)):
            if isinstance(expr.operator, cst.Divide) and a is expr.right:
                continue
            factor = constant(ctx, b, scope)
            if (factor is None or factor > 0) and constant(ctx, a, scope) is None \
                    and bounded_exponent(ctx, a, scope, depth - 1):
                return True
        return False
    call = ctx.op_call(expr, scope)
    if call is not None and call.op in (o.CLIP, o.MINIMUM):
        bound = call.value("hi") if call.op == o.CLIP else None
        values = [constant(ctx, bound, scope)] if bound is not None else \
            [constant(ctx, call.x, scope), constant(ctx, call.value("y"), scope)]
        return any(v is not None and v < EXP_OVERFLOW for v in values)
    if call is not None and call.op == o.WHERE:
        return _where_bounded(ctx, call, scope, depth)
    return False


def nonpositive(ctx: FileContext, expr: cst.BaseExpression, scope: Scope, depth: int = 3) -> bool:
    """``expr <= 0`` for every input: ``-abs(.)``, ``-square(.)``, ``-(.)**2k``, ``-exp(.)``..."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = expr.expression
        if isinstance(inner, cst.BinaryOperation) and isinstance(inner.operator, cst.Power):
            p = constant(ctx, inner.right, scope)
            return p is not None and p == int(p) and int(p) % 2 == 0
        call = ctx.op_call(inner, scope)
        return call is not None and call.op in NONNEGATIVE_OPS
    value = constant(ctx, expr, scope)
    return value is not None and value <= 0


def _where_bounded(ctx: FileContext, call, scope: Scope, depth: int) -> bool:
    """``where(c, a, b)`` whose branches are each bounded where selected: either bounded
    outright, or ``where(t >= 0, -t, t)`` (``t > 0``, ``t < 0``, ``0 <= t``...): the
    branch taken when ``t`` is non-negative negates it, the other keeps it negative."""
    a, b = call.value("x"), call.value("y")
    if a is None or b is None:
        return False
    if bounded_exponent(ctx, a, scope, depth - 1) and bounded_exponent(ctx, b, scope, depth - 1):
        return True
    cond = ctx.condition(ctx.resolve(call.value("cond"), scope).expr, scope) if call.has("cond") else None
    if not (isinstance(cond, cst.Comparison) and len(cond.comparisons) == 1):
        return False
    left, op, right = cond.left, cond.comparisons[0].operator, cond.comparisons[0].comparator
    if constant(ctx, left, scope) == 0.0:  # 0 <= t: as t >= 0
        left, right = right, left
        flip = {cst.LessThan: cst.GreaterThan, cst.LessThanEqual: cst.GreaterThanEqual,
                cst.GreaterThan: cst.LessThan, cst.GreaterThanEqual: cst.LessThanEqual}
        if type(op) not in flip:
            return False
        op = flip[type(op)]()
    if constant(ctx, right, scope) != 0.0:
        return False
    t = _text(left)
    positive_when_true = isinstance(op, (cst.GreaterThan, cst.GreaterThanEqual))
    if not positive_when_true and not isinstance(op, (cst.LessThan, cst.LessThanEqual)):
        return False
    negated, kept = (a, b) if positive_when_true else (b, a)
    return _is_negation_of(negated, t) and _text(kept) == t


def _is_negation_of(expr: cst.BaseExpression, text: str) -> bool:
    return (isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus)
            and _text(expr.expression) == text)


_EMPTY = cst.Module([])


def _text(expr: cst.BaseExpression) -> str:
    if getattr(expr, "lpar", None):
        expr = expr.with_changes(lpar=[], rpar=[])
    return "".join(_EMPTY.code_for_node(expr).split())
