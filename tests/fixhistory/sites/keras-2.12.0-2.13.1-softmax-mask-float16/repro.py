"""keras 2 Softmax layer with a mask under float16: masked positions get
inputs + float16.min, which overflows to -inf once the input is below -16; a fully masked
row is then all -inf and softmax gives NaN.  Half of float16.min leaves room."""
import numpy as np
import tensorflow as tf

inputs0 = tf.constant([[-30.0, -100.0, -20.0], [0.5, 1.0, -0.5]], tf.float16)
mask = tf.constant([[False, False, False], [True, True, False]])


def _softmax(large_negative):
    inputs = inputs0
    adder = (1.0 - tf.cast(mask, inputs.dtype)) * (large_negative)
    inputs += adder
    return tf.nn.softmax(inputs, axis=-1)


def parent():
    return _softmax(tf.float16.min)


def fixed():
    return _softmax(tf.float16.min / 2.0)
