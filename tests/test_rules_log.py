"""Precision of the log-of-probability rules NAN103-NAN106 and NAN109: what must be
flagged, what must not, aliasing, dataflow across statements, and exact fixes."""

import pytest

from conftest import codes, fix, lint

LOG_RULES = ["NAN101", "NAN102", "NAN103", "NAN104", "NAN105", "NAN106", "NAN109"]


def only(src, code):
    return [f for f in lint(src, select=[code])]


# --- NAN103 softmax-cross-entropy ---------------------------------------------------------
@pytest.mark.parametrize("src", [
    # TF2, any operand order, inline
    "import tensorflow as tf\ndef f(z, y):\n    return -tf.reduce_sum(tf.math.log(tf.nn.softmax(z)) * y)\n",
    # TF1 through compat.v1, the label negated, reduce_mean
    "import tensorflow.compat.v1 as tf\ndef f(z, y):\n    return tf.reduce_mean(-y * tf.log(tf.nn.softmax(z)))\n",
    # tf.keras.backend
    "from tensorflow.keras import backend as K\ndef f(z, y):\n    return -K.sum(y * K.log(K.softmax(z)), axis=-1)\n",
    # torch methods all the way
    "import torch\ndef f(z, y):\n    return -(y * z.softmax(dim=1).log()).sum(1).mean()\n",
    # JAX, aliased import
    "import jax.numpy as np2\nfrom jax import nn as jnn\ndef f(z, y):\n    return -np2.mean(y * np2.log(jnn.softmax(z)))\n",
    # Keras 3 via tf.keras.ops
    "import tensorflow as tf\ndef f(z, y):\n    return -tf.keras.ops.sum(y * tf.keras.ops.log(tf.keras.ops.softmax(z)))\n",
])
def test_softmax_cross_entropy_flagged(src):
    assert codes(src) == ["NAN103"]


def test_softmax_cross_entropy_supersedes_log_softmax_once_per_site():
    src = """\
        import tensorflow as tf
        def f(z, y):
            p = tf.nn.softmax(z)
            a = -tf.reduce_sum(y * tf.math.log(p))
            b = tf.math.log(p)
            return a, b
    """
    assert codes(src) == ["NAN103", "NAN101"]  # the bare log on line 5 stays NAN101
    [f103] = only(src, "NAN103")
    assert "`p` is assigned on line 3" in f103.message


@pytest.mark.parametrize("src", [
    # epsilon that survives float32
    "import tensorflow as tf\ndef f(z, y):\n    return -tf.reduce_sum(y * tf.math.log(tf.nn.softmax(z) + 1e-10))\n",
    # clipped
    "import tensorflow as tf\ndef f(z, y):\n    return -tf.reduce_sum(y * tf.math.log(tf.clip_by_value(tf.nn.softmax(z), 1e-7, 1.0)))\n",
    # rebound in place to a clipped value: two assignments, never followed, never flagged
    "import tensorflow as tf\ndef f(z, y):\n    p = tf.nn.softmax(z)\n    p = tf.clip_by_value(p, 1e-7, 1.)\n    return -tf.reduce_sum(y * tf.math.log(p))\n",
    # already fused
    "import tensorflow as tf\ndef f(z, y):\n    return -tf.reduce_sum(y * tf.nn.log_softmax(z))\n",
    # numpy on data
    "import numpy as np\ndef f(z, y):\n    return -np.sum(y * np.log(z))\n",
    # the user's own softmax and log
    "import tensorflow as tf\ndef softmax(z):\n    return z\ndef log(z):\n    return z\ndef f(z, y):\n    return -tf.reduce_sum(y * log(softmax(z)))\n",
])
def test_softmax_cross_entropy_not_flagged(src):
    assert not [c for c in codes(src, select=LOG_RULES) if c in ("NAN101", "NAN103")]


def test_softmax_cross_entropy_tf_fused_over_the_softmax_axis():
    src = """\
        import tensorflow as tf
        def f(z, y):
            return tf.reduce_mean(-tf.reduce_sum(y * tf.math.log(tf.nn.softmax(z, axis=1)), axis=[1]))
    """
    assert fix(src).splitlines()[2] == (
        "    return tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=z, axis=1))")


def test_softmax_cross_entropy_tf1_uses_v2_spelling():
    src = """\
        import tensorflow.compat.v1 as tf
        def f(z, y):
            return -tf.reduce_sum(y * tf.log(tf.nn.softmax(z)))
    """
    assert "tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=z)" in fix(src)


def test_softmax_cross_entropy_axis_not_provably_equal_keeps_reduction():
    src = """\
        import tensorflow as tf
        def f(z, y):
            return -tf.reduce_sum(y * tf.math.log(tf.nn.softmax(z)), axis=1)
    """
    assert fix(src).splitlines()[2] == "    return -tf.reduce_sum(y * tf.nn.log_softmax(z), axis=1)"


@pytest.mark.parametrize("body,fixed", [
    ("-torch.sum(y * torch.log(torch.softmax(z, dim=1)))",
     'torch.nn.functional.cross_entropy(z, y, reduction="sum")'),
    ("-(y * torch.log(torch.softmax(z, dim=1))).sum(dim=1)",
     'torch.nn.functional.cross_entropy(z, y, reduction="none")'),
    # dim -1: not cross_entropy's class dim 1 -> log_softmax form
    ("-(y * torch.log(torch.softmax(z, dim=-1))).sum()",
     "-(y * torch.log_softmax(z, dim=-1)).sum()"),
    # a mean over every element is not reduction="mean" (that divides by N*d only)
    ("-torch.mean(y * torch.log(torch.softmax(z, dim=1)))",
     "-torch.mean(y * torch.log_softmax(z, dim=1))"),
])
def test_softmax_cross_entropy_torch_reductions(body, fixed):
    src = f"import torch\ndef f(z, y):\n    return {body}\n"
    assert fix(src).splitlines()[2] == f"    return {fixed}"


def _apply_edits(text, edits):
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    for e in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        a, b = (starts[r - 1] + c - 1 for r, c in (e.start, e.end))
        text = text[:a] + e.content + text[b:]
    return text


@pytest.mark.parametrize("indent", ["    ", "\t"])
def test_softmax_cross_entropy_binds_the_logits_once(indent):
    src = ("import tensorflow as tf\n"
           "class Model:\n"
           f"{indent}def loss(self, h, W, b, y):\n"
           f"{indent * 2}if h is not None:\n"
           f"{indent * 3}# the probabilities\n"
           f"{indent * 3}p = tf.nn.softmax(tf.matmul(h, W) + b)  # keep\n"
           f"{indent * 3}return -tf.reduce_sum(y * tf.math.log(p)), tf.argmax(p, 1)\n")
    fixed = fix(src)
    assert fixed.splitlines()[4:8] == [
        f"{indent * 3}# the probabilities",
        f"{indent * 3}p_logits = tf.matmul(h, W) + b",
        f"{indent * 3}p = tf.nn.softmax(p_logits)  # keep",
        f"{indent * 3}return tf.reduce_sum(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=p_logits)), "
        "tf.argmax(p, 1)"]
    [finding] = lint(src)
    assert finding.fix_applicability == "unsafe" and "bound once to `p_logits`" in finding.fix_message
    assert _apply_edits(src, finding.edits) == fixed  # the edits (JSON, LSP, --format full) say the same


def test_softmax_cross_entropy_logits_name_is_new_and_the_expression_kept_whole():
    src = """\
        import tensorflow as tf
        p_logits = 3
        def f(h, W, b, y):
            p = tf.nn.softmax(tf.matmul(h, W)
                              + b)
            return -tf.reduce_sum(y * tf.math.log(p), axis=1)
    """
    fixed = fix(src)
    compile(fixed, "f.py", "exec")
    assert fixed.count("tf.matmul(") == 1
    assert "    p_logits_2 = (tf.matmul(h, W)\n" in fixed
    assert "tf.nn.log_softmax(p_logits_2)" in fixed and "p = tf.nn.softmax(p_logits_2)" in fixed


@pytest.mark.parametrize("src", [
    # the logits are a name already: nothing is computed twice
    "import tensorflow as tf\ndef f(z, y):\n    p = tf.nn.softmax(z)\n    return -tf.reduce_sum(y * tf.math.log(p))\n",
    # the softmax and the loss on one line: there is no line before the softmax's alone
    "import tensorflow as tf\ndef f(h, W, y):\n    p = tf.nn.softmax(tf.matmul(h, W)); l = -tf.reduce_sum(y * tf.math.log(p))\n",
])
def test_softmax_cross_entropy_logits_not_bound(src):
    fixed = fix(src)
    compile(fixed, "f.py", "exec")
    assert "p_logits" not in fixed and "softmax_cross_entropy_with_logits(labels=y, logits=" in fixed


def test_tf1_model_class_attribute_is_display_only():
    src = """\
        import tensorflow.compat.v1 as tf
        class Model:
            def build(self, x, W):
                self.probs = tf.nn.softmax(tf.matmul(x, W))
            def loss(self, y):
                return -tf.reduce_sum(y * tf.log(self.probs))
    """
    [finding] = lint(src)
    assert finding.code == "NAN103" and finding.fix_applicability == "display-only"
    assert "`self.probs` is assigned on line 4" in finding.message
    assert fix(src) == fix(src, unsafe=False)


def test_function_returning_softmax_is_followed():
    src = """\
        import tensorflow.compat.v1 as tf
        def inference(x, W):
            logits = tf.matmul(x, W)
            return tf.nn.softmax(logits)
        def loss(x, W, y):
            probs = inference(x, W)
            return tf.log(probs)
    """
    [finding] = lint(src)
    assert finding.code == "NAN101"
    assert finding.start[0] == 7
    assert "`inference(x, W)` returns it on line 4" in finding.message
    assert finding.fix_applicability == "display-only"


def test_function_with_every_return_a_softmax():
    src = """\
        import torch
        def head(z, train):
            if train:
                return torch.softmax(z, 1)
            return torch.softmax(z / 2, 1)
        def f(z):
            return torch.log(head(z, True))
    """
    assert codes(src) == ["NAN101"]


@pytest.mark.parametrize("src", [
    # one return is not a softmax
    "import torch\ndef head(z, t):\n    if t:\n        return z\n    return torch.softmax(z, 1)\ndef f(z):\n    return torch.log(head(z, 1))\n",
    # a user's decorator may change the result
    "import torch\nimport mylib\n@mylib.cached\ndef head(z):\n    return torch.softmax(z, 1)\ndef f(z):\n    return torch.log(head(z))\n",
    "import torch\ndef deco(f):\n    return f\n@deco\ndef head(z):\n    return torch.softmax(z, 1)\ndef f(z):\n    return torch.log(head(z))\n",
    # defined twice
    "import torch\ndef head(z):\n    return torch.softmax(z, 1)\ndef head(z):\n    return z\ndef f(z):\n    return torch.log(head(z))\n",
    # a generator
    "import torch\ndef head(z):\n    yield 1\n    return torch.softmax(z, 1)\ndef f(z):\n    return torch.log(head(z))\n",
])
def test_function_returns_not_followed(src):
    assert codes(src) == []


def test_framework_decorator_is_followed():
    src = "import tensorflow as tf\n@tf.function\ndef head(z):\n    return tf.nn.softmax(z)\ndef f(z):\n    return tf.math.log(head(z))\n"
    assert codes(src) == ["NAN101"]


# --- NAN104 sigmoid-cross-entropy ------------------------------------------------------------
@pytest.mark.parametrize("src", [
    "import tensorflow as tf\ndef f(z, y):\n    p = tf.sigmoid(z)\n    return -(y * tf.math.log(p) + (1 - y) * tf.math.log(1 - p))\n",
    "import tensorflow as tf\ndef f(z, y):\n    p = tf.nn.sigmoid(z)\n    return -(tf.math.log(1 - p) * (1 - y) + tf.math.log(p) * y)\n",
    "import torch\ndef f(z, y):\n    return -y * torch.log(torch.sigmoid(z)) - (1 - y) * torch.log(1 - torch.sigmoid(z))\n",
    "import torch\ndef f(z, y):\n    return -(y * z.sigmoid().log() + (1 - y) * (1 - z.sigmoid()).log()).mean()\n",
    "import torch.nn.functional as F\nimport torch\ndef f(z, y):\n    return F.binary_cross_entropy(torch.sigmoid(z), y)\n",
    "import torch\nfrom torch import nn\ndef f(z, y):\n    return nn.BCELoss()(torch.sigmoid(z), y)\n",
    "import torch\nclass M:\n    def __init__(self):\n        self.crit = torch.nn.BCELoss()\n    def loss(self, z, y):\n        return self.crit(torch.sigmoid(z), y)\n",
    "import jax\nimport jax.numpy as jnp\ndef f(z, y):\n    p = jax.scipy.special.expit(z)\n    return jnp.mean(y * jnp.log(p) + (1 - y) * jnp.log(1 - p))\n",
])
def test_sigmoid_cross_entropy_flagged(src):
    assert codes(src) == ["NAN104"]


@pytest.mark.parametrize("src", [
    # eps that survives float32 in both logs (1 - p + 1e-7 is (1 - p) + 1e-7)
    "import tensorflow as tf\ndef f(z, y):\n    p = tf.sigmoid(z)\n    return -(y * tf.math.log(p + 1e-7) + (1 - y) * tf.math.log(1 - p + 1e-7))\n",
    # different labels: not a binary cross entropy
    "import tensorflow as tf\ndef f(z, y, t):\n    p = tf.sigmoid(z)\n    return y * tf.math.log(p) + (1 - t) * tf.math.log(1 - p)\n",
    # the with-logits forms
    "import torch\nimport torch.nn.functional as F\ndef f(z, y):\n    return F.binary_cross_entropy_with_logits(z, y)\n",
    # BCE on probabilities that are not a sigmoid
    "import torch\nimport torch.nn.functional as F\ndef f(p, y):\n    return F.binary_cross_entropy(p, y)\n",
    # Keras' binary_crossentropy recovers the sigmoid's logits (measured exact)
    "from keras import ops\ndef f(z, y):\n    return ops.binary_crossentropy(y, ops.sigmoid(z))\n",
])
def test_sigmoid_cross_entropy_not_flagged(src):
    assert "NAN104" not in codes(src)


def test_sigmoid_cross_entropy_supersedes_log_sigmoid():
    src = "import torch\ndef f(z, y):\n    p = torch.sigmoid(z)\n    return y * torch.log(p) + (1 - y) * torch.log(1 - p)\n"
    assert codes(src) == ["NAN104"]
    assert codes(src, select=["NAN102"]) == ["NAN102", "NAN102"]


def test_sigmoid_cross_entropy_fix_keeps_the_sign():
    src = "import tensorflow as tf\ndef f(z, y):\n    return y * tf.math.log(tf.sigmoid(z)) + (1 - y) * tf.math.log(1 - tf.sigmoid(z))\n"
    assert fix(src).splitlines()[2] == "    return -tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=z)"


def test_bce_criterion_defined_elsewhere_is_display_only():
    src = "import torch\nimport torch.nn as nn\ncrit = nn.BCELoss()\ndef f(z, y):\n    return crit(torch.sigmoid(z), y)\n"
    [finding] = lint(src)
    assert finding.code == "NAN104" and finding.fix_applicability == "display-only"


def test_bce_loss_fix_keeps_arguments():
    src = "import torch\nimport torch.nn.functional as F\ndef f(z, y, w):\n    return F.binary_cross_entropy(torch.sigmoid(z), y, weight=w, reduction='sum')\n"
    assert fix(src).splitlines()[3] == "    return F.binary_cross_entropy_with_logits(z, y, weight=w, reduction='sum')"


# --- NAN105 absorbed-epsilon -------------------------------------------------------------------
@pytest.mark.parametrize("expr", ["1e-10 + 1 - p", "(1 + 1e-10) - p", "1 + EPS - p", "1.0 + 5e-8 - p"])
def test_absorbed_epsilon_flagged(expr):
    src = f"import torch\nEPS = 1e-12\ndef f(p):\n    return torch.log({expr})\n"
    assert codes(src) == ["NAN105"]


@pytest.mark.parametrize("expr", [
    "1 - p + 1e-10",  # added last: (1 - p) + 1e-10 survives when p == 1
    "p + 1e-10",  # p near 0 keeps the epsilon
    "1e-7 + 1 - p",  # 1 + 1e-7 is 1.0000001 in float32
    "1 + 1e-10 + p",  # nothing subtracted
])
def test_absorbed_epsilon_not_flagged(expr):
    src = f"import torch\ndef f(p):\n    return torch.log({expr})\n"
    assert "NAN105" not in codes(src)


def test_clip_upper_bound_rounding_to_one():
    flagged = "import tensorflow as tf\ndef f(p):\n    q = tf.clip_by_value(p, 1e-10, 1 - 1e-10)\n    return tf.math.log(1 - q)\n"
    fine = "import tensorflow as tf\ndef f(p):\n    q = tf.clip_by_value(p, 1e-7, 1 - 1e-7)\n    return tf.math.log(1 - q)\n"
    [finding] = only(flagged, "NAN105")
    assert finding.start == (3, 36)
    assert only(fine, "NAN105") == []


def test_absorbed_epsilon_needs_a_framework():
    assert codes("import numpy as np\ndef f(p):\n    return np.log(1e-10 + 1 - p)\n") == []


# --- NAN106 log-sum-exp -----------------------------------------------------------------------
@pytest.mark.parametrize("src,fixed", [
    ("import tensorflow as tf\ndef f(x):\n    return tf.math.log(tf.exp(x) + 1)\n", "tf.nn.softplus(x)"),
    ("import tensorflow as tf\ndef f(x):\n    return tf.math.log1p(tf.math.exp(x))\n", "tf.nn.softplus(x)"),
    ("from tensorflow.keras import backend as K\nimport tensorflow as tf\ndef f(x):\n    return K.log(K.sum(K.exp(x), axis=1))\n",
     "tf.reduce_logsumexp(x, axis=1)"),
    ("import torch\ndef f(x):\n    return torch.log(1 + torch.exp(x))\n", "torch.nn.functional.softplus(x)"),
    ("import jax.numpy as jnp\nfrom jax.scipy.special import logsumexp\ndef f(x):\n    return jnp.log(jnp.sum(jnp.exp(x), 0))\n",
     "logsumexp(x, 0)"),
])
def test_log_sum_exp_fixed(src, fixed):
    assert codes(src) == ["NAN106"]
    assert fix(src).splitlines()[-1] == f"    return {fixed}"


@pytest.mark.parametrize("src", [
    "import tensorflow as tf\ndef f(x):\n    return tf.math.log(1 + tf.exp(-tf.abs(x)))\n",
    "import torch\ndef f(x):\n    return torch.log(1 + torch.exp(-x ** 2))\n",
    "import torch\ndef f(x):\n    return torch.log(1 + torch.exp(torch.clamp(x, max=30.0)))\n",
    "import jax.numpy as jnp\ndef f(x, m):\n    return m + jnp.log(jnp.sum(jnp.exp(x - m), axis=-1))\n",
    "import tensorflow as tf\ndef f(x):\n    return tf.math.log(2 + tf.exp(x))\n",  # not 1 + exp: no exact primitive
    "import math\ndef f(x):\n    return math.log(1 + math.exp(x))\n",
    # keras' logaddexp2: a non-positive exponent scaled by a positive factor
    "import tensorflow as tf\ndef f(d, c):\n    return tf.math.log1p(tf.math.exp(-tf.abs(d) * c))\n",
    # torch's logaddexp ref: m + log1p(exp(x - m)) adds back what the exponent subtracts
    "import torch\ndef f(lo, hi):\n    return hi + torch.log1p(torch.exp(lo - hi))\n",
    # torch's log_softmax decomposition: the shifted exponent through a name
    "import torch\ndef f(x, m):\n    s = x - m\n    return s - torch.log(torch.sum(torch.exp(s), 1, keepdim=True))\n",
])
def test_log_sum_exp_not_flagged(src):
    assert "NAN106" not in codes(src)


@pytest.mark.parametrize("src", [
    # a softplus of a difference (BPR loss) is not the shifted stable form
    "import torch\ndef f(pos, neg):\n    return torch.log(1 + torch.exp(neg - pos))\n",
    # scaled by a negative constant: the exponent can be large
    "import torch\ndef f(x):\n    return torch.log1p(torch.exp(-torch.abs(x) * -3.0))\n",
])
def test_log_sum_exp_still_flagged(src):
    assert codes(src) == ["NAN106"]


def test_log_sum_exp_tf_logaddexp_is_display_only():
    src = "import tensorflow as tf\ndef f(a, b):\n    return tf.math.log(tf.exp(a) + tf.exp(b))\n"
    [finding] = lint(src)
    assert finding.fix_applicability == "display-only"
    assert "reduce_logsumexp(tf.stack" in finding.fix_message


def test_log_sum_exp_torch_sum_without_dim_is_display_only():
    src = "import torch\ndef f(x):\n    return torch.log(torch.sum(torch.exp(x)))\n"
    [finding] = lint(src)
    assert finding.code == "NAN106" and finding.fix_applicability == "display-only"


def test_log_sum_exp_across_statements_is_unsafe():
    src = "import torch\ndef f(x):\n    s = torch.exp(x).sum(dim=-1)\n    return torch.log(s)\n"
    [finding] = lint(src)
    assert finding.fix_applicability == "unsafe"
    assert "`s` is assigned on line 3" in finding.message


# --- NAN109 unguarded-log ----------------------------------------------------------------------
def test_unguarded_log_is_opt_in():
    src = "import torch\ndef f(x):\n    return torch.log(x)\n"
    assert codes(src) == []
    assert codes(src, select=["NAN109"]) == ["NAN109"]


@pytest.mark.parametrize("arg", [
    "x", "1 - x", "torch.exp(x)", "torch.nn.functional.softplus(x)", "torch.maximum(x, torch.zeros_like(x))",
    "torch.clamp(x, max=1.0)", "torch.clamp(x, 0.0, 1.0)", "x.sum(-1)", "torch.abs(x)", "torch.square(x)",
])
def test_unguarded_log_flagged(arg):
    src = f"import torch\ndef f(x):\n    return torch.log({arg})\n"
    assert codes(src, select=["NAN109"]) == ["NAN109"]


@pytest.mark.parametrize("arg", [
    "x + 1e-8", "1 - x + 1e-7", "x + eps", "torch.clamp(x, min=1e-6)", "x.clamp(1e-6, 1.0)",
    "torch.clamp(x, eps, 1.0)", "torch.maximum(x, eps)", "1 + torch.square(x)", "1 + x ** 2",
    "2.0", "EPS", "(x + 1e-6) / (y + 1e-6)", "torch.sqrt(x ** 2 + 1e-8)", "2 * math.pi * (x + 1e-6)",
])
def test_unguarded_log_not_flagged(arg):
    src = f"import math\nimport torch\nEPS = 1e-7\ndef f(x, y, eps):\n    return torch.log({arg})\n"
    assert codes(src, select=["NAN109"]) == []


def test_unguarded_log_zero_named_epsilon_is_no_guard():
    src = "import torch\nEPS = 0\ndef f(x):\n    return torch.log(x + EPS)\n"
    assert codes(src, select=["NAN109"]) == ["NAN109"]


def test_unguarded_log_follows_assignments_and_rebinding():
    src = """\
        import tensorflow as tf
        def f(p, q):
            a = tf.clip_by_value(p, 1e-7, 1.0)
            q = tf.nn.relu(q)
            q = tf.maximum(q, 1e-6)
            b = p * 2
            return tf.math.log(a), tf.math.log(q), tf.math.log(b)
    """
    [finding] = lint(src, select=["NAN109"])
    assert finding.start == (7, 44)


def test_unguarded_log_leaves_other_rules_sites_alone():
    src = """\
        import torch
        def f(z, x):
            return torch.log(torch.softmax(z, 1)), torch.log(1 - torch.sigmoid(z)), torch.log(1 + torch.exp(x))
    """
    assert codes(src, select=["NAN109"]) == []
    assert sorted(codes(src, select=LOG_RULES)) == ["NAN101", "NAN102", "NAN106"]


def test_plain_resolve_does_not_enter_functions():
    """Other rules build fixes from what ctx.resolve returns: a function's return value
    lives in another scope, so following calls is asked for explicitly."""
    import libcst as cst

    from nanlint.semantic.context import FileContext

    module = cst.parse_module("import torch\ndef head(z):\n    return torch.sigmoid(z)\ny = head(1)\n")
    ctx = FileContext(module)
    scope = ctx.index.module_scope
    name = cst.Name("y")
    assert isinstance(ctx.resolve(name, scope).expr, cst.Call)
    assert ctx.code(ctx.resolve(name, scope).expr) == "head(1)"
    followed = ctx.resolve(name, scope, functions=True)
    assert ctx.code(followed.expr) == "torch.sigmoid(z)" and followed.scope is not scope


def test_log_of_a_function_returning_sigmoid():
    src = "import torch\ndef head(z):\n    return torch.sigmoid(z)\ndef f(z):\n    return torch.log(head(z))\n"
    [finding] = lint(src)
    assert finding.code == "NAN102" and finding.fix_applicability == "display-only"
    assert "`head(z)` returns it on line 3" in finding.message
