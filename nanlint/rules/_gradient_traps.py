"""Shared helpers of the gradient-trap rules (NAN201-NAN205): expression
shapes (sums of squares, norms, dot products, hazardous ops) spoken of in the
canonical op vocabulary, and small builders for their fixes."""

from __future__ import annotations

import re
from typing import Iterator

import libcst as cst

from nanlint import fixes
from nanlint import ops as o
from nanlint.context import FileContext, OpCall
from nanlint.resolve import Scope
from nanlint.values import is_literal, number
from nanlint.walk import FastVisitor

EPS_SQ = "1e-12"  # added under a sqrt: sqrt(1e-12) = 1e-6, invisible next to any real distance


def bare(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr`` without its own parentheses."""
    if getattr(expr, "lpar", None):
        return expr.with_changes(lpar=[], rpar=[])
    return expr


def key(ctx: FileContext, expr: cst.BaseExpression | None) -> str | None:
    """A whitespace- and parenthesis-insensitive text of ``expr``, to compare operands."""
    if expr is None:
        return None
    return re.sub(r"\s+", "", cst.Module(body=[]).code_for_node(bare(expr)))


def op_kind(ctx: FileContext, expr: cst.BaseExpression | None, scope: Scope) -> OpCall | None:
    if expr is None:
        return None
    return ctx.op_call(expr, scope)


def is_op(ctx: FileContext, expr, scope: Scope, *ops: str) -> OpCall | None:
    call = op_kind(ctx, expr, scope)
    return call if call is not None and call.op in ops else None


def follow(ctx: FileContext, expr: cst.BaseExpression, scope: Scope) -> tuple[cst.BaseExpression, Scope]:
    r = ctx.resolve(expr, scope)
    return r.expr, r.scope


def binop(expr, *operators) -> cst.BinaryOperation | None:
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, operators):
        return expr
    return None


def literal_exponent(expr) -> float | None:
    return number(expr)


def divisions(ctx: FileContext) -> Iterator[tuple[cst.CSTNode, Scope, cst.BaseExpression, cst.BaseExpression]]:
    """Every division ``num / den`` (operator or divide op): (node, scope, num, den)."""
    for node, scope in ctx.index.binops:
        if isinstance(node.operator, cst.Divide):
            yield node, scope, node.left, node.right
    for call in ctx.calls(o.DIVIDE):
        if call.x is not None and call.has("y"):
            yield call.node, call.scope, call.x, call.value("y")  # type: ignore[misc]


# --- squares, sums of squares, norms ---------------------------------------------------------
def square_base(ctx: FileContext, expr, scope: Scope) -> cst.BaseExpression | None:
    """``b`` when ``expr`` is ``square(b)``, ``b ** 2``, ``pow(b, 2)`` or ``b * b``."""
    call = is_op(ctx, expr, scope, o.SQUARE, o.POW)
    if call is not None:
        if call.op == o.SQUARE or number(call.value("y")) == 2.0:
            return call.x
        return None
    b = binop(expr, cst.Power)
    if b is not None and number(b.right) == 2.0:
        return b.left
    b = binop(expr, cst.Multiply)
    if b is not None and key(ctx, b.left) == key(ctx, b.right):
        return b.left
    return None


def sum_of_squares(ctx: FileContext, expr, scope: Scope, depth: int = 3) -> tuple[OpCall | None, cst.BaseExpression | None] | None:
    """(the sum call, the squared base) when ``expr`` is a sum of squares:
    ``sum(square(b), axis)``, ``(b ** 2).sum(-1)``, or ``dx**2 + dy**2``."""
    expr, scope = follow(ctx, expr, scope)
    call = is_op(ctx, expr, scope, o.SUM)
    if call is not None and call.x is not None:
        inner, inner_scope = follow(ctx, call.x, scope)
        base = square_base(ctx, inner, inner_scope)
        if base is not None:
            return call, base
        return None
    b = binop(expr, cst.Add)
    if b is not None and depth > 0:
        sides = [b.left, b.right]
        if all(square_base(ctx, s, scope) is not None or sum_of_squares(ctx, s, scope, depth - 1) is not None
               for s in sides):
            return None, None
    return None


def is_difference(ctx: FileContext, expr, scope: Scope) -> bool:
    expr, scope = follow(ctx, expr, scope)
    return binop(expr, cst.Subtract) is not None or is_op(ctx, expr, scope, o.SUBTRACT) is not None


def euclidean_norm(call: OpCall) -> bool:
    """A 2-norm (the default order, or ord 2 / 'euclidean' / 'fro')."""
    ord_ = call.value("ord")
    if ord_ is None or (isinstance(ord_, cst.Name) and ord_.value == "None"):
        return True
    if number(ord_) == 2.0:
        return True
    return isinstance(ord_, cst.SimpleString) and ord_.evaluated_value in ("euclidean", "fro")


def sqrt_argument(ctx: FileContext, expr, scope: Scope) -> tuple[str, cst.CSTNode, cst.BaseExpression] | None:
    """When ``expr`` is a square root: (how, node, argument): ``sqrt(s)``, ``s.sqrt()``,
    ``pow(s, 0.5)``, ``s ** 0.5``."""
    call = is_op(ctx, expr, scope, o.SQRT, o.POW)
    if call is not None and call.x is not None:
        if call.op == o.SQRT or number(call.value("y")) == 0.5:
            return ("method" if call.is_method else "call"), call.node, call.x
        return None
    b = binop(expr, cst.Power)
    if b is not None and number(b.right) == 0.5:
        return "power", b, b.left
    return None


def add_eps(expr: cst.BaseExpression, eps: str = EPS_SQ) -> cst.BinaryOperation:
    """``expr + eps`` with parentheses where ``expr`` needs them."""
    inner = bare(expr)
    if not (fixes.is_atomic(inner) or (isinstance(inner, cst.BinaryOperation) and isinstance(
            inner.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.Power, cst.FloorDivide,
                             cst.Modulo, cst.MatrixMultiply)))
            or isinstance(inner, cst.UnaryOperation)):
        inner = fixes.parenthesize(inner)
    return cst.BinaryOperation(inner, cst.Add(), cst.Float(eps))


def sqrt_plus_eps(ctx: FileContext, how: str, node: cst.CSTNode, arg: cst.BaseExpression) -> cst.CSTNode:
    """The square root ``node`` (as classified by :func:`sqrt_argument`) of ``arg + eps``."""
    guarded = add_eps(arg)
    if how == "method":
        assert isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
        return node.with_changes(func=node.func.with_changes(value=fixes.parenthesize(guarded)))
    if how == "power":
        assert isinstance(node, cst.BinaryOperation)
        return node.with_changes(left=fixes.parenthesize(guarded))
    assert isinstance(node, cst.Call)
    return _replace(node, arg, guarded)


def _replace(tree: cst.CSTNode, old: cst.CSTNode, new: cst.CSTNode) -> cst.CSTNode:
    return tree.visit(fixes._Replace({id(old): new}))  # type: ignore[return-value]


def replace_all(tree: cst.CSTNode, mapping: dict[int, cst.CSTNode]) -> cst.CSTNode:
    return tree.visit(fixes._Replace(mapping))  # type: ignore[return-value]


def spelled_call(ctx: FileContext, framework: o.Framework, op: str, scope: Scope, args: list[tuple[str, cst.BaseExpression]],
                 prefer=()) -> tuple[cst.Call, list[fixes.Import]] | None:
    """``op(args)`` in ``framework`` with the file's aliases; ``args`` are (role, value):
    positional while the target has the role at that position, keywords after."""
    spelling = ctx.spell(framework, op, scope, prefer=tuple(prefer))
    if spelling is None:
        return None
    func, target, imports = spelling
    out: list[cst.Arg] = []
    positional = True
    for role, value in args:
        if positional and target.position_of(role) == len(out):
            out.append(fixes.arg(value))
            continue
        positional = False
        kw = target.keyword_for(role)
        if kw is None:
            return None
        out.append(fixes.arg(value, kw))
    return fixes.call(func, out), imports


def norm_as_sqrt_sum(ctx: FileContext, norm: OpCall, scope: Scope, x: cst.BaseExpression | None = None,
                     prefer=()) -> tuple[cst.Call, list[fixes.Import]] | None:
    """``norm(x, axis, keepdims)`` written ``sqrt(sum(square(x), axis, keepdims) + eps)``."""
    if norm.has("ord") or norm.x is None:
        return None
    fw = norm.framework
    square = spelled_call(ctx, fw, o.SQUARE, scope, [("x", x if x is not None else norm.x)], prefer)
    if square is None:
        return None
    spelling = ctx.spell(fw, o.SUM, scope, prefer=tuple(prefer))
    if spelling is None:
        return None
    func, target, sum_imports = spelling
    args = ctx.carry_args(norm, target, ("x", "axis", "keepdims"), x=square[0])
    if args is None:
        return None
    root = spelled_call(ctx, fw, o.SQRT, scope, [("x", add_eps(fixes.call(func, args)))], prefer)
    if root is None:
        return None
    return root[0], square[1] + sum_imports + root[1]


def clip_method(framework: o.Framework) -> str | None:
    """The name of a tensor method computing ``clip`` with both bounds, if the framework has one."""
    for name, f in framework.methods.items():
        if f.op == o.CLIP and f.position_of("lo") == 0 and f.position_of("hi") == 1:
            return name
    return None


# --- hazardous ops (singular somewhere on their domain) ------------------------------------------------
HAZARD_OPS = {o.LOG: "log", o.DIVIDE: "division", o.SQRT: "sqrt", o.RSQRT: "rsqrt", o.RECIPROCAL: "reciprocal",
              o.POW: "pow", o.ACOS: "acos", o.ASIN: "asin"}
ARITHMETIC_OPS = (o.MULTIPLY, o.ADD, o.SUBTRACT, o.NEGATIVE, o.SUM, o.MEAN)


def guarded(ctx: FileContext, expr, scope: Scope) -> bool:
    """An input kept away from a singularity: clipped, a maximum, ``+ eps``, a where."""
    if expr is None:
        return False
    expr, scope = follow(ctx, expr, scope)
    if is_op(ctx, expr, scope, o.CLIP, o.MAXIMUM, o.WHERE, o.MASKED_FILL, o.SOFTPLUS, o.EXP) is not None:
        return True
    b = binop(expr, cst.Add, cst.Subtract)
    return b is not None and (is_literal(b.left) or is_literal(b.right))


def hazard(ctx: FileContext, expr, scope: Scope, depth: int = 4) -> str | None:
    """What makes ``expr`` non-finite on some inputs (``log``, ``division``...),
    looking through arithmetic and names; None when nothing does."""
    if expr is None or depth < 0:
        return None
    expr, scope = follow(ctx, expr, scope)
    call = op_kind(ctx, expr, scope)
    if call is not None:
        if call.op in HAZARD_OPS:
            watched = call.value("y") if call.op == o.DIVIDE else call.x
            if call.op == o.POW:
                e = number(call.value("y"))
                if e is None or (e >= 0 and e == int(e)):
                    return None
            if call.op in (o.ACOS, o.ASIN) or not guarded(ctx, watched, scope):
                return HAZARD_OPS[call.op]
            return None
        if call.op in ARITHMETIC_OPS:
            for role in ("x", "y"):
                found = hazard(ctx, call.value(role), scope, depth - 1)
                if found:
                    return found
        return None
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.Divide):
            return None if guarded(ctx, expr.right, scope) or is_literal(expr.right) else "division"
        if isinstance(expr.operator, cst.Power):
            e = number(expr.right)
            return "pow" if e is not None and (e < 0 or e != int(e)) and not guarded(ctx, expr.left, scope) else None
        if isinstance(expr.operator, (cst.Multiply, cst.Add, cst.Subtract)):
            return hazard(ctx, expr.left, scope, depth - 1) or hazard(ctx, expr.right, scope, depth - 1)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return hazard(ctx, expr.expression, scope, depth - 1)
    return None


# --- values that are never differentiated ------------------------------------------------------
# A gradient hazard (NAN201-NAN205) needs a gradient: a value whose every use is one of
# these sinks never has one.  Qualified names, resolved through the file's imports.
ASSERTION_PREFIXES = ("numpy.testing.assert_", "chex.assert_", "torch.testing.assert_",
                      "tensorflow.debugging.assert_", "tensorflow.compat.v1.debugging.assert_",
                      "tensorflow.compat.v2.debugging.assert_")
NO_GRAD_CONTEXTS = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad",
                              "torch.autograd.inference_mode", "torch.autograd.grad_mode.no_grad",
                              "torch.autograd.grad_mode.inference_mode"})
GRAD_CONTEXTS = frozenset({"torch.enable_grad", "torch.set_grad_enabled", "torch.autograd.enable_grad",
                           "torch.autograd.set_grad_enabled", "torch.autograd.grad_mode.enable_grad",
                           "torch.autograd.grad_mode.set_grad_enabled"})  # may turn gradients back on
PALLAS_CALL = "jax.experimental.pallas.pallas_call"
TO_PYTHON_BUILTINS = frozenset({"float", "int", "bool", "print", "str", "repr"})
TO_PYTHON_METHODS = frozenset({"item", "tolist", "numpy"})
# expressions a value flows through unchanged in kind: keep following it upwards
_CARRIERS = (cst.BinaryOperation, cst.UnaryOperation, cst.BooleanOperation, cst.Comparison,
             cst.ComparisonTarget, cst.Subscript, cst.SubscriptElement, cst.Index, cst.Slice, cst.Element,
             cst.StarredElement, cst.DictElement, cst.StarredDictElement, cst.Tuple, cst.List, cst.Set, cst.Dict,
             cst.FormattedStringExpression, cst.FormattedString, cst.ConcatenatedString, cst.IfExp,
             cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)
_NAME_DEPTH = 3  # names followed from a value to its uses


def not_differentiated(ctx: FileContext, node: cst.CSTNode, framework: o.Framework | None = None) -> bool:
    """The value of ``node`` never has its gradient taken: it is computed under
    ``torch.no_grad()``/``inference_mode()`` or in a Pallas kernel, or every use of it
    (through names assigned from it) ends in an ``assert``, an assertion call
    (``np.testing.assert_*``, ``chex.assert_*``, ``self.assert*`` in a TestCase...),
    ``float()``/``print()``/``.item()``/``.numpy()``, ``stop_gradient``/``.detach()``,
    or the test of a Python ``if``/``while`` (a bool: measured in torch 2.13 and TF 2.21,
    ``if sqrt(sum(d**2)) < tol`` at d = 0 leaves the gradient finite; JAX cannot even trace it)."""
    return _under_no_grad(ctx, node) or _in_pallas_kernel(ctx, node) or _sinks_only(ctx, node, framework, _NAME_DEPTH)


def _scope_at(ctx: FileContext, node: cst.CSTNode) -> Scope:
    n: cst.CSTNode | None = node
    while n is not None:
        scope = ctx.index.scopes.get(id(n))
        if scope is not None:
            return scope
        n = ctx.parent(n)
    return ctx.index.module_scope


def _under_no_grad(ctx: FileContext, node: cst.CSTNode) -> bool:
    n = ctx.parent(node)
    while n is not None:
        if isinstance(n, cst.With):
            scope = _scope_at(ctx, n)
            contexts = {ctx.index.qualname(item.item.func, scope) for item in n.items
                        if isinstance(item.item, cst.Call)}
            if contexts & GRAD_CONTEXTS:
                return False
            if contexts & NO_GRAD_CONTEXTS:
                return True
        if isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):  # a with block does not reach a def in it
            if isinstance(n, cst.FunctionDef):
                scope = _scope_at(ctx, ctx.parent(n) or n)
                for d in n.decorators:
                    target = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
                    if ctx.index.qualname(target, scope) in NO_GRAD_CONTEXTS:
                        return True
            return False
        n = ctx.parent(n)
    return False


def _sinks_only(ctx: FileContext, node: cst.CSTNode, framework: o.Framework | None, depth: int) -> bool:
    cur = node
    while True:
        parent = ctx.parent(cur)
        if parent is None:
            return False
        if isinstance(parent, cst.Arg) and parent.value is cur:
            call = ctx.parent(parent)
            if not isinstance(call, cst.Call):
                return False
            scope = _scope_at(ctx, call)
            if _sink_call(ctx, call, scope):
                return True
            qual = ctx.index.qualname(call.func, scope)
            builtin = isinstance(call.func, cst.Name) and not ctx.index.is_bound(call.func.value, scope)
            if ctx.op_call(call, scope) is None and qual is None and not builtin:
                return False  # a function of the user's: it may keep the value anywhere
            cur = call
        elif isinstance(parent, cst.Attribute) and parent.value is cur:
            call = ctx.parent(parent)
            if isinstance(call, cst.Call) and call.func is parent:
                if parent.attr.value in TO_PYTHON_METHODS:
                    return True
                op = ctx.op_call(call, _scope_at(ctx, call))
                if op is not None and op.op == o.STOP_GRADIENT:
                    return True
                cur = call
            else:
                cur = parent
        elif isinstance(parent, cst.Assert):
            return True
        elif isinstance(parent, (cst.If, cst.While)) or (isinstance(parent, cst.IfExp) and parent.test is cur):
            # a Python bool: no gradient flows through it, in any framework
            return parent.test is cur
        elif isinstance(parent, _CARRIERS):
            cur = parent
        elif isinstance(parent, (cst.Assign, cst.AnnAssign)) and parent.value is cur:
            targets = [t.target for t in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
            if len(targets) != 1 or not isinstance(targets[0], cst.Name) or depth <= 0:
                return False
            return _name_uses_sinks(ctx, parent, targets[0].value, framework, depth - 1)
        else:
            return False


def _sink_call(ctx: FileContext, call: cst.Call, scope: Scope) -> bool:
    """An assertion, a conversion to a Python value, or a stop-gradient."""
    qual = ctx.index.qualname(call.func, scope)
    if qual is not None and qual.startswith(ASSERTION_PREFIXES):
        return True
    op = ctx.op_call(call, scope)
    if op is not None and op.op == o.STOP_GRADIENT:
        return True
    func = call.func
    if isinstance(func, cst.Name):
        return func.value in TO_PYTHON_BUILTINS and not ctx.index.is_bound(func.value, scope)
    return (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"
            and func.attr.value.startswith("assert") and _test_case(ctx, scope.enclosing_class()))


def _test_case(ctx: FileContext, cls: Scope | None, depth: int = 3) -> bool:
    """A class deriving from a ``TestCase`` (unittest, absltest, parameterized, tf.test...)."""
    if cls is None or depth < 0 or not isinstance(cls.node, cst.ClassDef) or cls.parent is None:
        return False
    for base in cls.node.bases:
        qual = ctx.index.qualname(base.value, cls.parent)
        if qual is not None and qual.rsplit(".", 1)[-1].endswith("TestCase"):  # also jtu.JaxTestCase
            return True
        if isinstance(base.value, cst.Name):  # a test base class of this module
            found = ctx.index.lookup(base.value.value, cls.parent)
            if found is not None and len(found[0]) == 1 and isinstance(found[0][0].node, cst.ClassDef):
                if _test_case(ctx, ctx.index.scopes.get(id(found[0][0].node)), depth - 1):
                    return True
    return False


def _name_uses_sinks(ctx: FileContext, stmt: cst.CSTNode, name: str, framework, depth: int) -> bool:
    """Every read of the local ``name`` (assigned by ``stmt``) in its function is a sink."""
    fdef = _enclosing(ctx, stmt, (cst.FunctionDef, cst.ClassDef, cst.Lambda))
    if not isinstance(fdef, cst.FunctionDef):
        return False  # a module or class attribute can be read from anywhere
    scope = ctx.index.scopes.get(id(fdef))
    if scope is None or name in scope.globals or any(
            isinstance(b.node, cst.Nonlocal) for b in scope.bindings.get(name, ())):
        return False
    reads = [n for n in _names(ctx).get(name, ()) if not _stored(ctx, n) and _inside(ctx, n, fdef.body)]
    return all(_sinks_only(ctx, n, framework, depth) for n in reads)


def _enclosing(ctx: FileContext, node: cst.CSTNode, kinds) -> cst.CSTNode | None:
    n = ctx.parent(node)
    while n is not None and not isinstance(n, kinds):
        n = ctx.parent(n)
    return n


def _inside(ctx: FileContext, node: cst.CSTNode, ancestor: cst.CSTNode) -> bool:
    n: cst.CSTNode | None = node
    while n is not None:
        if n is ancestor:
            return True
        n = ctx.parent(n)
    return False


def _stored(ctx: FileContext, name: cst.Name) -> bool:
    """``name`` is a binding target (``x = ``, ``for x in``, ``as x``, ``del x``), not a read."""
    n: cst.CSTNode = name
    parent = ctx.parent(n)
    while isinstance(parent, (cst.Element, cst.StarredElement, cst.Tuple, cst.List)):
        n, parent = parent, ctx.parent(parent)
    if isinstance(parent, (cst.AssignTarget, cst.AsName, cst.Del)):
        return True
    return isinstance(parent, (cst.AnnAssign, cst.For, cst.CompFor)) and parent.target is n


def _names(ctx: FileContext) -> dict[str, list[cst.Name]]:
    """Every ``Name`` of the file that names a variable (not an attribute, keyword or
    definition), by identifier; computed once per file, on first use."""
    found = ctx.__dict__.get("_variable_names")
    if found is None:
        found = ctx.__dict__["_variable_names"] = {}
        _NameCollector(found, ctx).on_visit(ctx.module)
    return found


class _NameCollector(FastVisitor, cst.CSTVisitor):
    def __init__(self, out: dict[str, list[cst.Name]], ctx: FileContext) -> None:
        self.out, self.ctx = out, ctx

    def visit_Name(self, node: cst.Name) -> None:
        parent = self.ctx.parent(node)
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            return
        if isinstance(parent, cst.NameItem) or (isinstance(parent, cst.Arg) and parent.keyword is node) or (
                isinstance(parent, (cst.Param, cst.FunctionDef, cst.ClassDef)) and parent.name is node):
            return
        self.out.setdefault(node.value, []).append(node)

    def visit_Import(self, node) -> bool:
        return False

    def visit_ImportFrom(self, node) -> bool:
        return False


def _in_pallas_kernel(ctx: FileContext, node: cst.CSTNode) -> bool:
    """Inside a function this module passes (directly or through ``functools.partial``)
    to ``pallas_call``, or a private function only referenced from such kernels:
    kernels are lowered, never autodiffed."""
    kernels = ctx.__dict__.get("_pallas_kernels")
    if kernels is None:
        kernels = ctx.__dict__["_pallas_kernels"] = _pallas_kernels(ctx)
    n = _enclosing(ctx, node, cst.FunctionDef)
    while n is not None:
        if id(n) in kernels:
            return True
        n = _enclosing(ctx, n, cst.FunctionDef)
    return False


def _pallas_kernels(ctx: FileContext) -> set[int]:
    kernels: set[int] = set()
    for call, scope in ctx.index.calls:
        if not call.args or call.args[0].keyword is not None or ctx.index.qualname(call.func, scope) != PALLAS_CALL:
            continue
        r = ctx.resolve(call.args[0].value, scope)
        f = r.expr
        if isinstance(f, cst.Call) and ctx.index.qualname(f.func, r.scope) == "functools.partial" and f.args:
            f = f.args[0].value
        found = ctx.index.function(f, r.scope)
        if found is not None:
            kernels.add(id(found[0].node))
    private = [b.node for bs in ctx.index.module_scope.bindings.values() if len(bs) == 1 for b in bs
               if isinstance(b.node, cst.FunctionDef) and b.node.name.value.startswith("_")]
    grew = bool(kernels)
    while grew:  # a private helper referenced only from kernels runs only in kernels
        grew = False
        for fdef in private:
            refs = _names(ctx).get(fdef.name.value, ())
            if id(fdef) not in kernels and refs and all(
                    any(id(f) in kernels for f in _functions_around(ctx, r)) for r in refs):
                kernels.add(id(fdef))
                grew = True
    return kernels


def _functions_around(ctx: FileContext, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    n = _enclosing(ctx, node, cst.FunctionDef)
    while n is not None:
        yield n
        n = _enclosing(ctx, n, cst.FunctionDef)
