# Excerpt of evosax 0.0.9, evosax/utils/reshape_fitness.py (verbatim; MIT).

import jax
import jax.numpy as jnp
import chex
from functools import partial


def z_score_fitness(fitness: chex.Array) -> chex.Array:
    """Make fitness 'Gaussian' by substracting mean and dividing by std."""
    return (fitness - jnp.mean(fitness)) / jnp.std(1e-05 + fitness)
