"""dynamax hmm_smoother backward step on a left-to-right HMM: a state that cannot be
reached next has predicted probability exactly 0 (and smoothed probability 0), so
smoothed_probs_next / predicted_probs_next = 0 / 0 = NaN, and A @ NaN spreads it."""
import jax.numpy as jnp

A = jnp.array([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.0, 0.0, 1.0]], jnp.float32)
filtered_probs = jnp.array([1.0, 0.0, 0.0], jnp.float32)
predicted_probs_next = filtered_probs @ A  # [0.5, 0.5, 0.0]
smoothed_probs_next = jnp.array([0.3, 0.7, 0.0], jnp.float32)


def parent():
    relative_probs_next = smoothed_probs_next / predicted_probs_next
    smoothed_probs = filtered_probs * (A @ relative_probs_next)
    smoothed_probs /= smoothed_probs.sum()
    return smoothed_probs


def fixed():
    relative_probs_next = jnp.where(jnp.isclose(predicted_probs_next, 0.0), 0.0,
                                    smoothed_probs_next / predicted_probs_next)
    smoothed_probs = filtered_probs * (A @ relative_probs_next)
    smoothed_probs /= smoothed_probs.sum()
    return smoothed_probs
