"""Values used only to pick an index: ``argmin(d)``, ``jnp.argmax(-d, 1)``,
``(-d).max(1).indices``, ``d.min(-1)[1]``.  A squared distance that only chooses the nearest
code (a VQ codebook lookup) may come out slightly negative without harm: the same entry is
chosen, the value goes nowhere else, and an index carries no gradient.  Queried by NAN207."""

from __future__ import annotations

import libcst as cst

from nanlint.vocabulary import ops as o
from nanlint.analysis.gradients import SHAPE_ATTRIBUTES
from nanlint.analysis.guards import casts
from nanlint.semantic.context import FileContext
from nanlint.semantic.navigation import local_reads, scope_at
from nanlint.semantic.literals import number

_INDEX_OPS = (o.ARGMIN, o.ARGMAX)
_PAIRED = (o.REDUCE_MAX, o.REDUCE_MIN)  # torch's x.max(dim): (values, indices)


def selects_only(ctx: FileContext, node: cst.CSTNode, depth: int = 2) -> bool:
    """Every use of ``node``'s value (through a negation, layout ops and local names, ``depth``
    assignments deep) is an argmin/argmax, the indices of torch's ``max(dim)``/``min(dim)``, or
    a read of its shape."""
    cur = node
    while True:
        parent = ctx.parent(cur)
        if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Minus):
            cur = parent
            continue
        call = None
        if isinstance(parent, cst.Arg) and parent.value is cur:
            call = ctx.parent(parent)
        elif isinstance(parent, cst.Attribute) and parent.value is cur:
            if parent.attr.value in SHAPE_ATTRIBUTES:
                return True  # d.shape[-1]: no value goes on
            call = ctx.parent(parent)
            if not (isinstance(call, cst.Call) and call.func is parent):
                return False
        if isinstance(call, cst.Call):
            found = _selection(ctx, call, cur)
            if found is None:
                return False
            if found is True:
                return True
            cur = found
            continue
        if isinstance(parent, cst.Assign) and parent.value is cur and len(parent.targets) == 1 \
                and isinstance(parent.targets[0].target, cst.Name) and depth > 0:
            return _reads_select(ctx, parent, parent.targets[0].target.value, depth - 1)
        return False


def _selection(ctx: FileContext, call: cst.Call, x: cst.CSTNode) -> bool | cst.Call | None:
    """True: ``call`` picks an index of ``x``; the call itself: a layout op to follow; None: other."""
    op = ctx.op_call(call, scope_at(ctx, call))
    if op is None or op.x is not x:
        return None
    if op.op in _INDEX_OPS:
        return True
    if op.op in _PAIRED and op.has("axis") and op.framework.name == "torch":
        parent = ctx.parent(call)
        if isinstance(parent, cst.Attribute) and parent.value is call and parent.attr.value == "indices":
            return True
        if isinstance(parent, cst.Subscript) and parent.value is call and len(parent.slice) == 1 \
                and isinstance(parent.slice[0].slice, cst.Index) and number(parent.slice[0].slice.value) == 1:
            return True
        return None
    if op.op == o.SHAPE and not casts(op):
        return call
    return None


def _reads_select(ctx: FileContext, stmt: cst.Assign, name: str, depth: int) -> bool:
    """Every read of the value of the local ``name`` that ``stmt`` assigns picks an index."""
    reads = local_reads(ctx, stmt, name, flow=True)
    return bool(reads) and all(selects_only(ctx, n, depth) for n in reads)
