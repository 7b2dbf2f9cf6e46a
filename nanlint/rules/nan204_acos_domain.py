"""NAN204 acos-domain: ``acos``/``asin`` of a dot product or cosine, which rounding
pushes past 1 -> ``acos(clip(c, -1 + 1e-7, 1 - 1e-7))``."""

from __future__ import annotations

import libcst as cst

from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.semantic.context import OpCall
from nanlint.rules.context import RuleContext
from nanlint.semantic.resolve import Scope
from nanlint.rules.base import Rule
from nanlint.vocabulary import limits
from nanlint.rules._gradient_traps import binop, clip_method, follow, is_op, spelled_call
from nanlint.rules._norms import norm_in

PRODUCTS = (o.DOT, o.MATMUL, o.TENSORDOT, o.EINSUM, o.COSINE_SIMILARITY)
LO, HI = "-1 + 1e-7", "1 - 1e-7"


def dot_like(ctx: RuleContext, expr, scope: Scope, depth: int = 3) -> str | None:
    """What makes ``expr`` a cosine / dot product: ``sum(a * b)``, ``a @ b``,
    ``matmul``/``dot``/``einsum``..., ``cosine_similarity``, a division by a norm."""
    if expr is None or depth < 0:
        return None
    expr, scope = follow(ctx, expr, scope)
    call = is_op(ctx, expr, scope, *PRODUCTS, o.SUM, o.DIVIDE)
    if call is not None:
        if call.op in PRODUCTS:
            return "cosine similarity" if call.op == o.COSINE_SIMILARITY else "a dot product"
        if call.op == o.SUM:
            inner, inner_scope = follow(ctx, call.x, scope) if call.x is not None else (None, scope)
            if binop(inner, cst.Multiply) is not None or is_op(ctx, inner, inner_scope, o.MULTIPLY) is not None:
                return "a dot product"
            return None
        return _division(ctx, call.x, call.value("y"), scope, depth)
    if binop(expr, cst.MatrixMultiply) is not None:
        return "a dot product"
    b = binop(expr, cst.Divide)
    if b is not None:
        return _division(ctx, b.left, b.right, scope, depth)
    return None


def _division(ctx: RuleContext, num, den, scope: Scope, depth: int) -> str | None:
    if dot_like(ctx, num, scope, depth - 1):
        return "a cosine"
    if den is not None and _has_norm(ctx, den, scope, 3):
        return "a division by a norm"
    return None


def _has_norm(ctx: RuleContext, expr, scope: Scope, depth: int) -> bool:
    if depth < 0 or expr is None:
        return False
    if norm_in(ctx, expr, scope) is not None:
        return True
    expr, scope = follow(ctx, expr, scope)
    b = binop(expr, cst.Multiply)
    if b is not None:
        return _has_norm(ctx, b.left, scope, depth - 1) or _has_norm(ctx, b.right, scope, depth - 1)
    return False


class AcosDomain(Rule):
    code = "NAN204"
    name = "acos-domain"
    summary = "acos/asin of a dot product or cosine: rounding exceeds 1 (NaN), gradient inf at 1; clip"
    fix = fixes.UNSAFE
    # opt-in: on training code its only findings (2) were acos(q . k) of two different
    # normalized projections, which rounding does not push past 1 (docs/precision.md)
    default = False
    needs = ("acos", "asin", "arccos", "arcsin")
    triggers = (frozenset({o.ACOS, o.ASIN}),)

    def check(self, ctx: RuleContext) -> None:
        for call in ctx.calls(o.ACOS, o.ASIN):
            what = dot_like(ctx, call.x, call.scope)
            if what is None:
                continue
            message = (f"{call.op} of {what}: rounding gives values just past 1 ({limits.FLOAT32_UNIT_SELF_DOT} for a float32 "
                       f"unit vector with itself), where {call.op} is NaN, and its gradient at exactly 1 is "
                       "inf; clip into (-1 + eps, 1 - eps)")
            ctx.report(call.node, message, self.make_fix(ctx, call))

    @staticmethod
    def make_fix(ctx: RuleContext, call: OpCall) -> fixes.Fix:
        message = "Clip the argument into (-1 + 1e-7, 1 - 1e-7)"
        x = call.x
        assert x is not None
        lo, hi = cst.parse_expression(LO), cst.parse_expression(HI)
        if call.is_method:
            name = clip_method(call.framework)
            if name is None:
                return fixes.Fix(fixes.DISPLAY_ONLY, message)
            new = fixes.call(cst.Attribute(fixes.parenthesize(x), cst.Name(name)), [fixes.arg(lo), fixes.arg(hi)])
            return fixes.Fix(fixes.UNSAFE, message, [(x, new)])
        built = spelled_call(ctx, call.framework, o.CLIP, call.scope, [("x", x), ("lo", lo), ("hi", hi)],
                             prefer=(call.node.func,))
        if built is None:
            return fixes.Fix(fixes.DISPLAY_ONLY, message)
        return fixes.Fix(fixes.UNSAFE, message, [(x, built[0])], built[1])
