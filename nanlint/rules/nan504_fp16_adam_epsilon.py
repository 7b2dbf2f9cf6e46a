"""NAN504 fp16-adam-epsilon: an Adam-family optimizer at its default epsilon on
float16 parameters (``model.half()``, ``dtype=tf.float16`` variables,
``set_floatx('float16')``): the epsilon rounds to 0 (1e-8) or to a subnormal (1e-7)."""

from __future__ import annotations

import libcst as cst

from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.semantic.context import OpCall
from nanlint.rules.context import RuleContext
from nanlint.rules.base import Rule
from nanlint.rules._float16 import Float16Evidence
from nanlint.semantic.literals import number

FLOAT16_TINY = 6.103515625e-05  # float16's smallest normal number; below it, precision is lost, 1e-8 -> 0
FIXED_EPSILON = "1e-4"
class Fp16AdamEpsilon(Rule):
    code = "NAN504"
    name = "fp16-adam-epsilon"
    summary = "Adam's default epsilon underflows in float16: use epsilon=1e-4"
    fix = fixes.UNSAFE
    needs = ("float16", "half")
    triggers = (frozenset({o.ADAM_OPTIMIZER}),)

    def check(self, ctx: RuleContext) -> None:
        evidence: Float16Evidence | None = None  # built only when an optimizer could be reported
        for call in ctx.calls(o.ADAM_OPTIMIZER):
            if any(a.star for a in call.node.args):
                continue  # epsilon may come from **kwargs
            eps = call.value("epsilon")
            value = number(eps) if eps is not None else None
            if eps is not None and (value is None or value >= FLOAT16_TINY):
                continue
            evidence = evidence or Float16Evidence(ctx)
            why = evidence.float16_params(call)
            if why is None:
                continue
            shown = "the default epsilon" if eps is None else \
                f"{call.fn.keyword_for('epsilon') or 'epsilon'}={ctx.code(eps)}"
            ctx.report(call.node,
                       f"{shown} of an Adam-family optimizer on float16 parameters ({why}): in float16 1e-8 "
                       "is 0 and 1e-7 a subnormal, so m / (sqrt(v) + eps) divides by ~0 once v underflows "
                       "and the step is inf/NaN or huge; use epsilon 1e-4",
                       self.make_fix(call))

    @staticmethod
    def make_fix(call: OpCall) -> fixes.Fix:
        keyword = call.fn.keyword_for("epsilon")
        message = f"Set {keyword or 'epsilon'}={FIXED_EPSILON}"
        new_value = cst.Float(FIXED_EPSILON)
        if call.has("epsilon"):
            return fixes.Fix(fixes.UNSAFE, message, [(call.value("epsilon"), new_value)])
        if keyword is None:
            return fixes.Fix(fixes.DISPLAY_ONLY, message)
        args = list(call.node.args)
        new_arg = fixes.arg(new_value, keyword)
        if args:
            last = args[-1]
            new_arg = new_arg.with_changes(comma=last.comma)
            args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        args.append(new_arg)
        return fixes.Fix(fixes.UNSAFE, message, [(call.node, call.node.with_changes(args=args))])
