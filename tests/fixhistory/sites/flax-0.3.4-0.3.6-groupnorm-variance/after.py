# Excerpt of flax 0.3.6, flax/linen/normalization.py (verbatim; Apache-2.0).

from typing import (Any, Callable, Optional, Tuple, Iterable, Union)
from jax import lax
from jax.nn import initializers
import jax.numpy as jnp
from flax.linen.module import Module, compact, merge_param


Array = Any
Axes = Union[int, Iterable[int]]


def _compute_stats(x: Array, axes: Axes,
                   axis_name: Optional[str] = None,
                   axis_index_groups: Any = None):
  """Computes mean and variance statistics.
  
  This implementation takes care of a few important details:
  - Computes in float32 precision for half precision inputs
  -  mean and variance is computable in a single XLA fusion,
    by using Var = E[x^2] - E[x]^2 instead of Var = E[(x - E[x])^2]).
  - Clips negative variances to zero which can happen due to
    roundoff errors. This avoids downstream NaNs.
  - Supports averaging across a parallel axis and subgroups of a parallel axis
    with a single `lax.pmean` call to avoid latency.
  """
  x = jnp.asarray(x, jnp.float32)
  mean = jnp.mean(x, axes)
  mean2 = jnp.mean(lax.square(x), axes)
  if axis_name is not None:
    concatenated_mean = jnp.concatenate([mean, mean2])
    mean, mean2 = jnp.split(
        lax.pmean(
            concatenated_mean,
            axis_name=axis_name,
            axis_index_groups=axis_index_groups), 2)
  # mean2 - lax.square(mean) is not guaranteed to be non-negative due
  # to floating point round-off errors.
  var = jnp.maximum(0., mean2 - lax.square(mean))
  return mean, var
