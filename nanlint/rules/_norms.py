"""Norms in a denominator (NAN203) or under an arccos (NAN204): what is normed, its guard, whether its gradient is NaN at 0."""

from __future__ import annotations

from dataclasses import dataclass
import libcst as cst
from nanlint.vocabulary import ops as o
from nanlint.semantic.context import OpCall
from nanlint.rules.context import RuleContext
from nanlint.semantic.resolve import Scope
from nanlint.analysis.guards import constant
from nanlint.rules._gradient_traps import EPS_SQ, binop, euclidean_norm, follow, is_op, sqrt_argument, sum_of_squares
from nanlint.semantic.literals import is_literal


@dataclass
class Norm:
    """A 2-norm of ``base`` in a denominator: a norm op, or a hand-written sqrt of a sum of squares."""

    framework: o.Framework
    base: cst.BaseExpression
    axis: cst.BaseExpression | None
    keepdims: cst.BaseExpression | None
    norm: OpCall | None = None  # the norm op
    sqrt: tuple | None = None  # (how, node, argument) of the hand-written sqrt
    guarded: bool = False  # ``norm + eps``, ``maximum(norm, eps)``, ``clip(norm, eps, ...)``
    eps: cst.BaseExpression | None = None  # that guard's epsilon

    @property
    def grad_nan_at_zero(self) -> bool:
        """Is the gradient NaN at 0 even with the eps guard (zero upstream gradient)?"""
        facts = self.framework.facts
        if self.norm is not None:
            return o.FACT_NORM_GRAD_NAN_AT_ZERO in facts and o.FACT_ZERO_UPSTREAM_SQRT_NAN in facts
        return o.FACT_ZERO_UPSTREAM_SQRT_NAN in facts


def norm_in(ctx: RuleContext, expr, scope: Scope, guard_ok: bool = True) -> Norm | None:
    expr, scope = follow(ctx, expr, scope)
    norm = is_op(ctx, expr, scope, o.NORM)
    if norm is not None and norm.x is not None and euclidean_norm(norm):
        return Norm(norm.framework, norm.x, norm.value("axis"), norm.value("keepdims"), norm=norm)
    root = sqrt_argument(ctx, expr, scope)
    if root is not None:
        found = sum_of_squares(ctx, root[2], scope)
        if found is not None and found[0] is not None:
            total, base = found
            fw = ctx.op_call(root[1], scope).framework if isinstance(root[1], cst.Call) else total.framework
            return Norm(fw, base, total.value("axis"), total.value("keepdims"), sqrt=root)
        return None
    if not guard_ok:
        return None
    b = binop(expr, cst.Add)
    if b is not None:
        for side, other in ((b.left, b.right), (b.right, b.left)):
            if is_literal(other):
                found = norm_in(ctx, side, scope, guard_ok=False)
                if found is not None:
                    found.guarded, found.eps = True, other
                    return found
        return None
    bound = is_op(ctx, expr, scope, o.MAXIMUM, o.CLIP)
    if bound is not None:
        for role, other in (("x", "y"), ("y", "x")) if bound.op == o.MAXIMUM else (("x", "lo"),):
            if bound.has(role) and is_literal(bound.value(other)):
                found = norm_in(ctx, bound.value(role), scope, guard_ok=False)
                if found is not None:
                    found.guarded, found.eps = True, bound.value(other)
                    return found
    return None


def _squared(ctx: RuleContext, eps: cst.BaseExpression | None, scope: Scope) -> str:
    """The square of a guard's epsilon (``x / (norm + 1e-8)`` -> ``+ 1e-16`` under the sqrt,
    so the floor stays 1e-8), or the default 1e-12 when there was none."""
    value = constant(ctx, eps, scope) if eps is not None else None
    if value is None or not 0 < value < 1:
        return EPS_SQ
    return f"{value * value:g}"


def _true(expr) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"
