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


def whole_max(ctx: RuleContext, expr: cst.BaseExpression, scope: Scope) -> bool:
    """``m`` is the max of a whole tensor: a reduce-max given no axis (``tf.reduce_max(x)``,
    ``x.max()``), through names."""
    found = ctx.op_of(expr, scope, o.REDUCE_MAX)
    return found is not None and found[0].x is not None and not found[0].has("axis")


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
            if not self.inline(ctx, log, arg):
                self.through_names(ctx, log)

    def inline(self, ctx: RuleContext, log: OpCall, arg: Resolved) -> bool:
        """The forms of the log's argument itself (after one name): ``1 + exp(x)``,
        ``exp(a) + exp(b)``, ``sum(exp(x))``; False when it has none of those shapes."""
        chain = terms(arg.expr, ctx, arg.scope)
        if len(chain) == 2 and all(sign > 0 for sign, _ in chain):
            exps = [self.exp_of(ctx, t, arg.scope) for _, t in chain]
            ones = [constant(ctx, t, arg.scope) == 1.0 for _, t in chain]
            if exps[0] is None and exps[1] is None:
                return False
            if self.kept_finite(ctx, log):
                return True
            if exps[0] is not None and exps[1] is not None:
                a, scope_a, crossed_a, note_a = self.reached(ctx, arg, exps[0])
                b, scope_b, crossed_b, note_b = self.reached(ctx, arg, exps[1])
                scope = scope_a if scope_a is scope_b else None
                self.logaddexp(ctx, log, a, b, crossed_a or crossed_b, scope, note_a or note_b)
                return True
            if (exps[0] is not None and ones[1]) or (exps[1] is not None and ones[0]):
                exp, scope, crossed, note = self.reached(ctx, arg, exps[0] or exps[1])  # type: ignore[arg-type]
                self.softplus(ctx, log, exp, crossed, scope, note)
                return True
            return False
        if len(chain) == 1:
            total = ctx.op_call(arg.expr, arg.scope)
            if total is None or total.op != o.SUM or total.x is None:
                return False
            found = ctx.op_of(total.x, arg.scope, o.EXP)
            if found is None:
                return False
            exp, inner = found
            subtrahend = shifted(ctx, exp.x, inner.scope)
            if subtrahend is not None and total.has("axis") and whole_max(ctx, subtrahend, inner.scope) \
                    and not self.kept_finite(ctx, log):
                exp, scope, crossed, note = self.reached(ctx, arg, found)
                self.shifted_by_whole_max(ctx, log, total, exp, crossed, scope, note)
                return True
            if subtrahend is not None or bounded_exponent(ctx, exp.x, inner.scope) or self.kept_finite(ctx, log):
                return True
            exp, scope, crossed, note = self.reached(ctx, arg, found)
            self.logsumexp(ctx, log, total, exp, crossed, scope, note)
            return True
        return False

    def through_names(self, ctx: RuleContext, log: OpCall) -> None:
        """``Z = exp(a).sum() + exp(b).sum(); log(Z + 1e-8)``: a sum of exponentials (and of
        sums of them) reached through names, with epsilons beside (below 1: one keeps the
        log from -inf, not the exps from overflowing).  One exp-sum: logsumexp
        (unsafe: the epsilon goes, a statement is crossed); several: display-only, with
        the stable form in the message."""
        found = sums_of_exps(ctx, log.x, log.scope)  # type: ignore[arg-type]
        if found is None:
            return
        parts, constants, origin = found
        if len(parts) + len(constants) < 2 and origin is None:
            return  # the inline forms are inline()'s
        if len(parts) == 1 and parts[0][2] is None:
            return  # log(exp(y)) through a name: no sum (y itself, tfp's special.py)
        if any(c >= 1 for c in constants):
            return  # log(2 + exp(x)): no exact primitive; 1 + exp is softplus, inline()'s
        if any(shifted(ctx, exp.x, exp.scope) is not None for _, exp, _ in parts) or self.kept_finite(ctx, log):
            return
        note = origin_note(ctx, origin) if origin is not None else ""
        eps = [c for c in constants if c > 0]
        added = f"{eps[0]:g}".replace("e-0", "e-") if eps else ""
        guard = f"; the {added} added keeps it from -inf, not the exponentials from overflowing" if eps else ""
        shown = " + ".join(" ".join(ctx.code(node).split())[:40] for node, _, _ in parts)
        if len(parts) == 1:
            node, exp, total = parts[0]
            low = "" if eps else (" and is -inf when every exponent is below "
                                  f"{_limits.shown(limits.EXP_UNDERFLOW, exp.framework, sign=-1)}")
            message = (f"log of a sum of exponentials ({shown}) overflows for an exponent > "
                       f"{_limits.shown(limits.EXP_OVERFLOW, exp.framework)} in float32 "
                       f"(inf, NaN gradient){low}{guard}; use logsumexp(x, axis)" + note)
            fix = None
            if total is not None and exp.scope is log.scope:
                fix = self.logsumexp_fix(ctx, log, total, exp, True)
                if fix is not None and eps:
                    fix = fixes.Fix(fix.applicability, "Replace with logsumexp (without the epsilon: exact where "
                                    "the sum underflowed)", fix.replacements, fix.imports)
            ctx.report(log.node, message, fix or fixes.Fix(fixes.DISPLAY_ONLY, "Use logsumexp(x, axis)"))
            return
        overflow = _limits.shown(limits.EXP_OVERFLOW, parts[0][1].framework)
        message = (f"log of a sum of exponentials ({shown}) overflows once an exponent passes {overflow} in float32 "
                   f"(inf, NaN gradient){guard}; use the stable form: m = the largest exponent, "
                   f"m + log(sum(exp(x - m)) + ...) term by term, or logsumexp over the exponents "
                   f"concatenated" + note)
        ctx.report(log.node, message, fixes.Fix(fixes.DISPLAY_ONLY,
                                                "Use logsumexp over the exponents concatenated (their max shifted out)"))

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
        # None: no rewrite (also when the log's argument reads names rebound before the log)
        scope = inner.scope if inner.fixable_in(inner.scope, ctx) and inner.repeatable_at(arg) else None
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
        fix = self.logsumexp_fix(ctx, log, total, exp, crossed) if scope is log.scope else None
        ctx.report(log.node, message, fix or fixes.Fix(fixes.DISPLAY_ONLY, "Use logsumexp(x, axis)"))

    def shifted_by_whole_max(self, ctx, log: OpCall, total: OpCall, exp: OpCall, crossed: bool, scope: Scope,
                             note: str) -> None:
        message = ("log(sum(exp(x - m))) along an axis, with m the max of the whole tensor (no axis): the shift "
                   "keeps exp from overflowing, but a row whose values all lie more than "
                   f"{_limits.shown(limits.EXP_UNDERFLOW, exp.framework)} below the tensor's max sums to 0 "
                   f"in float32 ({exp.framework.display}), and its log is -inf; take the max along the summed "
                   "axis (keepdims), or use logsumexp(x, axis)" + note)
        fix = self.logsumexp_fix(ctx, log, total, exp, crossed) if scope is log.scope else None
        ctx.report(log.node, message, fix or fixes.Fix(fixes.DISPLAY_ONLY, "Use logsumexp(x, axis)"))

    def logsumexp_fix(self, ctx, log: OpCall, total: OpCall, exp: OpCall, crossed: bool) -> fixes.Fix | None:
        if total.framework is not exp.framework:
            return None
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
        if new is None:
            return None
        return fixes.Fix(self.applicability(crossed), "Replace with logsumexp", [(log.node, new)], imports)


MAX_TERMS = 8


def sums_of_exps(ctx: RuleContext, expr: cst.BaseExpression, scope: Scope, depth: int = 3):
    """``expr`` as a sum of unbounded exponentials and sums of them, through names assigned
    once (``Z = exp(a).sum() + exp(b).sum()``), beside non-negative constants: ([(term,
    exp, the sum or None)], [constants], the first name's value followed or None); None
    when another term is there (a value the code does not show is an exp)."""
    parts: list = []
    constants: list[float] = []
    origin = None
    work = [(expr, scope, depth)]
    while work:
        e, s, d = work.pop(0)
        for sign, t in terms(e, ctx, s):
            if sign < 0 or len(parts) + len(constants) > MAX_TERMS:
                return None
            c = constant(ctx, t, s)
            if c is not None:
                if c < 0:
                    return None
                constants.append(c)
                continue
            if isinstance(t, (cst.Name, cst.Attribute)) and d > 0:
                r = ctx.resolve(t, s)
                if r.expr is not t and r.ctx is None:
                    origin = origin or r
                    work.append((r.expr, r.scope, d - 1))
                    continue
            total = ctx.op_call(t, s)
            if total is not None and total.op == o.SUM and total.x is not None:
                found = ctx.op_of(total.x, s, o.EXP)
                if found is None or found[0].x is None or bounded_exponent(ctx, found[0].x, found[1].scope):
                    return None
                parts.append((t, found[0], total))
                continue
            found = LogSumExp.exp_of(ctx, t, s)
            if found is None:
                return None
            parts.append((t, found[0], None))
    return (parts, constants, origin) if parts else None
