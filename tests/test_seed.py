"""The seed program of issue 2: the TF1 MNIST tutorial's cross entropy, in every
spelling and framework, is flagged as a log of a softmax; a user's softmax is not."""

import pytest

from conftest import codes, fix

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


# The TF1 tutorial's model as the seed wrote it: the softmax's logits feed the loss and
# the accuracy (issue 23.9: the fix must not compute the matmul a second time).
SEED_TF1 = """\
import tensorflow.compat.v1 as tf

def model(h_fc1_drop, W_fc2, b_fc2, y_):
    y_conv = tf.nn.softmax(tf.matmul(h_fc1_drop, W_fc2) + b_fc2)
    cross_entropy = -tf.reduce_sum(y_*tf.log(y_conv))
    correct_prediction = tf.equal(tf.argmax(y_conv, 1), tf.argmax(y_, 1))
    accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))
    return cross_entropy, accuracy
"""


_RUN_TF1 = """\
import json, sys
import tensorflow.compat.v1 as tf
source, inputs = json.loads(sys.stdin.read())
namespace = {}
exec(compile(source, "seed.py", "exec"), namespace)
with tf.Graph().as_default():
    outputs = namespace["model"](*(tf.constant(v, tf.float32) for v in inputs))
    with tf.Session() as session:
        print(json.dumps([float(v) for v in session.run(outputs)]))
"""


def _run_tf1(source, *inputs):
    """The model's outputs under TF1 graph mode, in a process of its own (TensorFlow
    loaded into the test process upsets the suite's later tests)."""
    import importlib.util
    import json
    import subprocess
    import sys

    if importlib.util.find_spec("tensorflow") is None:
        pytest.skip("tensorflow is not installed")
    done = subprocess.run([sys.executable, "-c", _RUN_TF1], input=json.dumps([source, [v.tolist() for v in inputs]]),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_seed_fix_computes_the_logits_once_and_keeps_the_loss():
    import numpy as np

    fixed = fix(SEED_TF1, select={"NAN103"})
    assert fixed.count("tf.matmul(") == 1, fixed
    assert fixed.splitlines()[3:6] == [
        "    y_conv_logits = tf.matmul(h_fc1_drop, W_fc2) + b_fc2",
        "    y_conv = tf.nn.softmax(y_conv_logits)",
        "    cross_entropy = tf.reduce_sum(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y_, logits=y_conv_logits))"]
    assert "tf.argmax(y_conv, 1)" in fixed  # the accuracy still reads the softmax
    assert codes(fixed) == []
    rng = np.random.default_rng(0)
    inputs = (rng.normal(size=(4, 5)), rng.normal(size=(5, 3)), rng.normal(size=3), np.eye(3)[[0, 2, 1, 2]])
    (loss, accuracy), (fixed_loss, fixed_accuracy) = _run_tf1(SEED_TF1, *inputs), _run_tf1(fixed, *inputs)
    assert np.isfinite(loss) and fixed_loss == pytest.approx(loss, rel=1e-5)
    assert fixed_accuracy == accuracy


def test_seed_example_fixed_has_one_matmul_per_layer():
    from pathlib import Path

    source = (Path(__file__).parent.parent / "examples" / "mnist_softmax_tf1.py").read_text()
    fixed = fix(source, select={"NAN103"})
    assert fixed.count("tf.matmul(h_fc1_drop, W_fc2)") == 1 and "logits=y_conv_logits" in fixed
    compile(fixed, "mnist_softmax_tf1.py", "exec")
