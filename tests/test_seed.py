"""The seed program of issue 2: the TF1 MNIST tutorial's cross entropy, in every
spelling and framework, is flagged as a log of a softmax; a user's softmax is not."""

import pytest

from conftest import codes

SEED = """\
{imports}

def model(x, W_fc2, b_fc2, h_fc1_drop, y_):
    y_conv = {softmax}(tf.matmul(h_fc1_drop, W_fc2) + b_fc2)
    keep = 1
    cross_entropy = -tf.reduce_sum(y_*{log}(y_conv))
    return cross_entropy
"""


@pytest.mark.parametrize("imports,softmax,log", [
    ("import tensorflow as tf", "tf.nn.softmax", "tf.log"),  # TF1 spelling
    ("import tensorflow as tf", "tf.nn.softmax", "tf.math.log"),  # TF2 spelling
    ("import tensorflow.compat.v1 as tf", "tf.nn.softmax", "tf.log"),  # through compat.v1
    ("import tensorflow as tf\nimport tensorflow.compat.v1 as tf1", "tf1.nn.softmax", "tf1.log"),
    ("import tensorflow as tf\nfrom tensorflow.keras import backend as K", "K.softmax", "K.log"),
    ("import tensorflow as tf\nimport torch\nimport torch.nn.functional as F", "F.softmax", "torch.log"),
    ("import tensorflow as tf\nimport jax\nimport jax.numpy as jnp", "jax.nn.softmax", "jnp.log"),
    ("import tensorflow as tf\nfrom keras import ops", "ops.softmax", "ops.log"),
])
def test_seed_line_is_flagged(imports, softmax, log):
    assert codes(SEED.format(imports=imports, softmax=softmax, log=log), select={"NAN101"}) == ["NAN101"]


def test_seed_with_torch_tensor_method():
    src = "import torch\n\ndef f(z, y):\n    p = z.softmax(-1)\n    return -(y * p.log()).sum()\n"
    assert codes(src, select={"NAN101"}) == ["NAN101"]


def test_user_defined_softmax_is_not_flagged():
    src = SEED.format(imports="import tensorflow as tf\n\ndef softmax(v):\n    return v / tf.reduce_sum(v)",
                      softmax="softmax", log="tf.log")
    assert codes(src) == []
