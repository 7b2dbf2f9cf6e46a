"""Values a gradient reaches: the evidence a gradient-only hazard (a single where, a
root or norm at 0, NaN masking) needs before it is reported by default.

:mod:`nanlint.analysis.gradients` proves the opposite (no gradient: ``no_grad``, sinks
only, a Pallas kernel); this module shows a gradient *does* reach a value, and says how,
in words a message can carry:

* the value is computed where autodiff runs: under a ``GradientTape``; in a module's
  forward pass (``forward`` of a torch ``nn.Module``, ``call`` of a Keras layer or model,
  ``__call__`` of a flax/haiku/equinox module, ``train_step``/``training_step``); in a
  function this file differentiates (passed to ``jax.grad``/``value_and_grad``/``vjp``,
  to a TF2 ``minimize``, compiled as a Keras ``loss=``); or in a function of this file
  called from one of those;
* or the value flows, through the names assigned from it (``self.x`` attributes
  class-wide, ``+=``, ``losses.append(...)``, ``return`` to the call sites of its
  function), into what is differentiated: ``.backward()``, ``torch.autograd.grad``,
  ``tape.gradient``, ``tf.gradients``, an optimizer's ``minimize``/``compute_gradients``,
  Lightning's ``manual_backward``, accelerate's ``backward``; or into a name that holds a
  loss (``loss``, ``d_loss``, ``self.total_loss``);
* or, for a top-level function, a file of the project that imports it
  (:mod:`nanlint.semantic.importers`) calls it in such a region or passes its value on
  to such a sink (one import level; the importers are in the file's cache key).

Computed once per file (the regions and the sinks), then a short forward walk per
question.  A value no gradient provably reaches and none provably misses is weak
evidence: the rules put it in the may tier.
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import libcst as cst

from nanlint.analysis.gradients import SHAPE_ATTRIBUTES, TO_PYTHON_METHODS
from nanlint.semantic import definitions, importers, modules
from nanlint.semantic.context import FileContext
from nanlint.vocabulary import ops as o
from nanlint.semantic.navigation import enclosing, inside, scope_at, self_attributes, stored, variable_names
from nanlint.semantic.resolve import Scope, dotted

# calls that differentiate the function they are given (qualified names)
GRAD_TRANSFORMS = frozenset({
    "jax.grad", "jax.value_and_grad", "jax.vjp", "jax.jacrev", "jax.jacfwd", "jax.hessian", "jax.linearize",
    "torch.func.grad", "torch.func.grad_and_value", "torch.func.vjp", "torch.func.jacrev",
    "functorch.grad", "functorch.grad_and_value", "functorch.vjp",
    "equinox.filter_grad", "equinox.filter_value_and_grad", "flax.linen.grad", "flax.linen.value_and_grad",
    "flax.nnx.grad", "flax.nnx.value_and_grad", "optax.value_and_grad"})
TAPES = frozenset({"tensorflow.GradientTape", "tensorflow.compat.v2.GradientTape", "tensorflow.autodiff.GradientTape",
                   "tensorflow.compat.v1.GradientTape"})
# calls whose first argument (or receiver) is differentiated: (attribute name, what it is)
SINK_METHODS = {"backward": "back-propagated", "minimize": "minimized", "compute_gradients": "differentiated",
                "manual_backward": "back-propagated", "gradient": "differentiated"}
SINK_FUNCTIONS = frozenset({"torch.autograd.grad", "torch.autograd.backward", "tensorflow.gradients",
                            "tensorflow.compat.v1.gradients", "tensorflow.compat.v2.gradients"})
# methods autodiff runs through in training: the forward pass of a module or layer
FORWARD_METHODS = frozenset({"forward", "call", "__call__", "train_step", "training_step", "compute_loss"})
_MODULE_BASE = re.compile(r"(Module|Layer|Model|Loss|Network|Net)$")
LOSS_NAME = re.compile(r"(^|_)(loss|losses|objective|elbo|nll|cross_?entropy|xent)(_|$|\d)", re.IGNORECASE)
_DEPTH = 8  # names followed forward from a value


@dataclass(frozen=True)
class _Region:
    node: cst.CSTNode  # a FunctionDef, a With block or a Lambda
    describe: Callable[[], str]  # "in `Net.forward`, a forward pass...": words built when asked
    # (a line number needs the positions of the whole module: only a finding pays for them)

    @property
    def how(self) -> str:
        return self.describe()


def gradient_reaches(ctx: FileContext, node: cst.CSTNode) -> str | None:
    """How a gradient reaches the value of ``node`` (words for a message), or None when
    this file does not show one does.  Not a proof that one never does:
    :func:`nanlint.analysis.gradients.not_differentiated` answers that."""
    regions = ctx.memo("differentiated.regions", lambda: _regions(ctx))
    for r in _around(ctx, node):
        if id(r) in regions:
            return regions[id(r)].how
    return _flows_to_sink(ctx, node, _DEPTH, set()) or _from_importers(ctx, node)


# --- the project's other files: a helper called where autodiff runs -------------------------------
def _from_importers(ctx: FileContext, node: cst.CSTNode) -> str | None:
    """How a gradient reaches ``node`` in a top-level function of this module through a
    file of the project that imports the function and calls it in a differentiated region
    of its own, or passes its value on to what is differentiated there (one import level)."""
    fdef = _top_function(ctx, node)
    if fdef is None or not ctx.path or ctx.path.startswith("<"):
        return None
    name, here = fdef.name.value, Path(ctx.path)
    for path, names in importers.importers(here, modules.extra_roots(ctx.settings)):
        if name not in names:
            continue
        other = definitions.load(path, ctx)
        if other is None:
            continue
        regions = other.memo("differentiated.regions", lambda o=other: _regions(o))
        for call, scope in other.index.calls:
            callee = call.func.attr.value if isinstance(call.func, cst.Attribute) else \
                call.func.value if isinstance(call.func, cst.Name) else None
            if callee != name or not _defined_here(other, call, scope, here):
                continue
            where = f"through `{path.name}`: `{name}` is called there on line {other.file_line(call)}"
            region = next((regions[id(r)] for r in _around(other, call) if id(r) in regions), None)
            if region is not None:
                return f"{where}, {region.how}"
            flows = _flows_to_sink(other, call, _DEPTH, set())
            if flows is not None:
                return f"{where}, its value {flows}"
    return None


def _top_function(ctx: FileContext, node: cst.CSTNode) -> cst.FunctionDef | None:
    """The module-level ``def`` around ``node``, if any."""
    found = None
    n = ctx.parent(node)
    while n is not None:
        if isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            found = n
        n = ctx.parent(n)
    if not isinstance(found, cst.FunctionDef):
        return None
    scope = ctx.index.scopes.get(id(found))
    return found if scope is not None and scope.parent is ctx.index.module_scope else None


def _defined_here(other, call: cst.Call, scope: Scope, here: Path) -> bool:
    found = definitions.defining_file(other, call.func, scope)
    return found is not None and modules.resolved(found[0]) == modules.resolved(here)


# --- the regions autodiff runs in ------------------------------------------------------------------
def _around(ctx: FileContext, node: cst.CSTNode):
    n = ctx.parent(node)
    while n is not None:
        if isinstance(n, (cst.FunctionDef, cst.With, cst.Lambda)):
            yield n
        n = ctx.parent(n)


def _regions(ctx: FileContext) -> dict[int, _Region]:
    found: dict[int, _Region] = {}
    index = ctx.index
    for scope in index.scopes.values():
        fdef = scope.node
        if scope.kind != "function" or not isinstance(fdef, cst.FunctionDef):
            continue
        cls = scope.parent if scope.parent is not None and scope.parent.kind == "class" else None
        if cls is not None and fdef.name.value in FORWARD_METHODS and _module_class(ctx, cls):
            found[id(fdef)] = _Region(fdef, lambda c=cls.node.name.value, f=fdef.name.value:  # type: ignore[attr-defined]
                                      f"in `{c}.{f}`, a forward pass autodiff runs through in training")
        for d in fdef.decorators:
            target = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
            if index.qualname(target, scope.parent or scope) in GRAD_TRANSFORMS:
                found[id(fdef)] = _Region(fdef, lambda f=fdef.name.value: f"in `{f}`, differentiated by its decorator")
    for call, scope in index.calls:
        qual = index.qualname(call.func, scope)
        if qual in GRAD_TRANSFORMS and call.args:
            _mark(ctx, found, call.args[0].value, scope, lambda q=qual, n=_line_of(ctx, call): f"passed to `{q}` on line {n}")
        elif isinstance(call.func, cst.Attribute) and call.func.attr.value == "minimize" and call.args \
                and isinstance(call.args[0].value, (cst.Name, cst.Lambda)):
            _mark(ctx, found, call.args[0].value, scope, lambda n=_line_of(ctx, call): f"minimized on line {n}")
        elif isinstance(call.func, cst.Attribute) and call.func.attr.value == "compile":
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value == "loss":
                    values = [e.value for e in arg.value.elements] \
                        if isinstance(arg.value, (cst.List, cst.Tuple)) else [arg.value]
                    for v in values:
                        _mark(ctx, found, v, scope, lambda n=_line_of(ctx, call): f"compiled as the model's loss on line {n}")
    for node in _tape_blocks(ctx):
        found[id(node)] = _Region(node, lambda n=_line_of(ctx, node): f"under the GradientTape on line {n}")
    _close_over_calls(ctx, found)
    return found


def _line_of(ctx: FileContext, node: cst.CSTNode) -> "_Lazy":
    model = weakref.proxy(ctx)  # kept in ctx's memo: a strong reference would be a cycle
    return _Lazy(lambda: model.file_line(node))


def _mark(ctx: FileContext, found: dict, value: cst.BaseExpression, scope: Scope, how: Callable[[], str]) -> None:
    if isinstance(value, cst.Lambda):
        found.setdefault(id(value), _Region(value, lambda: f"in a lambda {how()}"))
        return
    got = ctx.index.function(value, scope)
    if got is not None:
        fdef = got[0].node
        found.setdefault(id(fdef), _Region(fdef, lambda f=fdef.name.value: f"in `{f}`, {how()}"))  # type: ignore[attr-defined]


def _module_class(ctx: FileContext, cls: Scope) -> bool:
    """A class whose base is a framework's module, layer, model or loss (by qualified name,
    or, for a base of the user's, by a name that says so)."""
    node = cls.node
    if not isinstance(node, cst.ClassDef):
        return False
    for base in node.bases:
        qual = ctx.index.qualname(base.value, cls.parent or cls)
        text = qual or dotted(base.value) or ""
        if qual is not None and qual.split(".")[0] in ("torch", "tensorflow", "keras", "flax", "haiku", "equinox",
                                                       "pytorch_lightning", "lightning", "tf_keras", "sonnet"):
            return True
        if _MODULE_BASE.search(text.rsplit(".", 1)[-1]):
            return True
    return False


def _tape_blocks(ctx: FileContext) -> list[cst.With]:
    out = []
    stack: list[cst.CSTNode] = [ctx.module]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.With):
            s = scope_at(ctx, n)
            if any(isinstance(i.item, cst.Call) and ctx.index.qualname(i.item.func, s) in TAPES for i in n.items):
                out.append(n)
        if isinstance(n, (cst.BaseExpression,)):
            continue  # statements only hold with blocks
        stack.extend(n.children)
    return out


def _close_over_calls(ctx: FileContext, found: dict[int, _Region]) -> None:
    """A function of this file called from a differentiated region is differentiated too
    (to a fixpoint: each pass reads every call once, with the regions around it)."""
    index = ctx.index
    calls = [(call, scope, [r for r in _around(ctx, call)]) for call, scope in index.calls]
    grew = True
    while grew:
        grew = False
        for call, scope, around in calls:
            region = next((found[id(r)] for r in around if id(r) in found), None)
            if region is None:
                continue
            got = index.function(call.func, scope)
            if got is None or id(got[0].node) in found:
                continue
            fdef = got[0].node
            name = fdef.name.value  # type: ignore[attr-defined]
            found[id(fdef)] = _Region(fdef, lambda f=name, n=_line_of(ctx, call), r=region:
                                      f"in `{f}`, called on line {n} {r.how}")
            grew = True


# --- forward flow into what is differentiated -------------------------------------------------------
def _flows_to_sink(ctx: FileContext, node: cst.CSTNode, depth: int, seen: set[int]) -> str | None:
    """Follow the value of ``node`` upwards through its expression, then through the
    names its statement assigns, to a differentiated sink."""
    if depth <= 0 or id(node) in seen:
        return None
    seen.add(id(node))
    cur = node
    while True:
        parent = ctx.parent(cur)
        if parent is None:
            return None
        if isinstance(parent, cst.Arg) and parent.value is cur:
            call = ctx.parent(parent)
            if isinstance(call, cst.Call):
                op = ctx.op_call(call, scope_at(ctx, call))
                if op is not None and op.op == o.STOP_GRADIENT:
                    return None  # no gradient flows on from here
                sink = _sink(ctx, call, parent)
                if sink is not None:
                    return sink
                if _appends(call):  # losses.append(value): the list holds it
                    return _through_target(ctx, call.func.value, call, depth, seen)  # type: ignore[attr-defined]
            cur = parent
            continue
        if isinstance(parent, cst.Attribute) and parent.value is cur:
            call = ctx.parent(parent)
            method = isinstance(call, cst.Call) and call.func is parent
            if method and parent.attr.value == "backward":
                return f"back-propagated on line {ctx.file_line(call)}"
            if parent.attr.value in SHAPE_ATTRIBUTES or method and parent.attr.value in TO_PYTHON_METHODS:
                return None  # what gradients.py calls a sink: no gradient flows on
            if method:
                op = ctx.op_call(call, scope_at(ctx, call))  # type: ignore[arg-type]
                if op is not None and op.op == o.STOP_GRADIENT:  # x.detach()
                    return None
        if isinstance(parent, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and parent.value is cur:
            targets = [t.target for t in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
            for t in targets:
                got = _through_target(ctx, t, parent, depth, seen)
                if got is not None:
                    return got
            return None
        if isinstance(parent, cst.Return):
            return _through_return(ctx, parent, depth, seen)
        if isinstance(parent, (cst.BaseSmallStatement, cst.BaseCompoundStatement, cst.Lambda,
                               cst.FunctionDef, cst.ClassDef, cst.Module)):
            return None
        cur = parent


def _through_target(ctx: FileContext, target: cst.BaseExpression, stmt: cst.CSTNode, depth: int,
                    seen: set[int]) -> str | None:
    text = dotted(target)
    if text is None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                got = _through_target(ctx, el.value, stmt, depth, seen)
                if got is not None:
                    return got
        return None
    if LOSS_NAME.search(text.rsplit(".", 1)[-1]):
        return f"through `{text}` (line {ctx.file_line(stmt)}), a loss"
    for use in _uses(ctx, target, stmt):
        got = _flows_to_sink(ctx, use, depth - 1, seen)
        if got is not None:
            rest = got[len("through "):] if got.startswith("through ") else got
            return f"through `{text}` (line {ctx.file_line(stmt)}), {rest}"
    return None


def _uses(ctx: FileContext, target: cst.BaseExpression, stmt: cst.CSTNode) -> list[cst.CSTNode]:
    """The reads of what ``target`` binds: a local name in its scope, ``self.x`` in its class."""
    scope = scope_at(ctx, stmt)
    if isinstance(target, cst.Name):
        out = []
        for n in variable_names(ctx).get(target.value, ()):
            if n is target or stored(ctx, n):
                continue
            found = ctx.index.lookup(target.value, scope_at(ctx, n))
            if found is not None and found[1] is scope:
                out.append(n)
        return out
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
        cls = scope.enclosing_class()
        if cls is None:
            return []
        return [a for a in self_attributes(ctx).get(target.attr.value, ()) if a is not target
                and inside(ctx, a, cls.node) and not _is_store(ctx, a)]
    return []


def _through_return(ctx: FileContext, ret: cst.Return, depth: int, seen: set[int]) -> str | None:
    fdef = enclosing(ctx, ret, (cst.FunctionDef, cst.Lambda, cst.ClassDef))
    if not isinstance(fdef, cst.FunctionDef):
        return None
    regions = ctx.memo("differentiated.regions", lambda: _regions(ctx))
    if id(fdef) in regions:
        return f"returned {regions[id(fdef)].how}"
    fscope = ctx.index.scopes.get(id(fdef))
    if fscope is None:
        return None
    name = fdef.name.value
    if LOSS_NAME.search(name):
        return f"returned by `{name}`, a loss"
    for call, _ in ctx.call_sites(fscope):
        got = _flows_to_sink(ctx, call, depth - 1, seen)
        if got is not None:
            return f"returned by `{name}` (called on line {ctx.file_line(call)}) {got}"
    return None


def _sink(ctx: FileContext, call: cst.Call, arg: cst.Arg) -> str | None:
    """The words for ``call`` when it differentiates its argument ``arg``."""
    func = call.func
    first = call.args[0] is arg if call.args else False
    line = _line_of(ctx, call)
    if isinstance(func, cst.Attribute) and func.attr.value in SINK_METHODS and first and arg.keyword is None:
        if func.attr.value == "gradient" and len(call.args) < 2:
            return None  # tape.gradient(target, sources)
        return f"{SINK_METHODS[func.attr.value]} on line {line}"
    if isinstance(func, cst.Attribute) and func.attr.value == "scale" and first:
        outer = ctx.parent(call)  # scaler.scale(loss).backward()
        if isinstance(outer, cst.Attribute) and outer.attr.value == "backward":
            return f"back-propagated on line {line}"
    qual = ctx.index.qualname(func, scope_at(ctx, call))
    if qual in SINK_FUNCTIONS and first:
        return f"differentiated by `{qual}` on line {line}"
    return None


class _Lazy:
    """A line number computed when it is formatted (``f"on line {line}"``), not before."""

    def __init__(self, compute: Callable[[], int]) -> None:
        self.compute = compute

    def __format__(self, spec: str) -> str:
        return format(self.compute(), spec)


def _appends(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Attribute) and call.func.attr.value in ("append", "extend", "add") \
        and isinstance(call.func.value, (cst.Name, cst.Attribute))


def _is_store(ctx: FileContext, attr: cst.Attribute) -> bool:
    parent = ctx.parent(attr)
    return isinstance(parent, cst.AssignTarget) or (isinstance(parent, (cst.AnnAssign, cst.AugAssign))
                                                    and parent.target is attr)
