"""NAN109 unguarded-log (opt-in): a framework log whose argument is not shown to be positive."""

from __future__ import annotations


from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.rules.context import RuleContext
from nanlint.analysis.guards import guarded
from nanlint.rules.base import Rule
from nanlint.rules._log_guards import underflows, covered


class UnguardedLog(Rule):
    code = "NAN109"
    name = "unguarded-log"
    summary = "log of a value not shown to be positive (no epsilon, clip or maximum): opt-in audit"
    fix = fixes.DISPLAY_ONLY
    default = False
    may_tier = True
    needs = ("log",)
    triggers = (frozenset({o.LOG}),)

    def check(self, ctx: RuleContext) -> None:
        for log in ctx.calls(o.LOG):
            if log.x is None or guarded(ctx, log.x, log.scope) or covered(ctx, log.x, log.scope):
                continue
            what = "underflows to 0" if underflows(ctx, log.x, log.scope) else "may be 0 or negative"
            ctx.report(log.node, f"log of a value that {what}: -inf/NaN in the value and the gradient; "
                                 "guard it (clip to [eps, ...], maximum(x, eps), x + eps) or use a fused form",
                       fixes.Fix(fixes.DISPLAY_ONLY, "Guard the argument, e.g. log(maximum(x, 1e-7))"))


