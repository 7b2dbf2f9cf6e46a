"""Precision fixes found by the regression corpus (tests/test_corpus.py): each test
is a minimal reproduction of code seen in a real framework package."""

from conftest import codes


def test_recursive_function_with_several_returns_does_not_exhaust_the_stack():
    # tensorflow/python/ops/ragged/ragged_math_ops.py: a function that returns a call
    # of itself on one branch sent op_of following returns into unbounded recursion,
    # reported as NAN001 "cannot analyse" on a file that parses fine.
    source = """
    import tensorflow as tf

    def f(x, n):
        if n == 0:
            return tf.nn.softmax(x)
        return f(x, n - 1)

    y = tf.math.log(f(x, 3))
    """
    assert "NAN001" not in codes(source)


def test_mutually_recursive_functions_do_not_exhaust_the_stack():
    source = """
    import torch

    def f(x):
        if x.dim() > 2:
            return g(x)
        return torch.softmax(x, -1)

    def g(x):
        if x.dim() > 3:
            return f(x[0])
        return torch.softmax(x, -1)

    y = torch.log(f(x))
    """
    assert "NAN001" not in codes(source)


def test_manual_softmax_shift_seen_through_a_cast():
    # jax/experimental/pallas/ops/gpu/softmax.py: exp((row - row_max).astype(f32)) / sum(...)
    source = """
    import jax.numpy as jnp

    def softmax(row):
        row_max = jnp.max(row, axis=0)
        numerator = jnp.exp((row - row_max).astype(jnp.float32))
        denominator = jnp.sum(numerator, axis=0)
        return numerator / denominator
    """
    assert "NAN301" not in codes(source)


def test_manual_softmax_cast_without_a_shift_is_still_flagged():
    source = """
    import tensorflow as tf

    def softmax(z):
        e = tf.exp(tf.cast(z, tf.float32))
        return e / tf.reduce_sum(e, axis=-1, keepdims=True)
    """
    assert "NAN301" in codes(source)
