# Excerpt of evosax 0.1.0, evosax/utils/reshape_fitness.py (verbatim; MIT).

import jax
import jax.numpy as jnp
import chex
from functools import partial
from typing import Union


def z_score_trafo(arr: chex.Array) -> chex.Array:
    """Make fitness 'Gaussian' by substracting mean and dividing by std."""
    return (arr - jnp.mean(arr)) / (jnp.std(arr) + 1e-10)
