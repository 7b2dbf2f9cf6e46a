"""NAN107 log-of-zero: a log whose argument reaches 0 (or below) on inputs the program
sees -- a probability that underflows, ``1 - p`` of a probability that saturates, a
rectified value, a count of a mask, an affine output, a literal holding 0."""

from __future__ import annotations

from nanlint import fixes
from nanlint import ops as o
from nanlint import zeros
from nanlint.context import FileContext, OpCall
from nanlint.reach import origin_note
from nanlint.rule import Rule
from nanlint.rules._gradient_traps import spelled_call
from nanlint.rules._zero_fixes import epsilon, far, guard_fix
from nanlint.rules.nan109_unguarded_log import UnguardedLog


class LogOfZero(Rule):
    code = "NAN107"
    name = "log-of-zero"
    summary = "log of a value that reaches 0: an underflowing probability, 1 - p, relu, a count, matmul + b"
    fix = fixes.SAFE
    supersedes = ("NAN109",)
    needs = ("log",)
    triggers = (frozenset({o.LOG}),)

    def check(self, ctx: FileContext) -> None:
        for log in ctx.calls(o.LOG):
            if log.x is None or UnguardedLog.covered(ctx, log.x, log.scope):
                continue
            zero = zeros.reaches_zero(ctx, log.x, log.scope)
            if zero is None:
                continue
            where = origin_note(zero.value.ctx or ctx, zero.value)
            outcome = "NaN (and -inf at 0)" if zero.negative else "-inf, and its gradient inf/NaN"
            message = (f"log of {zero.what}{where}: {zero.why}, where the log is {outcome}; "
                       + self.advice(zero))
            ctx.report(log.node, message, self.make_fix(ctx, log, zero))

    @staticmethod
    def advice(zero: zeros.Zero) -> str:
        if zero.kind == zeros.AFFINE:
            return "apply a positive activation (softplus, exp) or work with the logits"
        if far(zero.value) and zero.kind in (zeros.PROBABILITY, zeros.COMPLEMENT):
            return "return logits from there and use log_softmax / log_sigmoid"
        if zero.logit is not None:
            return "use log_sigmoid of the logit"
        return "guard it with an epsilon that survives float32 (1e-7), or use a fused form"

    @staticmethod
    def make_fix(ctx: FileContext, log: OpCall, zero: zeros.Zero) -> fixes.Fix:
        assert log.x is not None
        if zero.kind == zeros.AFFINE:
            return fixes.Fix(fixes.DISPLAY_ONLY, "Apply a positive activation (softplus) before the log")
        if far(zero.value):
            return fixes.Fix(fixes.DISPLAY_ONLY, "Return logits and use log_softmax / log_sigmoid")
        if zero.logit is not None and not zero.value.origins and zero.value.expr is log.x:
            built = spelled_call(ctx, log.framework, o.LOG_SIGMOID, log.scope, [("x", zero.logit)],
                                 prefer=(log.node.func,))
            if built is not None:
                return fixes.Fix(fixes.SAFE, "Use log_sigmoid of the logit", [(log.node, built[0])], built[1])
        return guard_fix(ctx, log, log.x, f"Guard the argument with an epsilon ({epsilon(ctx)})")
