"""Issue 13's "same family" changes: NAN401 masked means with a where-masked numerator and
masks through names."""

import pytest

import conftest


def codes(source, select=None):
    """On any evidence: the family's shapes are what is tested here, not the tiers."""
    return conftest.codes(source, select, may=True)


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


# --- NAN301: exponents matching up to a clip, denominators through tile/reshape ---------------
def test_manual_softmax_clipped_on_one_side():
    src = ("import tensorflow as tf\ndef f(x):\n    return tf.exp(tf.clip_by_value(x, -87.0, 87.0)) / "
           "tf.reduce_sum(tf.exp(x), axis=-1, keepdims=True)\n")
    [finding] = conftest.lint(src, select=["NAN301"], may=True)
    assert "clipped on one side" in finding.message
    assert finding.fix_applicability == "unsafe"
    assert "tf.nn.softmax(tf.clip_by_value(x, -87.0, 87.0), axis=-1)" in conftest.fix(src, select=["NAN301"], may=True)


def test_manual_softmax_with_tiled_sum_is_display_only():
    src = ("import tensorflow as tf\ndef f(x):\n    e = tf.exp(x)\n    s = tf.reduce_sum(e, axis=1)\n"
           "    return e / tf.tile(tf.reshape(s, [-1, 1]), [1, 10])\n")
    [finding] = conftest.lint(src, select=["NAN301"], may=True)
    assert finding.fix_applicability == "display-only"


def test_manual_softmax_different_logits_silent():
    src = ("import tensorflow as tf\ndef f(x, y):\n    return tf.exp(tf.clip_by_value(x, -87.0, 87.0)) / "
           "tf.reduce_sum(tf.exp(y), axis=-1, keepdims=True)\n")
    assert codes(src, select=["NAN301"]) == []


# --- NAN504: more float16 evidence ---------------------------------------------------------------
@pytest.mark.parametrize("src,why", [
    ("import tensorflow as tf\nx = tf.compat.v1.placeholder(tf.float16, [None, 10])\n"
     "w = tf.Variable(tf.zeros([10, 1], dtype=tf.float16))\nloss = tf.reduce_mean(tf.matmul(x, w))\n"
     "opt = tf.compat.v1.train.AdamOptimizer(1e-3).minimize(loss)\n", "placeholder"),
    ("import torch\ntorch.set_default_dtype(torch.float16)\nmodel = torch.nn.Linear(10, 1)\n"
     "opt = torch.optim.Adam(model.parameters(), lr=1e-3)\n", "set_default_dtype"),
    ("import torch\nmodel = torch.nn.Linear(10, 1).half()\nopt = torch.optim.Adam(model.parameters(), lr=1e-3)\n",
     ".half()"),
    ("import keras\nkeras.mixed_precision.set_global_policy('float16')\n"
     "model = keras.Sequential([keras.layers.Dense(1)])\n"
     "model.compile(optimizer=keras.optimizers.Adam(1e-3), loss='mse')\n", "mixed_float16"),
    ("import tensorflow.compat.v1 as tf\nx = tf.placeholder(tf.float16, [None, 10])\nh = tf.layers.dense(x, 10)\n"
     "opt = tf.train.AdamOptimizer(1e-3)\n", "float16 placeholder"),
    ("import tensorflow.compat.v1 as tf\nx = tf.placeholder(dtype=tf.float16, shape=[None, 10])\n"
     "opt = tf.train.AdamOptimizer(1e-3)\n", "float16 placeholder"),
    ("import keras\nkeras.mixed_precision.set_global_policy('float16')\nopt = keras.optimizers.Adam(1e-3)\n",
     "unlike 'mixed_float16'"),
    ("import tensorflow as tf\nlayer = tf.keras.layers.Dense(10, dtype='float16')\nopt = tf.keras.optimizers.Adam()\n",
     "float16 layer"),
    ("import torch\ntorch.set_default_dtype(torch.float16)\nmodel = torch.nn.Linear(2, 2)\n"
     "opt = torch.optim.Adam(model.parameters())\n", "set_default_dtype"),
])
def test_fp16_adam_epsilon_evidence(src, why):
    from conftest import lint
    [finding] = lint(src, select=["NAN504"])
    assert why in finding.message


@pytest.mark.parametrize("src", [
    "import keras\nkeras.mixed_precision.set_global_policy('mixed_float16')\nopt = keras.optimizers.Adam(1e-3)\n",
    "import tensorflow.compat.v1 as tf\nx = tf.placeholder(tf.float32, [None, 10])\nopt = tf.train.AdamOptimizer(1e-3)\n",
    "import tensorflow as tf\ninputs = tf.keras.Input(shape=(10,), dtype='float16')\nopt = tf.keras.optimizers.Adam()\n",
])
def test_fp16_adam_epsilon_silent(src):
    assert codes(src, select=["NAN504"]) == []
