"""NAN205 nan-masking: ``where(is_finite(t), t, c)`` / ``nan_to_num(t)`` of a
hazardous ``t`` fixes the value, not the gradient (display-only: fix the source)."""

from __future__ import annotations

import libcst as cst

from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.semantic.context import OpCall
from nanlint.rules.context import RuleContext
from nanlint.semantic.reach import argument
from nanlint.semantic.resolve import Scope
from nanlint.analysis.facts import gradient_free
from nanlint.rules.base import Rule
from nanlint.rules._gradient_traps import bare, follow, hazard, is_op, key, report_in_gradient


def masked_test(ctx: RuleContext, cond, scope: Scope) -> OpCall | None:
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
    # on by default since issue 21: a gradient-only hazard reports when a gradient reaches it
    # (analysis/differentiated.py), in the may tier when nothing shows one does
    default = True
    name = "nan-masking"
    summary = "masking NaN/Inf after the fact (where(is_finite(t), t, c), nan_to_num): the gradient stays NaN"
    fix = fixes.DISPLAY_ONLY
    needs = ("nan", "finite")
    triggers = (frozenset({o.WHERE, o.MASKED_FILL, o.NAN_TO_NUM}),)

    def check(self, ctx: RuleContext) -> None:
        helpers: dict[int, tuple[str, int | str]] = {}  # a function that masks its parameter
        for call in ctx.calls(o.WHERE, o.MASKED_FILL, o.NAN_TO_NUM):
            found = self.masked(ctx, call)
            if found is None:
                continue
            masked, how = found
            param = self.helper_parameter(ctx, call, masked)
            if param is not None:
                helpers[id(call.scope)] = (how, param)
                continue  # reported where the helper is applied to a hazard
            self.judge(ctx, call.node, call.scope, masked, how, call.framework)
        if not helpers:
            return
        for node, scope in ctx.index.calls:
            returned = ctx.returns_of(node, scope)
            if returned is None or id(returned[0]) not in helpers:
                continue
            how, param = helpers[id(returned[0])]
            arg = argument(returned[0].node, param, node)
            if arg is not None:
                name = ctx.code(node.func)
                self.judge(ctx, node, scope, arg, f"{how} (in `{name}`)", None)

    @staticmethod
    def masked(ctx: RuleContext, call: OpCall) -> tuple[cst.BaseExpression, str] | None:
        """The value a where/masked_fill/nan_to_num masks the non-finite entries of."""
        if call.op == o.NAN_TO_NUM:
            return (call.x, "nan_to_num") if call.x is not None else None
        test = masked_test(ctx, call.value("cond"), call.scope)
        if test is None or test.x is None:
            return None
        branches = [call.value("x"), call.value("y")] if call.op == o.WHERE else [call.x]
        wanted = key(ctx, test.x)
        masked = next((b for b in branches if b is not None and key(ctx, b) == wanted), None)
        return (masked, f"masking with {test.op}") if masked is not None else None

    @staticmethod
    def helper_parameter(ctx: RuleContext, call: OpCall, masked: cst.BaseExpression):
        """The parameter (node) of a helper ``def mask_nan(x, c): return where(is_finite(x), x, c)``
        whose return value is this masking of the parameter ``masked``."""
        scope = call.scope
        if scope.kind != "function" or len(scope.returns) != 1 or scope.returns[0].value is None:
            return None
        returned = scope.returns[0].value  # the masking, or a name bound to it (``y = where(...); return y``)
        if returned is not call.node and ctx.resolve(returned, scope).expr is not call.node:
            return None
        if not isinstance(masked, cst.Name):
            return None
        bindings = scope.bindings.get(masked.value, [])
        if len(bindings) == 1 and isinstance(bindings[0].node, cst.Param):
            return bindings[0].node
        return None

    @staticmethod
    def judge(ctx: RuleContext, node: cst.CSTNode, scope: Scope, masked, how: str, framework) -> None:
        what = hazard(ctx, masked, scope)
        if what is None or gradient_free(ctx, masked, scope):
            return  # a masking of constants and counts: no gradient to be NaN
        message = (f"{how} hides the non-finite values of a {what} but not its gradient: the "
                   "masked entries still send 0 * inf = NaN back; fix the source (a fused op, "
                   f"or guard the input with where(c, x, safe) before the {what})")
        # the masked value is right; only a gradient could be NaN: judged on its evidence
        report_in_gradient(ctx, node, message, fixes.Fix(
            fixes.DISPLAY_ONLY, f"Guard the input of the {what} (or use the fused op) instead of masking its output"),
            framework)
