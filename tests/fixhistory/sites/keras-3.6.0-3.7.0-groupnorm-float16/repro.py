"""keras GroupNormalization under float16: for a constant group of value 3000,
inv = rsqrt(0 + 1e-3) = 31.6, and reshaped_inputs * inv = 94868 overflows float16 to inf
while res = -mean * inv is -inf: inf - inf = NaN.  The fix computes in float32."""
import numpy as np
from keras import backend, ops

epsilon = 1e-3
# (batch, channels, groups) after the layer's reshape: one group constant, one varied
x = np.array([[[3000.0, 1.0], [3000.0, 2.0], [3000.0, 4.0], [3000.0, 3.0]]], np.float16)
group_reduction_axes = [1]


def _apply_normalization(reshaped_inputs):
    mean, variance = ops.moments(
        reshaped_inputs, axes=group_reduction_axes, keepdims=True
    )
    inv = ops.rsqrt(variance + epsilon)
    res = -mean * inv
    return reshaped_inputs * inv + res


def parent():
    return _apply_normalization(ops.convert_to_tensor(x))


def fixed():
    reshaped_inputs = ops.convert_to_tensor(x)
    inputs_dtype = reshaped_inputs.dtype
    compute_dtype = backend.result_type(inputs_dtype, "float32")
    reshaped_inputs = ops.cast(reshaped_inputs, compute_dtype)
    normalized_inputs = _apply_normalization(reshaped_inputs)
    normalized_inputs = ops.cast(normalized_inputs, inputs_dtype)
    return normalized_inputs
