"""tfa RSquare with a constant target (y_true all 2.0): the total sum of squares is 0, so
1 - res / total = 1 - inf = -inf (scikit-learn reports 0 here)."""
import tensorflow as tf

y_true = tf.constant([[2.0], [2.0], [2.0], [2.0]])
y_pred = tf.constant([[1.5], [2.5], [2.0], [3.0]])
sample_weight = tf.ones_like(y_true)

weighted_y_true = y_true * sample_weight
total_sum = tf.reduce_sum(weighted_y_true, axis=0)
squared_sum = tf.reduce_sum(y_true * weighted_y_true, axis=0)
res = tf.reduce_sum((y_true - y_pred) ** 2 * sample_weight, axis=0)
count = tf.reduce_sum(sample_weight, axis=0)


def _raw_scores():
    mean = total_sum / count
    total = squared_sum - total_sum * mean
    return 1 - (res / total)


def parent():
    return _raw_scores()


def fixed():
    raw_scores = _raw_scores()
    raw_scores = tf.where(tf.math.is_inf(raw_scores), 0.0, raw_scores)
    return raw_scores
