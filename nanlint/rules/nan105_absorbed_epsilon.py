"""NAN105 absorbed-epsilon: an epsilon below float32's resolution next to 1
(``log(1e-10 + 1 - p)``, ``clip(p, 1e-10, 1 - 1e-10)``) guards nothing."""

from __future__ import annotations

import libcst as cst

from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.rules.context import RuleContext
from nanlint.analysis.guards import absorbed_epsilon, constant, float32, positive_bound
from nanlint.analysis.facts import uniform_below_one
from nanlint.rules.base import Rule
from nanlint.vocabulary import limits


class AbsorbedEpsilon(Rule):
    code = "NAN105"
    name = "absorbed-epsilon"
    summary = "an epsilon below float32 resolution next to 1 (1e-10 + 1 - p, 1 - 1e-10) guards nothing"
    fix = fixes.DISPLAY_ONLY
    needs = ("log", "clip", "clamp")
    triggers = (frozenset({o.LOG, o.CLIP}),)

    def check(self, ctx: RuleContext) -> None:
        if not ctx.uses_framework():
            return
        for log in ctx.calls(o.LOG):
            if log.x is None:
                continue
            found = absorbed_epsilon(ctx, log.x, log.scope)
            if found is None:
                continue
            eps, value, big = found
            ctx.report(log.x, f"{ctx.code(eps)} is lost when added to {big:g} in float32 "
                              f"(1 + eps == 1 for eps <= {limits.FLOAT32_ABSORBED_ABOVE_ONE}), so this log is still "
                              f"log(0) = -inf once the subtracted value reaches {big:g}",
                       fixes.Fix(fixes.DISPLAY_ONLY, "Add the epsilon last (1 - p + eps), clip p to "
                                                     "[eps, 1 - eps] with eps >= 1e-7, or use log_sigmoid(-z)"))
        for clip in ctx.calls(o.CLIP):
            hi = clip.value("hi")
            if hi is None or not isinstance(hi, cst.BinaryOperation) or not positive_bound(ctx, clip.value("lo"), clip.scope):
                continue
            lo = constant(ctx, clip.value("lo"), clip.scope)
            value = constant(ctx, hi, clip.scope)
            if value is None or value == 1.0 or float32(value) != 1.0 or lo is None or not 0 < lo < 1:
                continue
            if clip.x is not None and uniform_below_one(ctx, clip.x, clip.scope):
                continue  # torch.rand(...).clamp_(1e-12, 1 - 1e-12): a draw in [0, 1) never reaches 1
            ctx.report(hi, f"the upper bound {ctx.code(hi)} is exactly 1.0 in float32 (1 - eps == 1 for "
                           f"eps <= {limits.FLOAT32_ABSORBED_BELOW_ONE}): the clipped value still reaches 1, where a "
                           f"log(1 - p) of it is -inf",
                       fixes.Fix(fixes.DISPLAY_ONLY, f"Use an epsilon >= 1e-7 (1 - 1e-7 is {limits.FLOAT32_ONE_MINUS_1E7} "
                                                     "in float32), or log_sigmoid on the logits"))
