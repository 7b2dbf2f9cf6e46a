"""Issue 13's "same family" changes: NAN401 masked means with a where-masked numerator and
masks through names."""

import pytest

from conftest import codes


@pytest.mark.parametrize("src", [
    "import torch\ndef f(loss, m):\n    return torch.sum(torch.where(m, loss, 0.0)) / m.sum()\n",
    "import jax.numpy as jnp\ndef f(loss, m):\n    return jnp.sum(jnp.where(m > 0, loss, 0.0)) / jnp.sum(m)\n",
    "import torch\ndef f(loss, mask):\n    m = mask.float()\n    return (loss * m).sum() / mask.float().sum()\n",
    "import tensorflow as tf\ndef f(loss, mask):\n    m = tf.cast(mask, tf.float32)\n    num = tf.reduce_sum(loss * m)\n"
    "    den = tf.reduce_sum(m)\n    return num / den\n",
])
def test_masked_mean_forms_flagged(src):
    assert codes(src, select=["NAN401"]) == ["NAN401"]


@pytest.mark.parametrize("src", [
    "import jax.numpy as jnp\ndef f(loss, m):\n    return jnp.sum(jnp.where(m > 0, loss, 0.0)) / jnp.maximum(jnp.sum(m), 1)\n",
    "import tensorflow as tf\ndef f(loss, mask):\n    m = tf.cast(mask, tf.float32)\n    return tf.reduce_sum(loss * m) / tf.maximum(tf.reduce_sum(m), 1.0)\n",
    "import torch\ndef f(loss, mask):\n    return (loss * mask.float()).sum() / torch.clamp(mask.sum(), min=1)\n",
    # where(m, x, 1): not a masked sum
    "import jax.numpy as jnp\ndef f(loss, m):\n    return jnp.sum(jnp.where(m > 0, loss, 1.0)) / jnp.sum(m)\n",
    # different masks
    "import torch\ndef f(loss, a, b):\n    return (loss * a).sum() / b.sum()\n",
])
def test_masked_mean_silent(src):
    assert codes(src, select=["NAN401"]) == []
