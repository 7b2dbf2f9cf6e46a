"""NAN101 log-softmax: ``log(softmax(x))`` -> ``log_softmax(x)``; ``log(1 - softmax(x))``
-> its exact form, ``logsumexp`` of ``log_softmax(x)`` over the other classes
(:mod:`nanlint.rules._log1m_softmax`)."""

from __future__ import annotations

import libcst as cst

from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.semantic.context import OpCall
from nanlint.semantic.reach import origin_note
from nanlint.rules.context import RuleContext
from nanlint.semantic.reach import HANDWRITTEN, MERGED, SHAPE, Resolved
from nanlint.rules.base import Rule
from nanlint.rules import _limits
from nanlint.vocabulary import limits
from nanlint.rules import _log1m_softmax as log1m
from nanlint.rules._zero_fixes import epsilon, far, guard_fix
from nanlint.rules._fused import fused_call, log_softmax_fix


class LogSoftmax(Rule):
    code = "NAN101"
    name = "log-softmax"
    summary = "log of a softmax (or of 1 - softmax): use the fused log_softmax"
    fix = fixes.SAFE
    triggers = (frozenset({o.LOG}), frozenset({o.SOFTMAX}))

    def check(self, ctx: RuleContext) -> None:
        for log in ctx.calls(o.LOG):
            found = ctx.op_of(log.x, log.scope, o.SOFTMAX)
            if found is None:
                self.check_complement(ctx, log)
                continue
            softmax, resolved = found
            message = ("log of softmax is -inf/NaN once a probability underflows to 0; "
                       "use log_softmax" + origin_note(ctx, resolved))
            ctx.report(log.node, message, log_softmax_fix(ctx, log, softmax, resolved))


    # --- log(1 - softmax(z)) --------------------------------------------------------------
    def check_complement(self, ctx: RuleContext, log: OpCall) -> None:
        found = log1m.complement_of(ctx, log.x, log.scope)
        if found is None:
            return
        arg, p, softmax, resolved = found
        note = origin_note(ctx, arg) or origin_note(ctx, resolved)
        message = ("log(1 - softmax(z)) is -inf once a class saturates (in float32 a logit "
                   f"{_limits.shown(limits.SOFTMAX_ONE, softmax.framework)} or more above every other rounds its "
                   "probability to 1), and so is log1p(-softmax(z)); use the exact form, "
                   "logsumexp of log_softmax(z) over the other classes" + note)
        ctx.report(log.node, message, self.complement_fix(ctx, log, arg, p, softmax, resolved))

    @staticmethod
    def complement_fix(ctx: RuleContext, log: OpCall, arg: Resolved, p: cst.BaseExpression,
                       softmax: OpCall, resolved: Resolved) -> fixes.Fix:
        """The exact form when it can be written at the log; else the epsilon guard (what
        NAN107 gives any log of a value reaching 0), display-only for a model's output."""
        message = "Replace with the exact form: logsumexp of log_softmax over the other classes"
        if far(resolved):
            return fixes.Fix(fixes.DISPLAY_ONLY, "Return logits from there and use the exact form: "
                                                 "logsumexp of log_softmax over the other classes")
        built, missing = None, LogSoftmax.not_here(arg, resolved)
        if arg.fixable_in(log.scope) and resolved.fixable_in(log.scope) and resolved.repeatable_at(arg):
            axis = log1m.default_axis(softmax.framework, softmax.value("axis"))
            if not log1m.repeatable(softmax.x):
                missing = "logits the fix can repeat (a name, an attribute, arithmetic of those: no call)"
            elif axis is None:
                missing = "the softmax axis, known and repeatable (torch's softmax needs dim=)"
            elif not (log1m.repeatable(p) or p is softmax.node and all(
                    log1m.repeatable(a.value) for a in softmax.node.args)):
                missing = "the probability as a name, or a softmax of repeatable arguments"
            else:
                built = LogSoftmax.exact(ctx, log, p, softmax, axis)
        if built is None:
            return guard_fix(ctx, log, log.x,  # type: ignore[arg-type]
                             f"Guard the argument with an epsilon ({epsilon(ctx)}); the exact form needs {missing}")
        crossed = arg.crossed_statements or resolved.crossed_statements
        return fixes.Fix(fixes.UNSAFE if crossed else fixes.SAFE, message, [(log.node, built[0])], built[1])

    @staticmethod
    def not_here(arg: Resolved, resolved: Resolved) -> str:
        """What the exact form needs that a softmax not written at the log lacks."""
        via = arg.via | resolved.via
        if HANDWRITTEN in via:
            return "a softmax call (this one is written out as exp / sum)"
        if SHAPE in via:
            return "the whole softmax (not an indexed or reshaped part of it)"
        if MERGED in via:
            return "one softmax reaching the log (several values reach it)"
        return "the softmax computed in this function"

    @staticmethod
    def exact(ctx: RuleContext, log: OpCall, p: cst.BaseExpression, softmax: OpCall,
              axis: cst.BaseExpression) -> tuple[cst.Call, list[fixes.Import]] | None:
        prefer = (log.node.func,) if softmax.is_method else (softmax.node.func, log.node.func)
        log_softmax = fused_call(ctx, softmax, o.LOG_SOFTMAX, log.scope, prefer=(log.node.func,))
        if log_softmax is None:
            return None
        built = log1m.exact(ctx, softmax.framework, log.scope, p, log_softmax[0], axis, prefer,
                            log1m.indent_of(ctx, log.node))
        if built is None:
            return None
        return built[0], log_softmax[1] + [i for i in built[1] if i not in log_softmax[1]]
