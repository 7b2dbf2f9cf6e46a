"""tfp KL(Bernoulli || Bernoulli) with both distributions certain (logits = +inf, i.e.
probs = 1): softplus(b) - softplus(a) = inf - inf = NaN, and 0 * NaN = NaN; the KL is 0."""
import numpy as np
import tensorflow as tf

a_logits = tf.constant([np.inf, 2.0], tf.float32)
b_logits = tf.constant([np.inf, 1.0], tf.float32)


def parent():
    return (
        tf.sigmoid(a_logits) * (
            tf.math.softplus(-b_logits) - tf.math.softplus(-a_logits)) +
        tf.sigmoid(-a_logits) * (
            tf.math.softplus(b_logits) - tf.math.softplus(a_logits)))


def fixed():
    one_minus_pa, pa = tf.math.sigmoid(-a_logits), tf.math.sigmoid(a_logits)
    log_one_minus_pa, log_pa = -tf.math.softplus(a_logits), -tf.math.softplus(-a_logits)
    log_one_minus_pb, log_pb = -tf.math.softplus(b_logits), -tf.math.softplus(-b_logits)
    return (
        tf.math.multiply_no_nan(log_pa, pa) -
        tf.math.multiply_no_nan(log_pb, pa) +
        tf.math.multiply_no_nan(log_one_minus_pa, one_minus_pa) -
        tf.math.multiply_no_nan(log_one_minus_pb, one_minus_pa)
    )
