"""NAN102 log-sigmoid: ``log(sigmoid(x))`` -> ``log_sigmoid(x)``,
``log(1 - sigmoid(x))`` -> ``log_sigmoid(-x)``."""

from __future__ import annotations

import libcst as cst

from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.semantic.context import FileContext, OpCall, origin_note
from nanlint.rules.base import Rule
from nanlint.semantic.literals import one_minus


class LogSigmoid(Rule):
    code = "NAN102"
    name = "log-sigmoid"
    summary = "log of a sigmoid (or of 1 - sigmoid): use log_sigmoid"
    fix = fixes.SAFE
    triggers = (frozenset({o.LOG}), frozenset({o.SIGMOID}))

    def check(self, ctx: FileContext) -> None:
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
            message = (f"{what} is -inf once sigmoid saturates (|x| > ~17 in float32); "
                       f"use log_sigmoid({'-x' if negated else 'x'})" + note)
            ctx.report(log.node, message,
                       self.make_fix(ctx, log, sigmoid, negated, crossed, not resolved.fixable_in(log.scope)))

    @staticmethod
    def make_fix(ctx: FileContext, log: OpCall, sigmoid: OpCall, negated: bool, crossed: bool,
                 other_scope: bool) -> fixes.Fix:
        message = "Replace with log_sigmoid(-x)" if negated else "Replace with log_sigmoid"
        if other_scope:
            return fixes.Fix(fixes.DISPLAY_ONLY, message)
        spelling = ctx.spell(sigmoid.framework, o.LOG_SIGMOID, log.scope,
                             prefer=(getattr(sigmoid.node, "func", log.node.func), log.node.func))
        if spelling is None or sigmoid.x is None:
            return fixes.Fix(fixes.DISPLAY_ONLY, message)
        func, target, imports = spelling
        x = fixes.negate(sigmoid.x) if negated else sigmoid.x
        if sigmoid.is_method or not isinstance(sigmoid.node, cst.Call):  # a method, or 1 / (1 + exp(-z))
            args = [fixes.arg(x)]
        else:
            args = ctx.carry_args(sigmoid, target, ("x",), x=x)
            if args is None:
                return fixes.Fix(fixes.DISPLAY_ONLY, message)
        applicability = fixes.UNSAFE if crossed else fixes.SAFE
        return fixes.Fix(applicability, message, [(log.node, fixes.call(func, args))], imports)
