"""NAN501 optimizer-lr-kwarg: ``lr=`` on a Keras optimizer -> ``learning_rate=``."""

from __future__ import annotations

import libcst as cst

from nanlint.fix import fixes
from nanlint.rules.context import RuleContext
from nanlint.semantic.project_versions import targets_below
from nanlint.rules.base import Rule
from nanlint.rules._optimizers import OPTIMIZER_OPS, keras_optimizers
from nanlint.rules._shapes import keyword_arg


class OptimizerLrKwarg(Rule):
    code = "NAN501"
    name = "optimizer-lr-kwarg"
    summary = "lr= on a Keras optimizer: Keras 3 rejects it, use learning_rate="
    fix = fixes.SAFE
    frameworks = ("tensorflow", "keras")
    needs = ("lr",)
    triggers = (frozenset(OPTIMIZER_OPS),)

    def check(self, ctx: RuleContext) -> None:
        for call in keras_optimizers(ctx):
            lr = keyword_arg(call.node, "lr")
            if lr is None or lr.keyword is None:
                continue
            # ``learning_rate`` arrived in Keras 2.3 / tf.keras of TF 2.0; before, lr= was the name
            if call.qualname and call.qualname.startswith("keras.") and targets_below(ctx.settings, "keras", "2.3"):
                continue
            if call.qualname and call.qualname.startswith("tensorflow.") \
                    and targets_below(ctx.settings, "tensorflow", "2.0"):
                continue
            message = ("`lr=` was deprecated in Keras 2.3 / TF 2.0 and Keras 3 rejects it: "
                       "\"Argument(s) not recognized: {'lr': ...}\"; use learning_rate=")
            fix = None
            if keyword_arg(call.node, "learning_rate") is None:
                fix = fixes.Fix(fixes.SAFE, "Rename lr= to learning_rate=",
                                [(lr.keyword, cst.Name("learning_rate"))])
            else:
                fix = fixes.Fix(fixes.DISPLAY_ONLY, "Remove lr= (learning_rate= is also given)")
            ctx.report(lr, message, fix)
