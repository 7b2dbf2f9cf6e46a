"""Name resolution: imports and aliases resolve, a user's own names never do,
and names are followed to their single unconditional assignment."""

import pytest

from conftest import codes, lint


@pytest.mark.parametrize("src", [
    # TF2, TF1, compat.v1, from-imports with aliases
    "import tensorflow as tf\ny = tf.math.log(tf.nn.softmax(z))\n",
    "import tensorflow as tf\ny = tf.log(tf.nn.softmax(z))\n",
    "import tensorflow.compat.v1 as tf1\ny = tf1.log(tf1.nn.softmax(z))\n",
    "import tensorflow as tf\ny = tf.compat.v1.log(tf.compat.v1.nn.softmax(z))\n",
    "from tensorflow.math import log as ln\nfrom tensorflow.nn import softmax\ny = ln(softmax(z))\n",
    "import tensorflow\ny = tensorflow.math.log(tensorflow.nn.softmax(z))\n",
    "import tensorflow.compat.v1\ny = tensorflow.compat.v1.log(tensorflow.compat.v1.nn.softmax(z))\n",
    "from tensorflow.keras import backend as K\ny = K.log(K.softmax(z))\n",
    "import tensorflow as tf\nK = tf.keras.backend\ny = K.log(K.softmax(z))\n",
    "try:\n    import tensorflow.compat.v1 as tf\nexcept ImportError:\n    import tensorflow as tf\ny = tf.log(tf.nn.softmax(z))\n",
    # PyTorch functions and tensor methods
    "from torch.nn import functional as F\nimport torch\ny = torch.log(F.softmax(z, dim=1))\n",
    "import torch.nn.functional as F\ny = F.softmax(z, dim=1).log()\n",
    "import torch\ny = x.softmax(-1).log()\n",
    "import torch\ny = torch.special.log(torch.special.softmax(z, 1))\n",
    # JAX and Keras 3
    "import jax.numpy as jnp\nimport jax\ny = jnp.log(jax.nn.softmax(z))\n",
    "from jax import nn as jnn, numpy as jnp\ny = jnp.log(jnn.softmax(z))\n",
    "from keras import ops\ny = ops.log(ops.softmax(z))\n",
    "import keras\ny = keras.ops.log(keras.activations.softmax(z))\n",
])
def test_aliases_resolve(src):
    assert codes(src) == ["NAN101"]


@pytest.mark.parametrize("src", [
    # a user's own softmax / log
    "import tensorflow as tf\ndef softmax(z):\n    return z\ny = tf.math.log(softmax(z))\n",
    "import tensorflow as tf\nsoftmax = lambda z: z\ny = tf.math.log(softmax(z))\n",
    "import tensorflow as tf\ndef log(p):\n    return p\ny = log(tf.nn.softmax(z))\n",
    # a logger's .log() is no op; numpy/math are not framework ops
    "import logging\nimport torch\nlogger = logging.getLogger()\nlogger.log(torch.softmax(z, 1))\n",
    "import numpy as np\nimport scipy.special\ny = np.log(scipy.special.softmax(z))\n",
    "import math\nimport torch\ny = math.log(torch.softmax(z, 1))\n",
    # tensor methods only count in files that import a framework with methods
    "import numpy as np\ny = x.softmax(-1).log()\n",
    # a shadowing import: `tf` is rebound to something else as well
    "import tensorflow as tf\nif cond:\n    tf = my_module\ny = tf.math.log(tf.nn.softmax(z))\n",
    # relative imports are the user's own modules
    "from .ops import log, softmax\ny = log(softmax(z))\n",
    # guards
    "import tensorflow as tf\ny = tf.math.log(tf.nn.softmax(z) + 1e-10)\n",
    "import tensorflow as tf\ny = tf.math.log(tf.clip_by_value(tf.nn.softmax(z), 1e-10, 1.0))\n",
    "import tensorflow as tf\np = tf.nn.softmax(z)\np = tf.clip_by_value(p, 1e-7, 1.)\ny = tf.math.log(p)\n",
])
def test_not_resolved(src):
    assert codes(src) == []


def test_follow_single_assignment_same_scope():
    src = """\
        import tensorflow as tf
        def f(z, y_):
            y_conv = tf.nn.softmax(z)
            return -tf.reduce_sum(y_ * tf.log(y_conv))
    """
    [finding] = lint(src, select={"NAN101"})
    assert finding.code == "NAN101"
    assert "`y_conv` is assigned on line 3" in finding.message
    assert finding.fix_applicability == "unsafe"


@pytest.mark.parametrize("src", [
    # one branch assigns something else
    "import tensorflow as tf\ndef f(z, c):\n    if c:\n        p = tf.nn.softmax(z)\n    else:\n        p = z\n    return tf.log(p)\n",
    # a parameter that may keep its own value
    "import tensorflow as tf\ndef f(z, c, p):\n    if c:\n        p = tf.nn.softmax(z)\n    return tf.log(p)\n",
    # rebound by arithmetic
    "import tensorflow as tf\ndef f(z):\n    p = tf.nn.softmax(z)\n    p = p * 2\n    return tf.log(p)\n",
    # rebound by a guard before the use
    "import tensorflow as tf\ndef f(z):\n    p = tf.nn.softmax(z)\n    p = tf.clip_by_value(p, 1e-7, 1.)\n    return tf.log(p)\n",
    # rebound later in the loop: the first iteration's value is a softmax, later ones not
    "import tensorflow as tf\ndef f(z):\n    p = tf.nn.softmax(z)\n    for _ in range(3):\n        y = tf.log(p)\n        p = y\n    return y\n",
    # a loop target
    "import tensorflow as tf\nfor p in ps:\n    y = tf.log(p)\n",
])
def test_dataflow_is_conservative(src):
    assert codes(src) == []


def test_module_value_used_in_a_function_is_display_only():
    src = "import tensorflow as tf\np = tf.nn.softmax(z)\ndef f():\n    return tf.log(p)\n"
    [finding] = lint(src, select={"NAN101"})
    assert finding.fix_applicability == "display-only"


def test_assignment_inside_with_block_is_followed():
    src = """\
        import tensorflow as tf
        with tf.name_scope("out"):
            y_conv = tf.nn.softmax(logits)
        loss = -tf.reduce_sum(y * tf.log(y_conv))
    """
    assert codes(src, select={"NAN101"}) == ["NAN101"]


def test_self_attribute_across_methods_is_flagged_display_only():
    src = """\
        import tensorflow as tf
        class Model:
            def build(self, x):
                self.probs = tf.nn.softmax(self.dense(x))
            def loss(self, y):
                return -tf.reduce_sum(y * tf.log(self.probs))
    """
    [finding] = lint(src, select={"NAN101"})
    assert finding.code == "NAN101"
    assert finding.fix_applicability == "display-only"
    assert not finding.edits


def test_function_local_import():
    src = "def f(z):\n    import torch\n    return torch.log(torch.softmax(z, 1))\n"
    assert codes(src) == ["NAN101"]
    src = "def g(z):\n    import torch\ndef f(z):\n    return torch.log(torch.softmax(z, 1))\n"
    assert codes(src) == []


def test_class_scope_is_not_visible_in_methods():
    src = """\
        import torch
        class A:
            softmax = torch.softmax
            def f(self, z):
                return torch.log(softmax(z, 1))
    """
    assert codes(src) == []


def test_comprehension_and_lambda_params_shadow():
    assert codes("import torch\ny = [torch.log(torch) for torch in xs]\n") == []
    assert codes("import torch\nf = lambda torch: torch.log(torch.softmax(z, 1))\n") == []
