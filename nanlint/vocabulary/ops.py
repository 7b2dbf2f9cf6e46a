"""The canonical op vocabulary.

Rules speak only of these names; each framework table (``nanlint.vocabulary.frameworks``)
maps its qualified names and tensor methods onto them, and names the function
that spells an op when a fix needs it.

Argument *roles* are framework-neutral parameter names: ``x`` is the main
tensor, ``y`` the second operand, ``axis`` the reduction/softmax axis,
``keepdims``, ``lo``/``hi`` for clipping bounds (and a uniform draw's range),
``cond`` for ``where``'s condition, ``labels``/``logits`` for fused losses;
for dropout ``rate`` (the fraction dropped), ``keep_prob`` (TF1's fraction kept),
``training`` (whether it applies) and ``deterministic`` (flax: whether it does not);
for model and layer constructors ``layers`` (a Sequential's list),
``inputs``/``outputs`` (a functional model's) and ``activation`` (a layer's).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

# --- elementwise -----------------------------------------------------------
LOG = "log"
LOG1P = "log1p"
XLOGY = "xlogy"  # x * log(y), 0 where x == 0 (0 * log 0 = 0, the entropy convention)
LOG2 = "log2"  # -inf at 0, like log
LOG10 = "log10"
LGAMMA = "lgamma"  # log|Gamma(x)|: a pole at 0 (and the negative integers): inf
DIGAMMA = "digamma"  # Gamma'/Gamma: a pole at 0: -inf/NaN
TANH = "tanh"  # in [-1, 1]: an exponent of it cannot overflow
ATANH = "atanh"  # inf at 1: atanh(p) = log((1 + p) / (1 - p)) / 2
EXP = "exp"
SQRT = "sqrt"
RSQRT = "rsqrt"
SQUARE = "square"
POW = "pow"
RECIPROCAL = "reciprocal"
DIVIDE = "divide"
MULTIPLY = "multiply"
ADD = "add"
SUBTRACT = "subtract"
NEGATIVE = "negative"
ABS = "abs"
MAXIMUM = "maximum"
MINIMUM = "minimum"
CLIP = "clip"
ACOS = "acos"
ASIN = "asin"
IS_FINITE = "is_finite"
IS_NAN = "is_nan"
NAN_TO_NUM = "nan_to_num"
WHERE = "where"
COND = "cond"  # cond(pred, then_fn, else_fn): a branch in the graph; roles cond, then, orelse
ANY = "any"  # whether some element is true (a reduction of a mask)
MASKED_FILL = "masked_fill"
MASKED_FILL_INPLACE = "masked_fill_inplace"  # x.masked_fill_(m, v): fills x itself
FINFO = "finfo"  # torch.finfo(dtype), jnp.finfo(dtype): a float dtype's limits (.min, .max, .eps, .tiny)
FLOOR = "floor"
ROUND = "round"
RELU = "relu"  # max(x, 0) only: relu/relu6, not leaky forms (keras' relu(x, alpha))
# --- layout and dtype: the values keep their signs and zeros ----------------------
# x is the input (for concat/stack: the sequence of inputs); dtype where one is given.
# torch's ``x.type()`` with no dtype returns a string: check ``has("dtype")``.
SHAPE = "shape"
# the names under which a layout op may change the dtype (x.to(torch.float16), tf.cast): a cast
# keeps signs but not every epsilon (1e-8 is 0 in float16)
CAST_NAMES = frozenset({"float", "double", "half", "bfloat16", "to", "type", "cast", "astype"})
# --- comparisons and logic (x, y; logical_not: x) --------------------------------------
EQUAL = "equal"
NOT_EQUAL = "not_equal"
GREATER = "greater"
GREATER_EQUAL = "greater_equal"
LESS = "less"
LESS_EQUAL = "less_equal"
LOGICAL_AND = "logical_and"
LOGICAL_OR = "logical_or"
LOGICAL_NOT = "logical_not"
# --- activations and fused forms ---------------------------------------------
SOFTMAX = "softmax"
LOG_SOFTMAX = "log_softmax"
SIGMOID = "sigmoid"
LOG_SIGMOID = "log_sigmoid"
SOFTPLUS = "softplus"
LOGSUMEXP = "logsumexp"
LOGADDEXP = "logaddexp"
L2_NORMALIZE = "l2_normalize"
DIVIDE_NO_NAN = "divide_no_nan"
CLIP_BY_GLOBAL_NORM = "clip_by_global_norm"
STOP_GRADIENT = "stop_gradient"  # jax.lax.stop_gradient, tf.stop_gradient, x.detach()
# --- reductions ----------------------------------------------------------------
SUM = "sum"
MEAN = "mean"
NORM = "norm"
STD = "std"  # a standard deviation over an axis: exactly 0 when the values are all equal
VARIANCE = "variance"  # a variance over an axis: exactly 0 when the values are all equal
REDUCE_MAX = "reduce_max"  # torch.max(x, dim): also torch.max(a, b), whose b binds as axis
REDUCE_MIN = "reduce_min"
ARGMAX = "argmax"  # the index of the largest along an axis: an integer, no gradient
ARGMIN = "argmin"
PROD = "prod"  # a product over an axis (prod, reduce_prod); also cumprod: its running products
# a reduction whose kind the call does not spell (einops' ``reduce(x, pattern, fn)``): no rule's op;
# a literal kind (``'sum'``, ``'mean'``) makes the call that op (``Fn.choices``)
REDUCE = "reduce"
# a reduction across replicas of a value each holds (``lax.psum(x, 'batch')``, a replica context's
# ``all_reduce(ReduceOp.SUM, x)``): the same kind of value as ``value``, summed over devices
ALL_REDUCE = "all_reduce"
# --- random ----------------------------------------------------------------------------
RANDOM_UNIFORM = "random_uniform"  # [lo, hi), by default [0, 1)
# x with each element set to exactly 0 with probability rate (the rest scaled by 1 / (1 - rate))
# while training; x itself when not (not alpha dropout: its dropped value is not 0)
DROPOUT = "dropout"
# --- products (dot products feed acos/asin) ------------------------------------------
MATMUL = "matmul"  # matmul/mm/bmm and ``@``
DOT = "dot"  # dot/vdot/inner
TENSORDOT = "tensordot"
EINSUM = "einsum"
COSINE_SIMILARITY = "cosine_similarity"
# --- losses ----------------------------------------------------------------------
SOFTMAX_CROSS_ENTROPY = "softmax_cross_entropy"
SIGMOID_CROSS_ENTROPY = "sigmoid_cross_entropy"
BINARY_CROSS_ENTROPY = "binary_cross_entropy"
CROSS_ENTROPY = "cross_entropy"
BCE_LOSS = "bce_loss"  # the torch nn.BCELoss module constructor
BCE_WITH_LOGITS_LOSS = "bce_with_logits_loss"
# --- optimizers (constructors) -----------------------------------------------------
OPTIMIZER = "optimizer"
ADAM_OPTIMIZER = "adam_optimizer"  # Adam family: Adam, AdamW, Adamax, Nadam
# --- models and layers (constructors, and the classes models subclass) ---------------------
SEQUENTIAL = "sequential"  # torch: layers are the positional args (no role); keras/flax/haiku: layers
FUNCTIONAL_MODEL = "functional_model"  # keras Model(inputs, outputs); also a base class
SOFTMAX_LAYER = "softmax_layer"
SIGMOID_LAYER = "sigmoid_layer"
LOG_SOFTMAX_LAYER = "log_softmax_layer"
DENSE_LAYER = "dense_layer"  # keras Dense and Conv*D: their activation
ACTIVATION_LAYER = "activation_layer"
DROPOUT_LAYER = "dropout_layer"  # nn.Dropout(p), layers.Dropout(rate), flax's Dropout: a DROPOUT of its input
MODULE_BASE = "module_base"  # torch.nn.Module, keras Layer, tf.Module, flax/haiku Module

ALL_OPS = frozenset(
    value for name, value in dict(globals()).items() if name.isupper() and isinstance(value, str)
)

# A class whose base resolves to one of these is a model or layer (``keras.Model`` is
# both the functional constructor and a base: one qualified name has one op).
MODEL_BASES = frozenset({MODULE_BASE, FUNCTIONAL_MODEL, SEQUENTIAL})
# Calls that build a new object or draw new values: not pure.
CONSTRUCTORS = frozenset({SEQUENTIAL, FUNCTIONAL_MODEL, SOFTMAX_LAYER, SIGMOID_LAYER, LOG_SOFTMAX_LAYER,
                          DENSE_LAYER, ACTIVATION_LAYER, DROPOUT_LAYER, MODULE_BASE})
# Calls that draw random values: two calls of one differ (a fix must not duplicate one).
DRAWS = frozenset({RANDOM_UNIFORM, DROPOUT})

# A file can compute an activation without naming its op: through a layer (``nn.Sigmoid()``,
# ``Dense(k, activation="softmax")``).  A model class or Sequential computes it through
# one of those or the op itself, in its own file or in one it imports (counted there).
_MODEL_PARTS = frozenset({DENSE_LAYER, ACTIVATION_LAYER})
IMPLIED_BY = {  # (and exp: 1 / (1 + exp(-z)), exp(z) / sum(exp(z)) written by hand)
    SOFTMAX: _MODEL_PARTS | {SOFTMAX_LAYER, EXP},
    SIGMOID: _MODEL_PARTS | {SIGMOID_LAYER, EXP},
    LOG_SOFTMAX: _MODEL_PARTS | {LOG_SOFTMAX_LAYER},
    DROPOUT: {DROPOUT_LAYER},  # self.drop = nn.Dropout(p) ... self.drop(h)
}


# Ops whose result a value carries from one module to another (through a returned value,
# a model class): only these of an imported module can complete a rule's triggers, whose
# site op (the log, the sqrt, the division) must be in the file itself.
VALUE_SOURCES = frozenset({SOFTMAX, SIGMOID, LOG_SOFTMAX, EXP, SOFTPLUS, SOFTMAX_LAYER, SIGMOID_LAYER,
                           LOG_SOFTMAX_LAYER, DENSE_LAYER, ACTIVATION_LAYER})


@lru_cache(maxsize=None)  # a rule's trigger groups, asked per file and per candidate set of ops
def with_implying(ops: frozenset[str]) -> frozenset[str]:
    """``ops`` and the ops whose presence in a file may compute one of them."""
    out = set(ops)
    for op in ops:
        out |= IMPLIED_BY.get(op, frozenset())
    return frozenset(out)


ROLES = frozenset({"x", "y", "axis", "keepdims", "lo", "hi", "cond", "then", "orelse", "labels", "logits",
                   "ord", "eps", "value", "reduction", "lr", "epsilon", "dtype",
                   "activation", "inputs", "outputs", "layers", "rate", "keep_prob", "training", "deterministic"})


@dataclass(frozen=True)
class Fn:
    """One callable of a framework: the op it computes and its parameters.

    ``params`` lists the parameters in positional order as ``(keyword, role)``
    pairs; ``role`` is None for parameters no rule cares about.  ``kwonly``
    lists keyword-only parameters the same way.
    """

    op: str
    params: tuple[tuple[str, str | None], ...]
    kwonly: tuple[tuple[str, str | None], ...] = ()
    varargs: bool = False  # accepts **kwargs / *args beyond the listed ones
    # the callable this one is when its ``axis`` argument is a tensor, not a dimension:
    # ``torch.max(a, b)`` is the elementwise maximum, ``torch.max(x, 1)`` a reduction
    elementwise: "Fn | None" = None
    # the callables this one is by a string literal it is given: (role, ((literal, Fn), ...));
    # einops' ``reduce(x, pattern, 'sum')`` is a sum, ``reduce(x, pattern, 'mean')`` a mean
    choices: "tuple[str, tuple[tuple[str, Fn], ...]] | None" = None

    def variants(self) -> "tuple[Fn, ...]":
        """This callable and the ones a call of it may be (its elementwise form, its choices)."""
        out = (self,) if self.elementwise is None else (self, self.elementwise)
        return out + tuple(f for _, f in self.choices[1]) if self.choices is not None else out

    def keyword_for(self, role: str) -> str | None:
        for kw, r in self.params + self.kwonly:
            if r == role:
                return kw
        return None

    def position_of(self, role: str) -> int | None:
        for i, (_, r) in enumerate(self.params):
            if r == role:
                return i
        return None

    def role_of_keyword(self, keyword: str) -> str | None | bool:
        """The role of a keyword; False when the keyword is unknown."""
        for kw, r in self.params + self.kwonly:
            if kw == keyword:
                return r
        return False


def fn(op: str, signature: str = "x", kwonly: str = "", varargs: bool = False, elementwise: Fn | None = None,
       choices: tuple[str, tuple[tuple[str, Fn], ...]] | None = None) -> Fn:
    """Build an :class:`Fn` from a compact signature.

    ``fn("softmax", "input:x dim:axis _stacklevel dtype")`` means: positional
    parameters ``input`` (role x), ``dim`` (role axis), ``_stacklevel`` and
    ``dtype`` (no role).  A bare role name (``"x"``) stands for ``x:x``; ``"reduction:"`` is
    a parameter named like a role that has none.
    """
    if op not in ALL_OPS:
        raise ValueError(f"unknown op {op!r}")

    def parse(text: str) -> tuple[tuple[str, str | None], ...]:
        out = []
        for item in text.split():
            if ":" in item:
                kw, role = item.split(":", 1)
                role = role or None  # ``reduction:``: a keyword that is also a role's name, without it
            elif item in ROLES:
                kw, role = item, item
            else:
                kw, role = item, None
            if role is not None and role not in ROLES:
                raise ValueError(f"unknown role {role!r} in {text!r}")
            out.append((kw, role))
        return tuple(out)

    return Fn(op, parse(signature), parse(kwonly), varargs, elementwise, choices)


@dataclass(frozen=True)
class Framework:
    """A framework table: qualified name -> Fn, tensor method -> Fn, op -> fix spellings."""

    name: str
    display: str
    roots: tuple[str, ...]  # top-level modules whose import marks a file as using it
    functions: dict[str, Fn]
    methods: dict[str, Fn] = field(default_factory=dict)  # receiver is role x
    targets: dict[str, tuple[str, ...]] = field(default_factory=dict)  # op -> qualnames, preferred first
    # imports to add when a target cannot be spelled with the file's own imports:
    # module -> conventional alias (None: plain ``import module``)
    import_aliases: dict[str, str | None] = field(default_factory=dict)
    # measured numerical behaviours that differ between frameworks (``FACT_*`` below)
    facts: frozenset[str] = frozenset()

    def target_fn(self, qualname: str) -> Fn:
        return self.functions[qualname]


# --- framework facts (measured; see the rule pages for the numbers) -----------------------
# The gradient of sqrt/rsqrt/reciprocal at 0 is NaN even when the upstream gradient is 0
# (e.g. the unselected branch of a ``where``); TensorFlow's kernels return 0 there instead.
FACT_ZERO_UPSTREAM_SQRT_NAN = "zero-upstream-sqrt-grad-nan"
# The gradient of the 2-norm at the zero vector is NaN (torch defines it as 0).
FACT_NORM_GRAD_NAN_AT_ZERO = "norm-grad-nan-at-zero"
# The gradient of the standard deviation of a constant row (variance 0) is NaN (torch
# defines it as 0); so is ``std + eps``'s, an epsilon outside the root.
FACT_STD_GRAD_NAN_AT_CONSTANT = "std-grad-nan-at-constant"
# The gradient of ``xlogy(x, x)`` at x = 0 is NaN (its ``y`` part is x / y = 0 / 0; TensorFlow
# gives 0 there): the fix of ``x * log(x)`` repairs the value, not a gradient taken at 0.
FACT_XLOGY_GRAD_NAN_AT_ZERO = "xlogy-grad-nan-at-zero"


# --- constants ----------------------------------------------------------------------------
# infinities as the libraries name them (a fill of -inf is ``-POS_INF`` or ``NEG_INF``)
POS_INF = frozenset({"math.inf", "numpy.inf", "numpy.Inf", "numpy.Infinity", "numpy.PINF", "numpy.infty",
                     "torch.inf", "jax.numpy.inf"})
NEG_INF = frozenset({"numpy.NINF", "jax.numpy.NINF"})
