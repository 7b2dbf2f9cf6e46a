"""NAN506 float16-limits: the epsilons that are 0 in float16 and the mask fills that are -inf
there, reported only where the file shows float16 compute (autocast alone: the may tier), with
fixes whose constants float16 holds (evaluated in torch, TensorFlow and JAX); and NAN504's
float16 evidence, which NAN506 shares (rules/_float16.py)."""

from __future__ import annotations

import pytest

from conftest import fix, lint
from nanlint.vocabulary import limits

TORCH = "import torch\nimport torch.nn.functional as F\n\nmodel = Net().half()\n\n"
TORCH_PLAIN = "import torch\nimport torch.nn.functional as F\n\n"
TF = "import tensorflow as tf\n\ntf.keras.mixed_precision.set_global_policy('mixed_float16')\n\n"
JAX = "import jax\nimport jax.numpy as jnp\n\nx = jnp.zeros(3, dtype=jnp.float16)\n\n"


def found(src: str, may: bool = False):
    return [f for f in lint(src, select=["NAN506"], may=may)]


@pytest.mark.parametrize("src,what", [
    (TORCH + "def f(p):\n    return torch.log(p + 1e-8)\n", "added epsilon `1e-8` of the log"),
    (TORCH + "def f(x):\n    return x / (x.norm() + 1e-10)\n", "added epsilon `1e-10` of the division"),
    (TORCH + "def f(v):\n    return torch.sqrt(v + 1e-12)\n", "added epsilon `1e-12` of the sqrt"),
    (TORCH + "def f(p):\n    return torch.log(torch.clamp(p, min=1e-20))\n", "clamp's lower bound `1e-20`"),
    (TORCH + "def f(p):\n    eps = 1e-10\n    q = p + eps\n    return torch.log(q)\n", "added epsilon `1e-10`"),
    (TORCH + "def f(x):\n    return F.normalize(x, eps=1e-12)\n", "normalization's eps `1e-12`"),
    (TF + "def f(p):\n    return tf.math.log(tf.maximum(p, 1e-10))\n", "maximum's floor `1e-10`"),
    (JAX + "def f(p):\n    return jnp.log(jnp.clip(p, 1e-20, 1.0))\n", "clamp's lower bound `1e-20`"),
])
def test_epsilon_that_is_zero_in_float16(src, what):
    (f,) = found(src)
    assert not f.may and what in f.message and "is 0 in float16" in f.message


@pytest.mark.parametrize("src", [
    TORCH + "def f(p):\n    return torch.log(p + 1e-4)\n",  # a normal float16
    TORCH + "def f(p):\n    return torch.log(p + 6e-8)\n",  # the smallest subnormal: not 0
    TORCH + "def f(p):\n    return p + 1e-8\n",  # guards nothing the rule knows
    TORCH_PLAIN + "def f(p):\n    return torch.log(p + 1e-8)\n",  # no float16 in the file
    TORCH_PLAIN + "with torch.autocast('cuda', dtype=torch.bfloat16):\n    y = torch.log(p + 1e-8)\n",
    TORCH_PLAIN + "with torch.autocast('cuda', enabled=False):\n    y = torch.log(p + 1e-8)\n",
    TORCH + "def f(s, m):\n    return torch.softmax(torch.where(m, s, -3e4), -1)\n",  # finite in float16
    TORCH + "def f(s, m):\n    return torch.softmax(torch.where(m, s, -torch.finfo(s.dtype).max), -1)\n",
])
def test_silent(src):
    assert found(src, may=True) == []


def test_autocast_without_a_dtype_is_the_may_tier():
    src = TORCH_PLAIN + "def f(p):\n    with torch.autocast('cuda'):\n        return torch.log(p + 1e-8)\n"
    assert found(src) == []
    (f,) = found(src, may=True)
    assert f.may and "weak evidence: this file may compute in float16" in f.message


@pytest.mark.parametrize("src,fill,fixed", [
    (TORCH + "def f(s, m):\n    return torch.softmax(torch.where(m, s, -1e9), -1)\n", "-1e9",
     "torch.where(m, s, -torch.finfo(s.dtype).max)"),
    (TORCH + "def f(s, m):\n    return torch.softmax(s.masked_fill(~m, -1e10), -1)\n", "-1e10",
     "s.masked_fill(~m, -torch.finfo(s.dtype).max)"),
    (TF + "def f(s, m):\n    return tf.nn.softmax(s + (1.0 - m) * -1e9)\n", "-1e9", "(1.0 - m) * (s.dtype.min / 2)"),
    (JAX + "def f(s, m):\n    return jax.nn.softmax(jnp.where(m, s, -1e30))\n", "-1e30",
     "jnp.where(m, s, jnp.finfo(s.dtype).min)"),
])
def test_fill_beyond_float16_and_its_fix(src, fill, fixed):
    (f,) = found(src)
    assert not f.may and f"`{fill}`" in f.message and "65520" in f.message
    assert fixed in fix(src, select=["NAN506"])


def test_epsilon_fix_writes_1e_4():
    src = TORCH + "def f(p):\n    return torch.log(torch.clamp(p, min=1e-20))\n"
    assert "torch.log(torch.clamp(p, min=1e-4))" in fix(src, select=["NAN506"])


def test_the_constants_on_either_side_in_float16():
    """The rule's thresholds (limits.FLOAT16_ZERO, FLOAT16_OVERFLOW) and its fixes' constants,
    converted to float16 in each framework: the flagged ones are 0 / -inf, the fixes' finite."""
    torch = pytest.importorskip("torch")
    tf = pytest.importorskip("tensorflow")
    jnp = pytest.importorskip("jax.numpy")
    for to16 in (lambda v: torch.tensor(v).to(torch.float16).item(),
                 lambda v: float(tf.cast(tf.constant(v), tf.float16).numpy()),
                 lambda v: float(jnp.asarray(v, jnp.float32).astype(jnp.float16))):
        for eps in (1e-8, 1e-10, 1e-12, 1e-20, limits.FLOAT16_ZERO):
            assert to16(eps) == 0.0
        assert to16(1e-4) > 0 and to16(6e-8) > 0
        assert to16(-1e9) == float("-inf") and to16(-limits.FLOAT16_OVERFLOW) == float("-inf")
        assert to16(-3e4) == -3e4
    assert torch.finfo(torch.float16).min == -limits.FLOAT16_MAX
    # the hazard and the fix, end to end in torch float16
    zero = torch.zeros(3, dtype=torch.float16)
    assert torch.isinf(torch.log(zero + 1e-8)).all() and torch.isfinite(torch.log(zero + 1e-4)).all()
    s = torch.zeros(1, 3, dtype=torch.float16)
    m = torch.zeros(1, 3, dtype=torch.bool)
    assert torch.isnan(torch.softmax(torch.where(m, s, -1e9), -1)).all()
    assert torch.isfinite(torch.softmax(torch.where(m, s, -torch.finfo(s.dtype).max), -1)).all()


def test_nan504_still_reads_the_shared_evidence():
    src = "import torch\n\nmodel = Net().half()\nopt = torch.optim.Adam(model.parameters(), lr=1e-3)\n"
    assert [f.code for f in lint(src, select=["NAN504"])] == ["NAN504"]


def test_a_cast_in_another_function_is_the_may_tier_and_in_the_same_function_strong():
    other = TORCH_PLAIN + "def g(m):\n    return m.half()\n\n\ndef f(p):\n    return torch.log(p + 1e-8)\n"
    assert found(other) == []
    (f,) = found(other, may=True)
    assert f.may and "in another function" in f.message
    same = TORCH_PLAIN + "def f(p):\n    p = p.half()\n    return torch.log(p + 1e-8)\n"
    assert [g.may for g in found(same)] == [False]


# --- float16's lowest value added as a mask (Keras 2.12's Softmax; fix-history site) -------------------------
PLAIN_TF = "import tensorflow as tf\n\n"
HELPER = ("def large_negative(dtype):\n    if dtype == tf.float16:\n        return tf.float16.min\n    return -1e9\n\n\n"
          "def f(s, m):\n    adder = (1.0 - tf.cast(m, s.dtype)) * large_negative(s.dtype)\n    s += adder\n"
          "    return tf.nn.softmax(s)\n")


@pytest.mark.parametrize("src,shown", [
    (PLAIN_TF + HELPER, "tf.float16.min"),
    (PLAIN_TF + "def f(s, m):\n    return tf.nn.softmax(s + (1.0 - m) * tf.float16.min)\n", "tf.float16.min"),
    (TORCH_PLAIN + "def f(s, m):\n    return F.softmax(s + (1 - m) * torch.finfo(torch.float16).min, -1)\n",
     "torch.finfo(torch.float16).min"),
    ("import jax\nimport jax.numpy as jnp\n\ndef f(s, m):\n"
     "    return jax.nn.softmax(s + (1 - m) * -jnp.finfo(jnp.float16).max)\n", "-jnp.finfo(jnp.float16).max"),
    (TORCH_PLAIN + "def f(s, m):\n    s = s + (1 - m) * -65504.0\n    return s.softmax(-1)\n", "-65504.0"),
])
def test_float16_lowest_value_added_as_a_mask_is_its_own_evidence(src, shown):
    """No other float16 evidence in the file: the constant is float16's, and the message names it."""
    (f,) = found(src)
    assert not f.may and f"`{shown}` is float16's lowest value" in f.message and "of -16 or below" in f.message
    fixed = fix(src, select=["NAN506"])
    assert f"{shown} / 2" in fixed and found(fixed) == []


@pytest.mark.parametrize("src", [
    PLAIN_TF + HELPER.replace("return tf.float16.min", "return tf.float16.min / 2"),  # Keras 2.13's fix
    PLAIN_TF + "def f(s, m):\n    return tf.nn.softmax(tf.where(m > 0, s, tf.float16.min))\n",  # written in place
    PLAIN_TF + "def f(s, m):\n    return tf.nn.softmax(s + (1.0 - m) * tf.float32.min)\n",  # float32: no overflow
    PLAIN_TF + "def f(s, m):\n    return s + (1.0 - m) * tf.float16.min\n",  # reaches no softmax
])
def test_float16_lowest_value_silent(src):
    assert found(src, may=True) == []


def test_additive_fills_are_fixed_to_half_the_dtype_minimum():
    src = TF + "def f(s, m):\n    return tf.nn.softmax(s + (1.0 - m) * -1e9)\n"
    fixed = fix(src, select=["NAN506"])
    assert "(1.0 - m) * (s.dtype.min / 2)" in fixed and found(fixed) == []


def test_float16_lowest_value_plus_a_score_overflows_and_half_does_not():
    """The message's threshold, measured: float16's lowest value plus a score of -16 or below is -inf in
    torch, TensorFlow and JAX float16, so a fully masked row of such scores is NaN; half of it
    (the fix) keeps the row finite and uniform, and -16 itself still rounds to -65504."""
    torch = pytest.importorskip("torch")
    tf = pytest.importorskip("tensorflow")
    jnp = pytest.importorskip("jax.numpy")
    import jax

    for score in (-17.0, -20.0, -1000.0):
        s = torch.full((1, 3), score, dtype=torch.float16)
        assert torch.isinf(s + torch.finfo(torch.float16).min).all()
        assert torch.isnan(torch.softmax(s + torch.finfo(torch.float16).min, -1)).all()
        assert torch.allclose(torch.softmax(s + torch.finfo(torch.float16).min / 2, -1).float(), torch.full((1, 3), 1 / 3), atol=1e-3)
        t = tf.fill((1, 3), tf.constant(score, tf.float16))
        assert bool(tf.reduce_all(tf.math.is_nan(tf.nn.softmax(t + tf.float16.min))))
        assert bool(tf.reduce_all(tf.math.is_finite(tf.nn.softmax(t + tf.float16.min / 2))))
        j = jnp.full((1, 3), score, dtype=jnp.float16)
        assert bool(jnp.isnan(jax.nn.softmax(j + jnp.finfo(jnp.float16).min)).all())
        assert bool(jnp.isfinite(jax.nn.softmax(j + jnp.finfo(jnp.float16).min / 2)).all())
    low = torch.finfo(torch.float16).min
    assert (torch.tensor(-15.99, dtype=torch.float16) + low).item() == -limits.FLOAT16_MAX
    assert (torch.tensor(-16.0, dtype=torch.float16) + low).item() == float("-inf")
    assert (torch.tensor(-32752.0, dtype=torch.float16) + low / 2).item() == -limits.FLOAT16_MAX
