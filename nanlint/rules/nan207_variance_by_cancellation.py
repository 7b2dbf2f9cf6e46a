"""NAN207 variance-by-cancellation: ``mean(x * x) - mean(x) ** 2`` (``E[x^2] - E[x]^2``) in
float32 cancels catastrophically when the mean is large next to the spread, and comes out
negative: ``sqrt``/``rsqrt(var + eps)`` and ``log(var)`` of it are NaN -> the framework's
variance op (two-pass)."""

from __future__ import annotations

import libcst as cst

from nanlint.analysis.guards import terms
from nanlint.analysis.gates.sites import last_names
from nanlint.analysis.gates.syntax_sites import cancellation_site
from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.rules.context import RuleContext
from nanlint.rules.base import Rule
from nanlint.rules._gradient_traps import key
from nanlint.rules._roots import Cancellation, cancellation

# the sinks where a negative variance is NaN or a sign flip: roots, logs, divisions, powers
_SINKS = (o.SQRT, o.RSQRT, o.LOG, o.DIVIDE, o.POW, o.RECIPROCAL)


class VarianceByCancellation(Rule):
    code = "NAN207"
    default = True
    name = "variance-by-cancellation"
    summary = "mean(x*x) - mean(x)**2: negative in float32 by cancellation; sqrt/rsqrt/log of it is NaN"
    fix = fixes.UNSAFE
    needs = ("mean",)
    triggers = (frozenset({o.MEAN}),)

    def site(self, tree, text: str, path=None, extra=()) -> bool:
        """A subtraction and two squares (:func:`nanlint.analysis.gates.syntax_sites.cancellation_site`)."""
        return cancellation_site(tree, last_names(frozenset({o.SQUARE})), last_names(frozenset({o.POW})),
                            last_names(frozenset({o.SUBTRACT})))

    def check(self, ctx: RuleContext) -> None:
        found: dict[int, Cancellation] = {}
        for node, scope in ctx.index.binops:
            if isinstance(node.operator, cst.Subtract):
                c = cancellation(ctx, node, scope)
                if c is not None:
                    found[id(node)] = c
        for call in ctx.calls(o.SUBTRACT):
            c = cancellation(ctx, call.node, call.scope)
            if c is not None:
                found[id(call.node)] = c
        if not found:
            return
        guards = [(c.value(role), c.scope) for c in ctx.calls(o.CLIP, o.MAXIMUM, o.RELU)
                  for role in (("x", "y") if c.op == o.MAXIMUM else ("x",)) if c.value(role) is not None]
        clamped = set(self._reaching(ctx, found, guards))
        sunk: dict[int, str] = {}
        for call in ctx.calls(*_SINKS):
            watched = call.value("y") if call.op == o.DIVIDE else call.x
            if watched is not None:
                for hit in self._reaching(ctx, found, [(watched, call.scope)]):
                    sunk.setdefault(hit, call.op)
        for node, scope in ctx.index.binops:
            if isinstance(node.operator, (cst.Divide, cst.Power)):
                watched = node.right if isinstance(node.operator, cst.Divide) else node.left
                for hit in self._reaching(ctx, found, [(watched, scope)]):
                    sunk.setdefault(hit, "division" if isinstance(node.operator, cst.Divide) else "a power")
        for ident, c in found.items():
            if ident in clamped:
                continue  # maximum(var, 0): the user chose the clamp
            sink = sunk.get(ident)
            message = ("E[x^2] - E[x]^2 cancels in float32 when the mean is large next to the spread: "
                       "the variance comes out negative (measured -24 for x = 1e4 + 0.01 * noise, true 8e-5)")
            if sink is not None:
                message += (f", and the {sink} it feeds is NaN there (a division: of the wrong sign), an "
                            "epsilon such as 1e-5 does not cover it")
            message += "; compute the variance in two passes (the framework's variance op)"
            ctx.report(c.node, message, self.make_fix(ctx, c), may=sink is None)

    @staticmethod
    def _reaching(ctx: RuleContext, found: dict[int, Cancellation], sites):
        """The cancellations among the positive terms of each site's value (``var + eps``), through names."""
        for expr, scope in sites:
            hits = [id(r.expr) for r in ctx.values(expr, scope) if id(r.expr) in found]
            if not hits:  # var + eps: each positive term, and every value reaching it (a branch)
                hits = [id(r.expr) for sign, term in terms(expr, ctx, scope) if sign > 0
                        for r in ctx.values(term, scope) if id(r.expr) in found]
            yield from hits

    @staticmethod
    def make_fix(ctx: RuleContext, c: Cancellation) -> fixes.Fix:
        """``var(x, axis, keepdims)`` of the framework, population variance (``correction=0``
        where the op takes one: torch's default is the unbiased estimate)."""
        message = "Compute the variance with the framework's variance op"
        same = all(key(ctx, c.first.value(r)) == key(ctx, c.second.value(r)) for r in ("axis", "keepdims"))
        spelling = ctx.spell(c.first.framework, o.VARIANCE, c.scope, prefer=(c.first.node.func,))
        if not same or spelling is None or c.first.scope is not c.scope:
            return fixes.Fix(fixes.DISPLAY_ONLY, message)
        func, target, imports = spelling
        args = ctx.carry_args(c.first, target, ("x", "axis", "keepdims"))
        if args is None:
            return fixes.Fix(fixes.DISPLAY_ONLY, message)
        if target.role_of_keyword("correction") is not False:  # torch.var, jnp.var: take no chance on a default
            args.append(fixes.arg(cst.Integer("0"), "correction"))
        return fixes.Fix(fixes.UNSAFE, message, [(c.node, fixes.call(func, args))], imports)
