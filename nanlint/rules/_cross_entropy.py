"""The shapes of a hand-written cross entropy, -sum(y * log(p)): read by NAN103 (softmax) and NAN104 (sigmoid)."""

from __future__ import annotations

from dataclasses import dataclass
import libcst as cst
from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.semantic.context import OpCall
from nanlint.rules.context import RuleContext
from nanlint.analysis.guards import constant
from nanlint.semantic.resolve import Scope


REDUCTIONS = (o.SUM, o.MEAN)


@dataclass
class Product:
    """``y * log(q)`` (either order); ``label`` is ``y`` without a leading minus."""

    label: cst.BaseExpression
    negated: bool
    log: OpCall


def product_with_log(ctx: RuleContext, expr: cst.BaseExpression | None, scope: Scope) -> Product | None:
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


def outer_negation(ctx: RuleContext, node: cst.CSTNode, scope: Scope) -> cst.UnaryOperation | None:
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


def axis_constant(ctx: RuleContext, expr: cst.BaseExpression | None, scope: Scope) -> int | None:
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
