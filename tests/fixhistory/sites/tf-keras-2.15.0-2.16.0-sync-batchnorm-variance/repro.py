"""tf-keras synchronized BatchNormalization statistics: var = E[x^2] - E[x]^2 rounds below
zero in float32 for a feature with a large mean and a small spread, and
tf.nn.batch_normalization's rsqrt(var + 1e-3) is then NaN.  (The same change also guards
the mean with divide_no_nan for a count of 0.)  One replica: all_reduce is the identity."""
import tensorflow as tf

epsilon = 1e-3
reduction_axes = [0]
y = tf.constant([[10000.1], [10000.2], [10000.3], [10000.1], [10000.2], [10000.3], [10000.1]])


def _moments(fixed):
    local_count = tf.ones_like(y, name="count")
    y_sum = tf.reduce_sum(y, axis=reduction_axes, keepdims=True)
    y_squared_sum = tf.reduce_sum(tf.square(y), axis=reduction_axes, keepdims=True)
    count_sum = tf.reduce_sum(local_count, axis=reduction_axes, keepdims=True)
    if fixed:
        mean = tf.math.divide_no_nan(y_sum, count_sum)
        y_squared_mean = tf.math.divide_no_nan(y_squared_sum, count_sum)
        variance = tf.maximum(y_squared_mean - tf.square(mean), 0.0)
    else:
        mean = y_sum / count_sum
        y_squared_mean = y_squared_sum / count_sum
        variance = y_squared_mean - tf.square(mean)
    return mean, variance


def _normalized(fixed):
    mean, variance = _moments(fixed)
    return tf.nn.batch_normalization(y, mean, variance, None, None, epsilon)


def parent():
    return _normalized(False)


def fixed():
    return _normalized(True)
