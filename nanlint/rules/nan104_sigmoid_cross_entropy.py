"""NAN104 sigmoid-cross-entropy: ``y*log(p) + (1-y)*log(1-p)`` with ``p = sigmoid(z)``,
and the probability-input BCE losses fed a sigmoid -> the with-logits forms."""

from __future__ import annotations

import libcst as cst

from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.semantic.context import OpCall
from nanlint.semantic.reach import Resolved, origin_note
from nanlint.rules.context import RuleContext
from nanlint.analysis.guards import terms
from nanlint.semantic.resolve import Scope
from nanlint.rules.base import Rule
from nanlint.rules._fused import log_sigmoid_fix
from nanlint.rules._cross_entropy import outer_negation, product_with_log, signed_replacement, string
from nanlint.semantic.literals import normalized, one_minus
from nanlint.analysis.targets import constant_target
from nanlint.rules import _limits
from nanlint.vocabulary import limits


class SigmoidCrossEntropy(Rule):
    code = "NAN104"
    name = "sigmoid-cross-entropy"
    summary = "hand-written binary cross entropy on sigmoid(z), or BCE of a sigmoid: use the with-logits loss"
    fix = fixes.UNSAFE
    supersedes = ("NAN102",)
    triggers = (frozenset({o.LOG, o.BINARY_CROSS_ENTROPY, o.BCE_LOSS}), frozenset({o.SIGMOID}))

    def check(self, ctx: RuleContext) -> None:
        chains = [(node, scope) for node, scope in ctx.index.binops
                  if isinstance(node.operator, (cst.Add, cst.Subtract))]
        # the operands of a + or -: an unparenthesized one is part of a longer chain (no parent map needed)
        operands = {id(side) for node, _ in chains for side in (node.left, node.right)}
        for node, scope in chains:
            if not any(isinstance(t, cst.BinaryOperation) and isinstance(t.operator, cst.Multiply)
                       for _, t in terms(node)):
                continue
            if id(node) in operands and not node.lpar:
                continue  # part of a longer chain: handled from its top
            self.check_chain(ctx, node, scope)
        self.check_bce(ctx)

    # --- y*log(p) + (1-y)*log(1-p) -------------------------------------------------------
    def check_chain(self, ctx: RuleContext, node: cst.BinaryOperation, scope: Scope) -> None:
        pos, neg = [], []
        chain = terms(node)
        for sign, term in chain:
            product = product_with_log(ctx, term, scope)
            if product is None:
                continue
            if product.negated:
                sign = -sign
            log = product.log
            arg = ctx.resolve(log.x, scope, functions=True)  # type: ignore[arg-type]
            inner = ctx.op_of(arg.expr, arg.scope, o.SIGMOID, follow=False)
            if inner is not None:
                pos.append((sign, product, inner[0], arg, log))
                continue
            p = one_minus(arg.expr)
            label = one_minus(product.label)
            if p is None or label is None:
                continue
            found = ctx.op_of(p, arg.scope, o.SIGMOID)
            if found is not None:
                merged = Resolved(found[1].expr, found[1].scope, arg.origins + found[1].origins)
                neg.append((sign, product.__class__(label, product.negated, log), found[0], merged, log))
        for sp, pp, sig_p, res_p, log_p in pos:
            for sn, pn, sig_n, res_n, log_n in neg:
                if sp != sn or normalized(pp.label) != normalized(pn.label):
                    continue
                if sig_p is not sig_n and (sig_p.framework is not sig_n.framework or sig_p.x is None
                                           or sig_n.x is None or normalized(sig_p.x) != normalized(sig_n.x)):
                    continue
                note = origin_note(ctx, res_p) or origin_note(ctx, res_n)
                whole = len(chain) == 2
                negation = outer_negation(ctx, node, scope) if whole else None
                site = negation if negation is not None else node
                fw = sig_p.framework
                message = ("hand-written binary cross entropy on sigmoid(z): in float32 p rounds to 1 for "
                           f"z > {_limits.shown(limits.SIGMOID_ONE, fw)}, where log(1 - p) = -inf, and is 0 for "
                           f"z < {_limits.shown(limits.SIGMOID_ZERO, fw, sign=-1)} ({fw.display}), where log(p) = -inf; "
                           "a label of 0 or 1 does not cancel it (0 * -inf = NaN): the loss and gradient are NaN; "
                           "use the with-logits loss" + note)
                fix = self.chain_fix(ctx, node, scope, whole, sp < 0, pp.label, sig_p, res_p, res_n,
                                     log_p, log_n, negation)
                ctx.report(site, message, fix)
                return

    def chain_fix(self, ctx, node, scope, whole, flipped, label, sigmoid: OpCall, res_p, res_n,
                  log_p: OpCall, log_n: OpCall, negation) -> fixes.Fix | None:
        if not res_p.fixable_in(scope) or not res_n.fixable_in(scope):
            return fixes.Fix(fixes.DISPLAY_ONLY, "Use the with-logits loss where the sigmoid is computed")
        fw = sigmoid.framework
        z = sigmoid.x
        if z is None:
            return None
        if whole and fw.name in ("tensorflow", "torch"):
            op = o.SIGMOID_CROSS_ENTROPY
            spelling = ctx.spell(fw, op, scope, prefer=(getattr(sigmoid.node, "func", log_p.node.func), log_p.node.func))
            if spelling is not None:
                func, _, imports = spelling
                if fw.name == "tensorflow":
                    args = [fixes.arg(label, "labels"), fixes.arg(z, "logits")]
                else:
                    args = [fixes.arg(z), fixes.arg(label), fixes.arg(string("none"), "reduction")]
                positive = fixes.call(func, args)
                old, new = signed_replacement(node, positive, negation, flipped)
                return fixes.Fix(fixes.UNSAFE, "Replace with the with-logits cross entropy", [(old, new)], imports)
        # y*log_sigmoid(z) + (1-y)*log_sigmoid(-z): NAN102's fix at both logs
        crossed = bool(res_p.origins or res_n.origins)
        a = log_sigmoid_fix(ctx, log_p, sigmoid, False, crossed, False)
        b = log_sigmoid_fix(ctx, log_n, sigmoid, True, crossed, False)
        if not a.replacements or not b.replacements:
            return fixes.Fix(fixes.DISPLAY_ONLY, "Use log_sigmoid(z) and log_sigmoid(-z)")
        applicability = fixes.UNSAFE if crossed else fixes.SAFE
        return fixes.Fix(applicability, "Replace with log_sigmoid(z) and log_sigmoid(-z)",
                         a.replacements + b.replacements, list(dict.fromkeys(a.imports + b.imports)))

    # --- BCE losses on probabilities fed a sigmoid ---------------------------------------------
    def check_bce(self, ctx: RuleContext) -> None:
        for call in ctx.calls(o.BINARY_CROSS_ENTROPY):
            # Keras' binary_crossentropy is not flagged: measured (Keras 3.15, TF backend) it
            # recovers the logits of an ops.sigmoid output and is exact (20.0 at z = 20).
            if call.framework.name != "torch":
                continue
            found = ctx.op_of(call.x, call.scope, o.SIGMOID)
            if found is None:
                continue
            sigmoid, resolved = found
            target = call.args.get("labels")
            message, may = bce_message(ctx, "binary_cross_entropy", target.value if target else None, call.scope)
            message += "; use binary_cross_entropy_with_logits" + origin_note(ctx, resolved)
            ctx.report(call.node, message, self.bce_fix(ctx, call, sigmoid, resolved), may=may)
        if next(ctx.calls(o.BCE_LOSS), None) is None:
            return  # no nn.BCELoss() is built here
        for node, scope in ctx.index.calls:
            if not node.args:
                continue
            ctor = ctx.op_of(node.func, scope, o.BCE_LOSS)
            if ctor is None:
                continue
            constructor, ctor_resolved = ctor
            first = node.args[0]
            if first.keyword is not None and first.keyword.value != "input":
                continue
            found = ctx.op_of(first.value, scope, o.SIGMOID)
            if found is None:
                continue
            sigmoid, resolved = found
            target = next((a for a in node.args[1:] if a.keyword is not None and a.keyword.value == "target"), None)
            if target is None and len(node.args) > 1 and node.args[1].keyword is None:
                target = node.args[1]
            message, may = bce_message(ctx, "BCELoss", target.value if target else None, scope)
            message += "; use BCEWithLogitsLoss on the logits" + origin_note(ctx, resolved)
            fix = None
            if ctor_resolved.crossed_statements or not resolved.fixable_in(scope):
                fix = fixes.Fix(fixes.DISPLAY_ONLY, "Use nn.BCEWithLogitsLoss() on the logits")
            elif sigmoid.x is not None:
                spelling = ctx.spell(constructor.framework, o.BCE_WITH_LOGITS_LOSS, scope,
                                     prefer=(constructor.node.func,))
                if spelling is not None:
                    func, _, imports = spelling
                    new_ctor = constructor.node.with_changes(func=func)
                    new = node.with_changes(func=new_ctor, args=[first.with_changes(value=sigmoid.x)]
                                            + list(node.args[1:]))
                    fix = fixes.Fix(fixes.UNSAFE, "Replace with BCEWithLogitsLoss on the logits",
                                    [(node, new)], imports)
            ctx.report(node, message, fix, may=may)

    @staticmethod
    def bce_fix(ctx: RuleContext, call: OpCall, sigmoid: OpCall, resolved) -> fixes.Fix:
        message = "Pass the logits to the with-logits loss"
        if not resolved.fixable_in(call.scope) or sigmoid.x is None:
            return fixes.Fix(fixes.DISPLAY_ONLY, message)
        x_arg = call.args["x"]
        spelling = ctx.spell(call.framework, o.SIGMOID_CROSS_ENTROPY, call.scope, prefer=(call.node.func,))
        if spelling is None:
            return fixes.Fix(fixes.DISPLAY_ONLY, message)
        func, _, imports = spelling
        args = [a.with_changes(value=sigmoid.x) if a is x_arg else a for a in call.node.args]
        new = call.node.with_changes(func=func, args=args)
        return fixes.Fix(fixes.UNSAFE, message, [(call.node, new)], imports)



def bce_message(ctx: RuleContext, loss: str, target: cst.BaseExpression | None, scope: Scope) -> tuple[str, bool]:
    """What torch's BCE of a sigmoid gets wrong, on the side(s) of the loss its target
    evaluates (a constant target of 1 evaluates only log(p), of 0 only log(1 - p)), and
    whether that evidence is weak (a target of ones: wrong only for a logit far below 0)."""
    one = _limits.shown(limits.SIGMOID_ONE, "torch")
    zero = _limits.shown(limits.SIGMOID_ZERO, "torch", sign=-1)
    clamp, fade = limits.TORCH_BCE_LOG_CLAMP, limits.TORCH_BCE_GRAD_FADE
    ones_side = (f"the gradient fades to 0 for z < ~-{fade:g} (torch divides by max(p * (1 - p), 1e-12)), and "
                 f"for z < {zero} p is 0 and the loss {clamp} instead of |z|")
    zeros_side = f"for z > {one} p rounds to 1 and the loss is {clamp} instead of z, with gradient 0"
    found = constant_target(ctx, target, scope)
    if target is not None and found is not None and found.value in (0.0, 1.0):
        where = origin_note(ctx, found.value_of) or f" (`{ctx.code(target)}`)"
        if found.value == 1.0:
            return (f"{loss} of a sigmoid against a target of ones{where}: only log(p) is evaluated; "
                    f"in float32 {ones_side}"), True
        return (f"{loss} of a sigmoid against a target of zeros{where}: only log(1 - p) is evaluated, "
                f"which torch clamps at -{clamp}; in float32 {zeros_side}"), False
    return (f"{loss} of a sigmoid: torch clamps its logs at -{clamp}; in float32, on a target of 0 {zeros_side}; "
            f"on a target of 1 {ones_side}"), False
