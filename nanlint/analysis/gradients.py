"""Values that are never differentiated: a gradient hazard needs a gradient.

A value has no gradient when it is computed under ``torch.no_grad()``/
``inference_mode()`` (a block, a decorator, or a function whose every call in
its module is itself never differentiated), in a Pallas kernel, or when every
use of it is a sink: an assertion, a conversion to a Python value, a
stop-gradient, an argmin/argmax (an index), the test of a Python ``if``/``while``.  Queried by the
gradient-hazard rules (NAN201-NAN205)."""

from __future__ import annotations

import re
from typing import Iterator

import libcst as cst

from nanlint.source.walk import node_types
from nanlint.vocabulary import ops as o
from nanlint.semantic.context import FileContext
from nanlint.analysis.facts import gradient_free
from nanlint.semantic.reach import parameter
from nanlint.semantic.resolve import Scope
from nanlint.semantic.navigation import enclosing, inside, local_reads, scope_at, self_attributes, stored, variable_names

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
ASSIGN_METHODS = frozenset({"assign", "assign_add", "assign_sub"})
SHAPE_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "device"})
# a logged value: a summary op, an experiment tracker, a logger's method (Lightning's self.log_dict;
# not a bare .log(...): a method of the user's own class may be a differentiable log)
SUMMARY_PREFIXES = ("tensorflow.summary.", "tensorflow.compat.v1.summary.", "tensorflow.compat.v2.summary.",
                    "wandb.log", "mlflow.log_metric", "jax.debug.print")
SUMMARY_METHODS = frozenset({"add_scalar", "add_scalars", "add_histogram", "log_dict", "log_metrics"})
# a dict of logged statistics: ``metrics["std"] = ...``, ``stats = {"std": ...}``
METRICS_NAME = re.compile(r"(?:^|_)(?:metrics?|stats|statistics|summar(?:y|ies)|scalars|logs)$", re.IGNORECASE)
# expressions a value flows through unchanged in kind: keep following it upwards
_CARRIERS = ('BinaryOperation', 'UnaryOperation', 'BooleanOperation', 'Comparison', 'ComparisonTarget', 'Subscript', 'SubscriptElement', 'Index', 'Slice', 'Element', 'StarredElement', 'DictElement', 'StarredDictElement', 'Tuple', 'List', 'Set', 'Dict', 'FormattedStringExpression', 'FormattedString', 'ConcatenatedString', 'IfExp', 'ListComp', 'SetComp', 'GeneratorExp', 'DictComp')  # libcst class names (node_types)
_NAME_DEPTH = 3  # names followed from a value to its uses


def not_differentiated(ctx: FileContext, node: cst.CSTNode, framework: o.Framework | None = None) -> bool:
    """The value of ``node`` never has its gradient taken: it is computed under
    ``torch.no_grad()``/``inference_mode()`` or in a Pallas kernel, or every use of it
    (through names assigned from it) ends in an ``assert``, an assertion call
    (``np.testing.assert_*``, ``chex.assert_*``, ``self.assert*`` in a TestCase...),
    ``float()``/``print()``/``.item()``/``.numpy()``, ``stop_gradient``/``.detach()``,
    or the test of a Python ``if``/``while`` (a bool: measured in torch 2.13 and TF 2.21,
    ``if sqrt(sum(d**2)) < tol`` at d = 0 leaves the gradient finite; JAX cannot even trace it)."""
    return (_under_no_grad(ctx, node) or _in_pallas_kernel(ctx, node) or _inference_only(ctx, node, 2)
            or _custom_derivative(ctx, node) or _inference_location(ctx) or _declared_not_differentiable(ctx, node)
            or (isinstance(node, cst.BaseExpression) and gradient_free(ctx, node, scope_at(ctx, node)))
            or _sinks_only(ctx, node, framework, _NAME_DEPTH))


def _declared_not_differentiable(ctx: FileContext, node: cst.CSTNode) -> bool:
    """In a method of a class that says ``is_differentiable = False`` (torchmetrics' metrics)."""
    cls = enclosing(ctx, node, cst.ClassDef)
    if not isinstance(cls, cst.ClassDef):
        return False
    scope = ctx.index.scopes.get(id(cls))
    for b in (scope.bindings.get("is_differentiable", ()) if scope is not None else ()):
        if isinstance(b.value, cst.Name) and b.value.value == "False":
            return True
    return False


# Directories of code that runs without gradients: inference pipelines, noise schedulers,
# samplers, data transforms and preprocessing (diffusers' pipelines/ and schedulers/,
# torchvision's transforms/, keras-hub's samplers/ ...).
INFERENCE_DIRS = frozenset({"pipelines", "schedulers", "samplers", "transforms", "preprocessing"})
# Functions autodiff does not run through: their derivative is written by hand.
CUSTOM_DERIVATIVE_DECORATORS = ("once_differentiable", "custom_gradient", "custom_vjp", "custom_jvp")


def _inference_location(ctx: FileContext) -> bool:
    parts = ctx.path.replace("\\", "/").split("/")[:-1]
    return not INFERENCE_DIRS.isdisjoint(parts)


def _custom_derivative(ctx: FileContext, node: cst.CSTNode) -> bool:
    """Inside a function whose derivative is hand-written (``@tf.custom_gradient``,
    ``@jax.custom_vjp``, ``@once_differentiable``) or the ``backward`` of a
    ``torch.autograd.Function``: autodiff never runs through it."""
    n = enclosing(ctx, node, cst.FunctionDef)
    while n is not None:
        for d in n.decorators:  # type: ignore[attr-defined]
            target = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
            name = target.attr.value if isinstance(target, cst.Attribute) else \
                target.value if isinstance(target, cst.Name) else ""
            if name in CUSTOM_DERIVATIVE_DECORATORS:
                return True
        if n.name.value == "backward":  # type: ignore[attr-defined]
            cls = enclosing(ctx, n, (cst.ClassDef, cst.FunctionDef))
            if isinstance(cls, cst.ClassDef) and any(
                    (b.value.attr.value if isinstance(b.value, cst.Attribute) else getattr(b.value, "value", ""))
                    == "Function" for b in cls.bases):
                return True
        n = enclosing(ctx, n, cst.FunctionDef)
    return False


def _inference_only(ctx: FileContext, node: cst.CSTNode, depth: int) -> bool:
    """Inside a function of this module whose every call here runs without gradients
    (a helper only called from ``@torch.no_grad()`` methods or ``no_grad`` blocks)."""
    if depth <= 0:
        return False
    fdef = enclosing(ctx, node, (cst.FunctionDef, cst.Lambda, cst.ClassDef))
    if not isinstance(fdef, cst.FunctionDef):
        return False
    fscope = ctx.index.scopes.get(id(fdef))
    if fscope is None:
        return False
    sites = ctx.call_sites(fscope)
    if not sites or len(sites) != len(variable_names(ctx).get(fdef.name.value, ())) + _attribute_refs(ctx, fdef):
        return False  # never called here, or referenced otherwise (a callback, exported)
    return all(_under_no_grad(ctx, call) or _inference_only(ctx, call, depth - 1) for call, _ in sites)


def _attribute_refs(ctx: FileContext, fdef: cst.FunctionDef) -> int:
    """How many ``self.<name>`` references of a method the file has."""
    return len(self_attributes(ctx).get(fdef.name.value, ()))


def _under_no_grad(ctx: FileContext, node: cst.CSTNode) -> bool:
    n = ctx.parent(node)
    while n is not None:
        if isinstance(n, cst.With):
            scope = scope_at(ctx, n)
            contexts = {ctx.index.qualname(item.item.func, scope) for item in n.items
                        if isinstance(item.item, cst.Call)}
            if contexts & GRAD_CONTEXTS:
                return False
            if contexts & NO_GRAD_CONTEXTS:
                return True
        if isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):  # a with block does not reach a def in it
            if isinstance(n, cst.FunctionDef):
                scope = scope_at(ctx, ctx.parent(n) or n)
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
            scope = scope_at(ctx, call)
            if _sink_call(ctx, call, scope):
                return True
            qual = ctx.index.qualname(call.func, scope)
            builtin = isinstance(call.func, cst.Name) and not ctx.index.is_bound(call.func.value, scope)
            if ctx.op_call(call, scope) is None and qual is None and not builtin:
                # a function of the user's: it may keep the value anywhere, unless it is this
                # file's and every use of the parameter it binds is a sink (stop_gradient(q))
                return depth > 0 and _parameter_sinks_only(ctx, call, parent, scope, framework, depth - 1)
            cur = call
        elif isinstance(parent, cst.Attribute) and parent.value is cur:
            if parent.attr.value in SHAPE_ATTRIBUTES:
                return True  # x.shape[0]: a shape carries no gradient
            call = ctx.parent(parent)
            if isinstance(call, cst.Call) and call.func is parent:
                if parent.attr.value in TO_PYTHON_METHODS:
                    return True
                op = ctx.op_call(call, scope_at(ctx, call))
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
        elif isinstance(parent, node_types(*_CARRIERS)):
            cur = parent
        elif isinstance(parent, (cst.Assign, cst.AnnAssign)) and parent.value is cur:
            targets = [t.target for t in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
            if len(targets) == 1 and _metrics(targets[0]):
                return True  # metrics["q_std"] = value, stats = {...}: logged, not differentiated
            if len(targets) != 1 or not isinstance(targets[0], cst.Name) or depth <= 0:
                return False
            return _name_uses_sinks(ctx, parent, targets[0].value, framework, depth - 1)
        else:
            return False


def _parameter_sinks_only(ctx: FileContext, call: cst.Call, arg: cst.Arg, scope: Scope,
                          framework: o.Framework | None, depth: int) -> bool:
    """``call`` is to a function of this file whose parameter bound to ``arg`` is read
    only by sinks (and read at all)."""
    found = ctx.index.function(call.func, scope)
    if found is None:
        return False
    fdef = found[0].node
    param = parameter(fdef, call, arg)
    if param is None:
        return False
    fscope = found[1]
    name = param.name.value
    if name in fscope.globals or len(fscope.bindings.get(name, ())) != 1:
        return False  # rebound in the function: its other values are not the argument
    reads = [n for n in variable_names(ctx).get(name, ()) if not stored(ctx, n) and inside(ctx, n, fdef)
             and (lambda f: f is not None and f[1] is fscope)(ctx.index.lookup(name, scope_at(ctx, n)))]
    return bool(reads) and all(_sinks_only(ctx, n, framework, depth) for n in reads)


def _metrics(target: cst.BaseExpression) -> bool:
    """A dict of logged statistics, or an entry of one: ``metrics``, ``self.stats["k"]``."""
    if isinstance(target, cst.Subscript):
        target = target.value
    name = target.value if isinstance(target, cst.Name) else \
        target.attr.value if isinstance(target, cst.Attribute) else None
    return name is not None and METRICS_NAME.search(name) is not None


def _sink_call(ctx: FileContext, call: cst.Call, scope: Scope) -> bool:
    """An assertion, a conversion to a Python value, a stop-gradient, an argmin/argmax, or a summary: a
    value logged (``tf.summary.scalar``, ``writer.add_scalar``, ``self.log_dict``,
    ``wandb.log``) or kept in a dict of metrics (``metrics.update(...)``)."""
    qual = ctx.index.qualname(call.func, scope)
    if qual is not None and qual.startswith(ASSERTION_PREFIXES + SUMMARY_PREFIXES):
        return True
    if isinstance(call.func, cst.Attribute) and ctx.op_call(call, scope) is None and (
            call.func.attr.value in SUMMARY_METHODS or call.func.attr.value == "update" and _metrics(call.func.value)):
        return True
    op = ctx.op_call(call, scope)
    if op is not None and op.op in (o.STOP_GRADIENT, o.ARGMIN, o.ARGMAX):
        return True  # an index carries no gradient
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in ASSIGN_METHODS:
        return True  # v.assign(value): TF variables are written, no gradient flows into the value
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
    reads = local_reads(ctx, stmt, name)
    return reads is not None and all(_sinks_only(ctx, n, framework, depth) for n in reads)


def _in_pallas_kernel(ctx: FileContext, node: cst.CSTNode) -> bool:
    """Inside a function this module passes (directly or through ``functools.partial``)
    to ``pallas_call``, or a private function only referenced from such kernels:
    kernels are lowered, never autodiffed."""
    kernels = ctx.memo("gradients.pallas_kernels", lambda: _pallas_kernels(ctx))
    n = enclosing(ctx, node, cst.FunctionDef)
    while n is not None:
        if id(n) in kernels:
            return True
        n = enclosing(ctx, n, cst.FunctionDef)
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
            refs = variable_names(ctx).get(fdef.name.value, ())
            if id(fdef) not in kernels and refs and all(
                    any(id(f) in kernels for f in _functions_around(ctx, r)) for r in refs):
                kernels.add(id(fdef))
                grew = True
    return kernels


def _functions_around(ctx: FileContext, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    n = enclosing(ctx, node, cst.FunctionDef)
    while n is not None:
        yield n
        n = enclosing(ctx, n, cst.FunctionDef)
