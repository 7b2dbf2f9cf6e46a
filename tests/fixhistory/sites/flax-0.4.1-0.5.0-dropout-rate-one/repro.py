"""flax Dropout with rate=1.0: keep_prob = 0, and the gradient of
lax.select(mask, inputs / keep_prob, 0) is 0 * (1/0) = NaN for every input."""
import jax
import jax.numpy as jnp
from jax import lax, random

rate = 1.0
inputs = jnp.array([0.5, -1.0, 2.0], jnp.float32)
rng = random.PRNGKey(0)


def parent_layer(inputs):
    keep_prob = 1. - rate
    mask = random.bernoulli(rng, p=keep_prob, shape=inputs.shape)
    mask = jnp.broadcast_to(mask, inputs.shape)
    return lax.select(mask, inputs / keep_prob, jnp.zeros_like(inputs))


def fixed_layer(inputs):
    if rate == 1.0:
        return jnp.zeros_like(inputs)
    keep_prob = 1. - rate
    mask = random.bernoulli(rng, p=keep_prob, shape=inputs.shape)
    mask = jnp.broadcast_to(mask, inputs.shape)
    return lax.select(mask, inputs / keep_prob, jnp.zeros_like(inputs))


def parent():
    return parent_layer(inputs), jax.grad(lambda v: jnp.sum(parent_layer(v)))(inputs)


def fixed():
    return fixed_layer(inputs), jax.grad(lambda v: jnp.sum(fixed_layer(v)))(inputs)
