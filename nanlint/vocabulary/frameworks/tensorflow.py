"""TensorFlow: ``tf``, ``tf.math``, ``tf.nn``, TF1 spellings (``tf.log``),
``tf.compat.v1``/``v2`` and ``tf.keras.backend``."""

from __future__ import annotations

from nanlint.vocabulary import ops as o
from nanlint.vocabulary.ops import Fn, Framework, fn

PREFIXES = ("tensorflow.", "tensorflow.compat.v1.", "tensorflow.compat.v2.")
FUNCTIONS: dict[str, Fn] = {}
# methods of objects TensorFlow hands out, read on any receiver in a file that imports it: a replica
# context's ``all_reduce(reduce_op, value)`` (``tf.distribute.get_replica_context()``)
METHODS: dict[str, Fn] = {"all_reduce": fn(o.ALL_REDUCE, "reduce_op value options")}


def tf(paths: str, f: Fn) -> None:
    """Register ``f`` under every path in ``paths`` and every tf prefix."""
    for path in paths.split():
        for prefix in PREFIXES:
            FUNCTIONS[prefix + path] = f


def keras_backend(paths: str, f: Fn) -> None:
    for path in paths.split():
        FUNCTIONS["tensorflow.keras.backend." + path] = f


unary = "x name"
tf("math.log log", fn(o.LOG, unary))
tf("math.log1p log1p", fn(o.LOG1P, unary))
tf("math.xlogy", fn(o.XLOGY, "x y name"))
tf("math.exp exp", fn(o.EXP, unary))
tf("math.sqrt sqrt", fn(o.SQRT, unary))
tf("math.rsqrt rsqrt", fn(o.RSQRT, unary))
tf("math.square square", fn(o.SQUARE, unary))
tf("math.abs abs", fn(o.ABS, unary))
tf("math.negative negative", fn(o.NEGATIVE, unary))
tf("math.pow pow", fn(o.POW, "x y name"))
tf("math.reciprocal reciprocal", fn(o.RECIPROCAL, unary))
tf("math.divide divide math.truediv truediv div realdiv", fn(o.DIVIDE, "x y name"))
tf("math.divide_no_nan div_no_nan", fn(o.DIVIDE_NO_NAN, "x y name"))
tf("math.multiply multiply", fn(o.MULTIPLY, "x y name"))
tf("math.add add", fn(o.ADD, "x y name"))
tf("math.subtract subtract", fn(o.SUBTRACT, "x y name"))
tf("math.maximum maximum", fn(o.MAXIMUM, "x y name"))
tf("math.minimum minimum", fn(o.MINIMUM, "x y name"))
tf("clip_by_value", fn(o.CLIP, "t:x clip_value_min:lo clip_value_max:hi name"))
tf("clip_by_global_norm", fn(o.CLIP_BY_GLOBAL_NORM, "t_list:x clip_norm:hi use_norm name"))
tf("math.acos acos", fn(o.ACOS, unary))
tf("math.lgamma lgamma", fn(o.LGAMMA, unary))
tf("math.digamma digamma", fn(o.DIGAMMA, unary))
tf("math.atanh atanh", fn(o.ATANH, unary))
tf("math.tanh tanh nn.tanh keras.activations.tanh", fn(o.TANH, unary))
tf("math.asin asin", fn(o.ASIN, unary))
tf("math.is_finite is_finite", fn(o.IS_FINITE, unary))
tf("math.is_nan is_nan", fn(o.IS_NAN, unary))
tf("stop_gradient", fn(o.STOP_GRADIENT, "input:x name"))
tf("math.floor floor", fn(o.FLOOR, unary))
tf("math.round round", fn(o.ROUND, unary))
tf("nn.relu nn.relu6", fn(o.RELU, "features:x name"))
tf("where where_v2", fn(o.WHERE, "condition:cond x y:y name"))
tf("cond", fn(o.COND, "pred:cond true_fn:then false_fn:orelse strict name fn1:then fn2:orelse"))
tf("math.reduce_any reduce_any", fn(o.ANY, "input_tensor:x axis keepdims name",
                                    kwonly="reduction_indices:axis keep_dims:keepdims"))
tf("nn.softmax math.softmax", fn(o.SOFTMAX, "logits:x axis name", kwonly="dim:axis"))
tf("nn.log_softmax math.log_softmax", fn(o.LOG_SOFTMAX, "logits:x axis name", kwonly="dim:axis"))
tf("math.sigmoid sigmoid nn.sigmoid", fn(o.SIGMOID, unary))
tf("math.log_sigmoid log_sigmoid", fn(o.LOG_SIGMOID, unary))
tf("math.softplus nn.softplus", fn(o.SOFTPLUS, "features:x name"))
tf("math.reduce_logsumexp reduce_logsumexp", fn(o.LOGSUMEXP, "input_tensor:x axis keepdims name",
                                                 kwonly="reduction_indices:axis keep_dims:keepdims"))
tf("math.reduce_sum reduce_sum", fn(o.SUM, "input_tensor:x axis keepdims name",
                                    kwonly="reduction_indices:axis keep_dims:keepdims"))
tf("math.reduce_prod reduce_prod", fn(o.PROD, "input_tensor:x axis keepdims name",
                                      kwonly="reduction_indices:axis keep_dims:keepdims"))
tf("math.cumprod cumprod", fn(o.PROD, "x axis exclusive reverse name"))
tf("math.reduce_mean reduce_mean", fn(o.MEAN, "input_tensor:x axis keepdims name",
                                      kwonly="reduction_indices:axis keep_dims:keepdims"))
tf("math.reduce_std", fn(o.STD, "input_tensor:x axis keepdims name"))
tf("math.reduce_variance", fn(o.VARIANCE, "input_tensor:x axis keepdims name"))
tf("math.reduce_max reduce_max", fn(o.REDUCE_MAX, "input_tensor:x axis keepdims name",
                                    kwonly="reduction_indices:axis keep_dims:keepdims"))
tf("math.reduce_min reduce_min", fn(o.REDUCE_MIN, "input_tensor:x axis keepdims name",
                                    kwonly="reduction_indices:axis keep_dims:keepdims"))
tf("math.argmax argmax", fn(o.ARGMAX, "input:x axis output_type name"))
tf("math.argmin argmin", fn(o.ARGMIN, "input:x axis output_type name"))
tf("norm linalg.norm", fn(o.NORM, "tensor:x ord axis keepdims name", kwonly="keep_dims:keepdims"))
tf("linalg.matmul matmul", fn(o.MATMUL, "a:x b:y", varargs=True))
tf("tensordot linalg.tensordot", fn(o.TENSORDOT, "a:x b:y axes name"))
tf("einsum linalg.einsum", fn(o.EINSUM, "equation", varargs=True))
FUNCTIONS["tensorflow.keras.losses.cosine_similarity"] = fn(o.COSINE_SIMILARITY, "y_true:x y_pred:y axis")
tf("math.l2_normalize nn.l2_normalize linalg.l2_normalize",
   fn(o.L2_NORMALIZE, "x axis epsilon:eps name", kwonly="dim:axis"))
# v1 puts a ``_sentinel`` first: only keyword use is meaningful, and fixes write keywords.
tf("nn.softmax_cross_entropy_with_logits nn.softmax_cross_entropy_with_logits_v2",
   fn(o.SOFTMAX_CROSS_ENTROPY, "labels logits axis name", kwonly="dim:axis _sentinel"))
tf("nn.sigmoid_cross_entropy_with_logits",
   fn(o.SIGMOID_CROSS_ENTROPY, "labels logits name", kwonly="_sentinel"))

# --- layout and dtype (SHAPE): x is the tensor, or the list for concat/stack ----------------
# (positional orders beyond x differ between v1 and v2 in places; those carry no role)
tf("reshape", fn(o.SHAPE, "tensor:x shape name"))
tf("squeeze", fn(o.SHAPE, "input:x axis name", kwonly="squeeze_dims:axis"))
tf("expand_dims", fn(o.SHAPE, "input:x axis name", kwonly="dim:axis"))
tf("transpose", fn(o.SHAPE, "a:x perm conjugate name"))
tf("tile", fn(o.SHAPE, "input:x multiples name"))
tf("gather", fn(o.SHAPE, "params:x indices validate_indices axis batch_dims name"))
tf("gather_nd", fn(o.SHAPE, "params:x indices batch_dims name"))
tf("boolean_mask", fn(o.SHAPE, "tensor:x mask axis name"))
tf("concat", fn(o.SHAPE, "values:x axis name"))
tf("stack", fn(o.SHAPE, "values:x axis name"))
tf("cast dtypes.cast", fn(o.SHAPE, "x dtype:dtype name"))
# TF1's casts by name (tf.to_float(mask), removed in TF2 but everywhere in TF1-era training code)
tf("to_float to_double to_int32 to_int64 to_bfloat16", fn(o.SHAPE, "x name"))
tf("identity", fn(o.SHAPE, "input:x name"))
tf("Print", fn(o.SHAPE, "input_:x data message first_n summarize name"))  # TF1: returns its input
tf("debugging.check_numerics check_numerics", fn(o.SHAPE, "tensor:x message name"))

# --- comparisons and logic ------------------------------------------------------------
tf("math.equal equal", fn(o.EQUAL, "x y name"))
tf("math.not_equal not_equal", fn(o.NOT_EQUAL, "x y name"))
tf("math.greater greater", fn(o.GREATER, "x y name"))
tf("math.greater_equal greater_equal", fn(o.GREATER_EQUAL, "x y name"))
tf("math.less less", fn(o.LESS, "x y name"))
tf("math.less_equal less_equal", fn(o.LESS_EQUAL, "x y name"))
tf("math.logical_and logical_and", fn(o.LOGICAL_AND, "x y name"))
tf("math.logical_or logical_or", fn(o.LOGICAL_OR, "x y name"))
tf("math.logical_not logical_not", fn(o.LOGICAL_NOT, unary))

# --- random --------------------------------------------------------------------------------
tf("random.uniform random_uniform", fn(o.RANDOM_UNIFORM, "shape minval:lo maxval:hi dtype:dtype seed name"))
tf("random.stateless_uniform", fn(o.RANDOM_UNIFORM, "shape seed minval:lo maxval:hi dtype:dtype name",
                                  kwonly="alg"))

# dropout: tf.nn.dropout(x, rate) in TF2; TF1's tf.nn.dropout(x, keep_prob) (kept as
# tf.compat.v1.nn.dropout, which also takes rate=).  A TF1 program resolves to the TF2 name:
# its keep_prob= keyword is read, its positional keep_prob binds as rate (a literal 0 or 1
# there is a dropout that drops nothing, or an error, in both versions)
for _prefix in ("tensorflow.", "tensorflow.compat.v2."):
    FUNCTIONS[_prefix + "nn.dropout"] = fn(o.DROPOUT, "x rate noise_shape seed name", kwonly="keep_prob")
FUNCTIONS["tensorflow.compat.v1.nn.dropout"] = fn(o.DROPOUT, "x keep_prob noise_shape seed name rate")
tf("nn.experimental.stateless_dropout", fn(o.DROPOUT, "x rate seed rng_alg noise_shape name"))

keras_backend("log", fn(o.LOG))
keras_backend("exp", fn(o.EXP))
keras_backend("sqrt", fn(o.SQRT))
keras_backend("square", fn(o.SQUARE))
keras_backend("abs", fn(o.ABS))
keras_backend("pow", fn(o.POW, "x a:y"))
keras_backend("maximum", fn(o.MAXIMUM, "x y"))
keras_backend("minimum", fn(o.MINIMUM, "x y"))
keras_backend("clip", fn(o.CLIP, "x min_value:lo max_value:hi"))
keras_backend("softmax", fn(o.SOFTMAX, "x axis"))
keras_backend("sigmoid", fn(o.SIGMOID))
keras_backend("softplus", fn(o.SOFTPLUS))
keras_backend("logsumexp", fn(o.LOGSUMEXP, "x axis keepdims"))
keras_backend("sum", fn(o.SUM, "x axis keepdims"))
keras_backend("mean", fn(o.MEAN, "x axis keepdims"))
keras_backend("prod", fn(o.PROD, "x axis keepdims"))
keras_backend("std", fn(o.STD, "x axis keepdims"))
keras_backend("var", fn(o.VARIANCE, "x axis keepdims"))
keras_backend("switch", fn(o.WHERE, "condition:cond then_expression:x else_expression:y"))
keras_backend("categorical_crossentropy",
              fn(o.CROSS_ENTROPY, "target:labels output:x from_logits axis"))
keras_backend("binary_crossentropy", fn(o.BINARY_CROSS_ENTROPY, "target:labels output:x from_logits"))
# (K.relu(x, alpha) may be leaky: not RELU)
keras_backend("round", fn(o.ROUND))
keras_backend("dropout", fn(o.DROPOUT, "x level:rate noise_shape seed"))
keras_backend("max", fn(o.REDUCE_MAX, "x axis keepdims"))
keras_backend("min", fn(o.REDUCE_MIN, "x axis keepdims"))
keras_backend("equal", fn(o.EQUAL, "x y"))
keras_backend("not_equal", fn(o.NOT_EQUAL, "x y"))
keras_backend("greater", fn(o.GREATER, "x y"))
keras_backend("greater_equal", fn(o.GREATER_EQUAL, "x y"))
keras_backend("less", fn(o.LESS, "x y"))
keras_backend("less_equal", fn(o.LESS_EQUAL, "x y"))
keras_backend("reshape", fn(o.SHAPE, "x shape"))
keras_backend("squeeze", fn(o.SHAPE, "x axis"))
keras_backend("expand_dims", fn(o.SHAPE, "x axis"))
keras_backend("flatten batch_flatten", fn(o.SHAPE))
keras_backend("transpose", fn(o.SHAPE))
keras_backend("permute_dimensions", fn(o.SHAPE, "x pattern"))
keras_backend("tile", fn(o.SHAPE, "x n"))
keras_backend("repeat_elements", fn(o.SHAPE, "x rep axis"))
keras_backend("gather", fn(o.SHAPE, "reference:x indices"))
keras_backend("concatenate", fn(o.SHAPE, "tensors:x axis"))
keras_backend("stack", fn(o.SHAPE, "x axis"))
keras_backend("cast", fn(o.SHAPE, "x dtype:dtype"))
keras_backend("identity", fn(o.SHAPE, "x name"))
keras_backend("random_uniform", fn(o.RANDOM_UNIFORM, "shape minval:lo maxval:hi dtype:dtype seed"))

_optimizer = fn(o.OPTIMIZER, "learning_rate:lr", varargs=True)
_adam = fn(o.ADAM_OPTIMIZER, "learning_rate:lr beta_1 beta_2 epsilon", varargs=True)
for _ns in ("tensorflow.keras.optimizers.", "tensorflow.keras.optimizers.legacy.",
            "tensorflow.keras.optimizers.experimental.", "tensorflow.optimizers."):
    for _name in ("SGD", "RMSprop", "Adagrad", "Adadelta", "Ftrl", "Lion", "Adafactor"):
        FUNCTIONS[_ns + _name] = _optimizer
    for _name in ("Adam", "AdamW", "Adamax", "Nadam"):
        FUNCTIONS[_ns + _name] = _adam
tf("Module", fn(o.MODULE_BASE, "name"))  # tf.Module: the base of TF2 models
tf("train.AdamOptimizer", fn(o.ADAM_OPTIMIZER, "learning_rate:lr beta1 beta2 epsilon", varargs=True))


def _all_prefixes(*paths: str) -> tuple[str, ...]:
    return tuple(prefix + path for path in paths for prefix in PREFIXES)


FRAMEWORK = Framework(
    name="tensorflow",
    display="TensorFlow",
    roots=("tensorflow",),
    functions=FUNCTIONS,
    methods=METHODS,
    targets={
        o.LOG_SOFTMAX: _all_prefixes("nn.log_softmax", "math.log_softmax"),
        o.LOG_SIGMOID: _all_prefixes("math.log_sigmoid"),
        o.SOFTPLUS: _all_prefixes("math.softplus", "nn.softplus"),
        o.LOGSUMEXP: _all_prefixes("math.reduce_logsumexp", "reduce_logsumexp"),
        o.SOFTMAX: _all_prefixes("nn.softmax", "math.softmax") + ("tensorflow.keras.backend.softmax",),
        # tf.compat.v1.where does not broadcast (x and y must have one shape): where_v2 does
        o.WHERE: ("tensorflow.where", "tensorflow.compat.v2.where", "tensorflow.compat.v1.where_v2"),
        o.SQRT: _all_prefixes("math.sqrt", "sqrt"),
        o.SQUARE: _all_prefixes("math.square", "square"),
        o.EXP: _all_prefixes("math.exp", "exp"),
        o.LOG: _all_prefixes("math.log", "log"),
        o.XLOGY: _all_prefixes("math.xlogy"),
        o.LOG1P: _all_prefixes("math.log1p") + ("tensorflow.compat.v1.log1p",),  # no tf.log1p in TF2
        o.CLIP: _all_prefixes("clip_by_value"),
        o.SUM: _all_prefixes("math.reduce_sum", "reduce_sum"),
        o.VARIANCE: _all_prefixes("math.reduce_variance"),
        o.MAXIMUM: _all_prefixes("math.maximum", "maximum"),
        o.L2_NORMALIZE: _all_prefixes("math.l2_normalize", "nn.l2_normalize"),
        o.DIVIDE_NO_NAN: _all_prefixes("math.divide_no_nan"),
        o.SOFTMAX_CROSS_ENTROPY: ("tensorflow.nn.softmax_cross_entropy_with_logits",
                                  "tensorflow.compat.v2.nn.softmax_cross_entropy_with_logits",
                                  "tensorflow.compat.v1.nn.softmax_cross_entropy_with_logits_v2"),
        o.SIGMOID_CROSS_ENTROPY: _all_prefixes("nn.sigmoid_cross_entropy_with_logits"),
        o.CLIP_BY_GLOBAL_NORM: _all_prefixes("clip_by_global_norm"),
    },
    import_aliases={"tensorflow": "tf"},
    facts=frozenset({o.FACT_NORM_GRAD_NAN_AT_ZERO, o.FACT_STD_GRAD_NAN_AT_CONSTANT}),
)
