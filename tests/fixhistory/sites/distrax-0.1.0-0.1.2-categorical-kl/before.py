# Excerpt of distrax 0.1.0, distrax/_src/distributions/categorical.py (verbatim; Apache-2.0).

from typing import Optional, Tuple, Union
import chex
from distrax._src.distributions import distribution
from distrax._src.utils import math
import jax
import jax.numpy as jnp
from tensorflow_probability.substrates import jax as tfp


Array = chex.Array
CategoricalLike = Union[Categorical, tfd.Categorical]


def _kl_divergence_categorical_categorical(
    dist1: CategoricalLike,
    dist2: CategoricalLike,
    *unused_args, **unused_kwargs,
    ) -> Array:
  """Obtain the KL divergence `KL(dist1 || dist2)` between two Categoricals.

  Args:
    dist1: A Categorical distribution.
    dist2: A Categorical distribution.

  Returns:
    Batchwise `KL(dist1 || dist2)`

  Raises:
    ValueError if the two distributions have different number of categories
  """
  logits1 = dist1.logits_parameter()
  logits2 = dist2.logits_parameter()
  num_categories1 = logits1.shape[-1]
  num_categories2 = logits2.shape[-1]

  if num_categories1 != num_categories2:
    raise ValueError(
        f'Cannot obtain the KL between two Categorical distributions '
        f'with different number of categories: the first distribution has '
        f'{num_categories1} categories, while the second distribution has '
        f'{num_categories2} categories.')

  # pylint: disable=protected-access
  if dist1._probs is None:
    probs1 = jax.nn.softmax(logits1, axis=-1)
  else:
    probs1 = dist1.probs

  log_probs1 = jax.nn.log_softmax(logits1, axis=-1)
  log_probs2 = jax.nn.log_softmax(logits2, axis=-1)

  return jnp.sum((probs1 * (log_probs1 - log_probs2)), axis=-1)
