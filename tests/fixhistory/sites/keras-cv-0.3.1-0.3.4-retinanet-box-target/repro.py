"""keras-cv RetinaNetLabelEncoder: an anchor matched to an all -1 padding box (outside the
image) gets the box target log(-1 / anchor_width) = NaN, a NaN label for training."""
import tensorflow as tf

box_variance = tf.convert_to_tensor([0.1, 0.1, 0.2, 0.2], dtype=tf.float32)
ignore_class = -2.0
anchor_boxes = tf.constant([[16.0, 16.0, 32.0, 32.0], [48.0, 16.0, 32.0, 32.0]])  # xywh
matched_gt_boxes = tf.constant([[-1.0, -1.0, -1.0, -1.0], [50.0, 18.0, 30.0, 28.0]])
cls_target = tf.constant([[ignore_class], [3.0]])


def _label():
    box_target = tf.concat(
        [
            (matched_gt_boxes[:, :2] - anchor_boxes[:, :2]) / anchor_boxes[:, 2:],
            tf.math.log(matched_gt_boxes[:, 2:] / anchor_boxes[:, 2:]),
        ],
        axis=-1,
    )
    box_target = box_target / box_variance
    return tf.concat([box_target, cls_target], axis=-1)


def parent():
    return _label()


def fixed():
    label = _label()
    label = tf.where(
        tf.expand_dims(tf.math.reduce_any(tf.math.is_nan(label), axis=-1), axis=-1),
        ignore_class,
        label,
    )
    return label
