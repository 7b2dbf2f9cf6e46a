"""NAN106 log-sum-exp: ``log(1 + exp(x))``/``log1p(exp(x))`` -> softplus,
``log(sum(exp(x), axis))`` -> logsumexp, ``log(exp(a) + exp(b))`` -> logaddexp."""

from __future__ import annotations

import libcst as cst

from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.semantic.context import OpCall
from nanlint.semantic.reach import Resolved, origin_note
from nanlint.rules.context import RuleContext
from nanlint.analysis.facts import bounded_exponent
from nanlint.analysis.gradients import not_differentiated
from nanlint.analysis.guards import constant, terms
from nanlint.semantic.resolve import Scope
from nanlint.semantic.literals import normalized
from nanlint.rules.base import Rule
from nanlint.rules import _limits
from nanlint.vocabulary import limits

def shifted(ctx: RuleContext, expr: cst.BaseExpression | None, scope: Scope) -> cst.BaseExpression | None:
    """``exp(x - m)``, also through ``shifted = x - m``: the subtrahend ``m`` of a
    max-shifted exponent (a hand-written stable logsumexp), else None."""
    if expr is None:
        return None
    found = None
    for r in ctx.values(expr, scope, calls=False):  # every value: if/else may shift two ways
        e = ctx.arithmetic(r.expr, r.scope) if r.ctx is None else r.expr
        if not (isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Subtract)):
            return None
        found = found if found is not None else e.right
    return found


def adds_back(ctx: RuleContext, log: cst.CSTNode, subtrahend: cst.BaseExpression) -> bool:
    """``m + log1p(exp(x - m))``: the log is added to the very term its exponent subtracts
    (the stable softplus/logaddexp form)."""
    parent = ctx.parent(log)
    if not (isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Add)):
        return False
    other = parent.right if parent.left is log else parent.left
    return normalized(other) == normalized(subtrahend)


def in_where_branch(ctx: RuleContext, log: OpCall) -> bool:
    """``where(x < cutoff, log1p(exp(x)), softplus(x))``: the log is a branch of a where."""
    node, parent = log.node, ctx.parent(log.node)
    for _ in range(4):
        if isinstance(parent, cst.Arg):
            parent = ctx.parent(parent)
        if parent is None:
            return False
        if isinstance(parent, cst.Call):
            call = ctx.op_call(parent, log.scope)
            if call is not None and call.op == o.WHERE:
                return any(call.value(role) is node for role in ("x", "y"))
        node, parent = parent, ctx.parent(parent)
    return False


class LogSumExp(Rule):
    code = "NAN106"
    name = "log-sum-exp"
    summary = "log(1 + exp(x)), log(sum(exp(x))), log(exp(a) + exp(b)): use softplus/logsumexp/logaddexp"
    fix = fixes.SAFE
    needs = ("exp",)
    triggers = (frozenset({o.LOG, o.LOG1P}), frozenset({o.EXP}))

    def check(self, ctx: RuleContext) -> None:
        for log in ctx.calls(o.LOG, o.LOG1P):
            if log.x is None:
                continue
            arg = ctx.resolve(log.x, log.scope)
            if log.op == o.LOG1P:
                found = self.exp_of(ctx, arg.expr, arg.scope)
                if found is not None and not self.kept_finite(ctx, log):
                    exp, scope, crossed, note = self.reached(ctx, arg, found)
                    self.softplus(ctx, log, exp, crossed, scope, note)
                continue
            chain = terms(arg.expr, ctx, arg.scope)
            if len(chain) == 2 and all(sign > 0 for sign, _ in chain):
                exps = [self.exp_of(ctx, t, arg.scope) for _, t in chain]
                ones = [constant(ctx, t, arg.scope) == 1.0 for _, t in chain]
                if (exps[0] is not None or exps[1] is not None) and self.kept_finite(ctx, log):
                    continue
                if exps[0] is not None and exps[1] is not None:
                    a, scope_a, crossed_a, note_a = self.reached(ctx, arg, exps[0])
                    b, scope_b, crossed_b, note_b = self.reached(ctx, arg, exps[1])
                    scope = scope_a if scope_a is scope_b else None
                    self.logaddexp(ctx, log, a, b, crossed_a or crossed_b, scope, note_a or note_b)
                elif (exps[0] is not None and ones[1]) or (exps[1] is not None and ones[0]):
                    exp, scope, crossed, note = self.reached(ctx, arg, exps[0] or exps[1])  # type: ignore[arg-type]
                    self.softplus(ctx, log, exp, crossed, scope, note)
                continue
            if len(chain) == 1:
                total = ctx.op_call(arg.expr, arg.scope)
                if total is None or total.op != o.SUM or total.x is None:
                    continue
                found = ctx.op_of(total.x, arg.scope, o.EXP)
                if found is None:
                    continue
                exp, inner = found
                if shifted(ctx, exp.x, inner.scope) is not None or bounded_exponent(ctx, exp.x, inner.scope) \
                        or self.kept_finite(ctx, log):
                    continue
                exp, scope, crossed, note = self.reached(ctx, arg, found)
                self.logsumexp(ctx, log, total, exp, crossed, scope, note)

    @staticmethod
    def kept_finite(ctx: RuleContext, log: OpCall) -> bool:
        """The log is a branch of a where that keeps the value finite, and no gradient is
        taken through it (only a gradient could be NaN).  Asked only of a log that would
        be reported: it needs the file's parent map."""
        return in_where_branch(ctx, log) and not_differentiated(ctx, log.node, log.framework)

    @staticmethod
    def exp_of(ctx: RuleContext, expr: cst.BaseExpression, scope: Scope) -> tuple[OpCall, Resolved] | None:
        """The unbounded ``exp`` call ``expr`` is, also through a name (``e = exp(x)``)."""
        found = ctx.op_of(expr, scope, o.EXP)
        if found is None or found[0].x is None or bounded_exponent(ctx, found[0].x, found[1].scope):
            return None
        return found

    @staticmethod
    def reached(ctx: RuleContext, arg: Resolved, found: tuple[OpCall, Resolved]):
        """(the exp, the scope its argument is written in, whether a statement was crossed
        on the way from the log, the note saying where) for an exp found under ``arg``."""
        exp, inner = found
        crossed = arg.crossed_statements or inner.crossed_statements
        scope = inner.scope if inner.fixable_in(inner.scope, ctx) else None  # None: no rewrite
        return exp, scope, crossed, origin_note(ctx, inner) or origin_note(ctx, arg)

    @staticmethod
    def applicability(crossed: bool) -> str:
        return fixes.UNSAFE if crossed else fixes.SAFE

    def softplus(self, ctx, log: OpCall, exp: OpCall, crossed: bool, scope: Scope, note: str) -> None:
        subtrahend = shifted(ctx, exp.x, scope)
        if subtrahend is not None and adds_back(ctx, log.node, subtrahend):
            return  # m + log1p(exp(x - m)): already the stable form
        what = "log1p(exp(x))" if log.op == o.LOG1P else "log(1 + exp(x))"
        message = (f"{what} overflows: exp(x) is inf for x > {_limits.shown(limits.EXP_OVERFLOW, exp.framework)} "
                   "in float32, so the value is inf and "
                   f"the gradient NaN; use softplus(x)" + note)
        fix = None
        if scope is log.scope:
            spelling = ctx.spell(exp.framework, o.SOFTPLUS, log.scope, prefer=(exp.node.func, log.node.func))
            if spelling is not None:
                func, _, imports = spelling
                new = fixes.call(func, [fixes.arg(exp.x)])  # type: ignore[arg-type]
                fix = fixes.Fix(self.applicability(crossed), "Replace with softplus", [(log.node, new)], imports)
        ctx.report(log.node, message, fix or fixes.Fix(fixes.DISPLAY_ONLY, "Use softplus(x)"))

    def logaddexp(self, ctx, log: OpCall, a: OpCall, b: OpCall, crossed: bool, scope: Scope, note: str) -> None:
        message = (f"log(exp(a) + exp(b)) overflows for a or b > {_limits.shown(limits.EXP_OVERFLOW, a.framework)} "
                   "(inf, NaN gradient) and is -inf when both are below "
                   f"{_limits.shown(limits.EXP_UNDERFLOW, a.framework, sign=-1)} (float32, {a.framework.display}); "
                   "use logaddexp(a, b)" + note)
        fix = None
        if a.framework is b.framework and scope is log.scope:
            if a.framework.name == "tensorflow":  # TF has no logaddexp op
                fix = fixes.Fix(fixes.DISPLAY_ONLY,
                                "TensorFlow has no logaddexp: use tf.math.reduce_logsumexp(tf.stack([a, b]), axis=0) "
                                "(same shapes) or m = tf.maximum(a, b); m + tf.math.log(tf.exp(a - m) + tf.exp(b - m))")
            else:
                spelling = ctx.spell(a.framework, o.LOGADDEXP, log.scope, prefer=(a.node.func, log.node.func))
                if spelling is not None:
                    func, _, imports = spelling
                    new = fixes.call(func, [fixes.arg(a.x), fixes.arg(b.x)])  # type: ignore[arg-type]
                    fix = fixes.Fix(self.applicability(crossed), "Replace with logaddexp", [(log.node, new)], imports)
        ctx.report(log.node, message, fix or fixes.Fix(fixes.DISPLAY_ONLY, "Use logaddexp(a, b)"))

    def logsumexp(self, ctx, log: OpCall, total: OpCall, exp: OpCall, crossed: bool, scope: Scope, note: str) -> None:
        message = (f"log(sum(exp(x))) overflows for x > {_limits.shown(limits.EXP_OVERFLOW, exp.framework)} "
                   "(inf, NaN gradient) and is -inf when every x is below "
                   f"{_limits.shown(limits.EXP_UNDERFLOW, exp.framework, sign=-1)} (float32, {exp.framework.display}); "
                   "use logsumexp(x, axis)" + note)
        fix = None
        if scope is log.scope and total.framework is exp.framework:
            fw = total.framework
            new = None
            imports: list = []
            method = fw.methods.get("logsumexp") if total.is_method else None
            if method is not None and exp.is_method and total.has("axis"):
                args = ctx.carry_args(total, method, ("axis", "keepdims"))
                if args is not None:
                    new = fixes.call(cst.Attribute(exp.receiver, cst.Name("logsumexp")), args)  # type: ignore[arg-type]
            elif not (fw.name == "torch" and not total.has("axis")):  # torch.logsumexp needs dim
                spelling = ctx.spell(fw, o.LOGSUMEXP, log.scope, prefer=(total.node.func, log.node.func))
                if spelling is not None:
                    func, target, imports = spelling
                    args = ctx.carry_args(total, target, ("x", "axis", "keepdims"), x=exp.x)
                    if args is not None:
                        new = fixes.call(func, args)
            if new is not None:
                fix = fixes.Fix(self.applicability(crossed), "Replace with logsumexp", [(log.node, new)], imports)
        ctx.report(log.node, message, fix or fixes.Fix(fixes.DISPLAY_ONLY, "Use logsumexp(x, axis)"))
