"""What is known about a value's sign: constants, additive chains, epsilons that
survive float32 rounding, and the guards (clip, maximum, ``+ eps``) that keep a
log's argument away from zero.  Shared by the log rules (NAN103-NAN109).

Float32 facts used here (measured with numpy, TF 2.21, torch 2.13, JAX 0.10):

* ``1 + eps == 1`` for ``eps <= 2**-24`` (5.96e-8) and ``1 - eps == 1`` for
  ``eps <= 2**-25`` (2.98e-8): ``1e-10 + 1 - p`` is ``1 - p``, exactly 0 once
  ``p`` is 1, so ``log(1e-10 + 1 - p)`` is -inf and its gradient NaN.
* ``1 - p + 1e-10`` is evaluated as ``(1 - p) + 1e-10``: when ``p == 1`` the
  epsilon survives (``log`` is -23.03, gradient finite), so it *is* a guard.
"""

from __future__ import annotations

import re
import struct

import libcst as cst

from nanlint.vocabulary import ops as o
from nanlint.semantic.context import FileContext
from nanlint.semantic.navigation import precedes
from nanlint.semantic.resolve import ASSIGN, Scope, dotted
from nanlint.semantic.literals import normalized, number, terms  # noqa: F401 - terms: rules import it from here

F32_ABSORBED_ADD = 2.0 ** -24  # 1 + eps == 1 in float32 for eps <= this


def float32(value: float) -> float:
    """``value`` rounded to float32 (inf past its range)."""
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return float("inf")
F32_ABSORBED_SUB = 2.0 ** -25  # 1 - eps == 1 in float32 for eps <= this
_EPS_NAME = re.compile(r"eps|epsilon|tiny|smooth", re.IGNORECASE)
NAMED_CONSTANTS = {f"{module}.{name}": value for module in ("math", "numpy", "torch", "jax.numpy")
                    for name, value in (("pi", 3.141592653589793), ("e", 2.718281828459045),
                                        ("tau", 6.283185307179586))}


# --- constants ---------------------------------------------------------------------
def constant(ctx: FileContext, expr: cst.BaseExpression | None, scope: Scope, _depth: int = 0) -> float | None:
    """The value of a numeric constant: a literal, literal arithmetic, or a name
    assigned exactly once (unconditionally) to one, in this or an enclosing scope."""
    if expr is None or _depth > 6:
        return None
    n = number(expr)
    if n is not None:
        return n
    kind = type(expr)  # not isinstance: libcst's classes are ABCs, whose misses are slow (no subclasses)
    if kind is cst.UnaryOperation and type(expr.operator) is cst.Minus:
        inner = constant(ctx, expr.expression, scope, _depth + 1)
        return -inner if inner is not None else None
    if kind is cst.BinaryOperation:
        a = constant(ctx, expr.left, scope, _depth + 1)
        b = constant(ctx, expr.right, scope, _depth + 1)
        if a is None or b is None:
            return None
        try:
            if isinstance(expr.operator, cst.Add):
                return a + b
            if isinstance(expr.operator, cst.Subtract):
                return a - b
            if isinstance(expr.operator, cst.Multiply):
                return a * b
            if isinstance(expr.operator, cst.Divide):
                return a / b
            if isinstance(expr.operator, cst.Power):
                return float(a ** b)
        except (ZeroDivisionError, OverflowError, TypeError):
            return None
        return None
    if kind is cst.Attribute:
        return NAMED_CONSTANTS.get(ctx.index.qualname(expr, scope) or "")
    if kind is cst.Name:
        qual = ctx.index.qualname(expr, scope)  # from math import pi
        if qual in NAMED_CONSTANTS:
            return NAMED_CONSTANTS[qual]
        visible = ctx.index.lookup(expr.value, scope)
        if visible is None or not any(b.kind == ASSIGN and b.value is not None for b in visible[0]):
            return None  # what reaches the use is some of these (a parameter, an import): no flow needed
        found = ctx.reaching(expr, scope)  # every assignment reaching the use gives the same constant
        if not found or not found[0] or any(b.kind != ASSIGN or b.value is None for b in found[0]):
            return None
        consts = {constant(ctx, b.value, b.scope or found[1], _depth + 1) for b in found[0]}
        return consts.pop() if len(consts) == 1 else None
    return None


def default_value(ctx: FileContext, expr: cst.BaseExpression | None, scope: Scope) -> float | None:
    """The numeric default a hyperparameter takes when nothing else is known of it: a
    parameter's default (``def f(x, eps=1e-6)``), ``self.eps`` set only from an
    ``__init__`` keyword with one (``self.eps = eps``) or a constant, a dataclass field or
    class attribute (``eps: float = 1e-6``).  A caller may pass another value; a positive
    default says the value is meant positive, as an epsilon's name does (:func:`eps_named`)."""
    if isinstance(expr, cst.Name):
        found = scope.bindings.get(expr.value) if scope.kind == "function" else None
        if found is None:
            reached = ctx.reaching(expr, scope)
            found = list(reached[0]) if reached else None
        if not found or len(found) != 1 or not isinstance(found[0].node, cst.Param):
            return None
        default = found[0].node.default
        return constant(ctx, default, scope) if default is not None else None
    if not (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self"):
        return None
    cls = scope.enclosing_class()
    if cls is None:
        return None
    name = expr.attr.value
    values: set[float | None] = set()
    for b in cls.attributes.get(name, []):
        if b.kind != ASSIGN or b.value is None or b.scope is None:
            return None
        value = constant(ctx, b.value, b.scope)
        values.add(value if value is not None else default_value(ctx, b.value, b.scope))
    for b in cls.bindings.get(name, []):  # dataclass fields, class attributes
        if b.kind != ASSIGN or b.value is None:
            return None
        values.add(constant(ctx, b.value, cls))
    if len(values) != 1:
        return None
    return values.pop()


def known(ctx: FileContext, expr: cst.BaseExpression | None, scope: Scope) -> float | None:
    """A constant, else a hyperparameter's default (:func:`default_value`)."""
    value = constant(ctx, expr, scope)
    return value if value is not None else default_value(ctx, expr, scope)


def eps_named(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """``eps``, ``self.epsilon``, ``K.epsilon()``, ``EPS``: a name that says it is an epsilon."""
    if isinstance(expr, cst.Call) and not expr.args:
        expr = expr.func
    if isinstance(expr, cst.Attribute):
        return bool(_EPS_NAME.search(expr.attr.value))
    if isinstance(expr, cst.Name):
        return bool(_EPS_NAME.search(expr.value))
    return False


# --- additive chains ------------------------------------------------------------------
def absorbed_epsilon(ctx: FileContext, expr: cst.BaseExpression, scope: Scope) -> tuple[cst.BaseExpression, float, float] | None:
    """An epsilon added to a constant of magnitude ~1 *before* a tensor is subtracted
    (``1e-10 + 1 - p``, ``(1 + 1e-10) - p``): float32 rounds it away.  Returns the
    epsilon's node, its value and the constant it is lost in."""
    chain = terms(expr)
    run: list[tuple[int, cst.BaseExpression, float]] = []
    for sign, term in chain:
        value = constant(ctx, term, scope)
        if value is None:
            break
        run.append((sign, term, sign * value))
    rest = chain[len(run):]
    if len(run) < 2 or not any(sign < 0 for sign, _ in rest):
        return None
    big = abs(sum(v for _, _, v in run))
    for sign, term, value in run:
        if 0 < value <= big * F32_ABSORBED_ADD:
            return term, value, big
    return None


# --- signs ------------------------------------------------------------------------------
NONNEGATIVE_OPS = (o.ABS, o.SQUARE, o.EXP, o.SOFTPLUS, o.SIGMOID, o.SOFTMAX, o.SQRT, o.NORM, o.RELU)


def nonnegative(ctx: FileContext, expr: cst.BaseExpression, scope: Scope, _depth: int = 0) -> bool:
    """``expr >= 0`` for every input (may be 0): a constant or default, ``abs``, squares,
    ``relu``, ``exp``...; ``where(x >= 0, x, -x)`` and ``where(x > 0, x, 0)`` (abs and relu
    written with where); sums, products and means of such values; ``x + c`` with both
    non-negative (for every value reaching a name)."""
    if _depth > 6:
        return False
    value = known(ctx, expr, scope)
    if value is not None:
        return value >= 0
    if isinstance(expr, (cst.Name, cst.Attribute)):
        reached = ctx.values(expr, scope, calls=False)
        if not (len(reached) == 1 and reached[0].expr is expr):
            return all(r.ctx is None and nonnegative(ctx, r.expr, r.scope, _depth + 1) for r in reached)
    expr = ctx.arithmetic(expr, scope)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Power):
        p = constant(ctx, expr.right, scope)
        return p is not None and p == int(p) and int(p) % 2 == 0
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Multiply, cst.Divide)) \
            and nonnegative(ctx, expr.left, scope, _depth + 1) and nonnegative(ctx, expr.right, scope, _depth + 1):
        return True  # else, as before: a guard (``x + eps``) keeps it positive
    call = ctx.op_call(expr, scope)
    if call is not None:
        if call.op in NONNEGATIVE_OPS:
            return True
        if call.op == o.POW:
            p = constant(ctx, call.value("y"), scope)
            return p is not None and p == int(p) and int(p) % 2 == 0
        if call.op in (o.SUM, o.MEAN) and call.x is not None:
            return nonnegative(ctx, call.x, scope, _depth + 1)
        if call.op == o.WHERE:
            return _where_nonnegative(ctx, call, scope, _depth)
    return guarded(ctx, expr, scope, _depth + 1)


def _where_nonnegative(ctx: FileContext, call, scope: Scope, depth: int) -> bool:
    """``where(c, a, b)`` non-negative wherever each branch is taken: both branches are, or
    ``where(t >= 0, t, -t)`` / ``where(t > 0, t, 0)`` (``t < 0`` with the branches swapped)."""
    a, b = call.value("x"), call.value("y")
    if a is None or b is None:
        return False
    if nonnegative(ctx, a, scope, depth + 1) and nonnegative(ctx, b, scope, depth + 1):
        return True
    sign = sign_test(ctx, call.value("cond"), scope)
    if sign is None:
        return False
    t, positive_when_true = sign
    kept, other = (a, b) if positive_when_true else (b, a)
    if normalized(kept) != t:
        return False
    return (isinstance(other, cst.UnaryOperation) and isinstance(other.operator, cst.Minus)
            and normalized(other.expression) == t) or constant(ctx, other, scope) == 0.0


def sign_test(ctx: FileContext, cond: cst.BaseExpression | None, scope: Scope) -> tuple[str, bool] | None:
    """A where's condition comparing a value with 0 (``t >= 0``, ``t > 0``, ``0 <= t``,
    ``t < 0``...): the value's text and whether the condition holds where it is positive."""
    if cond is None:
        return None
    cond = ctx.condition(ctx.resolve(cond, scope).expr, scope)
    if not (isinstance(cond, cst.Comparison) and len(cond.comparisons) == 1):
        return None
    left, op, right = cond.left, cond.comparisons[0].operator, cond.comparisons[0].comparator
    if constant(ctx, left, scope) == 0.0:  # 0 <= t: as t >= 0
        flip = {cst.LessThan: cst.GreaterThan, cst.LessThanEqual: cst.GreaterThanEqual,
                cst.GreaterThan: cst.LessThan, cst.GreaterThanEqual: cst.LessThanEqual}
        if type(op) not in flip:
            return None
        left, right, op = right, left, flip[type(op)]()
    if constant(ctx, right, scope) != 0.0:
        return None
    if isinstance(op, (cst.GreaterThan, cst.GreaterThanEqual)):
        return normalized(left), True
    if isinstance(op, (cst.LessThan, cst.LessThanEqual)):
        return normalized(left), False
    return None


def positive_bound(ctx: FileContext, expr: cst.BaseExpression | None, scope: Scope) -> bool:
    """A lower bound that keeps a value away from 0: a positive constant, or a
    non-constant (``eps``, ``K.epsilon()``), which is taken as meant to be positive."""
    if expr is None:
        return False
    value = constant(ctx, expr, scope)
    return value > 0 if value is not None else True


def guarded(ctx: FileContext, expr: cst.BaseExpression | None, scope: Scope, _depth: int = 0) -> bool:
    """``expr`` is provably positive, or guarded the way people guard a log:
    ``p + eps`` (an epsilon that survives float32), ``clip(p, eps, ...)``,
    ``maximum(p, eps)``, ``1 + square(x)``, a positive constant.  ``exp``,
    ``softplus``, ``sigmoid`` and ``softmax`` are *not* guards: they underflow to 0.

    A name is guarded when every value reaching it is (:mod:`nanlint.semantic.reach`): a
    rebinding in place (``p = clip(p, 1e-7, 1.)``, ``p += eps``) before the use guards it, and
    so does a floor written in place (``p[p == 0] = 1``, :func:`floored_in_place`)."""
    if expr is None or _depth > 6:
        return False
    value = constant(ctx, expr, scope)
    if value is not None:
        return value > 0
    if isinstance(expr, (cst.Name, cst.Attribute)):
        if floored_in_place(ctx, expr, scope):
            return True
        reached = ctx.values(expr, scope, calls=False)
        if len(reached) == 1 and reached[0].expr is expr:
            default = default_value(ctx, expr, scope)  # self.eps of __init__(self, eps=1e-6)
            return default is not None and default > 0
        return all(r.ctx is None and guarded(ctx, r.expr, r.scope, _depth + 1) for r in reached)
    chain = terms(expr)
    if len(chain) > 1:
        if absorbed_epsilon(ctx, expr, scope) is not None:
            return False
        for sign, term in chain:
            if sign > 0:
                value = known(ctx, term, scope)
                if (value is not None and 0 < value < 1) or (value is None and eps_named(ctx, term)):
                    return True
        positives = [t for s, t in chain if s > 0]
        if len(positives) == len(chain) and any(guarded(ctx, t, scope, _depth + 1) for t in positives) \
                and all(nonnegative(ctx, t, scope, _depth + 1) for t in positives):
            return True  # 1 + square(x), norm(x) + 1
        return False
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.Divide)):
        return guarded(ctx, expr.left, scope, _depth + 1) and guarded(ctx, expr.right, scope, _depth + 1)
    call = ctx.op_call(expr, scope)
    if call is None:
        return False
    if call.op == o.CLIP:
        return positive_bound(ctx, call.value("lo"), scope)
    if call.op == o.MAXIMUM:
        return any(_positive(ctx, call.value(r), scope) for r in ("x", "y"))
    if call.op in (o.MULTIPLY, o.DIVIDE):
        return guarded(ctx, call.x, scope, _depth + 1) and guarded(ctx, call.value("y"), scope, _depth + 1)
    if call.op in (o.SQRT, o.ABS):
        return guarded(ctx, call.x, scope, _depth + 1)
    if call.op == o.SHAPE and not casts(call):  # a layout op keeps the values (a cast may not: 1e-8 in float16)
        return guarded(ctx, call.x, scope, _depth + 1)
    if call.op == o.SUM:  # a sum of exp(x - max(x)) holds exp(0) = 1; a sum of guarded terms is guarded
        return shifted_exps(ctx, call.x, scope) or guarded(ctx, call.x, scope, _depth + 1)
    return False


def casts(call) -> bool:
    """A layout op that may change the dtype: ``tf.cast``, ``x.to(torch.float16)``, ``x.half()``."""
    func = call.node.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    return call.has("dtype") or name in o.CAST_NAMES


def shifted_exps(ctx: FileContext, expr: cst.BaseExpression | None, scope: Scope) -> bool:
    """``exp(x - max(x))`` (through names): a sum of it holds ``exp(0) = 1``, so it is at
    least 1 (pyro's ``relative_probs = (w - w.max()).exp()``; ``sum(relative_probs)``)."""
    if expr is None:
        return False
    found = ctx.values(expr, scope, shape=True)
    if not found:
        return False
    for r in found:
        if r.ctx is not None:
            return False
        call = ctx.op_call(r.expr, r.scope)
        if call is None or call.op != o.EXP or call.x is None:
            return False
        e = ctx.arithmetic(ctx.resolve(call.x, r.scope).expr, r.scope)
        if not (isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Subtract)
                and _max_of(ctx, e.right, e.left, r.scope)):
            return False
    return True


def _max_of(ctx: FileContext, m: cst.BaseExpression, x: cst.BaseExpression, scope: Scope) -> bool:
    """``m`` is the max of ``x`` (``x.max()``, ``x.max(-1, keepdim=True).values``,
    ``reduce_max(x, axis)``, ``stop_gradient`` of one; through a name)."""
    e = ctx.resolve(m, scope).expr
    while True:
        if isinstance(e, cst.Attribute) and e.attr.value in ("values", "data"):
            e = e.value
        elif isinstance(e, cst.Subscript):
            e = e.value  # x.max(dim)[0]
        else:
            call = ctx.op_call(e, scope)
            if call is not None and call.op == o.STOP_GRADIENT and call.x is not None:
                e = ctx.resolve(call.x, scope).expr
                continue
            break
    call = ctx.op_call(e, scope)
    return call is not None and call.op == o.REDUCE_MAX and call.x is not None and normalized(call.x) == normalized(x)


# --- floors written in place ------------------------------------------------------------
_CLAMPS = {"clamp_": "min", "clip_": "min", "clamp_min_": "min"}


def floored_in_place(ctx: FileContext, expr: cst.BaseExpression, scope: Scope) -> bool:
    """Before this use, the value reaching ``expr`` had its zeros (or what lies below a
    positive floor) replaced in place by a positive value: ``m[m == 0] = 1``,
    ``std[std < eps] = eps``, ``m.clamp_(min=eps)``, ``m.masked_fill_(m == 0, 1)``,
    ``m.add_(eps)`` (:attr:`Scope.mutations`)."""
    name = dotted(expr)
    if name is None or name not in scope.mutations:
        return False
    use = ctx.reaching(expr, scope) if isinstance(expr, cst.Name) else None
    for node in scope.mutations[name]:
        if isinstance(node, cst.Assign):
            target = node.targets[0].target
            if not (len(node.targets) == 1 and isinstance(target, cst.Subscript) and len(target.slice) == 1
                    and isinstance(target.slice[0].slice, cst.Index)):
                continue
            obj, floored = target.value, (_zero_test(ctx, target.slice[0].slice.value, name, scope)
                                          and _positive(ctx, node.value, scope))
        elif isinstance(node, cst.Call):
            obj, floored = node.func.value, _floors(ctx, node, name, scope)  # type: ignore[attr-defined]
        else:
            continue  # m[i] += v
        if floored and precedes(ctx, node, expr) and (
                use is None or (isinstance(obj, cst.Name) and ctx.reaching(obj, scope) == use)):
            return True
    return False


def _floors(ctx: FileContext, call: cst.Call, name: str, scope: Scope) -> bool:
    method = call.func.attr.value  # type: ignore[attr-defined]
    args = {a.keyword.value if a.keyword else i: a.value for i, a in enumerate(call.args)}
    if method in _CLAMPS:
        lo = args.get(_CLAMPS[method], args.get(0))
        return lo is not None and _positive(ctx, lo, scope)
    if method == "masked_fill_":
        test, value = args.get("mask", args.get(0)), args.get("value", args.get(1))
        return test is not None and value is not None and _zero_test(ctx, test, name, scope) \
            and _positive(ctx, value, scope)
    if method == "add_":
        eps = args.get("other", args.get(0))
        value = known(ctx, eps, scope) if eps is not None else None
        return eps is not None and ((value is not None and 0 < value < 1) or (value is None and eps_named(ctx, eps)))
    return False


def _positive(ctx: FileContext, expr: cst.BaseExpression | None, scope: Scope) -> bool:
    """A positive constant, or a name that says it is an epsilon (``maximum(p, eps)``'s bound,
    a floor written in place)."""
    value = constant(ctx, expr, scope)
    return value > 0 if value is not None else eps_named(ctx, expr)


def _zero_test(ctx: FileContext, test: cst.BaseExpression, name: str, scope: Scope) -> bool:
    """``test`` selects the zeros of ``name``: ``m == 0``, ``m <= 0``, ``m < eps``
    (``eps > 0``), or what lies below a positive floor."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and dotted(test.left) == name):
        return False
    op, bound = test.comparisons[0].operator, test.comparisons[0].comparator
    value = constant(ctx, bound, scope)
    if isinstance(op, cst.Equal):
        return value == 0.0
    if isinstance(op, cst.LessThanEqual):
        return (value is not None and value >= 0) or (value is None and eps_named(ctx, bound))
    if isinstance(op, cst.LessThan):
        return (value is not None and value > 0) or (value is None and eps_named(ctx, bound))
    return False
