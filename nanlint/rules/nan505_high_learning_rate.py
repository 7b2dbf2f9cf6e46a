"""NAN505 high-learning-rate (opt-in): an Adam-family learning rate literal >= 0.1."""

from __future__ import annotations

from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.rules.context import RuleContext
from nanlint.rules.base import Rule
from nanlint.semantic.literals import number

LIMIT = 0.1


class HighLearningRate(Rule):
    code = "NAN505"
    name = "high-learning-rate"
    summary = "Adam-family learning rate >= 0.1 (opt-in)"
    fix = fixes.DISPLAY_ONLY
    default = False
    triggers = (frozenset({o.ADAM_OPTIMIZER}),)

    def check(self, ctx: RuleContext) -> None:
        for call in ctx.calls(o.ADAM_OPTIMIZER):
            lr = call.args.get("lr")
            value = number(lr.value) if lr is not None else None
            if value is None or value < LIMIT:
                continue
            ctx.report(lr, f"Adam-family learning rate {ctx.code(lr.value)} (>= {LIMIT}): Adam's step is "
                           "about lr per parameter regardless of the gradient's scale, so the first steps "
                           "jump by that much and the loss commonly diverges to inf/NaN; the usual range "
                           "is 1e-4 to 1e-2 (default 1e-3)",
                       fixes.Fix(fixes.DISPLAY_ONLY, "Use a learning rate in 1e-4 .. 1e-2 (or a warm-up schedule)"))
