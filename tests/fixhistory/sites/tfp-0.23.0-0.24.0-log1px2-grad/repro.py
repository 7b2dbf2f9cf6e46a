"""tfp NormalInverseGaussian's _log1px2(x) = log(1 + x**2) at x = 0: the value is 0, but
the gradient through the unselected branch 2 * log(|x|) is 0 * inf = NaN."""
import numpy as np
import tensorflow as tf

x0 = tf.constant([0.0, 0.5], tf.float32)
eps = np.finfo(np.float32).eps
tiny = np.finfo(np.float32).tiny


def parent_fn(x):
    return tf.where(
        tf.abs(x) * np.sqrt(eps) <= 1.,
        tf.math.log1p(x**2.),
        2 * tf.math.log(tf.math.abs(x)))


def fixed_fn(x):
    is_basically_zero = tf.abs(x) < tiny
    safe_x = tf.where(is_basically_zero, tf.ones_like(x), x)
    return tf.where(
        is_basically_zero,
        tf.abs(x),
        tf.where(
            tf.abs(x) * np.sqrt(eps) <= 1.,
            tf.math.log1p(safe_x**2.),
            2 * tf.math.log(tf.math.abs(safe_x))))


def _value_and_grad(fn):
    x = tf.Variable(x0)
    with tf.GradientTape() as tape:
        y = fn(x)
    return y, tape.gradient(y, x)


def parent():
    return _value_and_grad(parent_fn)


def fixed():
    return _value_and_grad(fixed_fn)
