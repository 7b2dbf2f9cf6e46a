"""Keras 3 ``keras.ops`` (also reached as ``tf.keras.ops``), ``keras.activations``,
Keras 2's ``keras.backend`` and the Keras optimizers."""

from __future__ import annotations

from nanlint import ops as o
from nanlint.ops import Fn, Framework, fn

PREFIXES = ("keras.ops.", "tensorflow.keras.ops.")
FUNCTIONS: dict[str, Fn] = {}


def kops(paths: str, f: Fn) -> None:
    for path in paths.split():
        for prefix in PREFIXES:
            FUNCTIONS[prefix + path] = f


kops("log", fn(o.LOG))
kops("log1p", fn(o.LOG1P))
kops("exp", fn(o.EXP))
kops("sqrt", fn(o.SQRT))
kops("rsqrt", fn(o.RSQRT))
kops("square", fn(o.SQUARE))
kops("abs absolute", fn(o.ABS))
kops("negative", fn(o.NEGATIVE))
kops("power", fn(o.POW, "x1:x x2:y"))
kops("reciprocal", fn(o.RECIPROCAL))
kops("divide true_divide", fn(o.DIVIDE, "x1:x x2:y"))
kops("divide_no_nan", fn(o.DIVIDE_NO_NAN, "x1:x x2:y"))
kops("multiply", fn(o.MULTIPLY, "x1:x x2:y"))
kops("add", fn(o.ADD, "x1:x x2:y"))
kops("subtract", fn(o.SUBTRACT, "x1:x x2:y"))
kops("maximum", fn(o.MAXIMUM, "x1:x x2:y"))
kops("minimum", fn(o.MINIMUM, "x1:x x2:y"))
kops("clip", fn(o.CLIP, "x x_min:lo x_max:hi"))
kops("arccos", fn(o.ACOS))
kops("arcsin", fn(o.ASIN))
kops("isfinite", fn(o.IS_FINITE))
kops("isnan", fn(o.IS_NAN))
kops("stop_gradient", fn(o.STOP_GRADIENT, "variable:x"))
kops("nan_to_num", fn(o.NAN_TO_NUM, "x nan:value posinf neginf"))
kops("where", fn(o.WHERE, "condition:cond x1:x x2:y"))
kops("sum", fn(o.SUM, "x axis keepdims"))
kops("mean", fn(o.MEAN, "x axis keepdims"))
kops("norm", fn(o.NORM, "x ord axis keepdims"))
kops("logaddexp", fn(o.LOGADDEXP, "x1:x x2:y"))
kops("softmax", fn(o.SOFTMAX, "x axis"))
kops("log_softmax", fn(o.LOG_SOFTMAX, "x axis"))
kops("sigmoid", fn(o.SIGMOID))
kops("log_sigmoid", fn(o.LOG_SIGMOID))
kops("softplus", fn(o.SOFTPLUS))
kops("logsumexp", fn(o.LOGSUMEXP, "x axis keepdims"))
kops("matmul", fn(o.MATMUL, "x1:x x2:y"))
kops("dot vdot inner", fn(o.DOT, "x1:x x2:y"))
kops("tensordot", fn(o.TENSORDOT, "x1:x x2:y axes"))
kops("einsum", fn(o.EINSUM, "subscripts", varargs=True))
for _path in ("keras.losses.", "tensorflow.keras.losses."):
    FUNCTIONS[_path + "cosine_similarity"] = fn(o.COSINE_SIMILARITY, "y_true:x y_pred:y axis")
kops("normalize", fn(o.L2_NORMALIZE, "x axis order epsilon:eps"))
kops("categorical_crossentropy", fn(o.CROSS_ENTROPY, "target:labels output:x from_logits axis"))
kops("binary_crossentropy", fn(o.BINARY_CROSS_ENTROPY, "target:labels output:x from_logits"))

for _path in ("keras.activations.", "tensorflow.keras.activations."):
    FUNCTIONS[_path + "softmax"] = fn(o.SOFTMAX, "x axis")
    FUNCTIONS[_path + "sigmoid"] = fn(o.SIGMOID)
    FUNCTIONS[_path + "log_softmax"] = fn(o.LOG_SOFTMAX, "x axis")
    FUNCTIONS[_path + "softplus"] = fn(o.SOFTPLUS)

# Keras 2 multi-backend ``keras.backend`` (same API as ``tf.keras.backend``).
for _name, _f in {
    "log": fn(o.LOG), "exp": fn(o.EXP), "sqrt": fn(o.SQRT), "square": fn(o.SQUARE),
    "softmax": fn(o.SOFTMAX, "x axis"), "sigmoid": fn(o.SIGMOID), "softplus": fn(o.SOFTPLUS),
    "sum": fn(o.SUM, "x axis keepdims"), "mean": fn(o.MEAN, "x axis keepdims"),
    "clip": fn(o.CLIP, "x min_value:lo max_value:hi"), "maximum": fn(o.MAXIMUM, "x y"),
    "logsumexp": fn(o.LOGSUMEXP, "x axis keepdims"),
}.items():
    FUNCTIONS["keras.backend." + _name] = _f

_optimizer = fn(o.OPTIMIZER, "learning_rate:lr", varargs=True)
_adam = fn(o.ADAM_OPTIMIZER, "learning_rate:lr beta_1 beta_2 epsilon", varargs=True)
for _ns in ("keras.optimizers.", "keras.optimizers.legacy."):
    for _name in ("SGD", "RMSprop", "Adagrad", "Adadelta", "Ftrl", "Lion", "Adafactor"):
        FUNCTIONS[_ns + _name] = _optimizer
    for _name in ("Adam", "AdamW", "Adamax", "Nadam"):
        FUNCTIONS[_ns + _name] = _adam


def _ops(name: str) -> tuple[str, ...]:
    return tuple(prefix + name for prefix in PREFIXES)


FRAMEWORK = Framework(
    name="keras",
    display="Keras 3",
    roots=("keras",),
    functions=FUNCTIONS,
    targets={
        o.LOG_SOFTMAX: _ops("log_softmax"),
        o.LOG_SIGMOID: _ops("log_sigmoid"),
        o.SOFTPLUS: _ops("softplus"),
        o.LOGSUMEXP: _ops("logsumexp"),
        o.LOGADDEXP: _ops("logaddexp"),
        o.SOFTMAX: _ops("softmax"),
        o.WHERE: _ops("where"),
        o.SQRT: _ops("sqrt"),
        o.SQUARE: _ops("square"),
        o.EXP: _ops("exp"),
        o.LOG: _ops("log"),
        o.CLIP: _ops("clip"),
        o.SUM: _ops("sum"),
        o.MAXIMUM: _ops("maximum"),
        o.DIVIDE_NO_NAN: _ops("divide_no_nan"),
        o.L2_NORMALIZE: _ops("normalize"),
        o.CROSS_ENTROPY: _ops("categorical_crossentropy"),
        o.BINARY_CROSS_ENTROPY: _ops("binary_crossentropy"),
    },
    import_aliases={"keras.ops": "ops"},
    # as measured with the TensorFlow backend (the one the fixtures run)
    facts=frozenset({o.FACT_NORM_GRAD_NAN_AT_ZERO}),
)
