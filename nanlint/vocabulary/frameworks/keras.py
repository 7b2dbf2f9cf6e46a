"""Keras 3 ``keras.ops`` (also reached as ``tf.keras.ops``), ``keras.activations``,
``keras.random``, Keras 2's ``keras.backend``, the Keras optimizers, and the model
and layer classes (``keras.Sequential``, ``layers.Dense``; also as ``tf.keras``)."""

from __future__ import annotations

from nanlint.vocabulary import ops as o
from nanlint.vocabulary.ops import Fn, Framework, fn

PREFIXES = ("keras.ops.", "tensorflow.keras.ops.")
FUNCTIONS: dict[str, Fn] = {}


def kops(paths: str, f: Fn) -> None:
    for path in paths.split():
        for prefix in PREFIXES:
            FUNCTIONS[prefix + path] = f


kops("log", fn(o.LOG))
kops("log1p", fn(o.LOG1P))
kops("log2", fn(o.LOG2))
kops("log10", fn(o.LOG10))
kops("arctanh", fn(o.ATANH))
kops("tanh", fn(o.TANH))
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
kops("cond", fn(o.COND, "pred:cond true_fn:then false_fn:orelse"))
kops("any", fn(o.ANY, "x axis keepdims"))
kops("sum", fn(o.SUM, "x axis keepdims"))
kops("mean", fn(o.MEAN, "x axis keepdims"))
kops("prod", fn(o.PROD, "x axis keepdims"))
kops("std", fn(o.STD, "x axis keepdims"))
kops("var", fn(o.VARIANCE, "x axis keepdims"))
kops("cumprod", fn(o.PROD, "x axis"))
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
kops("floor", fn(o.FLOOR))
kops("round", fn(o.ROUND, "x decimals"))
kops("relu relu6", fn(o.RELU))
kops("max amax", fn(o.REDUCE_MAX, "x axis keepdims initial"))
kops("min amin", fn(o.REDUCE_MIN, "x axis keepdims initial"))
kops("argmax", fn(o.ARGMAX, "x axis keepdims"))
kops("argmin", fn(o.ARGMIN, "x axis keepdims"))
# --- layout and dtype (SHAPE): x is the tensor, or the sequence for concatenate/stack -------
kops("reshape", fn(o.SHAPE, "x newshape"))
kops("squeeze", fn(o.SHAPE, "x axis"))
kops("expand_dims", fn(o.SHAPE, "x axis"))
kops("transpose", fn(o.SHAPE, "x axes"))
kops("tile", fn(o.SHAPE, "x repeats"))
kops("repeat", fn(o.SHAPE, "x repeats axis"))
kops("take", fn(o.SHAPE, "x indices axis"))
kops("take_along_axis", fn(o.SHAPE, "x indices axis"))
kops("concatenate", fn(o.SHAPE, "xs:x axis"))
kops("stack", fn(o.SHAPE, "x axis"))
kops("ravel", fn(o.SHAPE))
kops("cast", fn(o.SHAPE, "x dtype:dtype"))
# --- comparisons and logic ------------------------------------------------------------
kops("equal", fn(o.EQUAL, "x1:x x2:y"))
kops("not_equal", fn(o.NOT_EQUAL, "x1:x x2:y"))
kops("greater", fn(o.GREATER, "x1:x x2:y"))
kops("greater_equal", fn(o.GREATER_EQUAL, "x1:x x2:y"))
kops("less", fn(o.LESS, "x1:x x2:y"))
kops("less_equal", fn(o.LESS_EQUAL, "x1:x x2:y"))
kops("logical_and", fn(o.LOGICAL_AND, "x1:x x2:y"))
kops("logical_or", fn(o.LOGICAL_OR, "x1:x x2:y"))
kops("logical_not", fn(o.LOGICAL_NOT))
kops("categorical_crossentropy", fn(o.CROSS_ENTROPY, "target:labels output:x from_logits axis"))
kops("binary_crossentropy", fn(o.BINARY_CROSS_ENTROPY, "target:labels output:x from_logits"))

for _path in ("keras.activations.", "tensorflow.keras.activations."):
    FUNCTIONS[_path + "softmax"] = fn(o.SOFTMAX, "x axis")
    FUNCTIONS[_path + "sigmoid"] = fn(o.SIGMOID)
    FUNCTIONS[_path + "log_softmax"] = fn(o.LOG_SOFTMAX, "x axis")
    FUNCTIONS[_path + "softplus"] = fn(o.SOFTPLUS)

for _path in ("keras.random.", "tensorflow.keras.random."):
    FUNCTIONS[_path + "uniform"] = fn(o.RANDOM_UNIFORM, "shape minval:lo maxval:hi dtype:dtype seed")
    FUNCTIONS[_path + "dropout"] = fn(o.DROPOUT, "inputs:x rate noise_shape seed")

# --- models and layers: Keras 3 and Keras 2 (tf.keras, tf.compat.v1.keras) ----------------
# keras.Model is both the functional constructor and the base class of subclassed models.
_KERAS = ("keras.", "tensorflow.keras.", "tensorflow.compat.v1.keras.", "tensorflow.compat.v2.keras.")
_sequential = fn(o.SEQUENTIAL, "layers trainable name")
_model = fn(o.FUNCTIONAL_MODEL, "inputs outputs name", varargs=True)
_layer = fn(o.MODULE_BASE, "trainable name dtype", varargs=True)
# Dense(units, activation, ...); Conv*D(filters, kernel_size, strides, padding, data_format,
# dilation_rate, groups, activation, ...)
_dense = fn(o.DENSE_LAYER, "units activation", varargs=True)
_dropout = fn(o.DROPOUT_LAYER, "rate", varargs=True)
_conv = fn(o.DENSE_LAYER, "filters kernel_size strides padding data_format dilation_rate groups activation",
           varargs=True)
for _ns in _KERAS:
    for _path, _f in {
        "Sequential": _sequential, "models.Sequential": _sequential,
        "Model": _model, "models.Model": _model,
        "Layer": _layer, "layers.Layer": _layer,
        "layers.Dense": _dense,
        "layers.Conv1D": _conv, "layers.Conv2D": _conv, "layers.Conv3D": _conv,
        "layers.Softmax": fn(o.SOFTMAX_LAYER, "axis", varargs=True),
        "layers.Activation": fn(o.ACTIVATION_LAYER, "activation", varargs=True),
        # Dropout(rate, noise_shape, seed), SpatialDropout*D(rate, ...): not AlphaDropout or
        # GaussianDropout, whose dropped values are not 0
        "layers.Dropout": _dropout, "layers.SpatialDropout1D": _dropout,
        "layers.SpatialDropout2D": _dropout, "layers.SpatialDropout3D": _dropout,
    }.items():
        FUNCTIONS[_ns + _path] = _f

# Keras 2 multi-backend ``keras.backend`` (same API as ``tf.keras.backend``).
for _name, _f in {
    "log": fn(o.LOG), "exp": fn(o.EXP), "sqrt": fn(o.SQRT), "square": fn(o.SQUARE),
    "softmax": fn(o.SOFTMAX, "x axis"), "sigmoid": fn(o.SIGMOID), "softplus": fn(o.SOFTPLUS),
    "sum": fn(o.SUM, "x axis keepdims"), "mean": fn(o.MEAN, "x axis keepdims"),
    "clip": fn(o.CLIP, "x min_value:lo max_value:hi"), "maximum": fn(o.MAXIMUM, "x y"),
    "logsumexp": fn(o.LOGSUMEXP, "x axis keepdims"),
    "round": fn(o.ROUND), "max": fn(o.REDUCE_MAX, "x axis keepdims"), "min": fn(o.REDUCE_MIN, "x axis keepdims"),
    "equal": fn(o.EQUAL, "x y"), "not_equal": fn(o.NOT_EQUAL, "x y"), "greater": fn(o.GREATER, "x y"),
    "greater_equal": fn(o.GREATER_EQUAL, "x y"), "less": fn(o.LESS, "x y"), "less_equal": fn(o.LESS_EQUAL, "x y"),
    "reshape": fn(o.SHAPE, "x shape"), "squeeze": fn(o.SHAPE, "x axis"), "expand_dims": fn(o.SHAPE, "x axis"),
    "flatten": fn(o.SHAPE), "transpose": fn(o.SHAPE), "permute_dimensions": fn(o.SHAPE, "x pattern"),
    "concatenate": fn(o.SHAPE, "tensors:x axis"), "stack": fn(o.SHAPE, "x axis"),
    "cast": fn(o.SHAPE, "x dtype:dtype"), "dropout": fn(o.DROPOUT, "x level:rate noise_shape seed"),
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
        o.LOG1P: _ops("log1p"),
        o.CLIP: _ops("clip"),
        o.SUM: _ops("sum"),
        o.VARIANCE: _ops("var"),
        o.MAXIMUM: _ops("maximum"),
        o.DIVIDE_NO_NAN: _ops("divide_no_nan"),
        o.L2_NORMALIZE: _ops("normalize"),
        o.CROSS_ENTROPY: _ops("categorical_crossentropy"),
        o.BINARY_CROSS_ENTROPY: _ops("binary_crossentropy"),
    },
    import_aliases={"keras.ops": "ops"},
    # as measured with the TensorFlow backend (the one the fixtures run)
    facts=frozenset({o.FACT_NORM_GRAD_NAN_AT_ZERO, o.FACT_STD_GRAD_NAN_AT_CONSTANT}),
)
