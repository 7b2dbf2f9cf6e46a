"""optax kl_divergence: a target probability of 0 gives 0 * log(0) = 0 * -inf = NaN."""
import jax.numpy as jnp
import numpy as np

log_predictions = jnp.log(jnp.array([[0.5, 0.5, 1e-6]], jnp.float32))
targets = jnp.array([[0.5, 0.5, 0.0]], jnp.float32)


def parent():
    loss = targets * (jnp.log(targets) - log_predictions)
    return jnp.sum(loss, axis=-1)


def fixed():
    loss = targets * (
        jnp.where(targets == 0, 0, jnp.log(targets)) - log_predictions
    )
    return jnp.sum(loss, axis=-1)
