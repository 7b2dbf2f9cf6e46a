"""Masked means, sum(x * m) / sum(m): NAN401 reports them, NAN108 leaves them to it."""

from __future__ import annotations

import libcst as cst
from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.rules.context import RuleContext
from nanlint.rules._shapes import Division, same
from nanlint.semantic.literals import number


def _factors(ctx: RuleContext, expr: cst.BaseExpression, scope) -> tuple[cst.BaseExpression, ...]:
    """The operands of a product ``a * b`` / ``multiply(a, b)`` (through a name), else ()."""
    value = ctx.resolve(expr, scope)
    e = value.expr
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Multiply):
        return (e.left, e.right)
    call = ctx.op_call(e, value.scope)
    if call is not None and call.op == o.MULTIPLY and call.x is not None and call.has("y"):
        return (call.x, call.value("y"))  # type: ignore[return-value]
    return ()


def _text(ctx: RuleContext, expr: cst.BaseExpression, tight: bool) -> str:
    text = ctx.code(expr)
    atomic = fixes.is_atomic(expr)
    if tight and not atomic:
        return f"({text})"
    return text


def _where_mask(ctx: RuleContext, expr: cst.BaseExpression, scope) -> tuple[cst.BaseExpression, ...]:
    """``where(m, x, 0)`` (through a name): the mask ``m`` (and ``t`` of ``t > 0``, ``t != 0``)."""
    value = ctx.resolve(expr, scope)
    call = ctx.op_call(value.expr, value.scope)
    if call is None or call.op != o.WHERE or not call.has("cond") or number(call.value("y")) != 0.0:
        return ()
    cond = call.value("cond")
    assert cond is not None
    out = [cond]
    test = ctx.condition(ctx.resolve(cond, value.scope).expr, value.scope)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and \
            isinstance(test.comparisons[0].operator, (cst.GreaterThan, cst.NotEqual)) and \
            number(test.comparisons[0].comparator) == 0.0:
        out.append(test.left)
    return tuple(out)


def _same_mask(ctx: RuleContext, a: cst.BaseExpression, b: cst.BaseExpression, scope) -> bool:
    """The same mask, written alike or reaching both places through names and layout ops
    (``m = mask.float()`` then ``sum(x * m) / mask.sum()``)."""
    if same(a, b):
        return True
    left = ctx.values(a, scope, shape=True)
    right = ctx.values(b, scope, shape=True)
    return any(x.expr is y.expr or (x.scope is y.scope and same(x.expr, y.expr)) for x in left for y in right)


def masked_mean(ctx: RuleContext, div: Division) -> bool:
    """``sum(x * m) / sum(m)``, ``sum(where(m, x, 0)) / sum(m)``: the division NAN401
    reports (NAN108 leaves it to it)."""
    return mean_mask(ctx, div) is not None


def mean_mask(ctx: RuleContext, div: Division) -> cst.BaseExpression | None:
    """The mask ``m`` of a masked mean ``sum(x * m) / sum(m)`` (as the denominator sums it), else None."""
    den = ctx.op_of(div.den, div.scope, o.SUM)
    if den is None:
        return None
    total, _ = den
    mask = total.x
    num = ctx.op_of(div.num, div.scope, o.SUM)
    if mask is None or num is None:
        return None
    weighted, r_num = num
    if weighted.x is None:
        return None
    candidates = _factors(ctx, weighted.x, r_num.scope) + _where_mask(ctx, weighted.x, r_num.scope)
    return mask if any(_same_mask(ctx, f, mask, div.scope) for f in candidates) else None
