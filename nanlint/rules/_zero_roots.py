"""The root sinks of NAN206 (strong evidence) and NAN110 (weak): a root of a value that reaches 0."""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.analysis import zeros
from nanlint.analysis.evidence import excludes_zero
from nanlint.rules.context import RuleContext
from nanlint.analysis.gradients import not_differentiated
from nanlint.semantic.reach import origin_note
from nanlint.semantic.resolve import Scope
from nanlint.rules.base import Rule
from nanlint.rules._gradient_traps import add_eps, is_difference, square_base, sum_of_squares
from nanlint.rules._zero_fixes import far
from nanlint.rules._roots import clamped_distance
from nanlint.semantic.sites import POW_HALF
from nanlint.semantic.literals import number

KINDS = (zeros.PROBABILITY, zeros.COMPLEMENT, zeros.RECTIFIED, zeros.COUNT)


class RootSinks(Rule):
    """The sinks and their findings, strong or weak: RootAtZero reports the strong ones, NAN110 the weak."""

    needs = ("sqrt", "**", "pow", "power")
    # a root, and an op of a strong source (a count has no gradient: a root of one is never
    # NAN206's).  ``x ** 0.25`` has no site key of its own: in a file without another root it
    # is left to NAN110
    triggers = (frozenset({o.SQRT, o.POW, POW_HALF}), zeros.STRONG_OPS)

    def check(self, ctx: RuleContext) -> None:
        for node, message, fix, zero in self.findings(ctx):
            if zero.strong:
                ctx.report(node, message, fix)

    def findings(self, ctx: RuleContext):
        """Every root of a value reaching 0, strong evidence or weak (NAN110 reports those)."""
        sites: list[tuple[cst.CSTNode, cst.BaseExpression, Scope, str]] = []
        for call in ctx.calls(o.SQRT, o.POW):
            if call.x is None:
                continue
            if call.op == o.POW:
                p = number(call.value("y"))
                if p is None or not 0 < p < 1:
                    continue
            sites.append((call.node, call.x, call.scope, "sqrt" if call.op == o.SQRT else "a fractional power"))
        for node, scope in ctx.index.binops:
            if isinstance(node.operator, cst.Power):
                p = number(node.right)
                if p is not None and 0 < p < 1:
                    sites.append((node, node.left, scope, "sqrt" if p == 0.5 else "a fractional power"))
        for node, x, scope, how in sites:
            if self._distance(ctx, x, scope):
                continue
            zero = zeros.reaches_zero(ctx, x, scope, kinds=KINDS)
            if zero is None or "difference" in zero.what or self._selected(ctx, zero):
                continue
            if excludes_zero(ctx, node, x, scope):
                continue  # `if d > 0: sqrt(d)`, an early return on it being 0
            framework = self._framework(ctx, node, scope)
            if not_differentiated(ctx, node, framework):
                continue
            if zero.strong and "product" in zero.what:
                zero = replace(zero, weak="a product of scores: 0 only where a factor underflows")
            if not zero.strong:
                clamped = clamped_distance(ctx, x, scope)
                if clamped is not None:  # the clamp does not make it 0: the points coinciding does
                    zero = replace(zero, weak=None, what=f"{clamped} clamped at 0",
                                   reason="it is exactly 0 where the points coincide (a point and itself)")
            where = origin_note(zero.value.ctx or ctx, zero.value)
            message = (f"{how} of {zero.what}{where}: {zero.why}, and the gradient of {how} at 0 is inf "
                       "(NaN once it meets the source's 0 gradient); add an epsilon under it")
            # a power's base and a method's receiver need parentheses around ``x + eps``
            wrap = isinstance(node, cst.BinaryOperation) or (
                isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.value is x)
            yield node, message, self.make_fix(x, zero, wrap), zero

    @staticmethod
    def _selected(ctx: RuleContext, zero: zeros.Zero) -> bool:
        """A source that selects the gradient (0 where it is 0) instead of multiplying it:
        the root of it has a finite gradient there.  torch's and JAX's relu; TensorFlow's
        dropout and flax's (``where``/``lax.select`` of the mask).  Measured (torch 2.13,
        JAX 0.10, TF 2.21), d sum(sqrt(f(x)))/dx at x = [-1, 0, 1]: torch relu [0, 0, .5],
        clamp/maximum [0, inf, .5]; JAX relu [0, 0, .5], maximum/clip [nan, inf, .5];
        TF relu [nan, nan, .5], maximum/clip_by_value [0, inf, .5].  At a dropped element:
        torch's F.dropout NaN, tf.nn.dropout 0, ``lax.select`` (flax) 0, haiku's
        ``keep * x / keep_rate`` NaN (a product); Keras' dropout 0 on the TensorFlow and
        JAX backends, NaN on torch's (F.dropout): reported, but not ``tf.keras``'s."""
        owner = zero.value.ctx or ctx
        call = owner.op_call(zero.value.expr, zero.value.scope)
        if call is None:
            return False
        if call.op == o.RELU:
            return call.framework.name in ("torch", "jax")
        if call.op in (o.DROPOUT, o.DROPOUT_LAYER):  # tf.keras runs on TensorFlow
            return call.framework.name == "tensorflow" or (call.qualname or "").startswith(("tensorflow.", "flax."))
        return False

    @staticmethod
    def _distance(ctx: RuleContext, x, scope: Scope) -> bool:
        base = square_base(ctx, x, scope)
        return sum_of_squares(ctx, x, scope) is not None or (base is not None and is_difference(ctx, base, scope))

    @staticmethod
    def _framework(ctx: RuleContext, node: cst.CSTNode, scope: Scope):
        call = ctx.op_call(node, scope)
        return call.framework if call is not None else None

    @staticmethod
    def make_fix(x: cst.BaseExpression, zero: zeros.Zero, power: bool) -> fixes.Fix:
        message = "Add 1e-12 under the root"
        if far(zero.value):
            return fixes.Fix(fixes.DISPLAY_ONLY, message)
        new = add_eps(x)
        return fixes.Fix(fixes.UNSAFE, message, [(x, fixes.parenthesize(new) if power else new)])
