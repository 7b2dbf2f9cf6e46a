"""NAN102 log-sigmoid: ``log(sigmoid(x))`` -> ``log_sigmoid(x)``,
``log(1 - sigmoid(x))`` -> ``log_sigmoid(-x)``."""

from __future__ import annotations


from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.semantic.reach import origin_note
from nanlint.rules.context import RuleContext
from nanlint.rules.base import Rule
from nanlint.semantic.literals import one_minus
from nanlint.rules._fused import log_sigmoid_fix
from nanlint.rules import _limits
from nanlint.vocabulary import limits


class LogSigmoid(Rule):
    code = "NAN102"
    name = "log-sigmoid"
    summary = "log of a sigmoid (or of 1 - sigmoid): use log_sigmoid"
    fix = fixes.SAFE
    triggers = (frozenset({o.LOG}), frozenset({o.SIGMOID}))

    def check(self, ctx: RuleContext) -> None:
        for log in ctx.calls(o.LOG):
            arg = ctx.resolve(log.x, log.scope, functions=True) if log.x is not None else None
            if arg is None:
                continue
            negated = False
            inner = ctx.op_of(arg.expr, arg.scope, o.SIGMOID, follow=False)
            crossed = arg.crossed_statements
            if inner is None and one_minus(arg.expr) is not None:
                inner = ctx.op_of(one_minus(arg.expr), arg.scope, o.SIGMOID)
                negated = True
            if inner is None:
                continue
            sigmoid, resolved = inner
            crossed = crossed or resolved.crossed_statements
            what = "log(1 - sigmoid(x))" if negated else "log(sigmoid(x))"
            note = origin_note(ctx, arg) or origin_note(ctx, resolved)
            if negated:  # one side only: 1 - sigmoid(x) is 0 once sigmoid(x) rounds to 1
                side = (f"sigmoid(x) rounds to 1 for x > {_limits.shown(limits.SIGMOID_ONE, sigmoid.framework)} "
                        "in float32")
            else:  # log(sigmoid(x)) is exact for every positive x
                side = (f"sigmoid(x) is 0 for x < {_limits.shown(limits.SIGMOID_ZERO, sigmoid.framework, sign=-1)} "
                        f"in float32 ({sigmoid.framework.display})")
            message = (f"{what} is -inf, and its gradient NaN, where {side}; "
                       f"use log_sigmoid({'-x' if negated else 'x'})" + note)
            ctx.report(log.node, message,
                       log_sigmoid_fix(ctx, log, sigmoid, negated, crossed,
                                       not resolved.fixable_in(log.scope) or not arg.repeatable))

