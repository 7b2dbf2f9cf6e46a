"""Issue 13's "same family" items, checked to hold: NAN401 accepts a where-masked numerator
and masks through names (a guarded count stays silent); NAN301 matches exponents up to a clip
and denominators through tile/reshape.  NAN504's float16 evidence (a TF1 placeholder,
set_default_dtype, .half(), a float16 Keras policy) is in test_rules_family.py."""

import pytest

from conftest import lint


def codes(src, code):
    """On any evidence: the family's shapes are what is tested here, not the tiers."""
    return [f.code for f in lint(src, select=[code], may=True)]


@pytest.mark.parametrize("src,expected", [
    ("import torch\ndef f(loss, y):\n    m = y > 0\n    return torch.sum(torch.where(m, loss, 0.0)) / torch.sum(m)\n",
     ["NAN401"]),
    ("import torch\ndef f(loss, y):\n    mask = (y > 0).float()\n    masked = loss * mask\n    total = mask.sum()\n"
     "    return masked.sum() / total\n", ["NAN401"]),
    ("import torch\ndef f(loss, y):\n    m = (y > 0).float()\n"
     "    return torch.sum(loss * m) / torch.maximum(torch.sum(m), torch.tensor(1.0))\n", []),
])
def test_masked_mean_family(src, expected):
    assert codes(src, "NAN401") == expected


@pytest.mark.parametrize("body", [
    "    return tf.exp(tf.clip_by_value(x, -87.0, 87.0)) / tf.reduce_sum(tf.exp(x), axis=-1, keepdims=True)\n",
    "    e = tf.exp(x)\n    s = tf.reduce_sum(e, axis=-1, keepdims=True)\n    return e / tf.tile(s, [1, 10])\n",
    "    e = tf.exp(x)\n    s = tf.reshape(tf.reduce_sum(e, axis=-1), [-1, 1])\n    return e / s\n",
])
def test_manual_softmax_family(body):
    assert codes("import tensorflow as tf\ndef f(x):\n" + body, "NAN301") == ["NAN301"]
