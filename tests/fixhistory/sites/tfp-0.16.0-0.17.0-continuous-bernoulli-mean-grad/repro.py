"""tfp ContinuousBernoulli mean at a large negative logit (-100): expm1(100) = inf, so the
mean is finite (1 / inf = 0) but its gradient is 0 * inf = NaN."""
import numpy as np
import tensorflow as tf

dtype = np.float32
eps = np.finfo(dtype).eps
logits0 = tf.constant([-100.0, 3.0], tf.float32)


def parent_mean(logits):
    small_cutoff = np.power(eps * 30240, 1 / 5.)
    result = dtype(0.5) + logits / 12. - logits * tf.math.square(logits) / 720

    safe_logits_large = tf.where(
        tf.math.abs(logits) > small_cutoff, logits, dtype(1.))
    return tf.where(
        tf.math.abs(logits) > small_cutoff,
        -(tf.math.reciprocal(
            tf.math.expm1(-safe_logits_large)) +
          tf.math.reciprocal(safe_logits_large)),
        result)


def fixed_mean(logits):
    small_cutoff = np.power(eps * 30240, 1 / 5.)
    result = dtype(0.5) + logits / 12. - logits * tf.math.square(logits) / 720

    large_cutoff = -np.log(eps)

    safe_logits_mask = ((tf.math.abs(logits) > small_cutoff)
                        & (logits > -large_cutoff))
    safe_logits = tf.where(safe_logits_mask, logits, dtype(1.))
    result = tf.where(
                safe_logits_mask,
                -(tf.math.reciprocal(
                    tf.math.expm1(-safe_logits)) +
                  tf.math.reciprocal(safe_logits)),
                result)

    large_neg_mask = logits <= -large_cutoff
    logits_large_neg = tf.where(large_neg_mask, logits, 1.)
    return tf.where(large_neg_mask,
                    -tf.math.reciprocal(logits_large_neg),
                    result)


def _value_and_grad(fn):
    logits = tf.Variable(logits0)
    with tf.GradientTape() as tape:
        m = fn(logits)
    return m, tape.gradient(m, logits)


def parent():
    return _value_and_grad(parent_mean)


def fixed():
    return _value_and_grad(fixed_mean)
