"""The strength of the evidence that a value reaches 0 (nanlint/facts.py: logit, indefinite,
weak_mask, returns_early; nanlint/zeros.py): the strong classes are reported by the
default rules NAN107, NAN108, NAN206; the weak ones by the opt-in NAN110 alone."""

import pytest

from conftest import lint

ALL = ["NAN107", "NAN108", "NAN206", "NAN110"]


def found(src):
    return [f.code for f in lint(src, select=ALL)]


@pytest.mark.parametrize("strong,weak,code", [
    # evidence.logit: a probability of a logit saturates; of an embedding or a box coordinate it does not
    ("import torch\ndef f(y, logits):\n    return y / torch.sigmoid(logits)\n",
     "import torch\ndef f(y, emb):\n    return y / torch.sigmoid(emb)\n", "NAN108"),
    ("import torch\ndef f(y, h, w):\n    p = torch.sigmoid(h @ w)\n    return y / p\n",
     "import torch\ndef f(y, ref):\n    box = ref.sigmoid()\n    return y / box[..., 2]\n", "NAN108"),
    ("import tensorflow as tf\ndef f(self, x):\n    return x / tf.sigmoid(-self.logits)\n",
     "import tensorflow as tf\ndef f(self, x):\n    return x / tf.sigmoid(-self.query)\n", "NAN108"),
    # evidence.indefinite: a clamp of a difference is active; of a variance it is defensive
    ("import torch\ndef f(m, d):\n    return (m ** 2 - d).clamp(min=0).sqrt()\n",
     "import torch\ndef f(x, n):\n    v = torch.sum(x ** 2, dim=1) / n\n    return torch.sqrt(torch.clamp(v, min=0.0))\n",
     "NAN206"),
    ("import tensorflow as tf\ndef f(s):\n    return tf.sqrt(tf.maximum(1 - s ** 2, 0.))\n",
     "import tensorflow as tf\ndef f(v):\n    return tf.sqrt(tf.maximum(v, 0.))\n", "NAN206"),
    # evidence.weak_mask: a selection made here vs a mask passed in
    ("import torch\ndef f(x, target, ignore_index):\n    n = (target != ignore_index).sum()\n    return x.sum() / n\n",
     "import torch\ndef f(x, padding_mask):\n    return x.sum(1) / (~padding_mask).sum(dim=1)\n", "NAN108"),
    # ... a count of non-finite entries dropped vs of the non-NaN ones (the NaN propagates)
    ("import torch\ndef f(t):\n    bad = torch.isnan(t) | (t == float('inf'))\n    n = (~bad).sum(0)\n"
     "    return t.sum(0) / n\n",
     "import torch\ndef f(x):\n    valid = ~torch.isnan(x)\n    count = valid.sum(dim=0)\n    return x.sum(0) / count\n",
     "NAN108"),
    # ... an absolute threshold vs one relative to the values (sparsemax's support)
    ("import jax.numpy as jnp\ndef f(z, c):\n    support = z > c\n    k = jnp.sum(support, axis=-1)\n"
     "    return jnp.sum(z, axis=-1) / k\n",
     "import jax.numpy as jnp\ndef f(z, r):\n    s = jnp.cumsum(z, axis=-1)\n    support = z - (s - 1) / r > 0\n"
     "    k = jnp.sum(support, axis=-1)\n    return (jnp.sum(s, axis=-1) - 1) / k\n", "NAN108"),
    # a relu is 0 on half its inputs; a sum of rectified weights holds a positive one
    ("import torch\ndef f(x, y):\n    return y / torch.relu(x)\n",
     "import torch\ndef f(d, y):\n    w = torch.clamp(1 - d.abs(), min=0)\n    return w / w.sum(-1, keepdim=True)\n",
     "NAN108"),
    # a product of scores under a root
    ("import tensorflow as tf\ndef f(logits):\n    return tf.sqrt(tf.sigmoid(logits))\n",
     "import tensorflow as tf\ndef f(logits, c):\n    return tf.sqrt(tf.sigmoid(logits) * tf.sigmoid(c))\n", "NAN206"),
    # a log of a distance is 0 only where two points coincide
    ("import torch\ndef f(x, y):\n    return torch.log(torch.relu(x - y))\n",
     "import torch\ndef f(a, b):\n    return torch.log(torch.sum((a - b) ** 2, -1))\n", "NAN107"),
])
def test_strong_is_default_weak_is_nan110(strong, weak, code):
    assert found(strong) == [code]
    assert found(weak) == ["NAN110"]
    assert [f.code for f in lint(weak)] == []  # not on by default


def test_weak_finding_says_why():
    src = "import torch\ndef f(x, padding_mask):\n    return x.sum(1) / (~padding_mask).sum(dim=1)\n"
    [finding] = lint(src, select=["NAN110"])
    assert "weak evidence: a padding or token mask" in finding.message and "NAN108" in finding.message


@pytest.mark.parametrize("src", [
    # evidence.returns_early: the function returns when the count is 0
    "import torch\ndef f(x, n_pos):\n    safe = n_pos > 0\n    if torch.sum(safe) == 0:\n        return x.sum() * 0\n"
    "    return x.sum() / torch.sum(safe)\n",
    "import torch\ndef f(x, y):\n    n = (y > 0).sum()\n    if not n:\n        raise ValueError('empty')\n    return x.sum() / n\n",
])
def test_early_return_is_a_guard(src):
    assert found(src) == []


def test_no_early_return_after_the_division():
    src = ("import torch\ndef f(x, y):\n    n = (y > 0).sum()\n    m = x.sum() / n\n    if n == 0:\n"
           "        return 0.0\n    return m\n")
    assert found(src) == ["NAN108"]


@pytest.mark.parametrize("strong,weak", [
    # evidence.weak_mask: a padding or token mask computed in the program holds an element per example
    ("import torch\ndef f(x, labels, k):\n    keep = labels == k\n    return x.sum() / keep.sum()\n",
     "import torch\ndef f(x, ids, pad_token_id):\n    token_mask = ids != pad_token_id\n"
     "    return x.sum(1) / token_mask.sum(dim=1)\n"),
    ("import torch\ndef f(x, t):\n    union = t.sum(0)\n    valid = union > 0\n    return x.sum() / valid.sum()\n",
     "import torch\ndef f(x, lengths, t):\n    m = torch.arange(t)[None, :] < lengths[:, None]\n"
     "    return x.sum(1) / m.sum(1)\n"),
])
def test_padding_masks_are_weak(strong, weak):
    assert found(strong) == ["NAN108"]
    assert found(weak) == ["NAN110"]


@pytest.mark.parametrize("src,expected", [
    # facts.chosen: a probability gathered at its argmax or at a sampled index is never 0
    ("import torch\ndef f(logits):\n    probs = torch.softmax(logits, -1)\n    tok = torch.argmax(probs, -1, keepdim=True)\n"
     "    return probs.gather(dim=1, index=tok).squeeze(-1).log()\n", []),
    ("import torch\ndef f(logits):\n    probs = torch.softmax(logits, -1)\n    tok = torch.multinomial(probs, 1)\n"
     "    p = probs.gather(1, tok)\n    return torch.log(p)\n", []),
    # ... at a label's index it is an underflowing probability
    ("import torch\ndef f(logits, labels):\n    probs = torch.softmax(logits, -1)\n"
     "    p = probs.gather(1, labels)\n    return torch.log2(p)\n", ["NAN107"]),
])
def test_chosen_probability(src, expected):
    assert found(src) == expected


def test_mask_made_by_another_function_is_weak():
    src = ("import tensorflow as tf\ndef xent(logits, labels):\n    weights = tf.cast(tf.not_equal(labels, 0), tf.float32)\n"
           "    return logits * weights, weights\n"
           "def loss(logits, labels):\n    x, weights = xent(logits, labels)\n    return tf.reduce_sum(x) / tf.reduce_sum(weights)\n")
    assert found(src) == ["NAN110"]
    local = ("import tensorflow as tf\ndef loss(x, labels):\n    weights = tf.cast(tf.not_equal(labels, 0), tf.float32)\n"
             "    return tf.reduce_sum(x) / tf.reduce_sum(weights)\n")
    assert found(local) == ["NAN108"]


# --- dropout: exactly 0 on every dropped element while training (strong), unless the call drops nothing
_TORCH = "import torch\nimport torch.nn.functional as F\n"
_TF = "import tensorflow as tf\n"
_KERAS = "import keras\nfrom keras import ops\n"
_JAX = "import jax.numpy as jnp\nimport haiku as hk\n"


@pytest.mark.parametrize("src,code", [
    (_TORCH + "def f(x):\n    return torch.log(F.dropout(x, 0.1))\n", "NAN107"),
    (_TORCH + "def f(self, x):\n    h = F.dropout(x, p=self.p, training=self.training)\n    return torch.log(h)\n",
     "NAN107"),
    (_TORCH + "def f(y, x):\n    return y / torch.dropout(x, 0.2, True)\n", "NAN108"),
    (_TORCH + "def f(x):\n    return torch.sqrt(F.dropout2d(x))\n", "NAN206"),  # default p=0.5, training=True
    (_TF + "def f(x, rate):\n    return tf.math.log(tf.nn.dropout(x, rate))\n", "NAN107"),
    (_TF + "def f(x, keep_prob):\n    return tf.math.log(tf.compat.v1.nn.dropout(x, keep_prob))\n", "NAN107"),
    (_TF + "def f(y, x):\n    return y / tf.keras.backend.dropout(x, 0.5)\n", "NAN108"),
    (_KERAS + "def f(x):\n    return ops.log(keras.random.dropout(x, 0.5, seed=1))\n", "NAN107"),
    (_JAX + "def f(rng, x):\n    return jnp.log(hk.dropout(rng, 0.1, x))\n", "NAN107"),
    (_JAX + "def f(rng, x):\n    return jnp.sqrt(hk.dropout(rng, 0.1, x))\n", "NAN206"),  # keep * x: a product
    # a product with a dropout output is 0 where it is
    (_TORCH + "def f(x, w):\n    return torch.log(F.dropout(x, 0.1) * w)\n", "NAN107"),
])
def test_dropout_is_a_strong_source(src, code):
    assert found(src) == [code]


def test_dropout_message_says_why():
    [finding] = lint(_TORCH + "def f(x):\n    return torch.log(F.dropout(x, 0.1))\n")
    assert "log of a dropout output: it is exactly 0 on every dropped element while training" in finding.message
    assert "apply the dropout after the log" in finding.message


@pytest.mark.parametrize("src", [
    # a call that drops nothing: a literal rate 0, keep_prob 1, training=False, deterministic=True
    _TORCH + "def f(x):\n    return torch.log(F.dropout(x, 0.0))\n",
    _TORCH + "def f(x):\n    return torch.log(F.dropout(x, p=0.3, training=False))\n",
    _TORCH + "def f(x):\n    return torch.log(torch.dropout(x, 0.3, False))\n",
    _TORCH + "P_DROP = 0.0\ndef f(x):\n    return torch.log(F.dropout(x, P_DROP))\n",
    _TF + "def f(x):\n    return tf.math.log(tf.nn.dropout(x, rate=0.0))\n",
    _TF + "def f(x):\n    return tf.math.log(tf.compat.v1.nn.dropout(x, keep_prob=1.0))\n",
    # TF1's positional keep_prob of 1 (a TF2 rate of 1 raises)
    _TF + "def f(x):\n    return tf.math.log(tf.nn.dropout(x, 1.0))\n",
    # alpha dropout's dropped value is not 0
    _TORCH + "def f(x):\n    return torch.log(F.alpha_dropout(x, 0.1, training=True))\n",
    # TensorFlow's dropout selects the gradient (where): sqrt of it has a finite gradient (0) there
    _TF + "def f(x):\n    return tf.sqrt(tf.nn.dropout(x, 0.5))\n",
    "import tensorflow as tf\ndef f(x):\n    return tf.sqrt(tf.keras.layers.Dropout(0.5)(x, training=True))\n",
])
def test_dropout_that_drops_nothing_is_no_source(src):
    assert found(src) == []


def test_dropout_turned_off_keeps_its_inputs_sources():
    src = _TORCH + "def f(x):\n    h = F.dropout(F.relu(x), 0.3, training=False)\n    return torch.log(h)\n"
    [finding] = lint(src, select=ALL)
    assert finding.code == "NAN107" and "log of a relu output" in finding.message


def test_sum_of_a_dropout_output_is_weak():
    """0 only when every element is dropped: a sum of rectified values."""
    src = _TORCH + "def f(x, y):\n    w = F.dropout(x, 0.1)\n    return y / w.sum(-1)\n"
    assert found(src) == ["NAN110"]


@pytest.mark.parametrize("src,expected", [
    # a layer stands for its output (nanlint.semantic.models): strong while training can apply it
    ("import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
     "        self.drop = nn.Dropout(0.1)\n    def forward(self, x):\n        return torch.log(self.drop(x))\n",
     ["NAN107"]),
    ("import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
     "        self.drop = nn.Dropout(p=0.0)\n    def forward(self, x):\n        return torch.log(self.drop(x))\n", []),
    # the layer is the file's one source op: the site filter lets it through (ops.IMPLIED_BY)
    ("import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
     "        self.drop = nn.Dropout(0.1)\n    def forward(self, x, y):\n        return y / self.drop(x)\n",
     ["NAN108"]),
    ("import keras\nfrom keras import layers, ops\nclass Block(layers.Layer):\n    def __init__(self):\n"
     "        super().__init__()\n        self.drop = layers.Dropout(0.2)\n"
     "    def call(self, x, training=None):\n        return ops.log(self.drop(x, training=training))\n", ["NAN107"]),
    # called with training=False: the layer passes its input through
    ("import keras\nfrom keras import layers, ops\nclass Block(layers.Layer):\n    def __init__(self):\n"
     "        super().__init__()\n        self.drop = layers.Dropout(0.2)\n"
     "    def call(self, x):\n        return ops.log(self.drop(x, training=False))\n", []),
    ("import keras\nfrom keras import layers, ops\nclass Block(layers.Layer):\n    def __init__(self):\n"
     "        super().__init__()\n        self.drop = layers.Dropout(0.2)\n"
     "    def call(self, x):\n        return ops.log(self.drop(ops.relu(x), training=False))\n", ["NAN107"]),
    ("import jax.numpy as jnp\nimport flax.linen as nn\nclass Head(nn.Module):\n    @nn.compact\n"
     "    def __call__(self, x, train):\n        h = nn.Dropout(0.5, deterministic=not train)(x)\n"
     "        return jnp.log(h)\n", ["NAN107"]),
    ("import jax.numpy as jnp\nimport flax.linen as nn\nclass Head(nn.Module):\n    @nn.compact\n"
     "    def __call__(self, x):\n        h = nn.Dropout(0.5)(x, deterministic=True)\n        return jnp.log(h)\n", []),
    ("import jax.numpy as jnp\nimport flax.linen as nn\nclass Head(nn.Module):\n    @nn.compact\n"
     "    def __call__(self, x):\n        h = nn.Dropout(0.5, deterministic=True)(x)\n        return jnp.log(h)\n", []),
])
def test_dropout_layer(src, expected):
    assert found(src) == expected
