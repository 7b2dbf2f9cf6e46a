"""The float16 limits nanlint states (nanlint/vocabulary/limits.py: FLOAT16_MAX,
FLOAT16_OVERFLOW, FLOAT16_ZERO), measured in torch, TensorFlow and JAX: a constant converted to
float16 is +-inf from FLOAT16_OVERFLOW on, finite just below it, 0 at FLOAT16_ZERO and below,
and the smallest subnormal just above it; the mask fills and epsilons of issue 24 on either side."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from nanlint.vocabulary import limits


def _torch(v: float) -> float:
    torch = pytest.importorskip("torch")
    return torch.tensor(v, dtype=torch.float32).to(torch.float16).item()


def _tensorflow(v: float) -> float:
    tf = pytest.importorskip("tensorflow")
    return float(tf.cast(tf.constant(v, tf.float32), tf.float16).numpy())


def _jax(v: float) -> float:
    jnp = pytest.importorskip("jax.numpy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy warns on the overflowing cast
        return float(jnp.asarray(v, jnp.float32).astype(jnp.float16))


CONVERT = {"torch": _torch, "tensorflow": _tensorflow, "jax": _jax}


@pytest.mark.parametrize("fw", sorted(CONVERT))
def test_float16_overflow_and_max(fw):
    to16 = CONVERT[fw]
    assert to16(limits.FLOAT16_MAX) == limits.FLOAT16_MAX
    assert to16(np.nextafter(np.float32(limits.FLOAT16_OVERFLOW), np.float32(0))) == limits.FLOAT16_MAX
    assert to16(limits.FLOAT16_OVERFLOW) == math.inf and to16(-limits.FLOAT16_OVERFLOW) == -math.inf
    for fill in (-1e9, -1e10, -1e30, -1e5):
        assert to16(fill) == -math.inf, fill
    assert to16(-3e4) == -30000.0 and to16(-1e4) == -10000.0


@pytest.mark.parametrize("fw", sorted(CONVERT))
def test_float16_underflow_to_zero(fw):
    to16 = CONVERT[fw]
    assert to16(limits.FLOAT16_ZERO) == 0.0
    assert to16(float(np.nextafter(np.float32(limits.FLOAT16_ZERO), np.float32(1)))) == 2.0 ** -24
    for eps in (1e-8, 1e-10, 1e-12, 1e-20):
        assert to16(eps) == 0.0, eps
    assert to16(6e-8) == 2.0 ** -24 and to16(1e-4) > 0 and to16(1e-7) > 0


# --- the file gate (issue 22): float16 compute shown by a call, not a float16 word --------------
@pytest.mark.parametrize("src, site", [
    ("x = x.half()\ny = torch.log(p + 1e-8)", True),
    ("x = x.to(torch.float16)\ny = torch.log(p + 1e-8)", True),
    ("f16 = torch.float16\nx = x.to(f16)\ny = torch.log(p + 1e-8)", True),
    ("from torch import half as h\nx = x.to(h)\ny = torch.log(p + 1e-8)", True),
    ("keras.mixed_precision.set_global_policy('mixed_float16')\ns = ops.where(m, s, -1e9)", True),
    ("p = jax.tree_util.tree_map(lambda a: a.astype(jnp.float16), p)\ny = jnp.log(p + 1e-8)", True),
    ("with torch.autocast('cuda'):\n    y = torch.log(p + 1e-8)", True),
    ("x = x.half()\ny = torch.log(p + 1e-4)", False),         # an epsilon float16 holds
    ("x = x.half()\ns = s.masked_fill(m, 1e9)", False),        # a positive fill is no -inf
    # Keras's layers: float16 compared, named, documented, never a dtype given to a call
    ("if self.compute_dtype == 'float16':\n    eps = 1e-8\ny = ops.log(p + eps)", False),
    ("'''Runs in float16.'''\ny = torch.log(p + 1e-8)", False),
    # float16's lowest value as written is its own evidence: a finfo that may be float16's
    ("s = s + (1 - m) * torch.finfo(torch.float16).min", True),
    ("s = s + (1 - m) * torch.finfo(dt).min", True),                # a name: an alias may spell float16
    ("s = s + (1 - m) * np.finfo('float16').min", True),
    # Keras's quantized layers: another dtype's range (issue 22: they reached libcst for it)
    ("scale = ml_dtypes.finfo('float8_e4m3fn').max / amax", False),
    ("lo = ops.finfo(x.dtype).min", False),
    ("hi = torch.finfo(torch.float32).max", False),
])
def test_gate(src, site):
    import ast
    from nanlint.rules.nan506_float16_limits import _site
    assert _site(ast.parse(src)) is site
