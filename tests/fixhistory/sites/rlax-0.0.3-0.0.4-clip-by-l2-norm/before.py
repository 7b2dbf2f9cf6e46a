# Excerpt of rlax 0.0.3, rlax/_src/policy_gradients.py (verbatim; Apache-2.0).

from typing import Optional
import chex
import jax
import jax.numpy as jnp
from rlax._src import distributions
from rlax._src import losses


Array = chex.Array


def _clip_by_l2_norm(x: Array, max_norm: float) -> Array:
  """Clip gradients to maximum l2 norm `max_norm`."""
  norm = jnp.sqrt(jnp.sum(jnp.vdot(x, x)))
  return jnp.where(norm > max_norm, x * (max_norm / norm), x)
