"""NAN103 softmax-cross-entropy: a hand-written ``-sum(y * log(softmax(z)))`` -> the fused loss."""

from __future__ import annotations



from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.semantic.context import OpCall
from nanlint.semantic.reach import origin_note
from nanlint.rules.context import RuleContext
from nanlint.rules.base import Rule
from nanlint.rules._fused import log_softmax_fix
from nanlint.rules._cross_entropy import (REDUCTIONS, Product, axis_constant, bind_logits, outer_negation,
                                         product_with_log, replace_x, signed_replacement, string)


class SoftmaxCrossEntropy(Rule):
    code = "NAN103"
    name = "softmax-cross-entropy"
    summary = "hand-written softmax cross entropy -sum(y * log(softmax(z))): use the fused loss"
    fix = fixes.SAFE  # the fused losses are unsafe; the log_softmax rewrite of an inline softmax is safe
    supersedes = ("NAN101",)
    triggers = (frozenset({o.SUM, o.MEAN}), frozenset({o.LOG}), frozenset({o.SOFTMAX}))

    def check(self, ctx: RuleContext) -> None:
        for reduction in ctx.calls(*REDUCTIONS):
            product = product_with_log(ctx, reduction.x, reduction.scope)
            if product is None:
                continue
            found = ctx.op_of(product.log.x, reduction.scope, o.SOFTMAX)
            if found is None:
                continue
            softmax, resolved = found
            negation = outer_negation(ctx, reduction.node, reduction.scope)
            site = negation if negation is not None else reduction.node
            message = ("hand-written softmax cross entropy: softmax underflows to 0, log(0) = -inf "
                       "and y * -inf is NaN in the loss and its gradient; use the fused loss "
                       "on the logits" + origin_note(ctx, resolved))
            fix = self.make_fix(ctx, reduction, product, softmax, resolved, negation)
            if resolved.crossed_statements:  # the loss would compute the softmax's logits again
                fix = bind_logits(ctx, fix, softmax, site)
            ctx.report(site, message, fix)

    def make_fix(self, ctx: RuleContext, reduction: OpCall, product: Product, softmax: OpCall,
                 resolved, negation) -> fixes.Fix | None:
        log = product.log
        if not resolved.fixable_in(log.scope):  # a reshaped softmax: log_softmax, the layout carried
            carried = log_softmax_fix(ctx, log, softmax, resolved)
            if carried is not None and carried.replacements:
                return carried
            return fixes.Fix(fixes.DISPLAY_ONLY, "Use the fused cross entropy where the softmax is computed")
        fused = self.fused(ctx, reduction, product, softmax)
        if fused is None:  # the log_softmax form: -sum(y * log_softmax(z))
            return log_softmax_fix(ctx, log, softmax, resolved)
        message, positive, imports = fused
        old, new = signed_replacement(reduction.node, positive, negation, product.negated)
        return fixes.Fix(fixes.UNSAFE, message, [(old, new)], imports)

    @staticmethod
    def fused(ctx: RuleContext, reduction: OpCall, product: Product, softmax: OpCall):
        """The positive loss ``-reduction(y * log(softmax(z)))`` as a fused call, when the
        reduction matches one exactly; None otherwise."""
        if reduction.op != o.SUM or reduction.has("keepdims") or softmax.has("dtype"):
            return None
        logits = softmax.x
        if logits is None:
            return None
        scope = reduction.scope
        fw = softmax.framework
        red_axis = reduction.value("axis")
        if fw.name == "tensorflow":
            soft_axis = softmax.value("axis")
            soft_value = axis_constant(ctx, soft_axis, softmax.scope) if soft_axis is not None else -1
            whole = red_axis is None
            if not whole and not (soft_value is not None and axis_constant(ctx, red_axis, scope) == soft_value):
                return None
            spelling = ctx.spell(fw, o.SOFTMAX_CROSS_ENTROPY, scope, prefer=(softmax.node.func, product.log.node.func))
            if spelling is None:
                return None
            func, _, imports = spelling
            args = [fixes.arg(product.label, "labels"), fixes.arg(logits, "logits")]
            if soft_axis is not None and soft_value != -1:
                args.append(fixes.arg(soft_axis, "axis"))
            call = fixes.call(func, args)
            if whole:
                return "Replace with reduce_sum of softmax_cross_entropy_with_logits", replace_x(reduction, call), imports
            return "Replace with softmax_cross_entropy_with_logits", call, imports
        if fw.name == "torch":
            # F.cross_entropy takes the classes on dim 1 (probability targets: reduction
            # "sum" sums every element, "none" keeps all but dim 1)
            if axis_constant(ctx, softmax.value("axis"), softmax.scope) != 1:
                return None
            if red_axis is None:
                kind = "sum"
            elif axis_constant(ctx, red_axis, scope) == 1:
                kind = "none"
            else:
                return None
            spelling = ctx.spell(fw, o.CROSS_ENTROPY, scope, prefer=(softmax.node.func, product.log.node.func))
            if spelling is None:
                return None
            func, _, imports = spelling
            call = fixes.call(func, [fixes.arg(logits), fixes.arg(product.label),
                                     fixes.arg(string(kind), "reduction")])
            return f'Replace with cross_entropy(logits, y, reduction="{kind}")', call, imports
        return None
