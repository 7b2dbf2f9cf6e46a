"""keras-hub Gemma3DecoderBlock under float16: the residual sums x + attention and
x + attention_x overflow past 65504 to inf; the fix adds in float32 and clips."""
import numpy as np
from keras import ops

x = ops.convert_to_tensor(np.array([[60000.0, -3.0, 1.5]], np.float16))
attention = ops.convert_to_tensor(np.array([[9000.0, 2.0, -0.5]], np.float16))
ffw = ops.convert_to_tensor(np.array([[7000.0, 1.0, 0.25]], np.float16))


def parent():
    attention_x = x + attention
    out = ffw + attention_x
    return attention_x, out


def fixed():
    attention_x = ops.add(
        ops.cast(x, "float32"), ops.cast(attention, "float32")
    )
    attention_x = ops.clip(attention_x, -65504, 65504)
    attention_x = ops.cast(attention_x, "float16")
    out = ops.add(
        ops.cast(ffw, "float32"), ops.cast(attention_x, "float32")
    )
    out = ops.clip(out, -65504, 65504)
    out = ops.cast(out, "float16")
    return attention_x, out
