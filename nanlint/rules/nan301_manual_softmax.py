"""NAN301 manual-softmax: ``exp(x) / sum(exp(x), axis)`` -> ``softmax(x, axis)``."""

from __future__ import annotations

import libcst as cst

from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.semantic.context import OpCall
from nanlint.semantic.reach import Resolved
from nanlint.rules.context import RuleContext
from nanlint.analysis.facts import bounded_exponent
from nanlint.analysis.evidence import LOGIT_NAME, logit
from nanlint.analysis.guards import terms
from nanlint.semantic.reach import SHAPE
from nanlint.rules.base import Rule
from nanlint.rules import _limits
from nanlint.vocabulary import limits
from nanlint.rules._shapes import Division, divisions, int_literal, is_true, same
from nanlint.semantic.sites import SLASH
from nanlint.semantic.literals import number


def _shifted(ctx: RuleContext, expr: cst.BaseExpression, scope) -> bool:
    """``x - something`` (inline or through a name): the stabilized ``exp(x - max(x))``."""
    value = _uncast(ctx, ctx.resolve(expr, scope).expr, scope)
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Subtract):
        return True
    call = ctx.op_call(value, scope)
    return call is not None and call.op == o.SUBTRACT


_CAST_METHODS = ("astype", "to", "float", "double", "half", "bfloat16")
_CASTS = ("tensorflow.cast", "tensorflow.dtypes.cast", "keras.ops.cast", "jax.lax.convert_element_type")


def _uncast(ctx: RuleContext, expr: cst.BaseExpression, scope) -> cst.BaseExpression:
    """The value under a dtype conversion: ``(x - m).astype(f32)``, ``tf.cast(x - m, f32)``
    (a cast keeps the shift: jax/experimental/pallas/ops/gpu/softmax.py)."""
    if isinstance(expr, cst.Call):
        if ctx.index.qualname(expr.func, scope) in _CASTS and expr.args:
            return expr.args[0].value
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _CAST_METHODS \
                and ctx.index.qualname(expr.func.value, scope) is None:
            return expr.func.value
    return expr


def _negative_square(ctx: RuleContext, expr: cst.BaseExpression, scope) -> bool:
    """A Gaussian-kernel exponent such as ``-0.5 * (x / sigma) ** 2``: never above 0, so
    ``exp`` cannot overflow and the kernel's normalization is not a softmax of logits."""
    value = ctx.resolve(expr, scope).expr
    sign, squared = 1, False
    stack = [value]  # the factors' signs multiply in any order (a stack, not a recursive closure)
    while stack:
        e = stack.pop()
        literal = number(e)
        if literal is not None:
            sign *= -1 if literal < 0 else 1
        elif isinstance(e, cst.UnaryOperation) and isinstance(e.operator, cst.Minus):
            sign = -sign
            stack.append(e.expression)
        elif isinstance(e, cst.BinaryOperation) and isinstance(e.operator, (cst.Multiply, cst.Divide)):
            stack += (e.right, e.left)
        elif isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Power) and number(e.right) == 2:
            squared = True
        else:
            call = ctx.op_call(e, scope)
            if call is not None and call.op == o.SQUARE:
                squared = True
            elif not isinstance(e, (cst.Name, cst.Attribute)):
                sign = 0  # an unknown factor; a bare name (sigma, gamma) is taken as a positive scale
    return squared and sign < 0


def _unclipped(ctx: RuleContext, expr: cst.BaseExpression | None, scope) -> cst.BaseExpression | None:
    """``x`` of ``clip(x, lo, hi)`` / ``minimum(x, c)`` / ``maximum(x, c)`` (inline or through
    a name), else ``expr``: exponents that match up to a clip are the same logits."""
    if expr is None:
        return None
    value = ctx.resolve(expr, scope)
    call = ctx.op_call(value.expr, value.scope)
    if call is not None and call.x is not None and (
            call.op == o.CLIP or (call.op in (o.MINIMUM, o.MAXIMUM) and number(call.value("y")) is not None)):
        return call.x
    return expr


def _logit_evidence(ctx: RuleContext, div: Division, xs: tuple, scope) -> str | None:
    """Why the exponent is a logit, unbounded above (evidence.logit), for the exponent (either
    side's, unclipped) or a term added to it (``start_transitions + logits``), over every exp
    reaching the numerator."""
    exponents = [x for x in xs if x is not None]
    for r in ctx.values(div.num, div.scope, shape=True):
        found = ctx.op_call(r.expr, r.scope) if r.ctx is None else None
        if found is not None and found.op == o.EXP and found.x is not None:
            exponents.append(found.x)
    for e in exponents:
        for _, term in [(1, e)] + list(terms(e)):
            if logit(ctx, term, scope):
                affine = not LOGIT_NAME.search(ctx.code(term))
                return (f"`{ctx.short(term)}` is {'an affine output' if affine else 'named like a logit'}: "
                        f"a logit has no upper bound, and exp of one above {_limits.shown(limits.EXP_OVERFLOW, None)} "
                        "is inf in float32")
    return None


class ManualSoftmax(Rule):
    code = "NAN301"
    # on evidence (issue 21): strong when the exponent is a logit (evidence.logit), the may tier
    # otherwise; silent when it is max-shifted or bounded (facts.bounded_exponent)
    default = True
    name = "manual-softmax"
    summary = "exp(x) / sum(exp(x)) overflows: use softmax"
    fix = fixes.SAFE
    needs = ("exp",)
    triggers = (frozenset({o.EXP}), frozenset({o.SUM}), frozenset({o.DIVIDE, SLASH}))

    def check(self, ctx: RuleContext) -> None:
        for div in divisions(ctx):
            num = ctx.op_of(div.num, div.scope, o.EXP)
            if num is None:
                continue
            den = ctx.op_of(div.den, div.scope, o.SUM)
            if den is None:
                continue
            exp, r_num = num
            total, r_den = den
            inner = ctx.op_of(total.x, r_den.scope, o.EXP)
            if inner is None:
                continue
            exp2, r_inner = inner
            if exp.x is None:
                continue
            clipped = False
            if not (exp2.node is exp.node or same(exp.x, exp2.x)):
                # exp(clip(x, -87, 87)) / sum(exp(x)): one side clipped, the other overflows
                if not same(_unclipped(ctx, exp.x, r_num.scope), _unclipped(ctx, exp2.x, r_inner.scope)):
                    continue
                clipped = True
            if _shifted(ctx, exp.x, r_num.scope) or _negative_square(ctx, exp.x, r_num.scope) \
                    or (not clipped and r_num.ctx is None and bounded_exponent(ctx, exp.x, r_num.scope)):
                continue  # max-shifted, or an exponent that cannot overflow (a Gaussian kernel)
            message = ("exp(x) / sum(exp(x)) overflows to inf/inf = NaN once x > "
                       f"{_limits.shown(limits.EXP_OVERFLOW, exp.framework)} (float32) and gives 0/0 when every exp "
                       f"underflows (every x < {_limits.shown(limits.EXP_UNDERFLOW, exp.framework, sign=-1)}, "
                       f"float32, {exp.framework.display}); use softmax(x, axis)")
            if clipped:
                message += " (the exponent is clipped on one side only: the unclipped exp still overflows)"
            fix = self.make_fix(ctx, div, exp, total, (r_num, r_den, r_inner), clipped)
            evidence = _logit_evidence(ctx, div, (exp.x, exp2.x, _unclipped(ctx, exp.x, r_num.scope)), r_num.scope)
            if evidence is not None:
                ctx.report(div.node, f"{message}; the exponent {evidence}", fix)
            else:  # nothing says the exponent grows past 88: the may tier
                ctx.report(div.node, f"{message}; weak evidence: the exponent `{ctx.short(exp.x)}` is not shown "
                           "to be a logit (named like one, or an affine output), so it may stay small", fix, may=True)

    @staticmethod
    def make_fix(ctx: RuleContext, div: Division, exp: OpCall, total: OpCall,
                 resolved: tuple[Resolved, ...], clipped: bool = False) -> fixes.Fix:
        axis = total.value("axis")
        axis_value = int_literal(axis)
        if axis is not None and SHAPE in resolved[1].via:
            return fixes.Fix(fixes.DISPLAY_ONLY, "Replace with softmax(x, axis) (the sum is reshaped or tiled "
                                                 "back to x's shape: check that it restores the summed axis)")
        if axis is None:
            return fixes.Fix(fixes.DISPLAY_ONLY, "Replace with softmax(x, axis): the sum runs over all "
                                                 "elements, choose the axis")
        if axis_value is None:
            return fixes.Fix(fixes.DISPLAY_ONLY, "Replace with softmax(x, axis)")
        if not (is_true(total.value("keepdims")) or axis_value == 0):
            return fixes.Fix(fixes.DISPLAY_ONLY,
                             "Replace with softmax(x, axis) (the sum drops its axis, so the division "
                             "broadcasts it against the trailing axis: equal to softmax only for 1-D x)")
        message = "Replace with softmax"
        if any(not r.fixable_in(div.scope) for r in resolved):
            return fixes.Fix(fixes.DISPLAY_ONLY, message)
        axis_arg = total.args["axis"]
        x = exp.x
        assert x is not None
        method = exp.framework.methods.get(o.SOFTMAX) if exp.is_method else None
        imports: list[fixes.Import] = []
        if method is not None and method.op == o.SOFTMAX:
            keyword = None if axis_arg.keyword is None else method.keyword_for("axis")
            new: cst.BaseExpression = fixes.call(cst.Attribute(fixes.parenthesize(x), cst.Name("softmax")),
                                                 [fixes.arg(axis, keyword)])
        else:
            spelling = ctx.spell(exp.framework, o.SOFTMAX, div.scope, prefer=(exp.node.func, total.node.func))
            if spelling is None:
                return fixes.Fix(fixes.DISPLAY_ONLY, message)
            func, target, imports = spelling
            keyword = target.keyword_for("axis")
            if keyword is None:
                return fixes.Fix(fixes.DISPLAY_ONLY, message)
            x_arg = fixes.arg(x.with_changes(lpar=[], rpar=[]) if getattr(x, "lpar", None) else x)
            new = fixes.call(func, [x_arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                                    fixes.arg(axis, keyword)])
        crossed = any(r.crossed_statements for r in resolved)
        return fixes.Fix(fixes.UNSAFE if crossed or clipped else fixes.SAFE, message, [(div.node, new)], imports)
