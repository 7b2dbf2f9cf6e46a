"""NAN207 variance-by-cancellation: ``mean(x * x) - mean(x) ** 2`` (``E[x^2] - E[x]^2``) in
float32 cancels catastrophically when the mean is large next to the spread, and comes out
negative: ``sqrt``/``rsqrt(var + eps)`` and ``log(var)`` of it are NaN -> the framework's
variance op (two-pass).  The squared distance by expansion ``|x|^2 + |y|^2 - 2 x.y`` cancels
the same way for coinciding or near points -> a clamp at a small floor (``clamp(min=1e-12)``)."""

from __future__ import annotations

import libcst as cst

from nanlint.analysis.guards import constant, terms
from nanlint.analysis.selections import selects_only
from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.rules.context import RuleContext
from nanlint.rules.base import Rule
from nanlint.rules._gradient_traps import bare, key, spelled_call
from nanlint.rules._roots import PRODUCTS, Cancellation, Expansion, cancellation, expansion, means_of

# the sinks where a negative variance is NaN or a sign flip: roots, logs, divisions, powers
_SINKS = (o.SQRT, o.RSQRT, o.LOG, o.DIVIDE, o.POW, o.RECIPROCAL)
FLOOR = "1e-12"  # the clamp of a squared distance: sqrt(1e-12) = 1e-6, its gradient finite
# the most negative |x|^2 + |y|^2 - 2 x.y of x = y, 16 rows of 64 values uniform in [10, 100]
# (seed 0, float32; squared norms ~2.6e5, spaced 0.03125), measured (tests/test_distance_by_expansion.py).
# JAX's is a range: XLA compiles the expression for the host CPU, and two x86-64 hosts with the
# same wheels gave -0.03125 and -0.0625 (one and two spacings below 0).
MEASURED = {"torch": "-0.125 (torch 2.13)", "tensorflow": "-0.0625 (TensorFlow 2.21)",
            "jax": "-0.03125 to -0.0625 (JAX 0.10, by the host CPU XLA compiles for)",
            "keras": "-0.0625 (Keras 3.15, TensorFlow backend)"}


def _whole_power(ctx: RuleContext, exponent, scope) -> bool:
    """A positive whole exponent (``** 2``): the power of a negative value is finite."""
    k = constant(ctx, exponent, scope)
    return k is not None and k > 0 and float(k).is_integer()


class VarianceByCancellation(Rule):
    code = "NAN207"
    default = True
    name = "variance-by-cancellation"
    summary = ("mean(x*x) - mean(x)**2, |x|^2 + |y|^2 - 2x.y: negative in float32 by cancellation; "
               "sqrt/rsqrt/log of it is NaN")
    fix = fixes.UNSAFE
    needs = ("mean", "sum", "norm")
    triggers = (frozenset({o.MEAN, o.SUM, o.NORM}),)

    def check(self, ctx: RuleContext) -> None:
        found: dict[int, Cancellation | Expansion] = {}
        inside = self._operands_of_sums(ctx)
        # an expansion's cross term is a product the file computes: without one, no sum is
        # followed through its names (each name's flow: most of this rule's cost on research code)
        products = next(iter(ctx.calls(*PRODUCTS)), None) is not None or any(
            isinstance(node.operator, cst.MatrixMultiply) for node, _ in ctx.index.binops)
        for node, scope in ctx.index.binops:
            if isinstance(node.operator, cst.Subtract):
                c = cancellation(ctx, node, scope)
                if c is not None:
                    found[id(node)] = c
                    continue
            if products and isinstance(node.operator, (cst.Add, cst.Subtract)) and id(node) not in inside:
                e = expansion(ctx, node, scope)
                if e is not None:
                    found[id(node)] = e
        alias = self._same_expansions(found)
        for call in ctx.calls(o.SUBTRACT):
            c = cancellation(ctx, call.node, call.scope)
            if c is not None:
                found[id(call.node)] = c
        if not found:
            return
        guards = [(c.value(role), c.scope) for c in ctx.calls(o.CLIP, o.MAXIMUM, o.RELU)
                  for role in (("x", "y") if c.op == o.MAXIMUM else ("x",)) if c.value(role) is not None]
        clamped = set(self._reaching(ctx, found, guards, alias))
        sunk: dict[int, str] = {}
        for call in ctx.calls(*_SINKS):
            watched = call.value("y") if call.op == o.DIVIDE else call.x
            if call.op == o.POW and _whole_power(ctx, call.value("y"), call.scope):
                continue  # var ** 2: defined for a negative value
            if watched is not None:
                for hit in self._reaching(ctx, found, [(watched, call.scope)], alias):
                    sunk.setdefault(hit, call.op)
        for node, scope in ctx.index.binops:
            if isinstance(node.operator, cst.Power) and _whole_power(ctx, node.right, scope):
                continue
            if isinstance(node.operator, (cst.Divide, cst.Power)):
                watched = node.right if isinstance(node.operator, cst.Divide) else node.left
                for hit in self._reaching(ctx, found, [(watched, scope)], alias):
                    sunk.setdefault(hit, "division" if isinstance(node.operator, cst.Divide) else "a power")
        returned = self._returned(ctx, found, alias)
        for ident, c in found.items():
            if ident in clamped:
                continue  # maximum(var, 0): the user chose the clamp
            sink = sunk.get(ident)
            if isinstance(c, Expansion):
                self._report_distance(ctx, c, sink)
                continue
            message = ("E[x^2] - E[x]^2 cancels in float32 when the mean is large next to the spread: "
                       "the variance comes out negative (measured -24 for x = 1e4 + 0.01 * noise, true 8e-5)")
            if sink in (o.DIVIDE, o.RECIPROCAL, "division"):
                message += ", and the division by it is of the wrong sign there (inf where it is 0)"
            elif sink is not None:
                message += f", and the {sink} it feeds is NaN there, an epsilon such as 1e-5 does not cover it"
            elif ident in returned:
                message += (", and the function returns it with the mean, as a normalisation's moments: "
                            "the rsqrt(var + eps) its callers take is NaN there")
            message += ("; compute the variance in two passes (the framework's variance op)" if c.count is None
                        else "; compute the variance in two passes (the mean first, then the mean of the squared "
                             "deviations from it)")
            ctx.report(c.node, message, self.make_fix(ctx, c), may=sink is None and ident not in returned)

    @classmethod
    def _returned(cls, ctx: RuleContext, found: dict, alias: dict[int, int]) -> set[int]:
        """The variances a function returns with the mean of the same values, ``return mean, var``:
        a normalisation's moments, which its callers root or divide by out of this file's sight
        (a batch norm's ``_moments``). A variance returned alone stays weak (a metric)."""
        scopes = {id(c.scope): c.scope for c in found.values() if isinstance(c, Cancellation)}
        out: set[int] = set()
        for scope in scopes.values():
            for ret in scope.returns:
                if not isinstance(ret.value, cst.Tuple):
                    continue
                parts = [e.value for e in ret.value.elements]
                for i, part in enumerate(parts):
                    for hit in cls._reaching(ctx, found, [(part, scope)], alias):
                        c = found.get(hit)
                        if isinstance(c, Cancellation) and any(
                                means_of(ctx, other, scope, c.x) for j, other in enumerate(parts) if j != i):
                            out.add(hit)
        return out

    @staticmethod
    def _operands_of_sums(ctx: RuleContext) -> set[int]:
        """The ids of the operands of the sums and differences: of ``a + b - c`` the outermost
        is the expansion.  Read off the index's binary operations, not a parent map of the
        module (which cost more than the rest of the rule on a file with many sums)."""
        return {id(side) for node, _ in ctx.index.binops if isinstance(node.operator, (cst.Add, cst.Subtract))
                for side in (node.left, node.right)}

    @staticmethod
    def _same_expansions(found: dict) -> dict[int, int]:
        """``d2 = x2 + y2 - 2 * xy; d = d2 + eps``: one expansion (the first), the others its aliases."""
        first: dict[int, int] = {}
        alias: dict[int, int] = {}
        for ident, c in list(found.items()):
            if isinstance(c, Expansion):
                if id(c.cross) in first:
                    alias[ident] = first[id(c.cross)]
                    del found[ident]
                else:
                    first[id(c.cross)] = ident
        return alias

    @staticmethod
    def _reaching(ctx: RuleContext, found: dict, sites, alias: dict[int, int]):
        """The cancellations among the positive terms of each site's value (``var + eps``), through names."""
        for expr, scope in sites:
            hits = [alias.get(id(r.expr), id(r.expr)) for r in ctx.values(expr, scope)
                    if id(r.expr) in found or id(r.expr) in alias]
            if not hits:  # var + eps: each positive term, and every value reaching it (a branch)
                hits = [alias.get(id(r.expr), id(r.expr)) for sign, term in terms(expr, ctx, scope) if sign > 0
                        for r in ctx.values(term, scope) if id(r.expr) in found or id(r.expr) in alias]
            yield from hits

    def _report_distance(self, ctx: RuleContext, e: Expansion, sink: str | None) -> None:
        if sink is None and selects_only(ctx, e.node):
            return  # a nearest-code lookup: a slightly negative distance picks the same index
        fw = e.framework.name
        measured = f" (measured {MEASURED[fw]} for rows of 64 values in [10, 100] against themselves, true 0)" \
            if fw in MEASURED else ""
        message = (f"squared distance by expansion: {ctx.code(e.norms[0])} + {ctx.code(e.norms[1])} and the cross "
                   f"term {ctx.code(e.cross)} cancel in float32 for coinciding or near points, and the sum comes "
                   f"out negative{measured}")
        if sink in (o.DIVIDE, o.RECIPROCAL, "division"):
            message += "; the division by it is of the wrong sign there (inf where it is 0)"
        elif sink is not None:
            message += f"; the {sink} of it is NaN there, and an epsilon added to it does not cover that"
        message += f"; clamp it at a small floor first (clamp(min={FLOOR}), maximum(d2, {FLOOR}))"
        ctx.report(e.node, message, self.distance_fix(ctx, e), may=sink is None)

    @staticmethod
    def distance_fix(ctx: RuleContext, e: Expansion) -> fixes.Fix:
        """``d2.clamp(min=1e-12)`` (torch), ``maximum(d2, 1e-12)`` (TensorFlow, JAX, Keras)."""
        message = f"Clamp the squared distance at {FLOOR} before a root, log or division"
        floor = cst.Float(FLOOR)
        if e.framework.name == "torch":
            new = fixes.call(cst.Attribute(fixes.parenthesize(e.node), cst.Name("clamp")), [fixes.arg(floor, "min")])
            parent = ctx.parent(e.node)
            if e.node.lpar and isinstance(parent, cst.Attribute) and parent.value is e.node:
                # (d2).sqrt() -> (d2).clamp(min=1e-12).sqrt(): the parentheses stay the receiver's
                return fixes.Fix(fixes.UNSAFE, message, [(parent, parent.with_changes(value=new))])
            return fixes.Fix(fixes.UNSAFE, message, [(e.node, new)])
        built = spelled_call(ctx, e.framework, o.MAXIMUM, e.scope, [("x", bare(e.node)), ("y", floor)])
        if built is None:
            return fixes.Fix(fixes.DISPLAY_ONLY, message)
        return fixes.Fix(fixes.UNSAFE, message, [(e.node, built[0])], built[1])

    @staticmethod
    def make_fix(ctx: RuleContext, c: Cancellation) -> fixes.Fix:
        """``var(x, axis, keepdims)`` of the framework, population variance (``correction=0``
        where the op takes one: torch's default is the unbiased estimate)."""
        message = "Compute the variance with the framework's variance op"
        if c.count is not None:  # sums over a count (across replicas): no one op computes it
            return fixes.Fix(fixes.DISPLAY_ONLY, "Compute the variance in two passes: the mean first, then the "
                             "mean of the squared deviations from it (or clamp it at 0 where one pass is needed)")
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
