"""NAN203 normalize-by-norm: ``x / norm(x)`` -> the framework's l2-normalize
(``tf.math.l2_normalize``, ``F.normalize``, ``keras.ops.normalize``), or in JAX
``x / sqrt(sum(square(x), axis, keepdims=True) + eps)``."""

from __future__ import annotations

from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.rules.context import RuleContext
from nanlint.semantic.resolve import Scope
from nanlint.analysis.evidence import excludes_zero
from nanlint.analysis.facts import may_be_zero
from nanlint.rules.base import Rule
from nanlint.rules._gradient_traps import key, norm_as_sqrt_sum, report_in_gradient, sqrt_plus_eps
from nanlint.rules._shapes import divisions
from nanlint.semantic.sites import POW_HALF, SLASH
from nanlint.rules._norms import Norm, norm_in, _squared, _true


class NormalizeByNorm(Rule):
    code = "NAN203"
    # on by default since issue 21: a gradient-only hazard reports when a gradient reaches it
    # (analysis/differentiated.py), in the may tier when nothing shows one does
    default = True
    name = "normalize-by-norm"
    summary = "x / norm(x): NaN at the zero vector; use l2_normalize"
    fix = fixes.UNSAFE
    supersedes = ("NAN202",)
    needs = ("norm", "sqrt", "**", "pow")
    triggers = (frozenset({o.NORM, o.SQRT, POW_HALF}), frozenset({o.DIVIDE, SLASH}))

    def check(self, ctx: RuleContext) -> None:
        for div in divisions(ctx):  # a division with a rounding mode is not a normalisation
            node, scope, num, den = div.node, div.scope, div.num, div.den
            resolved = ctx.resolve(den, scope)
            found = norm_in(ctx, den, scope)
            if found is None or key(ctx, num) != key(ctx, found.base):
                continue
            why = may_be_zero(ctx, found.base, scope)
            if why is None or excludes_zero(ctx, node, den, scope):
                continue  # an embedding, a ray, a weight vector: never the zero vector; or guarded
            if found.guarded and not found.grad_nan_at_zero:
                continue
            if found.guarded:  # the eps keeps the value finite: only the gradient is NaN
                message = (f"x / (norm(x) + eps) of {why} still has a NaN gradient at the zero vector in "
                           f"{found.framework.display} (the norm's own gradient at 0 is 0 * inf); "
                           "put the eps under the sqrt")
                report_in_gradient(ctx, node, message, self.make_fix(ctx, node, scope, num, den, found, resolved),
                                   found.framework)
                continue
            else:
                message = (f"x / norm(x) of {why} is 0/0 = NaN at the zero vector (value and gradient); "
                           "use l2-normalize, which bounds the norm away from 0")
            ctx.report(node, message, self.make_fix(ctx, node, scope, num, den, found, resolved))

    @staticmethod
    def make_fix(ctx: RuleContext, node, scope: Scope, num, den, found: Norm, resolved) -> fixes.Fix:
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
