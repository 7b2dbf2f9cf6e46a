"""PyTorch: ``torch``, ``torch.nn.functional``, ``torch.special``, ``torch.linalg``,
loss and layer modules (``nn.Sequential``, ``nn.Softmax``, the ``nn.Module`` base),
optimizers, and tensor methods (``x.softmax(-1).log()``, ``q.view(-1, k)``)."""

from __future__ import annotations

from nanlint.vocabulary import ops as o
from nanlint.vocabulary.ops import Fn, Framework, fn

FUNCTIONS: dict[str, Fn] = {}
METHODS: dict[str, Fn] = {}


def torch(paths: str, f: Fn, method: str | None = None, method_varargs: bool = False,
          method_elementwise: str | None = None) -> None:
    """Register ``f`` as ``torch.<path>`` for each path; ``method`` is the method
    signature (without ``self``) when the op is also a tensor method, and
    ``method_elementwise`` that of its elementwise form (``x.max(other)``)."""
    for path in paths.split():
        FUNCTIONS["torch." + path] = f
        if method is not None and "." not in path:
            other = f.elementwise
            elementwise = Fn(other.op, _params(method_elementwise), other.kwonly) \
                if other is not None and method_elementwise is not None else None
            METHODS[path] = Fn(f.op, _params(method), f.kwonly, method_varargs, elementwise)


def methods(names: str, op: str, signature: str = "", kwonly: str = "", varargs: bool = False) -> None:
    """Tensor methods that are not also ``torch.<name>`` functions (``x.view(-1, k)``)."""
    for name in names.split():
        METHODS[name] = fn(op, signature, kwonly, varargs)


def _params(signature: str):
    return fn(o.LOG, signature).params if signature else ()


unary = "input:x"
torch("log special.log", fn(o.LOG, unary), method="")
torch("log1p special.log1p", fn(o.LOG1P, unary), method="")
torch("log2", fn(o.LOG2, unary), method="")
torch("xlogy special.xlogy", fn(o.XLOGY, "input:x other:y"), method="other:y")
torch("log10", fn(o.LOG10, unary), method="")
torch("lgamma special.gammaln", fn(o.LGAMMA, unary), method="")
torch("digamma special.digamma special.psi", fn(o.DIGAMMA, unary), method="")
torch("atanh arctanh", fn(o.ATANH, unary), method="")
torch("tanh nn.functional.tanh", fn(o.TANH, unary), method="")
torch("exp special.exp", fn(o.EXP, unary), method="")
torch("sqrt", fn(o.SQRT, unary), method="")
torch("rsqrt", fn(o.RSQRT, unary), method="")
torch("square", fn(o.SQUARE, unary), method="")
torch("abs absolute", fn(o.ABS, unary), method="")
torch("neg negative", fn(o.NEGATIVE, unary), method="")
torch("pow float_power", fn(o.POW, "input:x exponent:y"), method="exponent:y")
torch("reciprocal", fn(o.RECIPROCAL, unary), method="")
torch("div divide true_divide", fn(o.DIVIDE, "input:x other:y", kwonly="rounding_mode"),
      method="other:y")
torch("mul multiply", fn(o.MULTIPLY, "input:x other:y"), method="other:y")
torch("add", fn(o.ADD, "input:x other:y", kwonly="alpha"), method="other:y")
torch("sub subtract", fn(o.SUBTRACT, "input:x other:y", kwonly="alpha"), method="other:y")
torch("maximum", fn(o.MAXIMUM, "input:x other:y"), method="other:y")
torch("minimum", fn(o.MINIMUM, "input:x other:y"), method="other:y")
torch("clamp clip", fn(o.CLIP, "input:x min:lo max:hi"), method="min:lo max:hi")
torch("clamp_min", fn(o.CLIP, "input:x min:lo"), method="min:lo")
# in-place forms whose fixes touch an argument, never the receiver they mutate:
# p.grad.clamp_(min=0), grad.div_(grad_norm)
for _inplace in ("clamp_", "clip_", "clamp_min_", "div_", "divide_", "true_divide_"):
    METHODS[_inplace] = METHODS[_inplace[:-1]]
torch("acos arccos", fn(o.ACOS, unary), method="")
torch("asin arcsin", fn(o.ASIN, unary), method="")
torch("isfinite", fn(o.IS_FINITE, unary), method="")
torch("isnan", fn(o.IS_NAN, unary), method="")
torch("detach", fn(o.STOP_GRADIENT, unary), method="")
torch("nan_to_num", fn(o.NAN_TO_NUM, "input:x nan:value posinf neginf"), method="nan:value posinf neginf")
torch("floor", fn(o.FLOOR, unary), method="")
torch("round", fn(o.ROUND, unary, kwonly="decimals"), method="")
torch("relu nn.functional.relu nn.functional.relu6", fn(o.RELU, "input:x inplace"), method="")
torch("where", fn(o.WHERE, "condition:cond input:x other:y"))
METHODS["where"] = Fn(o.WHERE, (("condition", "cond"), ("other", "y")))  # x.where(c, y)
torch("finfo", fn(o.FINFO, "type:x"))
METHODS["masked_fill_"] = Fn(o.MASKED_FILL_INPLACE, (("mask", "cond"), ("value", "value")))
torch("masked_fill", fn(o.MASKED_FILL, "input:x mask:cond value"), method="mask:cond value")
torch("softmax special.softmax nn.functional.softmax",
      fn(o.SOFTMAX, "input:x dim:axis _stacklevel dtype:dtype"), method="dim:axis dtype:dtype")
torch("log_softmax special.log_softmax nn.functional.log_softmax",
      fn(o.LOG_SOFTMAX, "input:x dim:axis _stacklevel dtype:dtype"), method="dim:axis dtype:dtype")
torch("sigmoid special.expit nn.functional.sigmoid", fn(o.SIGMOID, unary), method="")
torch("nn.functional.logsigmoid", fn(o.LOG_SIGMOID, unary))
torch("nn.functional.softplus", fn(o.SOFTPLUS, "input:x beta threshold"))
torch("logsumexp special.logsumexp", fn(o.LOGSUMEXP, "input:x dim:axis keepdim:keepdims"),
      method="dim:axis keepdim:keepdims")
torch("logaddexp", fn(o.LOGADDEXP, "input:x other:y"), method="other:y")
torch("sum", fn(o.SUM, "input:x dim:axis keepdim:keepdims", kwonly="dtype"),
      method="dim:axis keepdim:keepdims")
torch("any", fn(o.ANY, "input:x dim:axis keepdim:keepdims"), method="dim:axis keepdim:keepdims")
torch("cond", fn(o.COND, "pred:cond true_fn:then false_fn:orelse operands"))
torch("mean", fn(o.MEAN, "input:x dim:axis keepdim:keepdims", kwonly="dtype"),
      method="dim:axis keepdim:keepdims")
# torch.std(x, dim, unbiased/correction): with one element and correction 1 it is NaN, not 0
torch("std", fn(o.STD, "input:x dim:axis", kwonly="correction unbiased keepdim:keepdims"),
      method="dim:axis")
torch("var", fn(o.VARIANCE, "input:x dim:axis", kwonly="correction unbiased keepdim:keepdims"),
      method="dim:axis")
torch("prod", fn(o.PROD, "input:x dim:axis keepdim:keepdims", kwonly="dtype"),
      method="dim:axis keepdim:keepdims")
torch("cumprod", fn(o.PROD, "input:x dim:axis", kwonly="dtype out"), method="dim:axis")
torch("amax", fn(o.REDUCE_MAX, "input:x dim:axis keepdim:keepdims"), method="dim:axis keepdim:keepdims")
torch("amin", fn(o.REDUCE_MIN, "input:x dim:axis keepdim:keepdims"), method="dim:axis keepdim:keepdims")
torch("argmax", fn(o.ARGMAX, "input:x dim:axis keepdim:keepdims"), method="dim:axis keepdim:keepdims")
torch("argmin", fn(o.ARGMIN, "input:x dim:axis keepdim:keepdims"), method="dim:axis keepdim:keepdims")
# torch.max(x, 1) reduces; torch.max(a, b) with a tensor b is the elementwise maximum
torch("max", fn(o.REDUCE_MAX, "input:x dim:axis keepdim:keepdims", elementwise=fn(o.MAXIMUM, "input:x other:y")),
      method="dim:axis keepdim:keepdims", method_elementwise="other:y")
torch("min", fn(o.REDUCE_MIN, "input:x dim:axis keepdim:keepdims", elementwise=fn(o.MINIMUM, "input:x other:y")),
      method="dim:axis keepdim:keepdims", method_elementwise="other:y")
torch("norm", fn(o.NORM, "input:x p:ord dim:axis keepdim:keepdims"), method="p:ord dim:axis keepdim:keepdims")
torch("linalg.norm", fn(o.NORM, "input:x ord dim:axis keepdim:keepdims"))
torch("linalg.vector_norm", fn(o.NORM, "x ord dim:axis keepdim:keepdims"))
torch("matmul mm bmm", fn(o.MATMUL, "input:x other:y"), method="other:y")
torch("dot vdot inner", fn(o.DOT, "input:x other:y"), method="other:y")
torch("tensordot", fn(o.TENSORDOT, "a:x b:y dims"))
torch("einsum", fn(o.EINSUM, "equation", varargs=True))
torch("nn.functional.cosine_similarity cosine_similarity", fn(o.COSINE_SIMILARITY, "x1:x x2:y dim:axis eps"))
torch("nn.functional.normalize", fn(o.L2_NORMALIZE, "input:x p:ord dim:axis eps"))

# --- layout and dtype (SHAPE): x is the tensor, or the sequence for cat/stack; axis the
# one dim it acts on, where there is one ----------------------------------------------
torch("reshape", fn(o.SHAPE, "input:x shape"), method="", method_varargs=True)
torch("squeeze", fn(o.SHAPE, "input:x dim:axis"), method="dim:axis")
torch("unsqueeze", fn(o.SHAPE, "input:x dim:axis"), method="dim:axis")
torch("flatten", fn(o.SHAPE, "input:x start_dim end_dim"), method="start_dim end_dim")
torch("transpose", fn(o.SHAPE, "input:x dim0 dim1"), method="dim0 dim1")
torch("permute", fn(o.SHAPE, "input:x dims"), method="", method_varargs=True)
torch("t", fn(o.SHAPE, unary), method="")
torch("clone", fn(o.SHAPE, unary, kwonly="memory_format"), method="")
torch("tile", fn(o.SHAPE, "input:x dims"), method="", method_varargs=True)
torch("narrow", fn(o.SHAPE, "input:x dim:axis start length"), method="dim:axis start length")
torch("gather", fn(o.SHAPE, "input:x dim:axis index", kwonly="sparse_grad out"), method="dim:axis index")
torch("index_select", fn(o.SHAPE, "input:x dim:axis index", kwonly="out"), method="dim:axis index")
torch("take_along_dim", fn(o.SHAPE, "input:x indices dim:axis", kwonly="out"), method="indices dim:axis")
torch("cat concat concatenate", fn(o.SHAPE, "tensors:x dim:axis", kwonly="axis out"))
torch("stack", fn(o.SHAPE, "tensors:x dim:axis", kwonly="out"))
methods("view expand repeat", o.SHAPE, varargs=True)  # x.view(-1, k), x.expand(n, -1)
methods("view_as expand_as", o.SHAPE, "other")
methods("contiguous", o.SHAPE, "memory_format")
methods("float double half bfloat16", o.SHAPE, kwonly="memory_format")
methods("to", o.SHAPE, varargs=True)  # x.to(device), x.to(torch.float16), x.to(other)
methods("type", o.SHAPE, "dtype:dtype non_blocking", varargs=True)  # x.type() alone returns a str

# --- comparisons and logic ------------------------------------------------------------
torch("eq", fn(o.EQUAL, "input:x other:y"), method="other:y")  # not torch.equal: a Python bool
torch("ne not_equal", fn(o.NOT_EQUAL, "input:x other:y"), method="other:y")
torch("gt greater", fn(o.GREATER, "input:x other:y"), method="other:y")
torch("ge greater_equal", fn(o.GREATER_EQUAL, "input:x other:y"), method="other:y")
torch("lt less", fn(o.LESS, "input:x other:y"), method="other:y")
torch("le less_equal", fn(o.LESS_EQUAL, "input:x other:y"), method="other:y")
torch("logical_and", fn(o.LOGICAL_AND, "input:x other:y"), method="other:y")
torch("logical_or", fn(o.LOGICAL_OR, "input:x other:y"), method="other:y")
torch("logical_not", fn(o.LOGICAL_NOT, unary), method="")

# --- random: U[0, 1) -----------------------------------------------------------------------
torch("rand", fn(o.RANDOM_UNIFORM, "", varargs=True))  # rand(*size, dtype=...)
torch("rand_like", fn(o.RANDOM_UNIFORM, "input", varargs=True))  # input gives the shape only
# dropout: exactly 0 on each dropped element (not alpha_dropout: its dropped value is not 0).
# F.dropout* default to training=True; torch.dropout(input, p, train) takes it positionally
torch("nn.functional.dropout nn.functional.dropout1d nn.functional.dropout2d nn.functional.dropout3d",
      fn(o.DROPOUT, "input:x p:rate training:training inplace"))
torch("dropout dropout_ feature_dropout feature_dropout_", fn(o.DROPOUT, "input:x p:rate train:training"))

torch("nn.functional.cross_entropy",
      fn(o.CROSS_ENTROPY, "input:logits target:labels weight size_average ignore_index reduce reduction label_smoothing"))
torch("nn.functional.binary_cross_entropy",
      fn(o.BINARY_CROSS_ENTROPY, "input:x target:labels weight size_average reduce reduction"))
torch("nn.functional.binary_cross_entropy_with_logits",
      fn(o.SIGMOID_CROSS_ENTROPY, "input:logits target:labels weight size_average reduce reduction pos_weight"))
torch("nn.BCELoss", fn(o.BCE_LOSS, "weight size_average reduce reduction"))
torch("nn.BCEWithLogitsLoss", fn(o.BCE_WITH_LOGITS_LOSS, "weight size_average reduce reduction pos_weight"))
torch("nn.utils.clip_grad_norm_", fn(o.CLIP_BY_GLOBAL_NORM, "parameters:x max_norm:hi norm_type"))

# --- models and layers --------------------------------------------------------------------
torch("nn.Sequential", fn(o.SEQUENTIAL, "", varargs=True))  # the layers are the positional args
torch("nn.Softmax", fn(o.SOFTMAX_LAYER, "dim:axis"))
torch("nn.LogSoftmax", fn(o.LOG_SOFTMAX_LAYER, "dim:axis"))
torch("nn.Sigmoid", fn(o.SIGMOID_LAYER, ""))
torch("nn.Dropout nn.Dropout1d nn.Dropout2d nn.Dropout3d", fn(o.DROPOUT_LAYER, "p:rate inplace"))
torch("nn.Module", fn(o.MODULE_BASE, "", varargs=True))  # the base class of models and layers

_optimizer = fn(o.OPTIMIZER, "params lr", varargs=True)
_adam = fn(o.ADAM_OPTIMIZER, "params lr betas eps:epsilon", varargs=True)
for _name in ("SGD", "RMSprop", "Adagrad", "Adadelta", "ASGD", "Rprop", "LBFGS"):
    FUNCTIONS["torch.optim." + _name] = _optimizer
for _name in ("Adam", "AdamW", "Adamax", "NAdam", "RAdam", "SparseAdam"):
    FUNCTIONS["torch.optim." + _name] = _adam

FRAMEWORK = Framework(
    name="torch",
    display="PyTorch",
    roots=("torch",),
    functions=FUNCTIONS,
    methods=METHODS,
    targets={
        o.LOG_SOFTMAX: ("torch.nn.functional.log_softmax", "torch.log_softmax",
                        "torch.special.log_softmax"),
        o.LOG_SIGMOID: ("torch.nn.functional.logsigmoid",),
        o.SOFTPLUS: ("torch.nn.functional.softplus",),
        o.LOGSUMEXP: ("torch.logsumexp", "torch.special.logsumexp"),
        o.LOGADDEXP: ("torch.logaddexp",),
        o.SOFTMAX: ("torch.nn.functional.softmax", "torch.softmax", "torch.special.softmax"),
        o.WHERE: ("torch.where",),
        o.FINFO: ("torch.finfo",),
        o.SQRT: ("torch.sqrt",),
        o.SQUARE: ("torch.square",),
        o.EXP: ("torch.exp",),
        o.LOG: ("torch.log",),
        o.XLOGY: ("torch.special.xlogy", "torch.xlogy"),
        o.LOG1P: ("torch.log1p", "torch.special.log1p"),
        o.CLIP: ("torch.clamp", "torch.clip"),
        o.SUM: ("torch.sum",),
        o.VARIANCE: ("torch.var",),
        o.MAXIMUM: ("torch.maximum",),
        o.L2_NORMALIZE: ("torch.nn.functional.normalize",),
        o.CROSS_ENTROPY: ("torch.nn.functional.cross_entropy",),
        o.SIGMOID_CROSS_ENTROPY: ("torch.nn.functional.binary_cross_entropy_with_logits",),
        o.BCE_WITH_LOGITS_LOSS: ("torch.nn.BCEWithLogitsLoss",),
        o.CLIP_BY_GLOBAL_NORM: ("torch.nn.utils.clip_grad_norm_",),
    },
    import_aliases={"torch": None, "torch.nn.functional": "F"},
    facts=frozenset({o.FACT_ZERO_UPSTREAM_SQRT_NAN, o.FACT_XLOGY_GRAD_NAN_AT_ZERO}),
)
