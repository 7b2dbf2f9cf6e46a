"""Constant targets: the label a loss is given is one number everywhere (``valid =
torch.ones(n, 1)``, ``Tensor(n, 1).fill_(1.0)``, ``tf.zeros_like(d)``, ``full((n,), 0.9)``, a
literal), followed through names.  A binary cross entropy against a target of exactly 1 only
evaluates ``log(p)``, against exactly 0 only ``log(1 - p)``: the side decides where it breaks."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from nanlint.analysis.guards import constant
from nanlint.semantic.context import FileContext
from nanlint.semantic.reach import Resolved
from nanlint.semantic.resolve import Scope
from nanlint.source.walk import FastVisitor

_ROOTS = frozenset({"torch", "tensorflow", "numpy", "jax", "keras"})
_ONES = frozenset({"ones", "ones_like"})
_ZEROS = frozenset({"zeros", "zeros_like"})
# (name, the position of the fill value): torch/np/jnp full(shape, v), full_like(x, v); tf.fill(dims, v)
_FULL = {"full": (1, "fill_value"), "full_like": (1, "fill_value"), "fill": (1, "value")}
# a tensor of the number given: torch.tensor(1.), tf.constant(1., shape=...), Variable(t)
_WRAPPERS = frozenset({"tensor", "as_tensor", "constant", "convert_to_tensor", "Variable", "asarray", "array"})
# methods that keep every element's value: device, dtype, layout, autograd flags
_KEEP = frozenset({"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "type", "type_as", "view", "view_as",
                   "reshape", "expand", "expand_as", "detach", "requires_grad_", "squeeze", "unsqueeze",
                   "contiguous", "clone", "repeat", "flatten", "astype"})


@dataclass(frozen=True)
class Target:
    """Every element of the target is ``value``; ``value_of`` is where that was seen."""

    value: float
    value_of: Resolved


def constant_target(ctx: FileContext, expr: cst.BaseExpression | None, scope: Scope) -> Target | None:
    """The one number every element of ``expr`` holds, when every value reaching it is a
    constant tensor (or a number) of that same number and no name on the way is changed in
    place (``label.fill_(fake_label)`` between two losses); None otherwise."""
    if expr is None:
        return None
    found: Target | None = None
    for r in ctx.values(expr, scope):
        here = r.ctx if isinstance(r.ctx, FileContext) else ctx
        value = _fill(here, r.expr, r.scope, 0)
        if value is None or (found is not None and found.value != value):
            return None
        names = {o.name for o in r.origins if o.name}
        if isinstance(expr, cst.Name):
            names.add(expr.value)
        if names & _changed_in_place(ctx):
            return None
        found = found or Target(value, r)
    return found


def _fill(ctx: FileContext, expr: cst.BaseExpression, scope: Scope, depth: int) -> float | None:
    if depth > 6:
        return None
    number = constant(ctx, expr, scope)
    if number is not None:
        return number
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract, cst.Multiply)):
        a = _fill(ctx, expr.left, scope, depth + 1)
        b = _fill(ctx, expr.right, scope, depth + 1) if a is not None else None
        if a is None or b is None:
            return None
        if isinstance(expr.operator, cst.Add):
            return a + b
        return a - b if isinstance(expr.operator, cst.Subtract) else a * b
    if isinstance(expr, cst.Name):
        values = ctx.values(expr, scope)
        if len(values) != 1 or values[0].expr is expr:
            return None
        return _fill(ctx, values[0].expr, values[0].scope, depth + 1)
    if not isinstance(expr, cst.Call):
        return None
    func = expr.func
    if isinstance(func, cst.Attribute):
        method = func.attr.value
        if method == "fill_" and expr.args:  # Tensor(n, 1).fill_(1.0), whatever the receiver was
            return constant(ctx, expr.args[0].value, scope)
        if method == "zero_" and not expr.args:
            return 0.0
        if method in _KEEP and ctx.index.qualname(func, scope) is None:
            return _fill(ctx, func.value, scope, depth + 1)
    qual = ctx.index.qualname(func, scope)
    if qual is None or qual.split(".")[0] not in _ROOTS:
        return None
    last = qual.rsplit(".", 1)[-1]
    if last in _ONES:
        return 1.0
    if last in _ZEROS:
        return 0.0
    if last in _FULL:
        position, keyword = _FULL[last]
        arg = next((a for a in expr.args if a.keyword is not None and a.keyword.value == keyword), None)
        if arg is None and len(expr.args) > position and expr.args[position].keyword is None:
            arg = expr.args[position]
        return constant(ctx, arg.value, scope) if arg is not None else None
    if last in _WRAPPERS and expr.args and expr.args[0].keyword is None:
        return _fill(ctx, expr.args[0].value, scope, depth + 1)
    return None


def _changed_in_place(ctx: FileContext) -> frozenset[str]:
    """Names the file changes in place: ``t.fill_(v)`` and other ``*_`` methods, ``t[i] = v``,
    ``t += v``."""

    def compute() -> frozenset[str]:
        names: set[str] = set()
        for node, _ in ctx.index.calls:
            func = node.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                    and func.attr.value.endswith("_") and not func.attr.value.startswith("_") \
                    and func.attr.value not in _KEEP:  # requires_grad_ changes no value
                names.add(func.value.value)

        _Stores(names).walk(ctx.module)
        return frozenset(names)

    return ctx.memo("targets.changed_in_place", compute)


class _Stores(FastVisitor):
    """``t += v`` and ``t[i] = v``: the names they change in place (a read-only walk, not
    libcst's rebuilding ``visit`` of the whole module)."""

    def __init__(self, names: set[str]) -> None:
        self.names = names

    def visit_AugAssign(self, node: cst.AugAssign) -> None:  # noqa: N802 - libcst's name
        if isinstance(node.target, cst.Name):
            self.names.add(node.target.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:  # noqa: N802
        if isinstance(node.target, cst.Subscript) and isinstance(node.target.value, cst.Name):
            self.names.add(node.target.value.value)
