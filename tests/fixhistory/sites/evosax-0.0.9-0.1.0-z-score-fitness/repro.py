"""evosax z-score fitness shaping: with the epsilon inside the std (std(1e-5 + fitness))
it shifts the values and does not guard the divisor; a population with equal fitness has
std 0 and the shaped fitness is 0 / 0 = NaN."""
import jax.numpy as jnp

fitness = jnp.array([1.5, 1.5, 1.5, 1.5], jnp.float32)


def parent():
    return (fitness - jnp.mean(fitness)) / jnp.std(1e-05 + fitness)


def fixed():
    arr = fitness
    return (arr - jnp.mean(arr)) / (jnp.std(arr) + 1e-10)
