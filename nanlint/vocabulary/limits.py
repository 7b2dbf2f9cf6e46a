"""Measured numeric thresholds that the rules' messages state: data only.

Each table maps a framework (``torch``, ``tensorflow``, ``jax``; Keras runs on TensorFlow's
kernels here) and a dtype to the threshold as the messages print it.  Measured on CPU
(torch 2, TensorFlow 2, jax), bisecting the input; ``tests/test_limits.py`` evaluates every
entry in the framework itself, so a wrong number fails a test.  TensorFlow and JAX flush
float32 subnormal results to 0 on CPU, torch keeps them: that is why their underflow
thresholds differ.
"""

from __future__ import annotations

FLOAT32 = "float32"
DTYPES = ("float32", "float64", "float16", "bfloat16")
FRAMEWORKS = ("torch", "tensorflow", "jax")

# sigmoid(x) is exactly 0 for x below -SIGMOID_ZERO, where log(sigmoid(x)) = -inf
# (torch computes 1 / (1 + exp(-x)): 0 once exp(-x) overflows; TF/JAX flush the subnormal to 0)
SIGMOID_ZERO = {
    "torch": {"float32": 88.7, "float64": 709.8, "float16": 17.3, "bfloat16": 88.7},
    "tensorflow": {"float32": 87.3, "float64": 708.4, "float16": 17.3, "bfloat16": 87.3},
    "jax": {"float32": 87.3, "float64": 708.4, "float16": 11.1, "bfloat16": 87.3},
}
# sigmoid(x) rounds to exactly 1 for x above SIGMOID_ONE, where log(1 - sigmoid(x)) = -inf
SIGMOID_ONE = {
    "torch": {"float32": 16.6, "float64": 36.7, "float16": 8.3, "bfloat16": 6.2},
    "tensorflow": {"float32": 16.6, "float64": 36.7, "float16": 7.8, "bfloat16": 5.9},  # float64: not monotone to ~37.5
    "jax": {"float32": 16.6, "float64": 36.7, "float16": 7.6, "bfloat16": 5.5},
}
# softmax([d, 0]): the larger probability rounds to exactly 1 for a gap d above SOFTMAX_ONE
# (more classes saturate at a larger gap: d > SOFTMAX_ONE + log(classes - 1), about)
SOFTMAX_ONE = {
    "torch": {"float32": 16.6, "float64": 36.7, "float16": 8.3, "bfloat16": 6.2},
    "tensorflow": {"float32": 16.6, "float64": 36.7, "float16": 7.6, "bfloat16": 5.5},
    "jax": {"float32": 16.6, "float64": 36.7, "float16": 7.6, "bfloat16": 5.5},
}
# gaps that depend on the CPU's kernels, the other value measured (framework, dtype) -> gap:
# TensorFlow 2.21's half-precision softmax rounds to 1 from ~5.5 (bfloat16) and ~7.6 (float16)
# on a CPU without AVX-512, from ~6.2 and ~8.3 on an Intel Xeon with it (it then rounds a
# float32 result, as torch does); no message states a half-precision gap
SOFTMAX_ONE_ON_OTHER_CPUS = {("tensorflow", "bfloat16"): 6.2, ("tensorflow", "float16"): 8.3}
# exp(x) is inf for x above EXP_OVERFLOW (the same in every framework)
EXP_OVERFLOW = {
    fw: {"float32": 88.7, "float64": 709.8, "float16": 11.1, "bfloat16": 88.7} for fw in FRAMEWORKS
}
# exp(x) is exactly 0 for x below -EXP_UNDERFLOW; so is softmax's probability of a logit that
# far below the largest, and the sum of exps in a log-sum-exp whose every term is that low
EXP_UNDERFLOW = {
    "torch": {"float32": 104.0, "float64": 745.1, "float16": 17.3, "bfloat16": 92.7},
    "tensorflow": {"float32": 87.3, "float64": 708.4, "float16": 17.3, "bfloat16": 87.3},
    "jax": {"float32": 87.3, "float64": 708.4, "float16": 17.3, "bfloat16": 87.3},
}

# torch's binary_cross_entropy / BCELoss (float32): the log is clamped at -TORCH_BCE_LOG_CLAMP,
# and the backward divides by max(p * (1 - p), 1e-12): on a sigmoid's output the gradient on a
# target of 1 fades to 0 for z below -TORCH_BCE_GRAD_FADE (p < 1e-12; 0.09 at z = -30)
TORCH_BCE_LOG_CLAMP = 100
TORCH_BCE_GRAD_FADE = 27.6

# float32 resolution next to 1 (round to nearest even): 1 + eps == 1 for eps <= 2**-24,
# 1 - eps == 1 for eps <= 2**-25
FLOAT32_ABSORBED_ABOVE_ONE = "2**-24 = 5.96e-8"
FLOAT32_ABSORBED_BELOW_ONE = "2**-25 = 2.98e-8"
FLOAT32_ONE_MINUS_1E7 = "0.99999988"  # float32(1 - 1e-7)
FLOAT32_UNIT_SELF_DOT = "1.0000002"  # a float32 unit vector dotted with itself can give this (and 1.0000004)

# float16 (issue 24, NAN402/NAN506): a float32 or Python constant converted to float16 rounds
# to +-inf at |v| >= FLOAT16_OVERFLOW (the largest finite float16 is FLOAT16_MAX = 65504: a mask
# fill of -1e9 or -1e5 is -inf in float16, -3e4 is finite) and to 0 at |v| <= FLOAT16_ZERO
# (2**-25, half the smallest subnormal 2**-24 ~ 5.96e-8: an epsilon of 1e-8 or 1e-12 is 0 in
# float16; 6e-8 is the smallest subnormal). The same in torch, TensorFlow and JAX (round to
# nearest even on the conversion).
FLOAT16_MAX = 65504.0
FLOAT16_OVERFLOW = 65520.0
FLOAT16_ZERO = 2.0 ** -25
