"""NAN103 softmax-cross-entropy: a hand-written ``-sum(y * log(softmax(z)))`` -> the fused loss."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.semantic.context import FileContext, OpCall, origin_note
from nanlint.analysis.guards import constant
from nanlint.semantic.resolve import Scope
from nanlint.rules.base import Rule
from nanlint.rules.nan101_log_softmax import LogSoftmax

REDUCTIONS = (o.SUM, o.MEAN)


@dataclass
class Product:
    """``y * log(q)`` (either order); ``label`` is ``y`` without a leading minus."""

    label: cst.BaseExpression
    negated: bool
    log: OpCall


def product_with_log(ctx: FileContext, expr: cst.BaseExpression | None, scope: Scope) -> Product | None:
    if not (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply)):
        return None
    for factor, other in ((expr.right, expr.left), (expr.left, expr.right)):
        log = ctx.op_call(factor, scope)
        if log is None or log.op != o.LOG or log.x is None:
            continue
        negated = False
        if isinstance(other, cst.UnaryOperation) and isinstance(other.operator, cst.Minus):
            other, negated = other.expression, True
        return Product(other, negated, log)
    return None


def outer_negation(ctx: FileContext, node: cst.CSTNode, scope: Scope) -> cst.UnaryOperation | None:
    """The unary minus applied to ``node``, directly or through sum/mean reductions
    (``-tf.reduce_mean(tf.reduce_sum(...))``, ``-(...).sum(1).mean()``)."""
    cur = node
    for _ in range(8):
        parent = ctx.parent(cur)
        if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Minus):
            return parent
        call = None
        if isinstance(parent, cst.Arg):
            call = ctx.parent(parent)
        elif isinstance(parent, cst.Attribute) and parent.value is cur:
            call = ctx.parent(parent)
            if not (isinstance(call, cst.Call) and call.func is parent):
                return None
        if not isinstance(call, cst.Call):
            return None
        reduction = ctx.op_call(call, scope)
        if reduction is None or reduction.op not in REDUCTIONS or reduction.x is not cur:
            return None
        cur = call
    return None


def signed_replacement(site: cst.BaseExpression, positive: cst.BaseExpression,
                       negation: cst.UnaryOperation | None, flipped: bool) -> tuple[cst.CSTNode, cst.CSTNode]:
    """Replace ``site``, whose value is ``-positive`` (``+positive`` when ``flipped``),
    removing the user's minus sign where there is one."""
    if flipped:
        return site, positive
    if negation is not None:
        return negation, negation.expression.deep_replace(site, positive)  # type: ignore[arg-type]
    return site, fixes.negate(positive)


def axis_constant(ctx: FileContext, expr: cst.BaseExpression | None, scope: Scope) -> int | None:
    if expr is None:
        return None
    if isinstance(expr, (cst.List, cst.Tuple)) and len(expr.elements) == 1:
        expr = expr.elements[0].value
    value = constant(ctx, expr, scope)
    return int(value) if value is not None and value == int(value) else None


def replace_x(call: OpCall, new_x: cst.BaseExpression) -> cst.Call:
    arg = call.args["x"]
    return call.node.with_changes(args=[a.with_changes(value=new_x) if a is arg else a for a in call.node.args])


def string(text: str) -> cst.SimpleString:
    return cst.SimpleString(f'"{text}"')


class SoftmaxCrossEntropy(Rule):
    code = "NAN103"
    name = "softmax-cross-entropy"
    summary = "hand-written softmax cross entropy -sum(y * log(softmax(z))): use the fused loss"
    fix = fixes.SAFE  # the fused losses are unsafe; the log_softmax rewrite of an inline softmax is safe
    supersedes = ("NAN101",)
    triggers = (frozenset({o.SUM, o.MEAN}), frozenset({o.LOG}), frozenset({o.SOFTMAX}))

    def check(self, ctx: FileContext) -> None:
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
            ctx.report(site, message, self.make_fix(ctx, reduction, product, softmax, resolved, negation))

    def make_fix(self, ctx: FileContext, reduction: OpCall, product: Product, softmax: OpCall,
                 resolved, negation) -> fixes.Fix | None:
        log = product.log
        if not resolved.fixable_in(log.scope):
            return fixes.Fix(fixes.DISPLAY_ONLY, "Use the fused cross entropy where the softmax is computed")
        fused = self.fused(ctx, reduction, product, softmax)
        if fused is None:  # the log_softmax form: -sum(y * log_softmax(z))
            return LogSoftmax.make_fix(ctx, log, softmax, resolved)
        message, positive, imports = fused
        old, new = signed_replacement(reduction.node, positive, negation, product.negated)
        return fixes.Fix(fixes.UNSAFE, message, [(old, new)], imports)

    @staticmethod
    def fused(ctx: FileContext, reduction: OpCall, product: Product, softmax: OpCall):
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
