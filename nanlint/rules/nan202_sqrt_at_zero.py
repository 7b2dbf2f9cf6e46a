"""NAN202 sqrt-at-zero: a hand-written distance ``sqrt(sum(square(a - b)))`` (or a
norm of a difference, where the framework's norm has a NaN gradient at 0) ->
``sqrt(s + eps)``; a root of a variance, or a std where the framework's std has a NaN
gradient on a constant row -> ``sqrt(var + eps)``."""

from __future__ import annotations

import libcst as cst

from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.rules.context import RuleContext
from nanlint.analysis.facts import may_be_zero
from nanlint.analysis.guards import terms
from nanlint.rules.base import Rule
from nanlint.rules._gradient_traps import (
    euclidean_norm,
    is_difference,
    norm_as_sqrt_sum,
    sqrt_argument,
    sqrt_plus_eps,
    square_base,
    sum_of_squares,
)
from nanlint.rules._gradient_traps import EPS_SQ, add_eps, follow, report_in_gradient
from nanlint.rules._roots import epsilon_after_root, variance, zero_upstream
from nanlint.semantic.reach import origin_note
from nanlint.semantic.sites import POW_HALF


class SqrtAtZero(Rule):
    code = "NAN202"
    # on by default since issue 21: a gradient-only hazard reports when a gradient reaches it
    # (analysis/differentiated.py), in the may tier when nothing shows one does
    default = True
    name = "sqrt-at-zero"
    summary = ("sqrt of a sum of squares (a distance), of a variance, a std, or norm of a difference: "
               "inf/NaN gradient at 0")
    fix = fixes.UNSAFE
    needs = ("sqrt", "norm", "**", "pow", "power", "std")
    triggers = (frozenset({o.SQRT, o.RSQRT, o.NORM, POW_HALF, o.STD}),)

    def check(self, ctx: RuleContext) -> None:
        seen: set[int] = set()
        sites = [(c.node, c.scope) for c in ctx.calls(o.SQRT, o.POW)] + list(ctx.index.binops)
        for node, scope in sites:
            found = sqrt_argument(ctx, node, scope)
            if found is None or id(node) in seen:
                continue
            how, root, arg = found
            if self.root_of_variance(ctx, root, arg, scope, how):
                seen.add(id(node))
                continue
            inner, inner_scope = follow(ctx, arg, scope)
            squares = sum_of_squares(ctx, inner, inner_scope)
            base = square_base(ctx, inner, inner_scope)
            if squares is None and not (base is not None and is_difference(ctx, base, inner_scope)):
                continue
            why = self.zero_because(ctx, inner, inner_scope, squares, base)
            if why is not None:
                message = (f"sqrt of a sum of squares of {why} is 0 when it is, and the gradient of sqrt "
                           "at 0 is inf: 0 * inf = NaN; add an epsilon under the sqrt")
            else:
                message = self.floored_after(ctx, root, scope, squares)
                if message is None:
                    continue  # an embedding, a coordinate, a constant: not plausibly exactly 0
            seen.add(id(node))
            fix = fixes.Fix(fixes.UNSAFE, "Add 1e-12 under the sqrt", [(root, sqrt_plus_eps(ctx, how, root, arg))])
            report_in_gradient(ctx, root, message, fix, _framework(ctx, root, scope, squares))
        for norm in ctx.calls(o.NORM):
            if o.FACT_NORM_GRAD_NAN_AT_ZERO not in norm.framework.facts or norm.x is None:
                continue
            if not euclidean_norm(norm) or not is_difference(ctx, norm.x, norm.scope):
                continue
            message = (f"the gradient of {norm.framework.display}'s norm at the zero vector is NaN: a "
                       "norm of a difference (a distance) goes NaN when the two coincide; write "
                       "sqrt(sum(square(d)) + eps)")
            built = norm_as_sqrt_sum(ctx, norm, norm.scope, prefer=(norm.node.func,))
            if built is None:
                fix = fixes.Fix(fixes.DISPLAY_ONLY, "Write sqrt(sum(square(d), axis) + 1e-12)")
            else:
                fix = fixes.Fix(fixes.UNSAFE, "Write sqrt(sum(square(d), axis) + 1e-12)",
                                [(norm.node, built[0])], built[1])
            report_in_gradient(ctx, norm.node, message, fix, norm.framework)
        for call in ctx.calls(o.RSQRT):
            if call.x is not None:
                self.rsqrt_at_zero(ctx, call)
        for std in ctx.calls(o.STD):
            if o.FACT_STD_GRAD_NAN_AT_CONSTANT in std.framework.facts and std.x is not None:
                self.std_at_constant(ctx, std)

    @staticmethod
    def std_at_constant(ctx: RuleContext, std) -> None:
        """``std(x)`` in a framework whose std has a NaN gradient on a constant row (its root
        of a zero variance; torch defines it as 0): an epsilon after it does not help. Where
        the framework's sqrt passes a 0 upstream gradient as 0 (TensorFlow), a std that only
        divides a deviation from the mean (a LayerNorm) is finite, and silent."""
        upstream_nan = o.FACT_ZERO_UPSTREAM_SQRT_NAN in std.framework.facts
        if not upstream_nan and zero_upstream(ctx, std.node, std.scope):
            return
        var = _variance_like(ctx, std)
        sqrt = ctx.spell(std.framework, o.SQRT, std.scope, prefer=(std.node.func,)) if var is not None else None
        if var is None or sqrt is None:
            fix = fixes.Fix(fixes.DISPLAY_ONLY, "Write sqrt(var(x) + 1e-12)")
        else:
            inner = cst.BinaryOperation(var[0], cst.Add(), cst.Float(EPS_SQ))
            fix = fixes.Fix(fixes.UNSAFE, "Write sqrt(var(x) + 1e-12)",
                            [(std.node, fixes.call(sqrt[0], [cst.Arg(inner)]))], var[1] + sqrt[2])
        message = (f"the gradient of {std.framework.display}'s std on a constant row is NaN (the root of a zero "
                   "variance), even with an epsilon added after it (std + eps)"
                   + (", and even where the std only divides the deviations (x - mean) / (std + eps), "
                      "a LayerNorm" if upstream_nan else "") + "; write sqrt(var + eps)")
        report_in_gradient(ctx, std.node, message, fix, std.framework, inputs=(std.x,), scope=std.scope)

    @staticmethod
    def root_of_variance(ctx: RuleContext, root, arg, scope, how: str) -> bool:
        """``sqrt(var)`` with no epsilon under the root: a variance is exactly 0 on a constant
        row, where the gradient of sqrt is inf (NaN after the chain rule's 0)."""
        what = variance(ctx, arg, scope)
        if what is None:
            return False
        framework = _framework(ctx, root, scope, None)
        if framework is not None and o.FACT_ZERO_UPSTREAM_SQRT_NAN not in framework.facts \
                and zero_upstream(ctx, root, scope):
            return True  # (x - mean) / (sqrt(var) + eps) in TensorFlow: its gradient there is 0
        where = origin_note(ctx, ctx.resolve(arg, scope))
        message = (f"sqrt of {what}{where} with no epsilon under the root: a variance is exactly 0 on a "
                   "constant row, and the gradient of sqrt at 0 is inf: 0 * inf = NaN even when an "
                   "epsilon is added after the root; add it under the sqrt")
        fix = fixes.Fix(fixes.UNSAFE, "Add 1e-12 under the sqrt", [(root, sqrt_plus_eps(ctx, how, root, arg))])
        report_in_gradient(ctx, root, message, fix, framework)
        return True

    def rsqrt_at_zero(self, ctx: RuleContext, call) -> None:
        """``rsqrt(s)`` of a variance or of a sum of squares that can be 0: inf there (a clamp
        of the result keeps the value finite, not the gradient)."""
        arg, scope = call.x, call.scope
        what = variance(ctx, arg, scope)
        if what is None:
            inner, inner_scope = follow(ctx, arg, scope)
            squares = sum_of_squares(ctx, inner, inner_scope)
            if squares is None:
                return
            why = self.zero_because(ctx, inner, inner_scope, squares, None)
            if why is None:
                return
            what = f"a sum of squares of {why}"
        where = origin_note(ctx, ctx.resolve(arg, scope))
        message = (f"rsqrt of {what}{where} with no epsilon inside: it is inf where that is 0 (a constant "
                   "row, a zero vector), and so is its gradient; a clamp of the result does not repair "
                   "the gradient; write rsqrt(s + eps)")
        fix = fixes.Fix(fixes.UNSAFE, "Add 1e-12 inside the rsqrt", [(arg, add_eps(arg))])
        ctx.report(call.node, message, fix)


    @staticmethod
    def floored_after(ctx: RuleContext, root, scope, squares) -> str | None:
        """The message when the code adds an epsilon to the root of a sum of squares after it
        (``x / (sqrt(sum(x ** 2)) + eps)``): its author expects the root to reach 0, where the
        gradient of sqrt is inf. Only where the framework's sqrt makes a 0 upstream gradient
        NaN there too (torch, JAX: a normalization's upstream at the zero vector is 0); in
        TensorFlow that is 0, and the epsilon does its job."""
        framework = _framework(ctx, root, scope, squares)
        if framework is None or o.FACT_ZERO_UPSTREAM_SQRT_NAN not in framework.facts:
            return None
        eps = epsilon_after_root(ctx, root, scope)
        if eps is None:
            return None
        return (f"sqrt of a sum of squares with the epsilon `{ctx.code(eps)}` added after the root (line "
                f"{ctx.file_line(eps)}): the code expects the root to reach 0, and there the gradient of sqrt "
                f"is inf: 0 * inf = NaN in {framework.display} whatever is added after it; add the epsilon under "
                "the sqrt")

    @staticmethod
    def zero_because(ctx: RuleContext, inner, scope, squares, base) -> str | None:
        """Why the summed squares can all be exactly 0 (every squared value plausibly is:
        differences, a gradient, masked values), or None."""
        if squares is not None and squares[1] is not None:
            return may_be_zero(ctx, squares[1], scope)
        bases = [base] if squares is None else [square_base(ctx, t, scope) for _, t in terms(inner, ctx, scope)]
        reasons = [may_be_zero(ctx, b, scope) if b is not None else None for b in bases]
        if not reasons or any(r is None for r in reasons):
            return None  # a term that is not plausibly 0 (sigma_data ** 2) keeps the sum positive
        return reasons[0]


def _variance_like(ctx: RuleContext, std):
    """The std call ``std`` as the framework's variance with the same arguments, verbatim
    (every table gives the two one signature: ``ddof``, ``keepdims`` and the rest carry)."""
    if std.is_method:
        return None  # no table with the std fact has tensor methods
    spelled = ctx.spell(std.framework, o.VARIANCE, std.scope, prefer=(std.node.func,))
    if spelled is None or (spelled[1].params, spelled[1].kwonly) != (std.fn.params, std.fn.kwonly):
        return None
    return std.node.with_changes(func=spelled[0]), spelled[2]


def _framework(ctx: RuleContext, root, scope, squares):
    """The framework of a sqrt (its op, or the sum under a ``** 0.5``), if known."""
    call = ctx.op_call(root, scope)
    if call is not None:
        return call.framework
    return squares[0].framework if squares is not None and squares[0] is not None else None
