"""Activations written by hand count as what they compute: ``1 / (1 + exp(-z))`` and
``e / (1 + e)`` with ``e = exp(z)`` are a sigmoid of ``z``, ``exp(z) / sum(exp(z), axis)``
a softmax of ``z`` -- inline, through names, or as the body of a user's helper
(``def sigmoid(z): return 1 / (1 + np.exp(-z))``, reached through its return)."""

from __future__ import annotations


import libcst as cst

from nanlint.vocabulary import ops as o
from nanlint.semantic.literals import is_one, same, terms

from nanlint.semantic.model import Model, OpCall
from nanlint.semantic.resolve import Scope


Found = tuple  # (op, the exp call it is built on, the node computing it, the logits)


def activation(ctx: "Model", expr: cst.BaseExpression, scope: "Scope", wanted: tuple[str, ...]) -> Found | None:
    """The hand-written sigmoid or softmax ``expr`` is: (op, its exp call, the node, the
    logits), if one of ``wanted``."""
    e = ctx.arithmetic(expr, scope)
    if not (isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Divide)):
        return None
    if o.SIGMOID in wanted:
        found = _sigmoid(ctx, e, scope)
        if found is not None:
            return found
    if o.SOFTMAX in wanted:
        return _softmax(ctx, e, scope)
    return None


def _exp(ctx: "Model", expr: cst.BaseExpression, scope: "Scope") -> "OpCall | None":
    found = ctx.op_of(expr, scope, o.EXP)
    return found[0] if found is not None and found[1].ctx is None and found[0].x is not None else None


def _sigmoid(ctx: "Model", e: cst.BinaryOperation, scope: "Scope") -> Found | None:
    chain = terms(e.right, ctx, scope)
    if len(chain) != 2 or any(sign < 0 for sign, _ in chain):
        return None
    one = [t for _, t in chain if is_one(t)]
    rest = [t for _, t in chain if not is_one(t)]
    if len(one) != 1 or len(rest) != 1:
        return None
    exp = _exp(ctx, rest[0], scope)
    if exp is None:
        return None
    if is_one(e.left):  # 1 / (1 + exp(-z))
        z = exp.x
        if isinstance(z, cst.UnaryOperation) and isinstance(z.operator, cst.Minus):
            return o.SIGMOID, exp, e, z.expression
        return None
    num = _exp(ctx, e.left, scope)  # e / (1 + e)
    if num is not None and num.node is exp.node:
        return o.SIGMOID, exp, e, exp.x
    return None


def _softmax(ctx: "Model", e: cst.BinaryOperation, scope: "Scope") -> Found | None:
    num = _exp(ctx, e.left, scope)
    den = ctx.op_of(e.right, scope, o.SUM)
    if num is None or den is None or den[1].ctx is not None or den[0].x is None:
        return None
    inner = _exp(ctx, den[0].x, scope)
    if inner is None or not (inner.node is num.node or same(inner.x, num.x)):
        return None
    return o.SOFTMAX, num, e, num.x
