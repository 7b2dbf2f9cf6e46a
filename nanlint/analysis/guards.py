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
from nanlint.semantic.resolve import ASSIGN, Scope
from nanlint.semantic.literals import number, terms  # noqa: F401 - terms: rules import it from here

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
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = constant(ctx, expr.expression, scope, _depth + 1)
        return -inner if inner is not None else None
    if isinstance(expr, cst.BinaryOperation):
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
    if isinstance(expr, cst.Attribute):
        return NAMED_CONSTANTS.get(ctx.index.qualname(expr, scope) or "")
    if isinstance(expr, cst.Name):
        qual = ctx.index.qualname(expr, scope)  # from math import pi
        if qual in NAMED_CONSTANTS:
            return NAMED_CONSTANTS[qual]
        found = ctx.reaching(expr, scope)  # every assignment reaching the use gives the same constant
        if not found or not found[0] or any(b.kind != ASSIGN or b.value is None for b in found[0]):
            return None
        consts = {constant(ctx, b.value, b.scope or found[1], _depth + 1) for b in found[0]}
        return consts.pop() if len(consts) == 1 else None
    return None


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
_NONNEG_OPS = (o.ABS, o.SQUARE, o.EXP, o.SOFTPLUS, o.SIGMOID, o.SOFTMAX, o.SQRT, o.NORM)


def nonnegative(ctx: FileContext, expr: cst.BaseExpression, scope: Scope, _depth: int = 0) -> bool:
    """``expr >= 0`` for every input (may be 0)."""
    if _depth > 6:
        return False
    value = constant(ctx, expr, scope)
    if value is not None:
        return value >= 0
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Power):
        p = constant(ctx, expr.right, scope)
        return p is not None and p == int(p) and int(p) % 2 == 0
    call = ctx.op_call(expr, scope)
    if call is not None:
        if call.op in _NONNEG_OPS:
            return True
        if call.op == o.POW:
            p = constant(ctx, call.value("y"), scope)
            return p is not None and p == int(p) and int(p) % 2 == 0
        if call.op in (o.SUM, o.MEAN) and call.x is not None:
            return nonnegative(ctx, call.x, scope, _depth + 1)
    return guarded(ctx, expr, scope, _depth + 1)


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
    rebinding in place (``p = clip(p, 1e-7, 1.)``) before the use guards it."""
    if expr is None or _depth > 6:
        return False
    value = constant(ctx, expr, scope)
    if value is not None:
        return value > 0
    if isinstance(expr, (cst.Name, cst.Attribute)):
        reached = ctx.values(expr, scope, calls=False)
        if len(reached) == 1 and reached[0].expr is expr:
            return False  # nothing known about it
        return all(r.ctx is None and guarded(ctx, r.expr, r.scope, _depth + 1) for r in reached)
    chain = terms(expr)
    if len(chain) > 1:
        if absorbed_epsilon(ctx, expr, scope) is not None:
            return False
        for sign, term in chain:
            if sign > 0:
                value = constant(ctx, term, scope)
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
        return any(positive_bound(ctx, call.value(r), scope) and _is_bound_like(ctx, call.value(r), scope)
                   for r in ("x", "y"))
    if call.op in (o.MULTIPLY, o.DIVIDE):
        return guarded(ctx, call.x, scope, _depth + 1) and guarded(ctx, call.value("y"), scope, _depth + 1)
    if call.op in (o.SQRT, o.ABS):
        return guarded(ctx, call.x, scope, _depth + 1)
    return False


def _is_bound_like(ctx: FileContext, expr: cst.BaseExpression | None, scope: Scope) -> bool:
    return expr is not None and (constant(ctx, expr, scope) is not None or eps_named(ctx, expr))
