"""NAN503 one-sided-gradient-clip: ``clip_by_value(grads, 0, c)`` / ``p.grad.clamp(min=0)``
zeroes every negative gradient component."""

from __future__ import annotations

import re

import libcst as cst

from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.rules.context import RuleContext
from nanlint.semantic.resolve import ASSIGN, Scope
from nanlint.rules.base import Rule
from nanlint.semantic.literals import number

# names that say "gradient" on their own (``g`` alone needs provenance)
# (not the flags and context managers: requires_grad, no_grad, enable_grad, zero_grad)
_GRAD_NAME = re.compile(r"^(?!(requires|no|enable|zero)_grad$)(\w+_)?(grads?|gradients?)$", re.IGNORECASE)
_GRAD_QUALNAMES = frozenset({"tensorflow.gradients", "tensorflow.compat.v1.gradients", "torch.autograd.grad"})
_GRAD_TRANSFORMS = frozenset({"jax.grad", "jax.value_and_grad"})
_GRAD_METHODS = frozenset({"gradient", "compute_gradients"})  # tape.gradient, opt.compute_gradients
_TREE_MAPS = frozenset({"jax.tree_util.tree_map", "jax.tree.map", "jax.tree_map"})


class OneSidedGradientClip(Rule):
    code = "NAN503"
    name = "one-sided-gradient-clip"
    summary = "clipping gradients to [0, c] zeroes every negative gradient: clip to [-c, c]"
    fix = fixes.DISPLAY_ONLY
    needs = ("clip", "clamp")
    triggers = (frozenset({o.CLIP}),)

    def check(self, ctx: RuleContext) -> None:
        self._lambdas: dict[int, cst.Call] | None = None
        for clip in ctx.calls(o.CLIP):
            lo = number(clip.value("lo"))
            if lo != 0.0 or clip.x is None:
                continue
            if not self.is_gradient(ctx, clip.x, clip.scope, 4):
                continue
            hi = clip.value("hi")
            bound = ctx.code(hi) if hi is not None else None
            manual = f"clip to [-{bound}, {bound}]" if bound is not None else "clip symmetrically"
            ctx.report(clip.node,
                       "clipping gradients to [0, c] sets every negative gradient component to 0, so "
                       "those parameters can only move one way; clip to [-c, c] or by norm",
                       fixes.Fix(fixes.DISPLAY_ONLY, manual.capitalize() + " (or clip by global norm)"))

    # --- provenance -------------------------------------------------------------------
    def is_gradient(self, ctx: RuleContext, expr: cst.BaseExpression, scope: Scope, depth: int) -> bool:
        if depth <= 0:
            return False
        if isinstance(expr, cst.Attribute):
            if expr.attr.value == "grad":  # torch p.grad
                return True
            if expr.attr.value == "data":  # p.grad.data
                return self.is_gradient(ctx, expr.value, scope, depth - 1)
            return False
        if isinstance(expr, cst.Subscript):
            return self.is_gradient(ctx, expr.value, scope, depth - 1)
        if isinstance(expr, cst.Call):
            return self.produces_gradient(ctx, expr, scope)
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp)):
            return self.is_gradient(ctx, expr.for_in.iter, scope, depth - 1)
        if not isinstance(expr, cst.Name):
            return False
        if _GRAD_NAME.match(expr.value):
            return True
        found = ctx.index.lookup(expr.value, scope)
        if found is None:
            return False
        bindings, where = found
        for b in bindings:
            node = b.node
            if b.kind == ASSIGN and b.value is not None:
                if self.is_gradient(ctx, b.value, where, depth - 1):
                    return True
            elif isinstance(node, cst.Assign):  # ``loss, grads = value_and_grad(f)(p)``
                if isinstance(node.value, cst.Call) and self.produces_gradient(ctx, node.value, where):
                    return True
            elif isinstance(node, (cst.CompFor, cst.For)):  # ``for g in grads`` / ``for g, v in zip(grads, vs)``
                outer = where if isinstance(node, cst.For) else (where.parent or where)
                if self.iterates_gradients(ctx, node.target, expr.value, node.iter, outer, depth - 1):
                    return True
            elif isinstance(node, cst.Param):  # ``tree_map(lambda g: ..., grads)``
                call = self.lambda_calls(ctx).get(id(where.node))
                if call is not None and any(self.is_gradient(ctx, a.value, where.parent or where, depth - 1)
                                            for a in call.args[1:]):
                    return True
        return False

    def iterates_gradients(self, ctx: RuleContext, target: cst.BaseExpression, name: str,
                           it: cst.BaseExpression, scope: Scope, depth: int) -> bool:
        """Whether ``name``, bound by ``for target in it``, takes gradients: ``for g in grads``,
        ``for g, v in zip(grads, vs)`` (the zip argument at g's position), or
        ``for g, v in grads_and_vars`` (gradients first in (gradient, variable) pairs)."""
        if isinstance(target, cst.Name):
            return self.is_gradient(ctx, it, scope, depth)
        if not isinstance(target, (cst.Tuple, cst.List)):
            return False
        position = next((i for i, e in enumerate(target.elements)
                         if isinstance(e.value, cst.Name) and e.value.value == name), None)
        if position is None:
            return False
        if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "zip":
            return position < len(it.args) and self.is_gradient(ctx, it.args[position].value, scope, depth)
        return position == 0 and self.is_gradient(ctx, it, scope, depth)

    @staticmethod
    def produces_gradient(ctx: RuleContext, call: cst.Call, scope: Scope) -> bool:
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in _GRAD_METHODS:
            return True
        if isinstance(func, cst.Call):  # jax.grad(f)(params)
            return ctx.index.qualname(func.func, scope) in _GRAD_TRANSFORMS
        return ctx.index.qualname(func, scope) in _GRAD_QUALNAMES

    def lambda_calls(self, ctx: RuleContext) -> dict[int, cst.Call]:
        """id(lambda) -> the tree_map call it is the function of."""
        if self._lambdas is None:
            self._lambdas = {}
            for node, scope in ctx.index.calls:
                if node.args and isinstance(node.args[0].value, cst.Lambda) \
                        and ctx.index.qualname(node.func, scope) in _TREE_MAPS:
                    self._lambdas[id(node.args[0].value)] = node
        return self._lambdas

