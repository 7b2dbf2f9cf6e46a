"""NAN502 clipnorm-custom-loop: ``clipnorm=``/``clipvalue=`` on a tf.keras optimizer
whose ``apply_gradients`` is called directly, in a project targeting TF < 2.4,
where ``apply_gradients`` did not clip."""

from __future__ import annotations

import libcst as cst

from nanlint.fix import fixes
from nanlint.semantic.context import OpCall
from nanlint.rules.context import RuleContext
from nanlint.semantic.project_versions import describe, targets_below
from nanlint.rules.base import Rule
from nanlint.rules._optimizers import OPTIMIZER_OPS, keras_optimizer
from nanlint.rules._shapes import keyword_arg

CLIP_KEYWORDS = ("clipnorm", "clipvalue")


class ClipnormCustomLoop(Rule):
    code = "NAN502"
    name = "clipnorm-custom-loop"
    summary = "clipnorm/clipvalue are ignored by apply_gradients before TF 2.4: clip explicitly"
    fix = fixes.DISPLAY_ONLY
    frameworks = ("tensorflow",)
    needs = ("clipnorm", "clipvalue")
    triggers = (frozenset(OPTIMIZER_OPS),)

    def check(self, ctx: RuleContext) -> None:
        if not targets_below(ctx.settings, "tensorflow", "2.4"):
            return
        source = describe(ctx.settings, "tensorflow")
        for node, scope in ctx.index.calls:
            func = node.func
            if not (isinstance(func, cst.Attribute) and func.attr.value == "apply_gradients"):
                continue
            optimizer = self.optimizer_of(ctx, func.value, scope)
            if optimizer is None:
                continue
            clip = next((a for k in CLIP_KEYWORDS if (a := keyword_arg(optimizer.node, k)) is not None), None)
            if clip is None or clip.keyword is None:
                continue
            keyword = clip.keyword.value
            value = ctx.code(clip.value)
            message = (f"`{keyword}={value}` (line {ctx.file_line(optimizer.node)}) is not applied by "
                       f"apply_gradients in TF 2.0-2.3 (only minimize()/fit() clip), and the project targets "
                       f"TF < 2.4 ({source}): the gradients are not clipped")
            manual = (f"[tf.clip_by_norm(g, {value}) for g in grads]" if keyword == "clipnorm"
                      else f"[tf.clip_by_value(g, -{value}, {value}) for g in grads]")
            ctx.report(node, message, fixes.Fix(
                fixes.DISPLAY_ONLY, f"Clip before apply_gradients: grads = {manual}, and drop {keyword}="))

    @staticmethod
    def optimizer_of(ctx: RuleContext, receiver: cst.BaseExpression, scope) -> OpCall | None:
        """The Keras optimizer constructor every value reaching ``receiver`` is."""
        found = ctx.op_of(receiver, scope, *OPTIMIZER_OPS)
        if found is None or found[1].ctx is not None or not keras_optimizer(found[0]):
            return None
        return found[0]
