"""NAN101 log-softmax: ``log(softmax(x))`` -> ``log_softmax(x)``."""

from __future__ import annotations

import libcst as cst

from nanlint import fixes
from nanlint import ops as o
from nanlint.context import FileContext, OpCall, origin_note
from nanlint.rule import Rule

CARRIED = ("x", "axis", "dtype")


def fused_call(ctx: FileContext, inner: OpCall, target_op: str, scope, prefer=()) -> tuple[cst.Call, list[fixes.Import]] | None:
    """``inner``'s arguments applied to ``target_op`` of the same framework: a
    method call when ``inner`` was a method and the framework has that method,
    else a function spelled with the file's imports."""
    method = inner.framework.methods.get(target_op) if inner.is_method else None
    if method is not None and method.op == target_op:
        args = ctx.carry_args(inner, method, CARRIED)
        if args is None:
            return None
        func = cst.Attribute(inner.receiver, cst.Name(target_op))  # type: ignore[arg-type]
        return fixes.call(func, args), []
    spelling = ctx.spell(inner.framework, target_op, scope, prefer=(inner.node.func,) + tuple(prefer))
    if spelling is None:
        return None
    func, target, imports = spelling
    args = ctx.carry_args(inner, target, CARRIED)
    if args is None:
        return None
    return fixes.call(func, args), imports


class LogSoftmax(Rule):
    code = "NAN101"
    name = "log-softmax"
    summary = "log of a softmax: use the fused log_softmax"
    fix = fixes.SAFE
    triggers = (frozenset({o.LOG}), frozenset({o.SOFTMAX}))

    def check(self, ctx: FileContext) -> None:
        for log in ctx.calls(o.LOG):
            found = ctx.op_of(log.x, log.scope, o.SOFTMAX)
            if found is None:
                continue
            softmax, resolved = found
            message = ("log of softmax is -inf/NaN once a probability underflows to 0; "
                       "use log_softmax" + origin_note(ctx, resolved))
            ctx.report(log.node, message, self.make_fix(ctx, log, softmax, resolved))

    @staticmethod
    def make_fix(ctx: FileContext, log: OpCall, softmax: OpCall, resolved) -> fixes.Fix | None:
        message = "Replace with log_softmax"
        if not resolved.fixable_in(log.scope):  # self.attr from another method: names may not exist here
            return fixes.Fix(fixes.DISPLAY_ONLY, message + " where the softmax is computed")
        built = fused_call(ctx, softmax, o.LOG_SOFTMAX, log.scope, prefer=(log.node.func,))
        if built is None:
            return fixes.Fix(fixes.DISPLAY_ONLY, message)
        new, imports = built
        applicability = fixes.UNSAFE if resolved.crossed_statements else fixes.SAFE
        return fixes.Fix(applicability, message, [(log.node, new)], imports)
