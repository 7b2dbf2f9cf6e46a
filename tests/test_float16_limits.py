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
