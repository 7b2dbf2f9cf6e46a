"""Values that reach the singular point of a log, a root or a division: 0 (or below),
on inputs the program will see, and the source that brings them there.

``reaches_zero(ctx, expr, scope)`` looks at every value reaching ``expr``
(:mod:`nanlint.semantic.reach`, through names, returns, models and layout ops) and returns the
first that is a *source*:

* ``probability``: a softmax or sigmoid output (also a layer or a model ending in one,
  a hand-written ``1 / (1 + exp(-z))``, ``e / (1 + e)``, ``exp(z) / sum(exp(z))``), a
  product with one, a max of sigmoid outputs: exactly 0 once float32 underflows
  (sigmoid below about -88, a softmax class ~104 below the largest); a product over an
  axis (``prod``, ``cumprod``) of probabilities (such outputs, ``1 - p``, values named
  ``prob``/``lam``/``p_*``): 100 factors of 0.3 make 5e-53, 0 in float32 (a stick-breaking
  or halting probability ``lam * prod(1 - lam_j)``);
* ``complement``: ``1 - p`` of a probability: exactly 0 once ``p`` rounds to 1
  (a sigmoid above ~17, a softmax class ~17 above the others);
* ``rectified``: ``relu``, ``clip(x, 0, ...)``, ``maximum(x, 0)``, ``abs``/squares of a
  difference, ``floor``/``round``: exactly 0 on a whole region of inputs; a dropout output
  (a function or a layer): exactly 0 on every dropped element while training, unless the
  call turns it off (a literal rate 0, ``training=False``: then its input's sources);
* ``count``: a sum of a mask built by a comparison (``(y > 0).sum()``): 0 when nothing
  matches;
* ``affine``: ``matmul(h, W) + b``, ``h @ W``: negative as well as 0;
* ``constant``: a constant or a literal list holding 0 or a negative number.

A value guarded at its definition (``clip(p, 1e-7, 1)``, ``p + eps``) is no source.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from nanlint.analysis import evidence, facts
from nanlint.vocabulary import ops as o
from nanlint.vocabulary import limits
from nanlint.semantic.context import FileContext, OpCall
from nanlint.analysis.guards import constant, guarded, terms
from nanlint.semantic.reach import Resolved
from nanlint.semantic.resolve import Scope
from nanlint.semantic.literals import same

PROBABILITY = "probability"
COMPLEMENT = "complement"
RECTIFIED = "rectified"
COUNT = "count"
AFFINE = "affine"
CONSTANT = "constant"
# abs/square of a difference, elementwise: 0 only when two values coincide exactly (step
# sizes, polynomial terms: rare, measured on the training corpus); a sum or mean of them
# (a distance) is a rectified source
DIFFERENCE = "difference"
KINDS = (PROBABILITY, COMPLEMENT, RECTIFIED, COUNT, AFFINE, CONSTANT)
_BIAS = re.compile(r"^(b|bias|biases|b_?\d+|.*_b|.*_bias|bias_.*)$", re.IGNORECASE)

# why each kind reaches its singular point, for messages (the float32 thresholds measured in
# vocabulary/limits.py: the lowest and the highest over the frameworks and sigmoid/softmax)
_UNDER = [t[fw][limits.FLOAT32] for t in (limits.SIGMOID_ZERO, limits.EXP_UNDERFLOW) for fw in limits.FRAMEWORKS]
_SATURATED = max(t[fw][limits.FLOAT32] for t in (limits.SIGMOID_ONE, limits.SOFTMAX_ONE) for fw in limits.FRAMEWORKS)
WHY = {
    PROBABILITY: (f"it underflows to exactly 0 in float32 (a logit ~{min(_UNDER):g} to ~{max(_UNDER):g} below the "
                  "others, by framework)"),
    COMPLEMENT: (f"it is exactly 0 once the probability rounds to 1 in float32 (a logit ~{_SATURATED:g} or more "
                 "above the others)"),
    RECTIFIED: "it is exactly 0 on a whole region of inputs",
    COUNT: "it is 0 when nothing in the batch matches",
    AFFINE: "an affine output with no activation is negative or 0 for some inputs",
    CONSTANT: "it holds 0 (or a negative number)",
    DIFFERENCE: "it is 0 where the two values coincide",
}
# a product over an axis of values in [0, 1] (not a logit's saturation: the count of factors)
PRODUCT = ("a product of factors in [0, 1] underflows to exactly 0 in float32 long before any factor does "
           "(100 factors of 0.3 make 5e-53, below float32's smallest subnormal, 1.4e-45)")
# a dropout's (a rectified source whose region is drawn, not a region of inputs)
DROPPED = "it is exactly 0 on every dropped element while training (a fraction p of them, every step)"

_TENSOR_LITERALS = frozenset({
    "torch.tensor", "torch.Tensor", "torch.as_tensor", "torch.FloatTensor",
    "tensorflow.constant", "tensorflow.convert_to_tensor", "tensorflow.Variable",
    "jax.numpy.array", "jax.numpy.asarray", "keras.ops.array", "keras.ops.convert_to_tensor",
    "numpy.array", "numpy.asarray",
})
_COMPARISON_OPS = (o.EQUAL, o.NOT_EQUAL, o.GREATER, o.GREATER_EQUAL, o.LESS, o.LESS_EQUAL,
                   o.LOGICAL_AND, o.LOGICAL_OR, o.LOGICAL_NOT)
MAX_DEPTH = 4
# the ops a strong source needs (a probability, 1 - p, relu, an active clamp, a dropout, a product; counts
# add a sum); the rules' triggers count the layers implying them (ops.IMPLIED_BY: nn.Dropout)
STRONG_OPS = frozenset({o.SOFTMAX, o.SIGMOID, o.EXP, o.RELU, o.CLIP, o.MAXIMUM, o.DROPOUT, o.PROD})
# the ops a source can be computed with, weak ones too (NAN110's triggers): a file without any
# of them (and without a literal 0 reaching a sink) has no source
SOURCE_OPS = frozenset({o.SOFTMAX, o.SIGMOID, o.RELU, o.CLIP, o.MAXIMUM, o.ABS, o.SQUARE, o.POW, o.FLOOR,
                        o.ROUND, o.MATMUL, o.SUM, o.MEAN, o.REDUCE_MAX, o.REDUCE_MIN, o.DROPOUT, o.PROD})


@dataclass
class Zero:
    """A source of 0: its kind, a short description, the reaching value it is, and for a
    hand-written sigmoid the logit ``z`` with ``p = sigmoid(z)`` (when it is in sight)."""

    kind: str
    what: str
    value: Resolved
    logit: cst.BaseExpression | None = None
    weak: str | None = None  # why the evidence is weak (the opt-in NAN110's); None: strong
    reason: str | None = None  # why it reaches 0, where the kind's WHY does not say it (a dropout)

    @property
    def strong(self) -> bool:
        return self.weak is None

    @property
    def negative(self) -> bool:
        return self.kind == AFFINE

    @property
    def why(self) -> str:
        return self.reason or WHY[self.kind]


def reaches_zero(ctx: FileContext, expr: cst.BaseExpression | None, scope: Scope,
                 kinds: tuple[str, ...] | None = None, depth: int = MAX_DEPTH) -> Zero | None:
    """The first value reaching ``expr`` that is a source of 0 (of one of ``kinds``, by
    default :data:`KINDS`), unless ``expr`` is guarded where it is used.  A constant counts
    only when it is the one value reaching ``expr`` directly (an accumulator ``n = 0`` that a
    loop increments, an element of a literal list, are not)."""
    if expr is None or depth < 0 or (guarded(ctx, expr, scope) and not _division(expr)):
        return None
    if _filtered(ctx, expr, scope) or facts.chosen(ctx, expr, scope):
        return None
    kinds = KINDS if kinds is None else kinds
    weak = None
    for r in ctx.values(expr, scope, shape=True):
        owner = r.ctx or ctx
        found = _source(owner, r.expr, r.scope, depth)
        if found is not None and found[0] == CONSTANT and r.via:
            continue
        if found is not None and found[0] in kinds:
            zero = Zero(found[0], found[1], r, *found[2:])
            if zero.strong:
                return zero
            weak = weak or zero
    return weak


Source = tuple  # (kind, what, logit, weak[, reason]): see Zero


def _source(ctx: FileContext, e: cst.BaseExpression, s: Scope, depth: int) -> Source | None:
    if _division(e):  # 1 / (1 + exp(-z)) reads as "guarded" (a quotient of positives): it underflows
        return _hand_probability(ctx, e, s)  # type: ignore[arg-type]
    if guarded(ctx, e, s):
        return None
    value = constant(ctx, e, s)
    if value is not None:
        return (CONSTANT, f"the constant {value:g}", None, None) if value <= 0 else None
    if isinstance(e, (cst.List, cst.Tuple)):
        if any(not isinstance(el, cst.StarredElement) and _holds_zero(ctx, el.value, s) for el in e.elements):
            return CONSTANT, "a literal holding 0", None, None
        return None
    e = ctx.arithmetic(e, s)
    if isinstance(e, cst.BinaryOperation):
        return _binary(ctx, e, s, depth)
    if isinstance(e, cst.Comparison):
        return None
    if not isinstance(e, cst.Call):
        return None
    qual = ctx.index.qualname(e.func, s)
    if qual in _TENSOR_LITERALS and e.args and isinstance(e.args[0].value, (cst.List, cst.Tuple)):
        return _source(ctx, e.args[0].value, s, depth)
    found = ctx.op_of(e, s, o.SOFTMAX, o.SIGMOID, follow=False)
    if found is not None:
        call = found[0]
        return PROBABILITY, f"a {call.op} output", None, _not_logit(ctx, call.x, s)
    call = ctx.op_call(e, s)
    if call is None:
        return None
    op = call.op
    if op == o.RELU:
        return RECTIFIED, "a relu output", None, None
    if op in (o.DROPOUT, o.DROPOUT_LAYER):
        return _dropout(ctx, call, s, depth)
    if op == o.PROD and call.x is not None and depth > 0:
        factors = _unit_factors(ctx, call.x, s, depth - 1)
        if factors is not None:
            return PROBABILITY, f"a {_spelled(call)} over an axis of {factors}", None, None, PRODUCT
    if op == o.CLIP and constant(ctx, call.value("lo"), s) == 0.0:
        return RECTIFIED, "a value clipped at 0", None, _defensive(ctx, call.x, s)
    if op == o.MAXIMUM:
        for zero, other in (("x", "y"), ("y", "x")):
            if constant(ctx, call.value(zero), s) == 0.0:
                return RECTIFIED, "maximum(x, 0)", None, _defensive(ctx, call.value(other), s)
    if op in (o.ABS, o.SQUARE) and _difference(ctx, call.x, s):
        return DIFFERENCE, f"{op} of a difference", None, WEAK_DIFFERENCE
    if op == o.POW and _even(ctx, call.value("y"), s) and _difference(ctx, call.x, s):
        return DIFFERENCE, "a square of a difference", None, WEAK_DIFFERENCE
    if op in (o.FLOOR, o.ROUND):
        return RECTIFIED, f"{op} of data", None, "data below 1 is a precondition of the input the code does not show"
    if op in (o.SUM, o.MEAN, o.REDUCE_MAX, o.REDUCE_MIN) and call.x is not None and depth > 0:
        if _mask(ctx, call.x, s):
            return COUNT, "a count of a mask", None, evidence.weak_mask(ctx, call.x, s)
        inner = reaches_zero(ctx, call.x, s, kinds=KINDS + (DIFFERENCE,), depth=depth - 1)
        if inner is None:
            return None
        if inner.kind == PROBABILITY and op in (o.SUM, o.MEAN) and "product" not in inner.what:
            return None  # a sum of a distribution is 1
        if inner.kind == PROBABILITY and "softmax" in inner.what and op == o.REDUCE_MAX:
            return None  # the max of a softmax is at least 1/K
        if inner.kind in (COUNT, AFFINE):
            return None
        kind = RECTIFIED if inner.kind == DIFFERENCE else inner.kind
        weak = inner.weak
        if inner.kind == DIFFERENCE:
            weak = "a distance: 0 only where two points coincide"
        elif inner.kind == RECTIFIED and op in (o.SUM, o.MEAN):
            weak = weak or "a sum of rectified values is 0 only when every term is (normalizing weights hold a positive one)"
        return kind, f"a {op} of {inner.what}", None, weak
    return None


WEAK_DIFFERENCE = "0 only where the two values coincide exactly"


def _spelled(call: OpCall) -> str:
    func = call.node.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else "prod"
    return name if "prod" in name else "prod"


def _unit_factors(ctx: FileContext, x: cst.BaseExpression, s: Scope, depth: int) -> str | None:
    """What says every factor of a product is in [0, 1], for the message: a probability
    (a sigmoid/softmax output, :func:`reaches_zero`'s ``probability``), ``1 - p`` of one,
    or a value named like one (``lam_j``, ``1 - lam_j``, ``probs``); None otherwise."""
    shown = f"`{' '.join(ctx.code(x).split())[:40]}`"
    inner = ctx.resolve(x, s)
    e = ctx.arithmetic(inner.expr, inner.scope) if inner.ctx is None else inner.expr
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Subtract) \
            and constant(ctx, e.left, inner.scope) == 1.0:
        if evidence.unit_name(e.right):
            return f"{shown} (one minus a value named as a probability)"
        p = reaches_zero(ctx, e.right, inner.scope, kinds=(PROBABILITY,), depth=depth)
        return f"{shown} (one minus {p.what})" if p is not None else None
    if evidence.unit_name(e) or evidence.unit_name(x):
        return f"{shown} (named as a probability)"
    p = reaches_zero(ctx, x, s, kinds=(PROBABILITY, COMPLEMENT), depth=depth)
    return f"{shown} ({p.what})" if p is not None else None


def _dropout(ctx: FileContext, call: OpCall, s: Scope, depth: int) -> Source | None:
    """A dropout (a function's output, or a layer standing for its output): exactly 0 on every
    dropped element whenever training can apply it -- strong evidence, whatever the rate (a
    fraction ``rate`` of the elements, every step).  A call that drops nothing is its input:
    a literal rate 0 (TensorFlow: also 1, TF1's positional keep_prob, an error in TF2), a
    literal keep_prob 1, ``training=False``, ``deterministic=True``."""
    rate = constant(ctx, call.value("rate"), s)
    keep = constant(ctx, call.value("keep_prob"), s)
    off = (rate is not None and (rate <= 0 or (rate >= 1 and call.framework.name == "tensorflow"))) \
        or (keep is not None and keep >= 1) or _flag(call.value("training")) is False \
        or _flag(call.value("deterministic")) is True
    if not off:
        return RECTIFIED, "a dropout output", None, None, DROPPED
    if call.op != o.DROPOUT or call.x is None or depth <= 0:
        return None  # a layer built turned off: its input is at the call, not followed
    inner = reaches_zero(ctx, call.x, s, depth=depth - 1)
    return None if inner is None else (inner.kind, inner.what, None, inner.weak, inner.reason)


def _flag(expr: cst.BaseExpression | None) -> bool | None:
    """A literal ``True``/``False``."""
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return expr.value == "True"
    return None


def _not_logit(ctx: FileContext, x: cst.BaseExpression | None, s: Scope) -> str | None:
    """Why a probability of ``x`` is weak evidence of 0: its argument is not a logit."""
    if x is None or evidence.logit(ctx, x, s):
        return None  # a layer's or model's activation: its pre-activation is a logit
    return "its argument is not a logit (an embedding, a box coordinate, a score): far from saturation in a trained model"


def _defensive(ctx: FileContext, x: cst.BaseExpression | None, s: Scope) -> str | None:
    if x is not None and evidence.indefinite(ctx, x, s):
        return None
    return "a defensive clamp: the code does not show the clamped value going negative"


def _binary(ctx: FileContext, e: cst.BinaryOperation, s: Scope, depth: int) -> Source | None:
    if isinstance(e.operator, cst.Subtract):
        one = constant(ctx, e.left, s)
        if one == 1.0 and depth > 0:
            p = reaches_zero(ctx, e.right, s, kinds=(PROBABILITY,), depth=depth - 1)
            if p is not None and "product" not in p.what and "sum" not in p.what:
                return COMPLEMENT, f"1 - {p.what}", None, p.weak
        return None
    if isinstance(e.operator, cst.Add):
        chain = terms(e, ctx, s)
        if len(chain) == 2 and all(sign > 0 for sign, _ in chain) and _matmul(ctx, chain[0][1], s) \
                and _bias(chain[1][1]):
            return AFFINE, "an affine output (matmul + bias)", None, None
        return None
    if isinstance(e.operator, cst.Power):
        if _even(ctx, e.right, s) and _difference(ctx, e.left, s):
            return DIFFERENCE, "a square of a difference", None, WEAK_DIFFERENCE
        return None
    if isinstance(e.operator, cst.Multiply) and depth > 0:
        for side in (e.left, e.right):
            if constant(ctx, side, s) is not None:
                continue
            inner = reaches_zero(ctx, side, s, kinds=(PROBABILITY, RECTIFIED), depth=depth - 1)
            if inner is not None:
                return inner.kind, f"a product with {inner.what}", None, inner.weak, inner.reason
        return None
    if isinstance(e.operator, cst.Divide):
        return _hand_probability(ctx, e, s)
    return None


def _hand_probability(ctx: FileContext, e: cst.BinaryOperation, s: Scope) -> Source | None:
    """``1 / (1 + exp(-z))`` (logit ``z``), ``e / (1 + e)``, ``exp(z) / sum(exp(z))``."""
    den = _strip(ctx, e.right, s)
    chain = terms(den, ctx, s)
    if len(chain) == 2 and all(sign > 0 for sign, _ in chain):
        ones = [t for _, t in chain if constant(ctx, t, s) == 1.0]
        rest = [t for _, t in chain if constant(ctx, t, s) != 1.0]
        if len(ones) == 1 and len(rest) == 1:
            exp = _exp(ctx, rest[0], s)
            if exp is not None and constant(ctx, e.left, s) == 1.0:
                z = _negated(exp)
                return PROBABILITY, "a hand-written sigmoid", z, _not_logit(ctx, z if z is not None else exp, s)
            if exp is not None and _exp(ctx, e.left, s) is not None:
                return PROBABILITY, "a hand-written sigmoid", None, _not_logit(ctx, exp, s)
        return None
    z = _exp(ctx, e.left, s)
    if z is not None:
        total = ctx.op_call(_strip(ctx, den, s), s)
        if total is not None and total.op == o.SUM and _exp(ctx, total.x, s) is not None:
            return PROBABILITY, "a hand-written softmax", None, _not_logit(ctx, z, s)
    return None


# --- helpers -------------------------------------------------------------------------
def _division(e: cst.BaseExpression) -> bool:
    return isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Divide)


def _strip(ctx: FileContext, expr: cst.BaseExpression, s: Scope) -> cst.BaseExpression:
    r = ctx.resolve(expr, s)
    return r.expr if r.scope is s else expr


def _exp(ctx: FileContext, expr: cst.BaseExpression | None, s: Scope) -> cst.BaseExpression | None:
    """The exponent ``z`` when ``expr`` is (a name assigned) ``exp(z)``."""
    if expr is None:
        return None
    call = ctx.op_call(_strip(ctx, expr, s), s)
    if call is not None and call.op == o.EXP and call.x is not None:
        return call.x
    return None


def _negated(z: cst.BaseExpression) -> cst.BaseExpression | None:
    if isinstance(z, cst.UnaryOperation) and isinstance(z.operator, cst.Minus):
        return z.expression
    return None


def _even(ctx: FileContext, expr: cst.BaseExpression | None, s: Scope) -> bool:
    p = constant(ctx, expr, s)
    return p is not None and p == int(p) and int(p) % 2 == 0 and p > 0


def _difference(ctx: FileContext, expr: cst.BaseExpression | None, s: Scope) -> bool:
    if expr is None:
        return False
    e = ctx.arithmetic(_strip(ctx, expr, s), s)
    return isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Subtract) \
        and constant(ctx, e.left, s) is None and constant(ctx, e.right, s) is None


def _filtered(ctx: FileContext, expr: cst.BaseExpression, s: Scope) -> bool:
    """``v[v != 0]``, ``v[v > 0]`` (the mask inline or through a name): the zeros are dropped."""
    if not (isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index)):
        return False
    test = ctx.condition(_strip(ctx, expr.slice[0].slice.value, s), s)
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return False
    target = test.comparisons[0]
    return isinstance(target.operator, (cst.NotEqual, cst.GreaterThan)) and constant(ctx, target.comparator, s) == 0.0 \
        and same(test.left, expr.value)


def _bias(expr: cst.BaseExpression) -> bool:
    """``b``, ``bias``, ``self.b1``, ``fc_bias``: a term named like a bias (``mel + floor``
    is a guard, not an affine layer)."""
    name = expr.attr.value if isinstance(expr, cst.Attribute) else expr.value if isinstance(expr, cst.Name) else None
    return name is not None and bool(_BIAS.match(name))


def _matmul(ctx: FileContext, expr: cst.BaseExpression, s: Scope) -> bool:
    e = _strip(ctx, expr, s)
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.MatrixMultiply):
        return True
    call = ctx.op_call(e, s)
    return call is not None and call.op == o.MATMUL


def _mask(ctx: FileContext, expr: cst.BaseExpression, s: Scope) -> bool:
    """A 0/1 mask built by a comparison (through casts and names): every reaching value."""
    found = ctx.values(expr, s, shape=True)
    for r in found:
        owner = r.ctx or ctx
        e = owner.condition(r.expr, r.scope)
        if isinstance(e, cst.Comparison):
            continue
        if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, cst.BitInvert):
            continue
        if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, (cst.BitAnd, cst.BitOr)):
            continue
        return False
    return bool(found)


def _holds_zero(ctx: FileContext, expr: cst.BaseExpression, s: Scope) -> bool:
    if isinstance(expr, (cst.List, cst.Tuple)):
        return any(not isinstance(el, cst.StarredElement) and _holds_zero(ctx, el.value, s) for el in expr.elements)
    value = constant(ctx, expr, s)
    return value is not None and value <= 0
