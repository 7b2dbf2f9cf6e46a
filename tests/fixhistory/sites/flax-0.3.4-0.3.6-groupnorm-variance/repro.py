"""flax GroupNorm: var = E[x^2] - E[x]^2 per group rounds below zero in float32 when a
group's values share a large mean; rsqrt(var + epsilon) is then NaN."""
import jax.numpy as jnp
from jax import lax

# one image 1x1, 8 channels, 2 groups of 4
x = jnp.array([[[[10000.1, 10000.2, 10000.3, 10000.1, 1.0, 2.0, 3.0, 4.0]]]], jnp.float32)
epsilon = 1e-6
num_groups = 2
group_shape = x.shape[:-1] + (num_groups, x.shape[-1] // num_groups)
xg = x.reshape(group_shape)
reduction_axis = [d for d in range(1, xg.ndim - 2)] + [xg.ndim - 1]


def parent():
    mean = jnp.mean(xg, axis=reduction_axis, keepdims=True)
    mean_of_squares = jnp.mean(jnp.square(xg), axis=reduction_axis,
                               keepdims=True)
    var = mean_of_squares - jnp.square(mean)
    return (xg - mean) * lax.rsqrt(var + epsilon)


def fixed():
    mean = jnp.mean(xg, axis=reduction_axis)
    mean2 = jnp.mean(lax.square(xg), reduction_axis)
    var = jnp.maximum(0., mean2 - lax.square(mean))
    mean = jnp.expand_dims(mean, reduction_axis)
    var = jnp.expand_dims(var, reduction_axis)
    return (xg - mean) * lax.rsqrt(var + epsilon)
