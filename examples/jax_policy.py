"""A JAX policy-gradient log-probability (nanlint NAN101)."""

import jax
import jax.numpy as jnp


def log_prob(logits, actions):
    probs = jax.nn.softmax(logits, axis=-1)
    return jnp.take_along_axis(jnp.log(probs), actions[:, None], axis=-1)
