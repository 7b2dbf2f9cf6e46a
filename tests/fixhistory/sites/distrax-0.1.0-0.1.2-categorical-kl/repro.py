"""distrax Categorical KL: a category with probability 0 in dist1 (logit -inf) gives
probs1 * (log_probs1 - log_probs2) = 0 * -inf = NaN."""
import jax
import jax.numpy as jnp

logits1 = jnp.array([0.0, 0.0, -jnp.inf], jnp.float32)
logits2 = jnp.array([0.0, 1.0, 2.0], jnp.float32)
probs1 = jax.nn.softmax(logits1, axis=-1)
log_probs1 = jax.nn.log_softmax(logits1, axis=-1)
log_probs2 = jax.nn.log_softmax(logits2, axis=-1)


def parent():
    return jnp.sum((probs1 * (log_probs1 - log_probs2)), axis=-1)


def fixed():
    return jnp.sum(
        jnp.where(probs1 == 0, 0., probs1 * (log_probs1 - log_probs2)), axis=-1)
