"""tfp Multinomial sampling as iterated binomials, probs = [1, 0, 0]: after the first class
consumed_prob = 1, so the second class's binomial probability is 0 / (1 - 1) = NaN
(and clip_by_value keeps the NaN)."""
import tensorflow as tf

probs = tf.constant([1.0, 0.0, 0.0])


def _binomial_probs(no_nan):
    consumed_prob = tf.zeros_like(probs[..., 0])
    out = []
    for i in range(3):
        probs_here = tf.gather(probs, i, axis=-1)
        if no_nan:
            binomial_probs = tf.clip_by_value(
                tf.math.divide_no_nan(probs_here, (1. - consumed_prob)),
                0, 1)
        else:
            binomial_probs = tf.clip_by_value(probs_here / (1. - consumed_prob), 0, 1)
        out.append(binomial_probs)
        consumed_prob = consumed_prob + probs_here
    return tf.stack(out)


def parent():
    return _binomial_probs(False)


def fixed():
    return _binomial_probs(True)
