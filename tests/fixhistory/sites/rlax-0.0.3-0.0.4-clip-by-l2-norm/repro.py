"""rlax _clip_by_l2_norm (dpg_loss's dqda clipping) at x = 0: norm = sqrt(0), and the
gradient through sqrt at 0 (inf) times the where's zero cotangent is NaN."""
import jax
import jax.numpy as jnp

x0 = jnp.zeros((3,), jnp.float32)
max_norm = 1.0


def parent_clip(x):
    norm = jnp.sqrt(jnp.sum(jnp.vdot(x, x)))
    return jnp.where(norm > max_norm, x * (max_norm / norm), x)


def fixed_clip(x):
    sum_sq = jnp.sum(jnp.vdot(x, x))
    nonzero = sum_sq > 0
    sum_sq_ones = jnp.where(nonzero, sum_sq, jnp.ones_like(sum_sq))
    norm = jnp.where(nonzero, jnp.sqrt(sum_sq_ones), sum_sq)
    return (x * max_norm) / jnp.maximum(norm, max_norm)


def parent():
    return parent_clip(x0), jax.grad(lambda x: jnp.sum(parent_clip(x)))(x0)


def fixed():
    return fixed_clip(x0), jax.grad(lambda x: jnp.sum(fixed_clip(x)))(x0)
