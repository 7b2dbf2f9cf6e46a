"""Issue 24's roots at 0 and variances by cancellation: NAN202 on the root of a variance
(``sqrt`` on the gradient evidence, ``rsqrt`` by default), NAN206 on a clamp at 0 of a sum of
squared differences under a root (strong, no longer NAN110's), NAN207 on
``mean(x * x) - mean(x) ** 2``; their silent guarded forms, the may tier, the fixes, and the
numbers the messages and pages state, measured in the real frameworks (float32)."""

import numpy as np
import pytest

from conftest import lint, fix


def _codes(source, may=False):
    return [(f.code, f.may) if may else f.code for f in lint(source, may=may)]


# --- NAN202: the root of a variance -------------------------------------------------------------
LAYER_NORM = """\
    import torch
    from torch import nn

    class LayerNorm(nn.Module):
        def forward(self, x):
            mean = x.mean(-1, keepdim=True)
            var = ((x - mean) ** 2).mean(-1, keepdim=True)
            std = var.sqrt()
            return (x - mean) / (std + 1e-5)
"""


def test_a_layer_norm_with_the_epsilon_outside_the_root_is_flagged_and_fixed():
    [f] = lint(LAYER_NORM)
    assert f.code == "NAN202" and not f.may and f.fix_applicability == "unsafe"
    assert "variance" in f.message and "`var` is assigned on line 7" in f.message
    assert "LayerNorm.forward" in f.message
    assert "std = (var + 1e-12).sqrt()" in fix(LAYER_NORM)
    assert lint(fix(LAYER_NORM)) == []


@pytest.mark.parametrize("source", [
    """\
    import torch
    from torch import nn

    class LN(nn.Module):
        def forward(self, x):
            std = x.var(-1, unbiased=False, keepdim=True).sqrt()
            return (x - x.mean(-1, keepdim=True)) / (std + 1e-5)
    """,
    """\
    import jax
    import jax.numpy as jnp

    def spread(x):
        return jnp.sum(jnp.sqrt(jnp.var(x, axis=-1)))

    grads = jax.grad(spread)(x)
    """,
    """\
    import tensorflow as tf

    with tf.GradientTape() as tape:
        mu = tf.reduce_mean(x, axis=-1, keepdims=True)
        loss = tf.reduce_sum(tf.sqrt(tf.reduce_mean(tf.square(x - mu), axis=-1)))
    """,
    """\
    import keras
    from keras import ops

    class Norm(keras.layers.Layer):
        def call(self, x):
            return x / (ops.sqrt(ops.var(x, axis=-1, keepdims=True)) + 1e-5)
    """,
])
def test_the_root_of_a_variance_op_or_a_hand_written_one_is_flagged(source):
    assert _codes(source) == ["NAN202"]


def test_with_no_gradient_in_sight_the_root_of_a_variance_is_the_may_tier():
    source = """\
        import torch

        def std(x):
            return x.var(0).sqrt()
    """
    assert _codes(source) == []
    assert _codes(source, may=True) == [("NAN202", True)]


@pytest.mark.parametrize("source", [
    # the epsilon under the root, a floor before it
    """\
    import torch
    from torch import nn

    class LN(nn.Module):
        def forward(self, x):
            mean = x.mean(-1, keepdim=True)
            var = ((x - mean) ** 2).mean(-1, keepdim=True)
            return (x - mean) / torch.sqrt(var + 1e-5)
    """,
    """\
    import torch
    from torch import nn

    class LN(nn.Module):
        def forward(self, x):
            var = x.var(-1, keepdim=True)
            return x * torch.rsqrt(torch.clamp(var, min=1e-5))
    """,
    """\
    import jax
    import jax.numpy as jnp

    def f(x):
        return jnp.sum(jax.lax.rsqrt(jnp.maximum(jnp.var(x, axis=-1), 1e-6)))

    jax.grad(f)(x)
    """,
    # a root of data named variance, a mean squared error: no variance op, not x and its mean
    """\
    import tensorflow as tf

    def scale(variance):
        return tf.sqrt(variance)
    """,
    """\
    import torch
    from torch import nn

    class RMSE(nn.Module):
        def forward(self, a, b):
            return torch.sqrt(((a - b) ** 2).mean())
    """,
])
def test_guarded_roots_of_a_variance_and_non_variances_are_silent(source):
    assert _codes(source, may=True) == []


RSQRT = """\
    import torch

    def whiten(x):
        var = x.var(-1, unbiased=False, keepdim=True)
        return (x - x.mean(-1, keepdim=True)) * torch.rsqrt(var).clamp(max=1e4)
"""


def test_rsqrt_of_a_variance_is_flagged_by_default_even_when_clamped_afterwards():
    [f] = lint(RSQRT)
    assert f.code == "NAN202" and not f.may and "a clamp of the result does not repair" in f.message
    fixed = fix(RSQRT)
    assert "torch.rsqrt(var + 1e-12).clamp(max=1e4)" in fixed and lint(fixed) == []


def test_rsqrt_of_a_sum_of_squared_differences_is_flagged_and_of_an_embedding_is_not():
    assert _codes("""\
        import jax.numpy as jnp
        from jax import lax

        def inverse_distance(a, b):
            return lax.rsqrt(jnp.sum(jnp.square(a - b), axis=-1))
    """) == ["NAN202"]
    assert _codes("""\
        import torch

        def normalize(w):
            return w * torch.rsqrt((w ** 2).sum(-1, keepdim=True))
    """, may=True) == []
    assert _codes("""\
        import torch

        def normalize(a, b):
            return torch.rsqrt(((a - b) ** 2).sum(-1) + 1e-12)
    """, may=True) == []


def test_the_layer_norm_gradient_is_nan_and_the_fix_finite_as_the_page_says():
    import torch
    import jax
    import jax.numpy as jnp
    import tensorflow as tf

    def ln(x, eps_inside):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return (x - mean) / ((var + eps_inside).sqrt() + 1e-5)

    for eps_inside, finite in ((0.0, False), (1e-12, True)):
        x = torch.full((1, 4), 3.0, requires_grad=True)
        y = ln(x, eps_inside)
        (y ** 2).sum().backward()
        assert (y == 0).all() and bool(torch.isfinite(x.grad).all()) is finite
    g = jax.grad(lambda v: jnp.sum((v - v.mean(-1, keepdims=True)) / (jnp.sqrt(jnp.var(v, -1, keepdims=True)) + 1e-5)))
    assert np.isnan(np.asarray(g(jnp.full((1, 4), 3.0)))).all()
    c = tf.fill((1, 4), 3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(c)
        y = (c - tf.reduce_mean(c, -1, keepdims=True)) / (tf.sqrt(tf.math.reduce_variance(c, -1, keepdims=True)) + 1e-5)
        spread = tf.reduce_sum(tf.sqrt(tf.math.reduce_variance(c, -1)))
    assert (tape.gradient(y, c).numpy() == 0).all()  # TF: a 0 upstream gradient stays 0
    assert np.isnan(tape.gradient(spread, c).numpy()).all()
    v = torch.zeros(4, requires_grad=True)
    r = torch.rsqrt((v ** 2).sum()).clamp(max=1e4)
    r.backward()
    assert r.item() == 1e4 and torch.isnan(v.grad).all()


# --- NAN202: the framework's std where its gradient on a constant row is NaN ---------------------
@pytest.mark.parametrize("source,fixed", [
    ("""
     import jax
     import jax.numpy as jnp
     def layer_norm(x):
         return (x - jnp.mean(x, -1, keepdims=True)) / (jnp.std(x, axis=-1, keepdims=True, ddof=0) + 1e-5)
     grads = jax.grad(lambda x: jnp.sum(layer_norm(x) ** 2))(x)
     """, "jnp.sqrt(jnp.var(x, axis=-1, keepdims=True, ddof=0) + 1e-12)"),
    ("""
     import tensorflow as tf
     with tf.GradientTape() as tape:
         loss = tf.reduce_sum(tf.math.reduce_std(x, axis=-1))
     """, "tf.sqrt(tf.math.reduce_variance(x, axis=-1) + 1e-12)"),
    ("""
     import tensorflow as tf
     from keras import ops
     with tf.GradientTape() as tape:
         loss = ops.sum(ops.std(x, axis=-1))
     """, "ops.sqrt(ops.var(x, axis=-1) + 1e-12)"),
])
def test_a_differentiated_std_is_flagged_where_its_gradient_is_nan_and_fixed(source, fixed):
    [f] = lint(source)
    assert f.code == "NAN202" and not f.may and f.fix_applicability == "unsafe"
    assert "std on a constant row is NaN" in f.message
    assert fixed in fix(source) and lint(fix(source)) == []


@pytest.mark.parametrize("source", [
    # torch's std has gradient 0 on a constant row
    """
    import torch
    class Scale(torch.nn.Module):
        def forward(self, x):
            return x * x.std(-1, keepdim=True)
    """,
    # TensorFlow: a std or root of a variance that only divides the deviations has gradient 0
    """
    import tensorflow as tf
    class LayerNorm(tf.keras.layers.Layer):
        def call(self, x):
            mean = tf.reduce_mean(x, axis=-1, keepdims=True)
            return (x - mean) / (tf.math.reduce_std(x, axis=-1, keepdims=True) + 1e-5)
    """,
    """
    import tensorflow as tf
    class LayerNorm(tf.keras.layers.Layer):
        def call(self, x):
            mean = tf.reduce_mean(x, axis=-1, keepdims=True)
            std = tf.sqrt(tf.math.reduce_variance(x, axis=-1, keepdims=True)) + 1e-5
            return (x - mean) / std
    """,
])
def test_a_std_whose_gradient_is_finite_there_is_silent(source):
    assert [f for f in lint(source, may=True) if f.code == "NAN202"] == []


def test_the_tf_layer_norm_std_read_elsewhere_too_is_flagged():
    source = """
    import tensorflow as tf
    class LayerNorm(tf.keras.layers.Layer):
        def call(self, x):
            mean = tf.reduce_mean(x, axis=-1, keepdims=True)
            std = tf.math.reduce_std(x, axis=-1, keepdims=True)
            self.add_loss(tf.reduce_sum(std))
            return (x - mean) / (std + 1e-5)
    """
    assert [f.code for f in lint(source)] == ["NAN202"]


def test_the_std_of_rewards_is_the_may_tier():
    source = """
    import jax
    import jax.numpy as jnp
    def loss_fn(logp, rewards):
        adv = (rewards - rewards.mean()) / (jnp.std(rewards) + 1e-8)
        return -jnp.sum(logp * adv)
    grads = jax.grad(loss_fn)(logp, rewards)
    """
    assert _codes(source) == [] and _codes(source, may=True) == [("NAN202", True)]


def test_the_std_gradients_are_as_the_message_and_page_say():
    import torch
    import jax
    import jax.numpy as jnp
    import tensorflow as tf

    row = [[3.0, 3.0, 3.0, 3.0]]
    ln = jax.grad(lambda v: jnp.sum(((v - v.mean(-1, keepdims=True)) / (jnp.std(v, -1, keepdims=True) + 1e-5)) ** 2))
    assert np.isnan(np.asarray(ln(jnp.asarray(row)))).all()  # JAX: even the LayerNorm's is NaN
    fixed = jax.grad(lambda v: jnp.sum(((v - v.mean(-1, keepdims=True))
                                        / (jnp.sqrt(jnp.var(v, -1, keepdims=True) + 1e-12) + 1e-5)) ** 2))
    assert np.isfinite(np.asarray(fixed(jnp.asarray(row)))).all()
    c = tf.constant(row)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(c)
        y = tf.reduce_sum(((c - tf.reduce_mean(c, -1, keepdims=True)) / (tf.math.reduce_std(c, -1, keepdims=True) + 1e-5)) ** 2)
        spread = tf.reduce_sum(tf.math.reduce_std(c, -1))
        inverse = tf.reduce_sum(1.0 / (tf.math.reduce_std(c, -1) + 1e-5))
    assert (tape.gradient(y, c).numpy() == 0).all()  # TF: the LayerNorm's is 0
    assert np.isnan(tape.gradient(spread, c).numpy()).all()
    assert np.isnan(tape.gradient(inverse, c).numpy()).all()  # "even with an epsilon added after it"
    x = torch.tensor(row, requires_grad=True)
    x.std(-1).sum().backward()
    assert (x.grad == 0).all()  # torch: 0, not flagged


# --- NAN206: a clamp at 0 of a squared distance -------------------------------------------------
CLAMPED = """\
    import torch

    def pairwise(a, b):
        return ((a[:, None] - b[None]) ** 2).sum(-1).clamp(min=0).sqrt()
"""


def test_a_clamp_at_0_of_a_sum_of_squared_differences_is_strong_evidence():
    [f] = lint(CLAMPED, select={"NAN110", "NAN202", "NAN206"}, may=True)  # NAN110 no longer has it
    assert f.code == "NAN206" and not f.may
    assert "a sum of squared differences clamped at 0" in f.message and "where the points coincide" in f.message
    fixed = fix(CLAMPED)
    assert "(((a[:, None] - b[None]) ** 2).sum(-1).clamp(min=0) + 1e-12).sqrt()" in fixed
    assert lint(fixed, may=True) == []


@pytest.mark.parametrize("source", [
    """\
    import jax.numpy as jnp

    def d(a, b):
        return jnp.sqrt(jnp.maximum(jnp.sum((a - b) ** 2, axis=-1), 0.0))
    """,
    """\
    import tensorflow as tf

    def d(a, b):
        d2 = tf.reduce_sum(tf.square(a - b), axis=-1)
        return tf.sqrt(tf.maximum(d2, 0.0))
    """,
])
def test_the_clamped_distance_in_jax_and_tensorflow(source):
    assert _codes(source, may=True) == [("NAN206", False)]


def test_a_clamp_at_a_floor_is_silent_and_a_clamp_of_other_values_stays_weak():
    assert _codes("""\
        import torch

        def pairwise(a, b):
            return ((a - b) ** 2).sum(-1).clamp(min=1e-12).sqrt()
    """, may=True) == []
    weak = lint("""\
        import torch

        def scale(v):
            return v.clamp(min=0).sqrt()
    """, select={"NAN110", "NAN206"}, may=True)
    assert [f.code for f in weak] == ["NAN110"] and "weak evidence: a defensive clamp" in weak[0].message


def test_the_clamp_passes_the_nan_gradient_in_every_framework():
    import torch
    import jax
    import jax.numpy as jnp
    import tensorflow as tf

    a = torch.tensor([[1.0, 2.0]], requires_grad=True)
    ((a - torch.tensor([[1.0, 2.0]])) ** 2).sum(-1).clamp(min=0).sqrt().sum().backward()
    assert torch.isnan(a.grad).all()
    for clamp in (lambda s: jnp.maximum(s, 0.0), lambda s: jnp.clip(s, 0.0)):
        g = jax.grad(lambda v: jnp.sum(jnp.sqrt(clamp(jnp.sum((v - 1.0) ** 2, -1)))))(jnp.ones((1, 2)))
        assert np.isnan(np.asarray(g)).all()
    v = tf.ones((1, 2))
    with tf.GradientTape() as tape:
        tape.watch(v)
        s = tf.reduce_sum(tf.sqrt(tf.maximum(tf.reduce_sum(tf.square(v - 1.0), -1), 0.0)))
    assert np.isnan(tape.gradient(s, v).numpy()).all()


# --- NAN207: the variance by cancellation -------------------------------------------------------
@pytest.mark.parametrize("source,fixed", [
    ("""\
    import torch
    from torch import nn

    class BN(nn.Module):
        def forward(self, x):
            mean = x.mean(0)
            var = (x * x).mean(0) - mean ** 2
            return (x - mean) * torch.rsqrt(var + 1e-5)
    """, "var = torch.var(x, 0, correction=0)"),
    ("""\
    import torch

    def g(x):
        var = x.pow(2).mean(-1, keepdim=True) - x.mean(-1, keepdim=True).pow(2)
        return (var + 1e-5).sqrt()
    """, "var = torch.var(x, -1, keepdim=True, correction=0)"),
    ("""\
    import tensorflow as tf

    def ln(x):
        m = tf.reduce_mean(x, axis=-1, keepdims=True)
        v = tf.reduce_mean(tf.square(x), axis=-1, keepdims=True) - tf.square(m)
        return (x - m) * tf.math.rsqrt(v + 1e-5)
    """, "v = tf.math.reduce_variance(x, axis=-1, keepdims=True)"),
    ("""\
    import jax.numpy as jnp

    def lv(x):
        return jnp.log(jnp.mean(x * x, axis=0) - jnp.mean(x, axis=0) ** 2)
    """, "jnp.log(jnp.var(x, axis=0, correction=0))"),
    ("""\
    import jax
    import jax.numpy as jnp

    def norm(x, fast, eps):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        if fast:
            m2 = jnp.mean(jnp.square(x), axis=-1, keepdims=True)
            variance = m2 - jnp.square(mean)
        else:
            variance = jnp.var(x, axis=-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(variance + eps)
    """, "variance = jnp.var(x, axis=-1, keepdims=True, correction=0)"),
])
def test_a_cancellation_feeding_a_root_log_or_division_is_flagged_and_fixed(source, fixed):
    found = lint(source)
    assert [f.code for f in found] == ["NAN207"] and found[0].fix_applicability == "unsafe"
    assert "it feeds is NaN there" in found[0].message
    out = fix(source)
    assert fixed in out and "NAN207" not in [f.code for f in lint(out, may=True)]


def test_a_cancellation_feeding_nothing_is_the_may_tier():
    source = """\
        import torch

        def batch_var(x):
            return (x * x).mean() - x.mean() ** 2
    """
    assert _codes(source) == []
    assert _codes(source, may=True) == [("NAN207", True)]


@pytest.mark.parametrize("source", [
    """\
    import torch

    def ln(x):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return (x - mean) * torch.rsqrt(var + 1e-5)
    """,
    """\
    import jax.numpy as jnp
    from jax import lax

    def ln(x):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.maximum(0.0, jnp.mean(x * x, axis=-1, keepdims=True) - mean ** 2)
        return (x - mean) * lax.rsqrt(var + 1e-6)
    """,
    """\
    import torch

    def gap(x, y):
        return torch.sqrt((x * x).mean() - y.mean() ** 2 + 1e-5)
    """,
])
def test_the_two_pass_form_a_clamp_and_different_values_are_silent(source):
    assert "NAN207" not in [f.code for f in lint(source, may=True)]


def test_the_cancellation_is_negative_in_float32_as_the_message_says():
    """The message's numbers: x = 1e4 + 0.01 * noise (8 rows of 64, seed 0): torch's
    E[x^2] - E[x]^2 reaches -24 where the true variance is 8.3e-5; negative in TF and JAX too,
    and rsqrt(var + 1e-5) NaN in all three; the two-pass variance is within 5% (JAX's,
    1.8% off on one row: its float32 mean)."""
    import torch
    import tensorflow as tf
    import jax
    import jax.numpy as jnp

    x = (1e4 + np.random.default_rng(0).standard_normal((8, 64)) * 1e-2).astype(np.float32)
    true = x.astype(np.float64).var(-1)
    assert abs(true.min() - 8.3e-5) < 1e-6
    t = torch.tensor(x)
    v = (t * t).mean(-1) - t.mean(-1) ** 2
    assert v.min().item() == -24.0 and torch.isnan(torch.rsqrt(v + 1e-5)).any()
    assert np.allclose(t.var(-1, correction=0).numpy(), true, rtol=5e-2)
    tt = tf.constant(x)
    vt = tf.reduce_mean(tt * tt, -1) - tf.square(tf.reduce_mean(tt, -1))
    assert tf.reduce_min(vt).numpy() < 0 and np.isnan(tf.math.rsqrt(vt + 1e-5).numpy()).any()
    assert np.allclose(tf.math.reduce_variance(tt, -1).numpy(), true, rtol=5e-2)
    j = jnp.asarray(x)
    vj = jnp.mean(j * j, -1) - jnp.mean(j, -1) ** 2
    assert float(vj.min()) < 0 and np.isnan(np.asarray(jax.lax.rsqrt(vj + 1e-5))).any()
    assert np.allclose(np.asarray(jnp.var(j, -1, correction=0)), true, rtol=5e-2)
    [f] = lint("""\
        import torch

        def bn(x):
            var = (x * x).mean(0) - x.mean(0) ** 2
            return torch.rsqrt(var + 1e-5)
    """)
    assert "measured -24 for x = 1e4 + 0.01 * noise, true 8e-5" in f.message


# --- NAN202: an epsilon added after the root of a sum of squares (LPIPS's normalize_tensor) ----------
EPS_AFTER = """\
import {imp}

class Normalize(Base):
    def forward(self, feat, eps=1e-10):
        {body}
"""


@pytest.mark.parametrize("imp,body", [
    ("torch", "norm = torch.sqrt(torch.sum(feat ** 2, dim=1, keepdim=True))\n        return feat / (norm + eps)"),
    ("torch", "return feat / (feat ** 2).sum(-1, keepdim=True).sqrt().clamp_min(1e-6)"),
    ("torch", "return feat / torch.clamp(torch.sqrt((feat * feat).sum(-1)), min=1e-6)"),
    ("jax.numpy as jnp", "return feat / (jnp.sqrt(jnp.sum(feat * feat, axis=-1, keepdims=True)) + 1e-8)"),
])
def test_an_epsilon_after_the_root_is_the_evidence_it_reaches_zero(imp, body):
    src = EPS_AFTER.format(imp=imp, body=body).replace("Base", "torch.nn.Module" if imp == "torch" else "object")
    found = [f for f in lint(src, may=True) if f.code == "NAN202"]
    assert len(found) == 1 and "added after the root" in found[0].message, [f.message for f in found]
    assert found[0].may == (imp != "torch")  # a Module's forward shows the gradient; a plain class does not
    fixed = fix(src, select=["NAN202"], unsafe=True, may=True)
    assert "1e-12" in fixed and [f for f in lint(fixed, may=True) if f.code == "NAN202"] == []


@pytest.mark.parametrize("src", [
    # TensorFlow passes a 0 upstream gradient through sqrt as 0: the epsilon does its job there
    "import tensorflow as tf\n\ndef f(x):\n    return x / (tf.sqrt(tf.reduce_sum(tf.square(x), -1)) + 1e-8)\n",
    # the epsilon under the root already
    "import torch\n\ndef f(x):\n    return x / torch.sqrt(torch.sum(x ** 2, -1) + 1e-10)\n",
    # a negative or zero "floor" is no epsilon
    "import torch\n\ndef f(x):\n    return x / (torch.sqrt(torch.sum(x ** 2, -1)) - 1.0)\n",
    # an offset of 1 is no epsilon (the author's word is about a log, not about 0)
    "import torch\n\ndef f(x):\n    return torch.log(1.0 + torch.sqrt(torch.sum(x ** 2, -1)))\n",
])
def test_eps_after_the_root_silent(src):
    assert [f for f in lint(src, may=True) if f.code == "NAN202"] == []


def test_eps_after_the_root_gradient_measured():
    """The message's claim: the normalization's gradient at the zero vector is NaN in torch and
    JAX whatever epsilon follows the root, finite (1 / eps) in TensorFlow; with the epsilon under
    the root (the fix) it is finite everywhere."""
    torch = pytest.importorskip("torch")
    jax = pytest.importorskip("jax")
    tf = pytest.importorskip("tensorflow")
    jnp = jax.numpy
    x = torch.zeros(3, requires_grad=True)
    (x / (torch.sqrt((x ** 2).sum()) + 1e-8)).sum().backward()
    assert torch.isnan(x.grad).all()
    x = torch.zeros(3, requires_grad=True)
    (x / (torch.sqrt((x ** 2).sum() + 1e-12) + 1e-8)).sum().backward()
    assert torch.isfinite(x.grad).all()
    assert bool(jnp.isnan(jax.grad(lambda v: (v / (jnp.sqrt(jnp.sum(v * v)) + 1e-8)).sum())(jnp.zeros(3))).all())
    v = tf.Variable(tf.zeros(3))
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(v / (tf.sqrt(tf.reduce_sum(tf.square(v))) + 1e-8))
    assert np.isfinite(tape.gradient(y, v).numpy()).all()


# --- NAN207: sums over a count, across replicas; moments returned (tf-keras 2.15's sync batch norm) --
SYNC_TF = """\
    import tensorflow as tf

    def sync_moments(y, axes):
        replica = tf.distribute.get_replica_context()
        local_sum = tf.reduce_sum(y, axis=axes, keepdims=True)
        local_squared_sum = tf.reduce_sum(tf.square(y), axis=axes, keepdims=True)
        y_sum = replica.all_reduce(tf.distribute.ReduceOp.SUM, local_sum)
        y_squared_sum = replica.all_reduce(tf.distribute.ReduceOp.SUM, local_squared_sum)
        count = replica.all_reduce(tf.distribute.ReduceOp.SUM, tf.cast(tf.size(y), y.dtype))
        mean = y_sum / count
        variance = y_squared_sum / count - tf.square(mean)
        return mean, variance
"""
SYNC_JAX = """\
    import jax
    import jax.numpy as jnp

    def normalize(x):
        s = jax.lax.psum(jnp.sum(x, axis=0), "batch")
        s2 = jax.lax.psum(jnp.sum(x * x, axis=0), "batch")
        n = jax.lax.psum(x.shape[0], "batch")
        var = s2 / n - (s / n) ** 2
        return (x - s / n) * jax.lax.rsqrt(var + 1e-5)
"""


@pytest.mark.parametrize("source", [SYNC_TF, SYNC_JAX])
def test_a_variance_of_sums_over_one_count_across_replicas_is_flagged_display_only(source):
    [f] = lint(source)
    assert f.code == "NAN207" and not f.may and f.fix_applicability == "display-only"
    assert "the mean first, then the mean of the squared deviations" in f.message
    assert ("returns it with the mean" in f.message) == (source is SYNC_TF)


@pytest.mark.parametrize("source", [
    SYNC_TF.replace("y_squared_sum / count", "y_squared_sum / (count - 1)"),  # two different counts
    SYNC_TF.replace("tf.square(y)", "tf.square(y - 1)"),  # sums of different values
    SYNC_TF.replace("variance = y_squared_sum / count - tf.square(mean)",
                    "variance = tf.maximum(y_squared_sum / count - tf.square(mean), 0.0)"),  # 2.16's fix
])
def test_sums_of_other_values_or_counts_and_the_clamp_are_silent(source):
    assert "NAN207" not in [f.code for f in lint(source, may=True)]


def test_a_variance_returned_alone_or_with_another_value_stays_weak():
    alone = SYNC_TF.replace("return mean, variance", "return variance")
    other = SYNC_TF.replace("return mean, variance", "return y_sum, variance")
    for source in (alone, other):
        assert [(f.code, f.may) for f in lint(source, may=True)] == [("NAN207", True)]


def test_the_sum_form_cancels_negative_in_tensorflow():
    """What the finding says of the sums over a count: with x = 1e4 + 0.01 * noise (8 rows of
    64, seed 0) ``sum(x * x) / n - square(sum(x) / n)`` comes out negative in TF float32 and
    rsqrt(var + 1e-3) (the batch norm's epsilon) is NaN; clamped at 0 as tf-keras 2.16 does, finite."""
    import tensorflow as tf

    x = tf.constant((1e4 + np.random.default_rng(0).standard_normal((8, 64)) * 1e-2).astype(np.float32))
    n = tf.cast(tf.shape(x)[-1], tf.float32)
    mean = tf.reduce_sum(x, -1) / n
    var = tf.reduce_sum(tf.square(x), -1) / n - tf.square(mean)
    assert tf.reduce_min(var).numpy() < -1 and np.isnan(tf.math.rsqrt(var + 1e-3).numpy()).any()
    assert np.isfinite(tf.math.rsqrt(tf.maximum(var, 0.0) + 1e-3).numpy()).all()
