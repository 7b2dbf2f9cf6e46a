"""NAN205 nan-masking: ``where(is_finite(t), t, c)`` / ``nan_to_num(t)`` of a
hazardous ``t`` fixes the value, not the gradient (display-only: fix the source)."""

from __future__ import annotations

import libcst as cst

from nanlint import fixes
from nanlint import ops as o
from nanlint.context import FileContext, OpCall
from nanlint.resolve import Scope
from nanlint.rule import Rule
from nanlint.rules._gradient_traps import bare, follow, hazard, is_op, key, not_differentiated


def masked_test(ctx: FileContext, cond, scope: Scope) -> OpCall | None:
    """The ``is_finite(t)`` / ``is_nan(t)`` a condition is (possibly negated)."""
    if cond is None:
        return None
    cond, scope = follow(ctx, cond, scope)
    inner = bare(cond)
    if isinstance(inner, cst.UnaryOperation) and isinstance(inner.operator, (cst.BitInvert, cst.Not)):
        return masked_test(ctx, inner.expression, scope)
    return is_op(ctx, cond, scope, o.IS_FINITE, o.IS_NAN)


class NanMasking(Rule):
    code = "NAN205"
    name = "nan-masking"
    summary = "masking NaN/Inf after the fact (where(is_finite(t), t, c), nan_to_num): the gradient stays NaN"
    fix = fixes.DISPLAY_ONLY
    needs = ("nan", "finite")
    triggers = (frozenset({o.WHERE, o.MASKED_FILL, o.NAN_TO_NUM}),)

    def check(self, ctx: FileContext) -> None:
        for call in ctx.calls(o.WHERE, o.MASKED_FILL, o.NAN_TO_NUM):
            if call.op == o.NAN_TO_NUM:
                masked = call.x
                how = "nan_to_num"
            else:
                test = masked_test(ctx, call.value("cond"), call.scope)
                if test is None or test.x is None:
                    continue
                branches = [call.value("x"), call.value("y")] if call.op == o.WHERE else [call.x]
                wanted = key(ctx, test.x)
                masked = next((b for b in branches if b is not None and key(ctx, b) == wanted), None)
                how = f"masking with {test.op}"
            if masked is None:
                continue
            what = hazard(ctx, masked, call.scope)
            if what is None or not_differentiated(ctx, call.node, call.framework):
                continue  # the masked value is right; only a gradient could be NaN
            message = (f"{how} hides the non-finite values of a {what} but not its gradient: the "
                       "masked entries still send 0 * inf = NaN back; fix the source (a fused op, "
                       f"or guard the input with where(c, x, safe) before the {what})")
            ctx.report(call.node, message, fixes.Fix(
                fixes.DISPLAY_ONLY, f"Guard the input of the {what} (or use the fused op) instead of masking its output"))
