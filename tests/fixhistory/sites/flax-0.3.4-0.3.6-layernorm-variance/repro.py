"""flax LayerNorm: var = E[x^2] - E[x]^2 rounds below zero in float32 for features with a
large mean and a small spread; rsqrt(var + epsilon) is then NaN."""
import jax.numpy as jnp
from jax import lax

x = jnp.array([[1000.1, 1000.2, 1000.3, 1000.1, 1000.2, 1000.3, 1000.1]], jnp.float32)
epsilon = 1e-6


def _mul(var):
    return lax.rsqrt(var + epsilon)


def parent():
    mean = jnp.mean(x, axis=-1, keepdims=True)
    mean2 = jnp.mean(lax.square(x), axis=-1, keepdims=True)
    var = mean2 - lax.square(mean)
    return _mul(var)


def fixed():
    mean = jnp.mean(x, axis=-1, keepdims=True)
    mean2 = jnp.mean(lax.square(x), axis=-1, keepdims=True)
    var = jnp.maximum(0., mean2 - lax.square(mean))
    return _mul(var)
