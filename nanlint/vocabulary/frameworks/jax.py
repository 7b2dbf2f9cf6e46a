"""JAX: ``jax.numpy``, ``jax.nn``, ``jax.scipy.special``, ``jax.lax``, ``jax.random``,
optax optimizers, and the model classes of flax.linen and haiku."""

from __future__ import annotations

from nanlint.vocabulary import ops as o
from nanlint.vocabulary.ops import Fn, Framework, fn

FUNCTIONS: dict[str, Fn] = {}
METHODS: dict[str, Fn] = {}


def jnp(paths: str, f: Fn, lax: bool = False) -> None:
    for path in paths.split():
        FUNCTIONS["jax.numpy." + path] = f
        if lax:
            FUNCTIONS["jax.lax." + path] = Fn(f.op, f.params[:1])


jnp("log", fn(o.LOG), lax=True)
jnp("log1p", fn(o.LOG1P), lax=True)
jnp("log2", fn(o.LOG2))
jnp("log10", fn(o.LOG10))
jnp("arctanh atanh", fn(o.ATANH))
jnp("tanh", fn(o.TANH))
FUNCTIONS["jax.nn.tanh"] = FUNCTIONS["jax.lax.tanh"] = fn(o.TANH)
FUNCTIONS["jax.lax.atanh"] = fn(o.ATANH)
FUNCTIONS["jax.lax.lgamma"] = fn(o.LGAMMA)
FUNCTIONS["jax.lax.digamma"] = fn(o.DIGAMMA)
FUNCTIONS["jax.scipy.special.gammaln"] = fn(o.LGAMMA)
FUNCTIONS["jax.scipy.special.xlogy"] = fn(o.XLOGY, "x y")
FUNCTIONS["jax.scipy.special.digamma"] = fn(o.DIGAMMA)
jnp("exp", fn(o.EXP), lax=True)
jnp("sqrt", fn(o.SQRT), lax=True)
FUNCTIONS["jax.lax.rsqrt"] = fn(o.RSQRT)
jnp("square", fn(o.SQUARE), lax=True)
jnp("abs absolute", fn(o.ABS), lax=True)
jnp("negative", fn(o.NEGATIVE))
jnp("power pow", fn(o.POW, "x1:x x2:y"))
jnp("reciprocal", fn(o.RECIPROCAL))
jnp("divide true_divide", fn(o.DIVIDE, "x1:x x2:y"))
jnp("multiply", fn(o.MULTIPLY, "x1:x x2:y"))
jnp("add", fn(o.ADD, "x1:x x2:y"))
jnp("subtract", fn(o.SUBTRACT, "x1:x x2:y"))
jnp("maximum", fn(o.MAXIMUM, "x1:x x2:y"))
jnp("minimum", fn(o.MINIMUM, "x1:x x2:y"))
jnp("clip", fn(o.CLIP, "arr:x min:lo max:hi", kwonly="a:x a_min:lo a_max:hi x:x"))
jnp("arccos acos", fn(o.ACOS), lax=False)
jnp("arcsin asin", fn(o.ASIN), lax=False)
FUNCTIONS["jax.lax.acos"] = fn(o.ACOS)
FUNCTIONS["jax.lax.asin"] = fn(o.ASIN)
jnp("isfinite", fn(o.IS_FINITE))
jnp("isnan", fn(o.IS_NAN))
FUNCTIONS["jax.lax.stop_gradient"] = fn(o.STOP_GRADIENT)
jnp("nan_to_num", fn(o.NAN_TO_NUM, "x copy nan:value posinf neginf"))
jnp("finfo", fn(o.FINFO, "dtype:x"))
jnp("where", fn(o.WHERE, "condition:cond x y", kwonly="size fill_value"))
jnp("any", fn(o.ANY, "a:x axis out keepdims", kwonly="where"))
FUNCTIONS["jax.lax.cond"] = fn(o.COND, "pred:cond true_fun:then false_fun:orelse", varargs=True)
jnp("sum", fn(o.SUM, "a:x axis dtype out keepdims", kwonly="initial where promote_integers"))
jnp("mean", fn(o.MEAN, "a:x axis dtype out keepdims", kwonly="where"))
jnp("std", fn(o.STD, "a:x axis dtype out ddof keepdims", kwonly="where correction"))
jnp("var", fn(o.VARIANCE, "a:x axis dtype out ddof keepdims", kwonly="where correction"))
jnp("prod", fn(o.PROD, "a:x axis dtype out keepdims", kwonly="initial where promote_integers"))
jnp("cumprod", fn(o.PROD, "a:x axis dtype out"))
jnp("linalg.norm", fn(o.NORM, "x ord axis keepdims"))
jnp("matmul", fn(o.MATMUL, "a:x b:y", varargs=True))
jnp("dot vdot inner", fn(o.DOT, "a:x b:y", varargs=True))
jnp("tensordot", fn(o.TENSORDOT, "a:x b:y axes", varargs=True))
jnp("einsum", fn(o.EINSUM, "subscripts", varargs=True))
jnp("logaddexp", fn(o.LOGADDEXP, "x1:x x2:y"))
jnp("floor", fn(o.FLOOR), lax=True)
jnp("round around", fn(o.ROUND, "a:x decimals out"))
FUNCTIONS["jax.lax.round"] = fn(o.ROUND, "x rounding_method")
jnp("max amax", fn(o.REDUCE_MAX, "a:x axis out keepdims", kwonly="initial where"))
jnp("min amin", fn(o.REDUCE_MIN, "a:x axis out keepdims", kwonly="initial where"))
jnp("argmax", fn(o.ARGMAX, "a:x axis out", kwonly="keepdims"))
jnp("argmin", fn(o.ARGMIN, "a:x axis out", kwonly="keepdims"))
FUNCTIONS["jax.lax.reduce_max"] = fn(o.REDUCE_MAX, "operand:x axes:axis")
FUNCTIONS["jax.lax.reduce_min"] = fn(o.REDUCE_MIN, "operand:x axes:axis")

# --- layout and dtype (SHAPE): x is the array, or the sequence for concatenate/stack ---------
jnp("reshape", fn(o.SHAPE, "a:x shape order", kwonly="newshape copy"))
jnp("squeeze", fn(o.SHAPE, "a:x axis"))
jnp("expand_dims", fn(o.SHAPE, "a:x axis"))
jnp("transpose", fn(o.SHAPE, "a:x axes"))
jnp("tile", fn(o.SHAPE, "A:x reps"))
jnp("repeat", fn(o.SHAPE, "a:x repeats axis", kwonly="total_repeat_length"))
jnp("take", fn(o.SHAPE, "a:x indices axis out mode unique_indices indices_are_sorted fill_value"))
jnp("take_along_axis", fn(o.SHAPE, "arr:x indices axis mode fill_value"))
jnp("concatenate", fn(o.SHAPE, "arrays:x axis dtype"))
jnp("stack", fn(o.SHAPE, "arrays:x axis out dtype"))
jnp("ravel", fn(o.SHAPE, "a:x order"))
jnp("astype", fn(o.SHAPE, "x dtype:dtype", kwonly="copy device"))
METHODS["astype"] = fn(o.SHAPE, "dtype:dtype", kwonly="copy device")  # x.astype(jnp.float16)
FUNCTIONS["jax.lax.reshape"] = fn(o.SHAPE, "operand:x new_sizes dimensions")
FUNCTIONS["jax.lax.squeeze"] = fn(o.SHAPE, "array:x dimensions")
FUNCTIONS["jax.lax.expand_dims"] = fn(o.SHAPE, "array:x dimensions")
FUNCTIONS["jax.lax.transpose"] = fn(o.SHAPE, "operand:x permutation")
FUNCTIONS["jax.lax.concatenate"] = fn(o.SHAPE, "operands:x dimension")
FUNCTIONS["jax.lax.convert_element_type"] = fn(o.SHAPE, "operand:x new_dtype:dtype")
# (jax.lax.stop_gradient is STOP_GRADIENT, above)

# --- comparisons and logic ------------------------------------------------------------
for _names, _op in (("equal eq", o.EQUAL), ("not_equal ne", o.NOT_EQUAL), ("greater gt", o.GREATER),
                    ("greater_equal ge", o.GREATER_EQUAL), ("less lt", o.LESS), ("less_equal le", o.LESS_EQUAL)):
    numpy_name, lax_name = _names.split()
    jnp(numpy_name, fn(_op, "x1:x x2:y"))
    FUNCTIONS["jax.lax." + lax_name] = fn(_op, "x y")
jnp("logical_and", fn(o.LOGICAL_AND, "x1:x x2:y"))
jnp("logical_or", fn(o.LOGICAL_OR, "x1:x x2:y"))
jnp("logical_not", fn(o.LOGICAL_NOT))

FUNCTIONS["jax.nn.softmax"] = fn(o.SOFTMAX, "x axis where initial")
FUNCTIONS["jax.nn.log_softmax"] = fn(o.LOG_SOFTMAX, "x axis where initial")
FUNCTIONS["jax.nn.sigmoid"] = fn(o.SIGMOID)
FUNCTIONS["jax.scipy.special.expit"] = fn(o.SIGMOID)
FUNCTIONS["jax.nn.log_sigmoid"] = fn(o.LOG_SIGMOID)
FUNCTIONS["jax.nn.softplus"] = fn(o.SOFTPLUS)
FUNCTIONS["jax.nn.logsumexp"] = fn(o.LOGSUMEXP, "a:x axis b keepdims return_sign where")
FUNCTIONS["jax.scipy.special.logsumexp"] = fn(o.LOGSUMEXP, "a:x axis b keepdims return_sign where")
for _ns in ("jax.nn.", "flax.linen."):  # flax.linen re-exports jax.nn's activations
    FUNCTIONS[_ns + "relu"] = fn(o.RELU)
    FUNCTIONS[_ns + "relu6"] = fn(o.RELU)
FUNCTIONS["jax.random.uniform"] = fn(o.RANDOM_UNIFORM, "key shape dtype:dtype minval:lo maxval:hi")

# --- models: flax.linen and haiku ----------------------------------------------------------
FUNCTIONS["flax.linen.Module"] = fn(o.MODULE_BASE, "", varargs=True)
FUNCTIONS["haiku.Module"] = fn(o.MODULE_BASE, "name")
FUNCTIONS["flax.linen.Sequential"] = fn(o.SEQUENTIAL, "layers", varargs=True)
FUNCTIONS["haiku.Sequential"] = fn(o.SEQUENTIAL, "layers name")
# dropout: haiku's function hk.dropout(rng, rate, x); flax's layers Dropout(rate, ...), applied
# as layer(x, deterministic=...) (the constructor's deterministic, else the call's)
FUNCTIONS["haiku.dropout"] = fn(o.DROPOUT, "rng rate x broadcast_dims")
FUNCTIONS["flax.linen.Dropout"] = fn(o.DROPOUT_LAYER, "rate broadcast_dims deterministic rng_collection",
                                     varargs=True)
FUNCTIONS["flax.nnx.Dropout"] = fn(o.DROPOUT_LAYER, "rate", kwonly="broadcast_dims deterministic rng_collection rngs")

_adam = fn(o.ADAM_OPTIMIZER, "learning_rate:lr b1 b2 eps:epsilon", varargs=True)
for _name in ("adam", "adamw", "adamax", "adamaxw", "nadam", "nadamw", "radam", "amsgrad"):
    FUNCTIONS["optax." + _name] = _adam
for _name in ("sgd", "rmsprop", "adagrad", "adadelta", "lion"):
    FUNCTIONS["optax." + _name] = fn(o.OPTIMIZER, "learning_rate:lr", varargs=True)
FUNCTIONS["jax.lax.psum"] = fn(o.ALL_REDUCE, "x:value axis_name", kwonly="axis_index_groups")
# the norm of a pytree (optax's own update rules divide by them: Polyak's step, LARS, LAMB)
FUNCTIONS["optax.tree.norm"] = fn(o.NORM, "x ord squared")
FUNCTIONS["optax.tree_utils.tree_l2_norm"] = fn(o.NORM, "x squared")

FRAMEWORK = Framework(
    name="jax",
    display="JAX",
    roots=("jax", "optax"),
    functions=FUNCTIONS,
    methods=METHODS,
    targets={
        o.LOG_SOFTMAX: ("jax.nn.log_softmax",),
        o.LOG_SIGMOID: ("jax.nn.log_sigmoid",),
        o.SOFTPLUS: ("jax.nn.softplus",),
        o.LOGSUMEXP: ("jax.scipy.special.logsumexp", "jax.nn.logsumexp"),
        o.LOGADDEXP: ("jax.numpy.logaddexp",),
        o.SOFTMAX: ("jax.nn.softmax",),
        o.WHERE: ("jax.numpy.where",),
        o.FINFO: ("jax.numpy.finfo",),
        o.SQRT: ("jax.numpy.sqrt",),
        o.SQUARE: ("jax.numpy.square",),
        o.EXP: ("jax.numpy.exp",),
        o.LOG: ("jax.numpy.log",),
        o.XLOGY: ("jax.scipy.special.xlogy",),
        o.LOG1P: ("jax.numpy.log1p",),
        o.CLIP: ("jax.numpy.clip",),
        o.SUM: ("jax.numpy.sum",),
        o.VARIANCE: ("jax.numpy.var",),
        o.MAXIMUM: ("jax.numpy.maximum",),
    },
    import_aliases={"jax": None, "jax.numpy": "jnp"},
    facts=frozenset({o.FACT_ZERO_UPSTREAM_SQRT_NAN, o.FACT_NORM_GRAD_NAN_AT_ZERO, o.FACT_STD_GRAD_NAN_AT_CONSTANT,
                     o.FACT_XLOGY_GRAD_NAN_AT_ZERO}),
)
