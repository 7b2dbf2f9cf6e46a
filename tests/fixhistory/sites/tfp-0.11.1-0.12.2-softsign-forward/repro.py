"""tfp Softsign bijector forward at x = +-inf: x / (1 + |x|) = inf / inf = NaN, where
the answer is sign(x)."""
import numpy as np
import tensorflow as tf

x = tf.constant([-np.inf, -2.0, 0.5, np.inf], tf.float32)


def parent():
    return x / (1. + tf.math.abs(x))


def fixed():
    abs_x = tf.math.abs(x)
    answer = x / (1. + abs_x)
    return tf.where(abs_x >= 1e20, tf.math.sign(x), answer)
