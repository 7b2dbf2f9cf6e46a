"""tfp Categorical entropy with a -inf logit (an impossible category): the value is
finite, but its gradient is NaN, because the gradient of multiply_no_nan(logits, exp(x))
towards exp(x) is the -inf logit, times exp(x)' = 0."""
import numpy as np
import tensorflow as tf

logits0 = tf.constant([[0.0, 1.0, -np.inf]], tf.float32)


def _entropy(logits, masked):
    m = tf.reduce_max(logits, axis=-1, keepdims=True)
    x = logits - m
    sum_exp_x = tf.reduce_sum(tf.math.exp(x), axis=-1)
    lse_logits = m[..., 0] + tf.math.log(sum_exp_x)
    if not masked:
        return lse_logits - tf.reduce_sum(
            tf.math.multiply_no_nan(logits, tf.math.exp(x)), axis=-1) / sum_exp_x
    is_inf_logits = tf.cast(tf.math.is_inf(logits), dtype=tf.float32)
    is_negative_logits = tf.cast(logits < 0, dtype=tf.float32)
    masked_logits = tf.where(
        tf.cast((is_inf_logits * is_negative_logits), dtype=bool),
        tf.cast(1.0, dtype=logits.dtype), logits)

    return lse_logits - tf.reduce_sum(
        tf.math.multiply_no_nan(masked_logits, tf.math.exp(x)),
        axis=-1) / sum_exp_x


def _value_and_grad(masked):
    logits = tf.Variable(logits0)
    with tf.GradientTape() as tape:
        h = _entropy(logits, masked)
    return h, tape.gradient(h, logits)


def parent():
    return _value_and_grad(False)


def fixed():
    return _value_and_grad(True)
