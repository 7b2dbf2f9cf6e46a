"""A branch of the graph's own ``cond`` is a guard (issue 24's evidence): the function given
as ``cond``'s first branch runs only where its test holds, so ``cond(any(m), lambda: s /
sum(m), lambda: 0.0)`` never divides by an empty mask's count (keras-hub's d_fine loss, a
false positive of NAN401 on the library corpus).  ``jax.lax.cond`` is not one: under ``vmap``
it becomes a select whose other branch runs too."""

import numpy as np
import pytest

from conftest import lint


def _codes(source: str, select=None) -> list[tuple[str, int]]:
    return sorted((f.code, f.start[0]) for f in lint(source, select=select, may=True))


KERAS = """\
    import keras

    def loss(values, mask):
        keep = keras.ops.logical_not(mask)
        return keras.ops.cond(
            keras.ops.any(keep),
            lambda: keras.ops.sum(values * keras.ops.cast(keep, "float32"))
            / keras.ops.sum(keras.ops.cast(keep, "float32")),
            lambda: 0.0,
        )
"""


def test_the_first_branch_under_any_of_the_mask_is_silent():
    assert _codes(KERAS) == []
    unguarded = KERAS.replace("keras.ops.any(keep)", "keras.ops.any(values > 0)")
    assert [c for c, _ in _codes(unguarded)] == ["NAN401"]  # another test guards nothing


TF = """\
    import tensorflow as tf

    def loss(values):
        n = tf.reduce_sum(tf.cast(values > 0, tf.float32))
        a = tf.cond(n > 0, lambda: tf.reduce_sum(values) / n, lambda: 0.0)
        b = tf.cond(n > 0, lambda: 0.0, lambda: tf.reduce_sum(values) / n)
        c = tf.cond(n == 0, lambda: 0.0, lambda: tf.reduce_sum(values) / n)
        d = tf.reduce_sum(values) / n
        return a + b + c + d
"""


def test_which_branch_runs_decides():
    found = _codes(TF)
    assert found == [("NAN108", 6), ("NAN108", 8)], found  # b divides where n == 0, d unguarded


def test_jax_lax_cond_is_not_a_guard():
    source = """\
        import jax
        import jax.numpy as jnp

        def loss(values, keep):
            return jax.lax.cond(jnp.any(keep), lambda: jnp.sum(values * keep) / jnp.sum(keep), lambda: 0.0)
    """
    assert [c for c, _ in _codes(source)] == ["NAN401"]


def test_tf_cond_keeps_value_and_gradient_finite_on_an_empty_mask():
    tf = pytest.importorskip("tensorflow")
    values = tf.Variable([1.0, 2.0, 3.0])
    mask = tf.constant([0.0, 0.0, 0.0])

    def guarded():
        return tf.cond(tf.reduce_any(mask > 0), lambda: tf.reduce_sum(values * mask) / tf.reduce_sum(mask),
                       lambda: 0.0 * tf.reduce_sum(values))

    with tf.GradientTape(persistent=True) as tape:
        safe = guarded()
        bare = tf.reduce_sum(values * mask) / tf.reduce_sum(mask)
    assert float(safe) == 0.0 and np.all(np.isfinite(tape.gradient(safe, values).numpy()))
    assert np.isnan(float(bare)) and np.all(np.isnan(tape.gradient(bare, values).numpy()))  # what it guards


TORCH_IF = """\
    import torch

    def loss(x, scores):
        m = (scores > 0.5).float()
        if m.any():
            a = (x * m).sum() / m.sum()
        else:
            a = x.sum() * 0
        if not torch.any(m):
            return a
        return a + (x * m).sum() / m.sum()
"""


def test_an_if_on_any_of_the_mask_guards_its_sum_too():
    assert _codes(TORCH_IF) == []
    bare = TORCH_IF.replace("if m.any():", "if x.any():").replace("if not torch.any(m):", "if not torch.any(x):")
    assert _codes(bare) == [("NAN401", 6), ("NAN401", 11)]


NAMED = """\
    import tensorflow as tf

    def loss(values):
        n = tf.reduce_sum(tf.cast(values > 0, tf.float32))

        def mean():
            return tf.reduce_sum(values) / n

        def zero():
            return 0.0

        return tf.cond(n > 0, mean, zero)
"""


def test_a_named_branch_is_read_like_a_lambda():
    assert _codes(NAMED) == []
    assert _codes(NAMED.replace("tf.cond(n > 0, mean, zero)", "tf.cond(n > 0, zero, mean)")) == [("NAN108", 7)]
    # called elsewhere too: it may run where n is 0
    assert _codes(NAMED.replace("return tf.cond(n > 0, mean, zero)",
                                "return tf.cond(n > 0, mean, zero) + mean()")) == [("NAN108", 7)]
