"""einops: the pattern functions over any backend's tensors (torch, TF, JAX, numpy).

``rearrange`` and ``repeat`` lay values out (their signs and zeros are the input's);
``reduce`` is the reduction its string names (``reduce(x ** 2, 'b n d -> b n', 'sum')`` is a
sum of squares), and no op a rule knows when given a callable.  The pattern takes the place
of an axis but is not one: it has no role, so a fix that would have to carry the axis of an
einops reduction into another function's call is not built (:func:`nanlint.fix.spelling.carry_args`).
``einsum`` takes its tensors before its pattern (the rules that read an einsum's operands
take either order). The layers (``Rearrange``, ``Reduce``) are not listed.
"""

from __future__ import annotations

from nanlint.vocabulary import ops as o
from nanlint.vocabulary.ops import Fn, Framework, fn

_LAYOUT = "tensor:x pattern"
_REDUCED = "tensor:x pattern reduction:"  # the choice made: no role left

FUNCTIONS: dict[str, Fn] = {
    "einops.rearrange": fn(o.SHAPE, _LAYOUT, varargs=True),  # **axes_lengths
    "einops.repeat": fn(o.SHAPE, _LAYOUT, varargs=True),
    "einops.einsum": fn(o.EINSUM, "", varargs=True),  # einsum(x, y, 'b i d, b j d -> b i j'): the pattern last
    "einops.reduce": fn(o.REDUCE, "tensor:x pattern reduction:reduction", varargs=True, choices=(
        "reduction", tuple((name, fn(op, _REDUCED, varargs=True)) for name, op in (
            ("sum", o.SUM), ("mean", o.MEAN), ("max", o.REDUCE_MAX), ("min", o.REDUCE_MIN),
            ("prod", o.PROD), ("any", o.ANY))))),
}

FRAMEWORK = Framework(
    name="einops",
    display="einops",
    roots=("einops",),
    functions=FUNCTIONS,
)
