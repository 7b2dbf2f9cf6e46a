"""NAN109 unguarded-log (opt-in): a framework log whose argument is not shown to be positive."""

from __future__ import annotations

import libcst as cst

from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.semantic.context import FileContext
from nanlint.analysis.guards import absorbed_epsilon, guarded, terms
from nanlint.rules.base import Rule
from nanlint.rules._log1m_softmax import complement_of
from nanlint.semantic.literals import is_one

# arguments the dedicated rules already report (one finding per site)
_COVERED = (o.SOFTMAX, o.SIGMOID)


class UnguardedLog(Rule):
    code = "NAN109"
    name = "unguarded-log"
    summary = "log of a value not shown to be positive (no epsilon, clip or maximum): opt-in audit"
    fix = fixes.DISPLAY_ONLY
    default = False
    needs = ("log",)
    triggers = (frozenset({o.LOG}),)

    def check(self, ctx: FileContext) -> None:
        for log in ctx.calls(o.LOG):
            if log.x is None or guarded(ctx, log.x, log.scope) or self.covered(ctx, log.x, log.scope):
                continue
            what = "underflows to 0" if self.underflows(ctx, log.x, log.scope) else "may be 0 or negative"
            ctx.report(log.node, f"log of a value that {what}: -inf/NaN in the value and the gradient; "
                                 "guard it (clip to [eps, ...], maximum(x, eps), x + eps) or use a fused form",
                       fixes.Fix(fixes.DISPLAY_ONLY, "Guard the argument, e.g. log(maximum(x, 1e-7))"))

    @staticmethod
    def underflows(ctx: FileContext, expr: cst.BaseExpression, scope) -> bool:
        resolved = ctx.resolve(expr, scope, functions=True)
        call = ctx.op_call(resolved.expr, resolved.scope)
        return call is not None and call.op in (o.EXP, o.SOFTPLUS)

    @staticmethod
    def covered(ctx: FileContext, expr: cst.BaseExpression, scope) -> bool:
        """Reported by another rule: softmax/sigmoid (NAN101-104), 1 - sigmoid (NAN102),
        1 - softmax (NAN101), an absorbed epsilon (NAN105), 1 + exp, exp + exp, sum(exp) (NAN106)."""
        if complement_of(ctx, expr, scope) is not None:
            return True
        resolved = ctx.resolve(expr, scope, functions=True)
        e, s = resolved.expr, resolved.scope
        if ctx.op_of(e, s, *_COVERED) is not None:
            return True
        if absorbed_epsilon(ctx, e, s) is not None:
            return True
        chain = terms(e)
        if len(chain) == 2 and isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Subtract) \
                and is_one(e.left) and ctx.op_of(e.right, s, o.SIGMOID) is not None:
            return True
        if len(chain) == 2 and all(sign > 0 for sign, _ in chain):
            kinds = [ctx.op_call(t, s) for _, t in chain]
            if any(k is not None and k.op == o.EXP for k in kinds):
                return True
        call = ctx.op_call(e, s)
        if call is not None and call.op == o.SUM and call.x is not None:
            inner = ctx.op_call(call.x, s)
            if inner is not None and inner.op == o.EXP:
                return True
        return False
