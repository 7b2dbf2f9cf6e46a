"""The log sinks of NAN107 (strong evidence) and NAN110 (weak): a log whose argument reaches 0."""

from __future__ import annotations

import libcst as cst

from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.analysis import zeros
from nanlint.analysis.evidence import excludes_zero
from nanlint.semantic.context import OpCall
from nanlint.rules.context import RuleContext
from nanlint.semantic.reach import origin_note
from nanlint.rules.base import Rule
from nanlint.rules import _limits
from nanlint.vocabulary import limits
from nanlint.rules._gradient_traps import spelled_call
from nanlint.rules._zero_fixes import epsilon, far, guard_fix
from nanlint.rules._log_guards import covered


class LogSinks(Rule):
    """The sinks and their findings, strong or weak: LogOfZero reports the strong ones, NAN110 the weak."""

    needs = ("log", "gamma", "psi", "atanh")
    triggers = (frozenset({o.LOG, o.LOG2, o.LOG10, o.LGAMMA, o.DIGAMMA, o.ATANH}),)

    def check(self, ctx: RuleContext) -> None:
        for node, message, fix, zero in self.findings(ctx):
            if zero.strong:
                ctx.report(node, message, fix)

    def findings(self, ctx: RuleContext):
        """Every log whose argument reaches 0, strong evidence or weak (NAN110 reports those)."""
        for log in ctx.calls(o.LOG, o.LOG2, o.LOG10, o.LGAMMA, o.DIGAMMA):
            if log.x is None or (log.op == o.LOG and covered(ctx, log.x, log.scope)):
                continue
            zero = zeros.reaches_zero(ctx, log.x, log.scope)
            if zero is None or self.handled(ctx, log):  # the value first: handled() needs the parent map
                continue
            if excludes_zero(ctx, log.node, log.x, log.scope):
                continue  # `if std <= 0: ... else: log(std)`, an early return on it
            where = origin_note(zero.value.ctx or ctx, zero.value)
            if log.op in (o.LGAMMA, o.DIGAMMA):
                outcome = f"a pole ({'+inf' if log.op == o.LGAMMA else '-inf/NaN'}), and so is its gradient"
            else:
                outcome = "NaN (and -inf at 0)" if zero.negative else "-inf, and its gradient inf/NaN"
            name = "log" if log.op == o.LOG else log.op
            message = (f"{name} of {zero.what}{where}: {zero.why}, where {name} is {outcome}; "
                       + self.advice(zero))
            yield log.node, message, self.make_fix(ctx, log, zero), zero
        for call in ctx.calls(o.ATANH):
            # atanh(p) = log((1 + p) / (1 - p)) / 2: inf once the probability rounds to 1
            zero = zeros.reaches_zero(ctx, call.x, call.scope, kinds=(zeros.PROBABILITY,))
            if call.x is None or zero is None or "product" in zero.what:
                continue  # a product of probabilities is 1 only when every factor is
            where = origin_note(zero.value.ctx or ctx, zero.value)
            message = (f"atanh of {zero.what}{where}: it rounds to exactly 1 in float32 (a logit "
                       f"{_limits.shown(limits.SOFTMAX_ONE, call.framework)} or more above the others), "
                       "where atanh = log((1 + p) / (1 - p)) / 2 is inf and its gradient 1 / (1 - p**2) too; "
                       "work with the logit (atanh(sigmoid(z)) = softplus(z + log 2) / 2) or clip p below 1 - 1e-7")
            fix = fixes.Fix(fixes.DISPLAY_ONLY, "Use the logit: atanh(sigmoid(z)) = softplus(z + log 2) / 2")
            yield call.node, message, fix, zero

    @staticmethod
    def handled(ctx: RuleContext, log: OpCall) -> bool:
        """The log is assigned to a name whose non-finite values are replaced right after
        (``where(isfinite(lp), lp, c)``, ``nan_to_num(lp)``): the value is handled (a NaN
        gradient there is NAN205's)."""
        parent = ctx.parent(log.node)
        if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1
                and isinstance(parent.targets[0].target, cst.Name)):
            return False
        name = parent.targets[0].target.value
        for call in ctx.calls(o.IS_FINITE, o.IS_NAN, o.NAN_TO_NUM):
            if call.scope is log.scope and isinstance(call.x, cst.Name) and call.x.value == name:
                return True
        return False

    @staticmethod
    def advice(zero: zeros.Zero) -> str:
        if zero.kind == zeros.AFFINE:
            return "apply a positive activation (softplus, exp) or work with the logits"
        if far(zero.value) and zero.kind in (zeros.PROBABILITY, zeros.COMPLEMENT):
            return "return logits from there and use log_softmax / log_sigmoid"
        if zero.logit is not None:
            return "use log_sigmoid of the logit"
        if zero.reason == zeros.PRODUCT:
            return ("sum the logs of the factors instead (log(a * prod(b)) = log(a) + sum(log(b)); log1p(-p) for a "
                    "factor 1 - p, log_sigmoid of the logits), or guard it with an epsilon (1e-7)")
        if zero.reason == zeros.DROPPED:
            return "guard it with an epsilon that survives float32 (1e-7), or apply the dropout after the log"
        return "guard it with an epsilon that survives float32 (1e-7), or use a fused form"

    @staticmethod
    def make_fix(ctx: RuleContext, log: OpCall, zero: zeros.Zero) -> fixes.Fix:
        assert log.x is not None
        if zero.kind == zeros.AFFINE:
            return fixes.Fix(fixes.DISPLAY_ONLY, "Apply a positive activation (softplus) before the log")
        if far(zero.value):
            return fixes.Fix(fixes.DISPLAY_ONLY, "Return logits and use log_softmax / log_sigmoid")
        if log.op == o.LOG and zero.logit is not None and not zero.value.origins and zero.value.expr is log.x:
            built = spelled_call(ctx, log.framework, o.LOG_SIGMOID, log.scope, [("x", zero.logit)],
                                 prefer=(log.node.func,))
            if built is not None:
                return fixes.Fix(fixes.SAFE, "Use log_sigmoid of the logit", [(log.node, built[0])], built[1])
        return guard_fix(ctx, log, log.x, f"Guard the argument with an epsilon ({epsilon(ctx)})")
