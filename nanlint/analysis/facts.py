"""Facts about values that rules ask for, decided over every value that reaches
an expression (:mod:`nanlint.semantic.reach`): a fact holds for a name only when it holds
for each of its reaching values.

* ``bounded_exponent``: ``exp(x)`` cannot overflow -- ``x`` is at most a constant
  below 88 (``tanh``, ``sigmoid``, ``-abs(.)``, ``-square(.)``, ``-where(x >= 0, x, -x)``,
  a clip or minimum, a ``where`` whose
  branches are non-positive where they are selected: ``where(x >= 0, -x, x)``).
* ``may_be_zero``: the code says a value can plausibly be exactly 0 (a difference,
  a gradient, a masked or rectified value), and why.
* ``gradient_free``: a value carries no gradient (constants, comparisons, counts).
* ``tested_as_number``: a parameter the function compares with a number in a Python
  condition (``if confidence > 0.0:``), so a scalar, not a tensor of data.
"""

from __future__ import annotations

import re

import libcst as cst

from nanlint.vocabulary import ops as o
from nanlint.semantic.context import FileContext
from nanlint.analysis.guards import NONNEGATIVE_OPS, constant, nonnegative  # noqa: F401 - NONNEGATIVE_OPS: read from here
from nanlint.semantic.resolve import Scope
from nanlint.semantic.literals import normalized
from nanlint.source.walk import FastVisitor

_BOUNDED_OPS = (o.TANH, o.SIGMOID, o.SOFTMAX)
EXP_OVERFLOW = 88.0  # exp(x) is inf in float32 above ~88.72


def bounded_exponent(ctx: FileContext, expr: cst.BaseExpression | None, scope: Scope, _depth: int = 4) -> bool:
    """``exp(expr)`` cannot overflow, for every value reaching ``expr``."""
    if expr is None or _depth < 0:
        return False
    reached = ctx.values(expr, scope, shape=True) if isinstance(expr, (cst.Name, cst.Attribute)) else None
    if reached is not None and not (len(reached) == 1 and reached[0].expr is expr):
        return all(r.ctx is None and _bounded(ctx, r.expr, r.scope, _depth - 1) for r in reached)
    return _bounded(ctx, expr, scope, _depth)


def _bounded(ctx: FileContext, expr: cst.BaseExpression, scope: Scope, depth: int) -> bool:
    value = constant(ctx, expr, scope)
    if value is not None:
        return value < EXP_OVERFLOW
    if nonpositive(ctx, expr, scope, depth):
        return True
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.Divide)):
        # -abs(d) * c (keras' logaddexp2): a non-positive exponent scaled by a factor that is
        # not a negative constant
        for a, b in ((expr.left, expr.right), (expr.right, expr.left)):
            if isinstance(expr.operator, cst.Divide) and a is expr.right:
                continue
            factor = constant(ctx, b, scope)
            if (factor is None or factor > 0) and constant(ctx, a, scope) is None \
                    and bounded_exponent(ctx, a, scope, depth - 1):
                return True
        return False
    call = ctx.op_call(expr, scope)
    if call is not None and call.op in _BOUNDED_OPS:
        return True  # tanh in [-1, 1], sigmoid and softmax in [0, 1]
    if call is not None and call.op in (o.CLIP, o.MINIMUM):
        bound = call.value("hi") if call.op == o.CLIP else None
        values = [constant(ctx, bound, scope)] if bound is not None else \
            [constant(ctx, call.x, scope), constant(ctx, call.value("y"), scope)]
        return any(v is not None and v < EXP_OVERFLOW for v in values)
    if call is not None and call.op == o.WHERE:
        return _where_bounded(ctx, call, scope, depth)
    return False


def nonpositive(ctx: FileContext, expr: cst.BaseExpression, scope: Scope, depth: int = 3) -> bool:
    """``expr <= 0`` for every input: ``-abs(.)``, ``-square(.)``, ``-(.)**2k``, ``-exp(.)``..."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = expr.expression
        if isinstance(inner, cst.BinaryOperation) and isinstance(inner.operator, cst.Power):
            p = constant(ctx, inner.right, scope)
            return p is not None and p == int(p) and int(p) % 2 == 0
        return nonnegative(ctx, inner, scope)  # -abs(x), -where(x >= 0, x, -x), -relu(x)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):  # -0.5 * d ** 2
        for a, b in ((expr.left, expr.right), (expr.right, expr.left)):
            c = constant(ctx, a, scope)
            if c is not None and c <= 0 and nonnegative(ctx, b, scope):
                return True
        return False
    call = ctx.op_call(expr, scope)  # x.abs().neg()
    if call is not None and call.op == o.NEGATIVE and call.x is not None:
        return nonnegative(ctx, call.x, scope)
    value = constant(ctx, expr, scope)
    return value is not None and value <= 0


def _where_bounded(ctx: FileContext, call, scope: Scope, depth: int) -> bool:
    """``where(c, a, b)`` whose branches are each bounded where selected: either bounded
    outright, or ``where(t >= 0, -t, t)`` (``t > 0``, ``t < 0``, ``0 <= t``...): the
    branch taken when ``t`` is non-negative negates it, the other keeps it negative."""
    a, b = call.value("x"), call.value("y")
    if a is None or b is None:
        return False
    if bounded_exponent(ctx, a, scope, depth - 1) and bounded_exponent(ctx, b, scope, depth - 1):
        return True
    cond = ctx.condition(ctx.resolve(call.value("cond"), scope).expr, scope) if call.has("cond") else None
    if not (isinstance(cond, cst.Comparison) and len(cond.comparisons) == 1):
        return False
    left, op, right = cond.left, cond.comparisons[0].operator, cond.comparisons[0].comparator
    if constant(ctx, left, scope) == 0.0:  # 0 <= t: as t >= 0
        left, right = right, left
        flip = {cst.LessThan: cst.GreaterThan, cst.LessThanEqual: cst.GreaterThanEqual,
                cst.GreaterThan: cst.LessThan, cst.GreaterThanEqual: cst.LessThanEqual}
        if type(op) not in flip:
            return False
        op = flip[type(op)]()
    if constant(ctx, right, scope) != 0.0:
        return False
    t = normalized(left)
    positive_when_true = isinstance(op, (cst.GreaterThan, cst.GreaterThanEqual))
    if not positive_when_true and not isinstance(op, (cst.LessThan, cst.LessThanEqual)):
        return False
    negated, kept = (a, b) if positive_when_true else (b, a)
    return _is_negation_of(negated, t) and normalized(kept) == t


def _is_negation_of(expr: cst.BaseExpression, text: str) -> bool:
    return (isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus)
            and normalized(expr.expression) == text)


# --- plausible zeros ------------------------------------------------------------------------
# A value is *plausibly* exactly zero, on inputs a training program sees, when the code says
# so: a difference of two values that can coincide (a distance to itself, x - mean of one
# element), a gradient (zero at an optimum), a masked, padded or rectified value, zeros.
# Not an embedding, a projection, a ray or a learned weight vector: singular only at exactly
# 0, which real data never reaches.
_GRADIENT_NAME = re.compile(r"^(g|gs|grad|grads|gradient|gradients|\w+_grads?|grads?_\w+|d_?loss\w*)$")
_DIFFERENCE_NAME = re.compile(r"^(d|dx|dy|dz|diff\w*|\w+_diffs?|delta\w*|\w+_delta|residuals?|err|errors?|"
                              r"offsets?|displacements?)$")
_MASK_NAME = re.compile(r"mask|pad", re.IGNORECASE)
_ZERO_MAKERS = frozenset({"zeros", "zeros_like", "new_zeros"})


def may_be_zero(ctx: FileContext, expr: cst.BaseExpression | None, scope: Scope, _depth: int = 3) -> str | None:
    """Why ``expr`` can plausibly be exactly 0 (``"a difference"``, ``"a gradient"``,
    ``"a masked value"``, ``"a rectified value"``, ``"zeros"``), for some value reaching it;
    None when nothing in the code says so."""
    if expr is None or _depth < 0:
        return None
    if isinstance(expr, cst.Name):  # what the code calls it: g = grad(loss, x)[0] is a gradient
        why = _named(expr.value)
        if why is not None:
            return why
    for r in ctx.values(expr, scope, shape=True):
        if r.ctx is not None:
            continue
        why = _zero_here(ctx, r.expr, r.scope, _depth)
        if why is not None:
            return why
    return None


def _zero_here(ctx: FileContext, e: cst.BaseExpression, scope: Scope, depth: int) -> str | None:
    e = ctx.arithmetic(e, scope)
    if isinstance(e, cst.BinaryOperation):
        if isinstance(e.operator, cst.Subtract):
            return "a difference of two values that can coincide"
        if isinstance(e.operator, cst.Multiply):
            for side in (e.left, e.right):
                if _is_mask(ctx, side, scope):
                    return "a masked value"
            return may_be_zero(ctx, e.left, scope, depth - 1) or may_be_zero(ctx, e.right, scope, depth - 1)
        if isinstance(e.operator, cst.Divide):
            return may_be_zero(ctx, e.left, scope, depth - 1)
        return None
    if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, cst.Minus):
        return may_be_zero(ctx, e.expression, scope, depth - 1)
    if isinstance(e, cst.Name) and _named(e.value) is not None:
        return _named(e.value)
    call = ctx.op_call(e, scope)
    if call is not None:
        if call.op == o.RELU:
            return "a rectified value"
        if call.op in (o.CLIP, o.MAXIMUM):
            lo = call.value("lo") if call.op == o.CLIP else call.value("y")
            if lo is not None and constant(ctx, lo, scope) == 0.0:
                return "a rectified value"
        if call.op in (o.WHERE, o.MASKED_FILL):
            fill = call.value("value") if call.op == o.MASKED_FILL else call.value("y")
            if fill is not None and constant(ctx, fill, scope) == 0.0:
                return "a masked value"
        if call.op in (o.SUM, o.MEAN, o.ABS, o.SQUARE, o.NEGATIVE) and call.x is not None:
            return may_be_zero(ctx, call.x, scope, depth - 1)
        return None
    if isinstance(e, cst.Call):
        func = e.func
        last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        if last in _ZERO_MAKERS and (isinstance(func, cst.Attribute) or ctx.index.qualname(func, scope)):
            return "zeros"
    return None


def _named(name: str) -> str | None:
    if _GRADIENT_NAME.match(name):
        return f"`{name}`, a gradient, zero at an optimum"
    if _DIFFERENCE_NAME.match(name):
        return f"`{name}`, a difference of values that can coincide"
    return None


def _is_mask(ctx: FileContext, expr: cst.BaseExpression, scope: Scope) -> bool:
    """A 0/1 mask: a comparison (cast or not) or a name that says it is one."""
    if isinstance(expr, (cst.Name, cst.Attribute)) and _MASK_NAME.search(ctx.code(expr)):
        return True
    for r in ctx.values(expr, scope, shape=True):
        e = r.expr
        if isinstance(e, cst.Comparison):
            return True
        if r.ctx is None and ctx.condition(e, scope) is not e:
            return True
        if isinstance(e, (cst.Name, cst.Attribute)) and _MASK_NAME.search(ctx.code(e)):
            return True
    return False


# --- values that carry no gradient -------------------------------------------------------------
_NO_GRADIENT_BUILTINS = frozenset({"len", "int", "float", "bool", "range", "round"})
# (not tensor()/constant(): a tape can watch one, and requires_grad=True makes one a leaf)
_NO_GRADIENT_MAKERS = frozenset({"arange", "zeros", "ones", "zeros_like", "ones_like", "eye", "linspace",
                                 "shape", "size", "numel"})


_ELEMENTWISE = frozenset({o.LOG, o.EXP, o.SQRT, o.SOFTMAX, o.SIGMOID, o.LOG_SOFTMAX})


def gradient_free(ctx: FileContext, expr: cst.BaseExpression | None, scope: Scope, _depth: int = 8) -> bool:
    """``expr`` carries no gradient: constants, comparisons and counts of them, shapes,
    ``arange``/``zeros``/``ones``, and arithmetic or reductions of those, for every value
    reaching it."""
    if expr is None or _depth < 0:
        return False
    if constant(ctx, expr, scope) is not None:
        return True
    if isinstance(expr, (cst.Name, cst.Attribute)) and not (
            isinstance(expr, cst.Attribute) and expr.attr.value in ("shape", "ndim", "dtype")):
        reached = ctx.values(expr, scope, shape=True)
        if len(reached) == 1 and reached[0].expr is expr:
            return False
        return all(r.ctx is None and gradient_free(ctx, r.expr, r.scope, _depth - 1) for r in reached)
    if isinstance(expr, cst.Attribute):
        return True  # x.shape, x.ndim
    if isinstance(expr, cst.Comparison) or ctx.condition(expr, scope) is not expr:
        return True
    expr = ctx.arithmetic(expr, scope)
    if isinstance(expr, cst.BinaryOperation):
        return gradient_free(ctx, expr.left, scope, _depth - 1) and gradient_free(ctx, expr.right, scope, _depth - 1)
    if isinstance(expr, cst.UnaryOperation):
        return gradient_free(ctx, expr.expression, scope, _depth - 1)
    if isinstance(expr, cst.Subscript):
        return gradient_free(ctx, expr.value, scope, _depth - 1)
    if isinstance(expr, (cst.List, cst.Tuple)):  # a literal list of constants: data
        return bool(expr.elements) and all(not isinstance(e, cst.StarredElement)
                                           and gradient_free(ctx, e.value, scope, _depth - 1) for e in expr.elements)
    if not isinstance(expr, cst.Call):
        return False
    call = ctx.op_call(expr, scope)
    if call is not None:
        if call.op in (o.SUM, o.MEAN, o.SHAPE, o.REDUCE_MAX, o.REDUCE_MIN, o.ABS, o.FLOOR, o.ROUND) \
                or call.op in _ELEMENTWISE:  # a function of constants alone is a constant
            return call.x is not None and gradient_free(ctx, call.x, scope, _depth - 1)
        return call.op in (o.STOP_GRADIENT, o.RANDOM_UNIFORM)
    func = expr.func
    if isinstance(func, cst.Name) and func.value in _NO_GRADIENT_BUILTINS and not ctx.index.is_bound(func.value, scope):
        return True
    if isinstance(func, cst.Attribute):
        if func.attr.value in ("float", "long", "int", "double", "half", "sum", "size", "numel", "item"):
            return gradient_free(ctx, func.value, scope, _depth - 1)  # count.float(), mask.sum()
        if func.attr.value in _NO_GRADIENT_MAKERS and ctx.index.qualname(func, scope) is not None:
            return not any(a.keyword is not None and a.keyword.value == "requires_grad" for a in expr.args)
    return False


def uniform_below_one(ctx: FileContext, expr: cst.BaseExpression, scope: Scope) -> bool:
    """Every value reaching ``expr`` is a uniform draw below 1 (``torch.rand``,
    ``tf.random.uniform`` without a ``maxval`` above 1): it never reaches 1."""
    for r in ctx.values(expr, scope, shape=True):
        call = ctx.op_call(r.expr, r.scope) if r.ctx is None else None
        if call is None or call.op != o.RANDOM_UNIFORM:
            return False
        hi = call.value("hi")
        if hi is not None and (constant(ctx, hi, r.scope) or 2.0) > 1.0:
            return False
    return True


# --- a probability taken where it was chosen ----------------------------------------------------
_GATHERS = frozenset({"gather", "take_along_axis", "take_along_dim"})
_CHOOSERS = frozenset({"argmax", "multinomial", "categorical"})
_LAYOUT_METHODS = frozenset({"squeeze", "unsqueeze", "view", "reshape", "flatten", "float", "to", "contiguous"})


def chosen(ctx: FileContext, expr: cst.BaseExpression, scope: Scope) -> bool:
    """Every value reaching ``expr`` is a probability gathered at an index chosen from it
    (``p.gather(1, argmax(p))``, ``take_along_axis(p, multinomial(p))``): never 0, since
    sampling never draws a class of probability 0 and the argmax is at least 1/K."""
    found = ctx.values(expr, scope)
    for r in found:
        owner = r.ctx or ctx
        call = _strip_layout(r.expr)
        if not (isinstance(call, cst.Call) and _last(call.func) in _GATHERS):
            return False
        indices = [a.value for a in call.args if a.keyword is not None and a.keyword.value in ("index", "indices")]
        indices = indices or [a.value for a in call.args if a.keyword is None]
        if not any(_chooser(owner, i, r.scope) for i in indices):
            return False
    return bool(found)


def _chooser(ctx: FileContext, expr: cst.BaseExpression, scope: Scope) -> bool:
    found = ctx.values(expr, scope)
    return bool(found) and all(isinstance(c := _strip_layout(r.expr), cst.Call) and _last(c.func) in _CHOOSERS
                               for r in found)


def _strip_layout(e: cst.BaseExpression) -> cst.BaseExpression:
    while isinstance(e, cst.Call) and isinstance(e.func, cst.Attribute) and e.func.attr.value in _LAYOUT_METHODS:
        e = e.func.value
    return e


def _last(func: cst.BaseExpression) -> str:
    return func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""


class _PythonTests(FastVisitor):
    """The tests of a function's ``if``, ``while``, ``assert`` and conditional expressions,
    not those of the functions and lambdas nested in it."""

    def __init__(self, root: cst.CSTNode) -> None:
        self.root, self.tests = root, []

    def visit_FunctionDef(self, node) -> bool:
        return node is self.root

    def visit_Lambda(self, node) -> bool:
        return False

    def visit_If(self, node) -> None:
        self.tests.append(node.test)

    def visit_While(self, node) -> None:
        self.tests.append(node.test)

    def visit_IfExp(self, node) -> None:
        self.tests.append(node.test)

    def visit_Assert(self, node) -> None:
        self.tests.append(node.test)


def tested_as_number(ctx: FileContext, name: str, scope: Scope) -> bool:
    """``name``, a parameter of the function of ``scope``, is compared with a number literal in
    one of its Python conditions (``if gaussian and confidence > 0.0:``): a Python bool of a
    tensor of many values raises (in graph mode, of any tensor), so what the callers pass is a
    number -- a hyperparameter, whose zero is a configuration, not data."""
    root = scope.node
    if scope.kind != "function":
        return False
    found = ctx.memo(f"facts.python_tests:{id(root)}", lambda: _tests_of(root))
    return any(_compares(test, name) for test in found)


def _tests_of(root: cst.CSTNode) -> list[cst.BaseExpression]:
    visitor = _PythonTests(root)
    visitor.walk(root)
    return visitor.tests


def _compares(test: cst.BaseExpression, name: str) -> bool:
    if isinstance(test, cst.BooleanOperation):
        return _compares(test.left, name) or _compares(test.right, name)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _compares(test.expression, name)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        a, b = test.left, test.comparisons[0].comparator
        for one, other in ((a, b), (b, a)):
            if isinstance(other, cst.UnaryOperation) and isinstance(other.operator, cst.Minus):
                other = other.expression
            if isinstance(one, cst.Name) and one.value == name and isinstance(other, (cst.Integer, cst.Float)):
                return True
    return False
