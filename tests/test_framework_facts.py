"""The framework facts of the tables (``Framework.facts``, ``FACT_*`` in
nanlint/vocabulary/ops.py), measured in the real frameworks: a table that claims a
behaviour its framework does not have, or misses one it has, fails here.  The rules read
these facts to decide where a gradient goes NaN (NAN201, NAN202, NAN203)."""

from __future__ import annotations

import numpy as np
import pytest

from nanlint.vocabulary import frameworks
from nanlint.vocabulary import ops as o

torch = pytest.importorskip("torch")
tf = pytest.importorskip("tensorflow")
jax = pytest.importorskip("jax")
keras = pytest.importorskip("keras")
jnp = jax.numpy


def _tf_grad(f, x):
    x = tf.constant(x, dtype=tf.float32)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return tape.gradient(y, x).numpy()


def _torch_grad(f, x):
    x = torch.tensor(x, dtype=torch.float32, requires_grad=True)
    f(x).backward()
    return x.grad.numpy()


def _jax_grad(f, x):
    return np.asarray(jax.grad(f)(jnp.asarray(x, dtype=jnp.float32)))


def _keras_grad(f, x):  # Keras 3 with the backend the fixtures run (TensorFlow)
    return _tf_grad(f, x)


ZERO = [0.0, 0.0, 0.0]
CONSTANT = [2.0, 2.0, 2.0]
# fact -> framework -> (the gradient it is about, at the input where the fact speaks)
MEASURE = {
    # where(x > 0, sqrt(x), 0) at x = 0: the unselected branch's upstream gradient is 0
    o.FACT_ZERO_UPSTREAM_SQRT_NAN: {
        "torch": lambda: _torch_grad(lambda x: torch.where(x > 0, torch.sqrt(x), 0.0).sum(), ZERO),
        "tensorflow": lambda: _tf_grad(lambda x: tf.reduce_sum(tf.where(x > 0, tf.sqrt(x), 0.0)), ZERO),
        "jax": lambda: _jax_grad(lambda x: jnp.sum(jnp.where(x > 0, jnp.sqrt(x), 0.0)), ZERO),
        "keras": lambda: _keras_grad(lambda x: keras.ops.sum(keras.ops.where(x > 0, keras.ops.sqrt(x), 0.0)), ZERO),
    },
    # the 2-norm at the zero vector
    o.FACT_NORM_GRAD_NAN_AT_ZERO: {
        "torch": lambda: _torch_grad(torch.linalg.norm, ZERO),
        "tensorflow": lambda: _tf_grad(tf.norm, ZERO),
        "jax": lambda: _jax_grad(jnp.linalg.norm, ZERO),
        "keras": lambda: _keras_grad(keras.ops.norm, ZERO),
    },
    # the standard deviation of a constant row
    o.FACT_STD_GRAD_NAN_AT_CONSTANT: {
        "torch": lambda: _torch_grad(torch.std, CONSTANT),
        "tensorflow": lambda: _tf_grad(tf.math.reduce_std, CONSTANT),
        "jax": lambda: _jax_grad(jnp.std, CONSTANT),
        "keras": lambda: _keras_grad(keras.ops.std, CONSTANT),
    },
    # xlogy(x, x) at x = 0 (Keras 3 has no xlogy)
    o.FACT_XLOGY_GRAD_NAN_AT_ZERO: {
        "torch": lambda: _torch_grad(lambda x: torch.special.xlogy(x, x).sum(), ZERO),
        "tensorflow": lambda: _tf_grad(lambda x: tf.reduce_sum(tf.math.xlogy(x, x)), ZERO),
        "jax": lambda: _jax_grad(lambda x: jax.scipy.special.xlogy(x, x).sum(), ZERO),
    },
}
TABLES = {fw.name: fw for fw in frameworks.frameworks()}


def test_every_fact_a_table_claims_is_measured_here():
    claimed = {fact for fw in TABLES.values() for fact in fw.facts}
    assert claimed <= set(MEASURE)
    for fact in claimed:
        assert {fw for fw in TABLES if fact in TABLES[fw].facts} <= set(MEASURE[fact])


@pytest.mark.parametrize("fact,framework", [(f, fw) for f in MEASURE for fw in MEASURE[f]])
def test_the_table_says_what_the_framework_does(fact, framework):
    if framework == "keras" and keras.backend.backend() != "tensorflow":
        pytest.skip("the Keras table's facts are measured with the TensorFlow backend")
    grad = MEASURE[fact][framework]()
    nan = bool(np.isnan(grad).any())
    assert nan == (fact in TABLES[framework].facts), (fact, framework, grad)
    if not nan:
        assert np.isfinite(grad).all()
