"""NAN107 log-of-zero, NAN108 divide-by-zero, NAN206 root-at-zero: a sink is flagged only
when a value reaching it is a source of 0 (nanlint/zeros.py); guarded values, values that
cannot reach 0 and the sites of the dedicated rules stay silent."""

import pytest

from conftest import codes, fix, lint

ZERO_RULES = ["NAN107", "NAN108", "NAN206"]


def only(src, code):
    return [f.code for f in lint(src, select=[code])]


# --- NAN107: one source class per case -------------------------------------------------------
@pytest.mark.parametrize("src,what", [
    ("import torch\nimport torch.nn.functional as F\ndef f(x):\n    h = F.relu(x)\n    return torch.log(h)\n", "relu"),
    ("import torch\ndef f(x, y):\n    return torch.log(torch.clamp(x - y, min=0))\n", "clipped at 0"),
    ("import jax.numpy as jnp\ndef f(x, m):\n    return jnp.log(jnp.maximum(x - m, 0.0))\n", "maximum(x, 0)"),
    # (the natural log of 1 - softmax is NAN101's, with its exact form: tests/test_log1m_softmax.py)
    ("import torch\ndef f(logits):\n    p = torch.softmax(logits, -1)\n    return torch.log2(1.0 - p)\n", "1 - a softmax"),
    ("import torch\ndef f(logits, m):\n    p = torch.sigmoid(logits)\n    return torch.log((p * m).sum(-1))\n",
     "product with a sigmoid"),
    ("import torch\ndef f(y):\n    n = (y > 0).float().sum()\n    return torch.log(n)\n", "count of a mask"),
    ("import tensorflow as tf\ndef f(y):\n    n = tf.reduce_sum(tf.cast(tf.equal(y, 1), tf.float32))\n    return tf.math.log(n)\n",
     "count of a mask"),
    ("import tensorflow as tf\ndef f(h, W, b):\n    return tf.math.log(tf.matmul(h, W) + b)\n", "affine"),
    ("import torch\ndef f():\n    y_conv = torch.tensor([0.0, 1.0])\n    return torch.log(y_conv)\n", "literal holding 0"),
    ("import tensorflow as tf\ndef f(h, w):\n    p = tf.sigmoid(h @ w)\n    m = tf.reshape(p, [-1])\n    return tf.math.log(tf.reduce_max(m, axis=-1))\n",
     "reduce_max of a sigmoid output"),
])
def test_log_of_zero_sources(src, what):
    found = lint(src, select=["NAN107"])
    assert [f.code for f in found] == ["NAN107"]
    assert what in found[0].message


@pytest.mark.parametrize("src", [
    # guarded at the use, or where defined
    "import torch\nimport torch.nn.functional as F\ndef f(x):\n    return torch.log(F.relu(x) + 1e-6)\n",
    "import torch\ndef f(z):\n    p = torch.softmax(z, -1)\n    p = p.clamp(1e-7, 1)\n    return torch.log(1 - p)\n",
    "import tensorflow as tf\ndef f(y):\n    n = tf.reduce_sum(tf.cast(y > 0, tf.float32))\n    return tf.math.log(tf.maximum(n, 1.0))\n",
    # cannot reach 0: exp, a sum of a whole distribution, the max of a softmax, an unknown value
    "import torch\ndef f(x):\n    return torch.log(torch.mean(torch.exp(x - x.max())))\n",
    "import torch\ndef f(z):\n    return torch.log(torch.softmax(z, -1).sum(-1))\n",
    "import torch\ndef f(z):\n    return torch.log(torch.max(torch.softmax(z, -1), -1)[0])\n",
    "import torch\ndef f(x):\n    return torch.log(x)\n",
    # a square of data (not a difference), an elementwise difference: left to the opt-in NAN109
    "import torch\ndef f(x):\n    return torch.log(x ** 2)\n",
    "import torch\ndef f(a, b):\n    return torch.log(torch.abs(a - b))\n",
    # an accumulator that a loop increments; an element of a literal list
    "import torch\ndef f(xs):\n    n = 0\n    for x in xs:\n        n += x.numel()\n    return torch.log(n)\n",
    "import torch\ndef f(x):\n    c = [0.0, 2.0]\n    return torch.log(x * c[1])\n",
    # a matmul plus a floor is a guarded spectrogram, not an affine layer
    "from keras import ops\ndef f(mag, filters, floor):\n    return ops.log(ops.matmul(mag, filters) + floor)\n",
    # the zeros are filtered out by indexing (pytorch-metric-learning's NCA loss)
    "import torch\ndef f(z, same):\n    p = torch.softmax(z, 1)\n    p = torch.sum(p * same, dim=1)\n    keep = p != 0\n"
    "    return -torch.log(p[keep])\n",
    # the -inf is handled right after (generation code)
    "import torch\ndef f(z):\n    probs = torch.softmax(z, 1)\n    probs = probs * 2\n    log_probs = torch.log(probs)\n"
    "    return torch.where(torch.isfinite(log_probs), log_probs, -1e9)\n",
])
def test_log_of_zero_silent(src):
    assert only(src, "NAN107") == []


def test_dedicated_rules_keep_their_sites():
    src = "import torch\ndef f(z):\n    return torch.log(torch.softmax(z, -1)) + torch.log(1 - torch.sigmoid(z))\n"
    assert only(src, "NAN107") == []
    assert sorted(codes(src)) == ["NAN101", "NAN102"]


def test_log_of_zero_supersedes_unguarded_log():
    src = "import torch\nimport torch.nn.functional as F\ndef f(x):\n    return torch.log(F.relu(x)) + torch.log(x)\n"
    assert sorted(codes(src, select=["NAN107", "NAN109"])) == ["NAN107", "NAN109"]  # one each, not two at the relu


def test_log_of_hand_written_sigmoid_is_fused_safely():
    """A hand-written sigmoid is a sigmoid: NAN102 (on by default) fuses its log safely."""
    src = "import torch\ndef f(z):\n    return torch.log(1 / (1 + torch.exp(-z)))\n"
    assert [f.code for f in lint(src, select=["NAN102", "NAN107"])] == ["NAN102"]
    fixed = fix(src, unsafe=False, select=["NAN102"])
    assert fixed.splitlines()[-1] == "    return torch.nn.functional.logsigmoid(z)"


def test_log_guard_spelling_and_float16_epsilon():
    src = "import tensorflow as tf\ndef f(y):\n    n = tf.reduce_sum(tf.cast(y > 0, tf.float32))\n    return tf.math.log(n)\n"
    assert "tf.math.log(tf.maximum(n, 1e-7))" in fix(src, select=["NAN107"])
    assert fix(src, unsafe=False, select=["NAN107"]) == src  # the guard is an unsafe fix
    half = src.replace("tf.float32", "tf.float16")
    assert "tf.maximum(n, 1e-4)" in fix(half, select=["NAN107"])


def test_log_of_affine_is_display_only():
    src = "import tensorflow as tf\ndef f(h, W, b):\n    return tf.math.log(tf.matmul(h, W) + b)\n"
    [finding] = lint(src, select=["NAN107"])
    assert finding.fix_applicability == "display-only"
    assert fix(src, select=["NAN107"]) == src


def test_log_of_value_from_another_function_follows_the_return():
    src = """\
        import torch
        import torch.nn.functional as F
        def features(x):
            return F.relu(x)
        def loss(x):
            return torch.log(features(x)).sum()
        """
    [finding] = lint(src, select=["NAN107"])
    assert "features(x)" in finding.message


# --- NAN108 -----------------------------------------------------------------------------------
@pytest.mark.parametrize("src,what", [
    ("import torch\ndef f(loss, y):\n    num_pos = (y > 0).float().sum()\n    return loss.sum() / num_pos\n", "count"),
    ("import tensorflow as tf\ndef f(logits):\n    p = tf.sigmoid(logits)\n    return p / (1.0 - p)\n", "1 - a sigmoid"),
    ("from keras import ops\ndef f(self, y):\n    return y / ops.sigmoid(-self.logits)\n", "sigmoid"),
    ("import torch\ndef f(x):\n    return torch.reciprocal(torch.relu(x))\n", "relu"),
    # (a file needs a "/" somewhere: ``** -1`` has no site key of its own)
    ("import torch\ndef f(x, y):\n    return y / 2 + torch.relu(x) ** -1\n", "relu"),
    ("import torch\ndef f(x, y):\n    return torch.rsqrt(torch.clamp(x - y, min=0))\n", "clipped"),
])
def test_divide_by_zero_flagged(src, what):
    found = lint(src, select=["NAN108"])
    assert [f.code for f in found] == ["NAN108"]
    assert what in found[0].message


@pytest.mark.parametrize("src", [
    "import torch\ndef f(loss, y):\n    num_pos = (y > 0).float().sum()\n    return loss.sum() / torch.clamp(num_pos, min=1)\n",
    "import torch\ndef f(loss, y):\n    num_pos = (y > 0).float().sum().clamp(min=1.0)\n    return loss.sum() / num_pos\n",
    "import tensorflow as tf\ndef f(x, y):\n    n = tf.reduce_sum(tf.cast(y > 0, tf.float32))\n    return tf.where(n > 0, x / n, 0.0)\n",
    "import torch\ndef f(x, w):\n    return x / w.sum()\n",
    "import torch\ndef f(x):\n    return x / 2.0\n",
    # an accumulator; a box area (a product of clamped widths); a step size squared
    "import torch\ndef f(xs, s):\n    total = 0\n    for x in xs:\n        total += x\n    return s / total\n",
    "import torch\ndef f(w, h, u):\n    area = w.clamp(min=0) * h.clamp(min=0)\n    return (area - u) / area\n",
    "import torch\ndef f(a, b):\n    h = a - b\n    return (torch.exp(h) - 1.0 - h) / h ** 2\n",
    "import torch\ndef f(z):\n    return torch.exp(z) / torch.exp(z).sum(-1, keepdim=True)\n",
])
def test_divide_by_zero_silent(src):
    assert only(src, "NAN108") == []


def test_masked_mean_stays_nan401():
    src = "import tensorflow as tf\ndef f(x, m):\n    m = tf.cast(x > 0, tf.float32)\n    return tf.reduce_sum(x * m) / tf.reduce_sum(m)\n"
    assert codes(src, select=["NAN108", "NAN401"]) == ["NAN401"]


def test_count_division_fix_clamps_at_one():
    src = "import torch\ndef f(loss, y):\n    num_pos = (y > 0).float().sum()\n    return loss.sum() / num_pos\n"
    assert "loss.sum() / torch.clip(num_pos, 1)" in fix(src, select=["NAN108"])
    src = "import jax.numpy as jnp\ndef f(loss, y):\n    n = jnp.sum(y == 1)\n    return jnp.sum(loss) / n\n"
    assert "jnp.sum(loss) / jnp.maximum(n, 1.0)" in fix(src, select=["NAN108"])


# --- NAN206 -----------------------------------------------------------------------------------
@pytest.mark.parametrize("src", [
    "import torch\ndef f(x, y):\n    return torch.sqrt(torch.clamp(x - y, min=0.0))\n",
    "import tensorflow as tf\ndef f(x):\n    return tf.sqrt(tf.nn.relu(x))\n",
    "import jax\nimport jax.numpy as jnp\ndef f(logits):\n    return jnp.sqrt(jax.nn.softmax(logits))\n",
    "from keras import ops\ndef f(x):\n    return ops.power(ops.relu(x), 0.5)\n",
    "import jax.numpy as jnp\ndef f(x, y):\n    return jnp.maximum(x - y, 0.0) ** 0.5\n",
    "import torch\ndef f(a, b):\n    d = a.pow(2).sum(-1, True) + b.pow(2).sum(-1).T - 2 * a @ b.T\n"
    "    return torch.sqrt(torch.clamp(d, min=0.0))\n",
])
def test_root_at_zero_flagged(src):
    assert only(src, "NAN206") == ["NAN206"]


@pytest.mark.parametrize("src", [
    # torch's and JAX's relu select the gradient: finite (measured)
    "import torch\nimport torch.nn.functional as F\ndef f(x):\n    return torch.sqrt(F.relu(x))\n",
    "import jax\nimport jax.numpy as jnp\ndef f(x):\n    return jnp.sqrt(jax.nn.relu(x))\n",
    # a distance is NAN202's
    "import torch\ndef f(a, b):\n    return torch.sqrt(torch.sum((a - b) ** 2, -1))\n",
    # guarded, never differentiated
    "import torch\ndef f(x):\n    return torch.sqrt(torch.clamp(x, min=0.0) + 1e-8)\n",
    "import torch\ndef f(x):\n    with torch.no_grad():\n        return torch.sqrt(torch.clamp(x, min=0.0))\n",
])
def test_root_at_zero_silent(src):
    assert only(src, "NAN206") == []


def test_root_fix_parenthesizes_a_power():
    src = "import jax.numpy as jnp\ndef f(x, y):\n    return jnp.maximum(x - y, 0.0) ** 0.5\n"
    assert "(jnp.maximum(x - y, 0.0) + 1e-12) ** 0.5" in fix(src, select=["NAN206"])


# --- a source in another module: display-only, pointing to logits -------------------------------
def test_log_of_relu_from_another_module_is_display_only(run_cli, tmp_path):
    import json
    import textwrap

    (tmp_path / "features.py").write_text(textwrap.dedent("""\
        import torch.nn.functional as F

        def activations(x):
            return F.relu(x)
        """))
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        import torch
        from features import activations

        def loss(x):
            return torch.log(activations(x)).sum()
        """))
    _, out, _ = run_cli("--select", "NAN107", "--format", "json", str(tmp_path), cwd=tmp_path)
    [finding] = json.loads(out)
    assert finding["code"] == "NAN107" and finding["filename"].endswith("train.py")
    assert "features.py" in finding["message"]
    assert finding["fix"] is None or finding["fix"]["applicability"] == "display-only"


@pytest.mark.parametrize("src", [
    "import jax.numpy as jnp\ndef f(z):\n    return jnp.log(1.0 / (1.0 + jnp.exp(-z)))\n",
    "import jax.numpy as jnp\ndef f(z):\n    e = jnp.exp(z)\n    return jnp.log(e / (1.0 + e))\n",
])
def test_log_of_a_hand_written_sigmoid_is_nan102s(src):
    """NAN102 (default) owns the log of any sigmoid, hand-written ones included; NAN107 defers."""
    assert [f.code for f in lint(src, select=["NAN102", "NAN107"])] == ["NAN102"]


# --- the other sinks of the log family: log2, log10, lgamma, digamma, atanh -------------------
@pytest.mark.parametrize("src,what", [
    ("import torch\ndef f(logits):\n    return torch.log2(torch.softmax(logits, -1))\n", "log2 of a softmax"),
    ("import torch\ndef f(x):\n    return torch.relu(x).log10()\n", "log10 of a relu"),
    ("import jax.numpy as jnp\ndef f(x, y):\n    return jnp.log2(jnp.maximum(x - y, 0.0))\n", "log2 of maximum"),
    ("from keras import ops\ndef f(x):\n    return ops.log10(ops.relu(x))\n", "log10 of a relu"),
    ("import tensorflow as tf\ndef f(x):\n    return tf.math.lgamma(tf.nn.relu(x))\n", "lgamma of a relu"),
    ("import tensorflow as tf\ndef f(x):\n    return tf.math.digamma(tf.nn.relu(x))\n", "digamma of a relu"),
    ("import torch\ndef f(a, b):\n    return torch.special.gammaln(torch.clamp(a - b, min=0))\n", "lgamma of a value clipped"),
    ("import jax\nfrom jax.scipy.special import digamma\ndef f(x):\n    return digamma(jax.nn.relu(x))\n", "digamma of a relu"),
    ("import torch\ndef f(logits):\n    return torch.atanh(torch.sigmoid(logits))\n", "atanh of a sigmoid"),
    ("import jax\nimport jax.numpy as jnp\ndef f(logits):\n    return jnp.arctanh(jax.nn.softmax(logits))\n", "atanh of a softmax"),
    ("import tensorflow as tf\ndef f(logits):\n    return tf.math.atanh(tf.sigmoid(logits))\n", "atanh of a sigmoid"),
    ("from keras import ops\ndef f(logits):\n    return ops.arctanh(ops.sigmoid(logits))\n", "atanh of a sigmoid"),
])
def test_log_family_sinks(src, what):
    [finding] = lint(src, select=["NAN107"])
    assert finding.code == "NAN107" and finding.message.startswith(what)


@pytest.mark.parametrize("src", [
    "import torch\ndef f(x):\n    return torch.log2(torch.relu(x) + 1e-6)\n",
    "import torch\ndef f(x):\n    return torch.lgamma(torch.exp(x))\n",
    "import torch\ndef f(z):\n    return torch.atanh(torch.tanh(z))\n",
    # a value kept inside (-1, 1)
    "import torch\ndef f(x):\n    return torch.atanh(torch.clamp(x, -0.5, 0.5))\n",
])
def test_log_family_silent(src):
    assert only(src, "NAN107") == []
