"""NAN203 normalize-by-norm: ``x / norm(x)`` -> the framework's l2-normalize
(``tf.math.l2_normalize``, ``F.normalize``, ``keras.ops.normalize``), or in JAX
``x / sqrt(sum(square(x), axis, keepdims=True) + eps)``."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.semantic.context import FileContext, OpCall
from nanlint.semantic.resolve import Scope
from nanlint.analysis.facts import may_be_zero
from nanlint.analysis.gradients import not_differentiated
from nanlint.analysis.guards import constant
from nanlint.rules.base import Rule
from nanlint.rules._gradient_traps import (
    EPS_SQ,
    binop,
    divisions,
    euclidean_norm,
    follow,
    is_op,
    key,
    norm_as_sqrt_sum,
    sqrt_argument,
    sqrt_plus_eps,
    sum_of_squares,
)
from nanlint.analysis.gates.sites import POW_HALF, SLASH
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


def norm_in(ctx: FileContext, expr, scope: Scope, guard_ok: bool = True) -> Norm | None:
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


def _squared(ctx: FileContext, eps: cst.BaseExpression | None, scope: Scope) -> str:
    """The square of a guard's epsilon (``x / (norm + 1e-8)`` -> ``+ 1e-16`` under the sqrt,
    so the floor stays 1e-8), or the default 1e-12 when there was none."""
    value = constant(ctx, eps, scope) if eps is not None else None
    if value is None or not 0 < value < 1:
        return EPS_SQ
    return f"{value * value:g}"


def _true(expr) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


class NormalizeByNorm(Rule):
    code = "NAN203"
    # opt-in (docs/precision.md): normalize-by-norm: 0 of 1 true left on training code once embeddings are excluded
    default = False
    name = "normalize-by-norm"
    summary = "x / norm(x): NaN at the zero vector; use l2_normalize"
    fix = fixes.UNSAFE
    supersedes = ("NAN202",)
    needs = ("norm", "sqrt", "**", "pow")
    triggers = (frozenset({o.NORM, o.SQRT, POW_HALF}), frozenset({o.DIVIDE, SLASH}))

    def check(self, ctx: FileContext) -> None:
        for node, scope, num, den in divisions(ctx):
            resolved = ctx.resolve(den, scope)
            found = norm_in(ctx, den, scope)
            if found is None or key(ctx, num) != key(ctx, found.base):
                continue
            why = may_be_zero(ctx, found.base, scope)
            if why is None:
                continue  # an embedding, a ray, a weight vector: never exactly the zero vector
            if found.guarded and not found.grad_nan_at_zero:
                continue
            if found.guarded:
                if not_differentiated(ctx, node, found.framework):
                    continue  # the eps keeps the value finite: only the gradient is NaN
                message = (f"x / (norm(x) + eps) of {why} still has a NaN gradient at the zero vector in "
                           f"{found.framework.display} (the norm's own gradient at 0 is 0 * inf); "
                           "put the eps under the sqrt")
            else:
                message = (f"x / norm(x) of {why} is 0/0 = NaN at the zero vector (value and gradient); "
                           "use l2-normalize, which bounds the norm away from 0")
            ctx.report(node, message, self.make_fix(ctx, node, scope, num, den, found, resolved))

    @staticmethod
    def make_fix(ctx: FileContext, node, scope: Scope, num, den, found: Norm, resolved) -> fixes.Fix:
        fw = found.framework
        if not resolved.fixable_in(scope):
            return fixes.Fix(fixes.DISPLAY_ONLY, "Normalize with an epsilon")
        axis_known = found.axis is not None and _true(found.keepdims)
        if o.L2_NORMALIZE in fw.targets:
            message = "Replace with l2-normalize"
            spelling = ctx.spell(fw, o.L2_NORMALIZE, scope, prefer=(found.norm.node.func,) if found.norm else ())
            if spelling is None or not axis_known:
                return fixes.Fix(fixes.DISPLAY_ONLY, message)
            func, target, imports = spelling
            kw = target.keyword_for("axis")
            if kw is None:
                return fixes.Fix(fixes.DISPLAY_ONLY, message)
            new = fixes.call(func, [fixes.arg(num), fixes.arg(found.axis, kw)])  # type: ignore[arg-type]
            return fixes.Fix(fixes.UNSAFE, message, [(node, new)], imports)
        eps = _squared(ctx, found.eps, scope)  # the user's epsilon keeps its size under the sqrt
        message = f"Divide by sqrt(sum(square(x), axis, keepdims=True) + {eps})"
        if found.sqrt is not None and not found.guarded:
            how, root, arg = found.sqrt
            return fixes.Fix(fixes.UNSAFE, message, [(root, sqrt_plus_eps(ctx, how, root, arg, eps))])
        if found.norm is not None:
            built = norm_as_sqrt_sum(ctx, found.norm, scope, prefer=(found.norm.node.func,), eps=eps)
            if built is not None:
                return fixes.Fix(fixes.UNSAFE, message, [(den, built[0])], built[1])
        if found.sqrt is not None:
            how, root, arg = found.sqrt
            return fixes.Fix(fixes.UNSAFE, message, [(den, sqrt_plus_eps(ctx, how, root, arg, eps))])
        return fixes.Fix(fixes.DISPLAY_ONLY, message)
