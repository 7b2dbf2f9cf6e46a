"""Reaching values: what an expression may evaluate to, the way training code moves it.

``values(ctx, expr, scope)`` expands an expression into the source expressions
it can take its value from, each with the path that brought it there:

* a name: every binding that reaches the use (:mod:`nanlint.semantic.flow`), through
  rebinding, loops and branches; ``a, b = f(x)`` and ``f(x)[1]`` pick the
  tuple element; ``self.attr`` every assignment of the attribute in the class;
* a call of the project's own function: what it returns (per tuple position),
  its parameters bound to that call's arguments;
* a parameter: the arguments passed at the function's call sites in its module;
* a call of a model object (:mod:`nanlint.semantic.models`): its last layer or ``forward``;
* a name imported from another module of the project (:mod:`nanlint.semantic.definitions`);
* with ``shape=True``, layout ops (reshape, view, transpose, concat, cast...)
  and indexing, which do not change what a value can be.

Every value records how it was reached (``via``) so that rules decide a fix's
applicability by the distance: inline stays safe, across statements unsafe,
across branches, functions, models or modules display-only.
"""

from __future__ import annotations

import os
import weakref
from dataclasses import dataclass, field

import libcst as cst

from nanlint.semantic import definitions, models
from nanlint.vocabulary import ops as o
from nanlint.semantic.resolve import ASSIGN, UNPACK, Binding, Scope

from nanlint.semantic.model import Model

MAX_DEPTH = 12
_SHAPE_OP = getattr(o, "SHAPE", "shape")
MAX_VALUES = 16

# how a value was reached, beyond following an assignment in the same scope
MERGED = "merged"  # one of several reaching values (branches, loops, call sites)
SHAPE = "shape"  # through a layout op or indexing
CALL = "call"  # through a function's return
PARAM = "param"  # from a call site's argument
MODEL = "model"  # a model object's output
MODULE = "module"  # from another module of the project
HANDWRITTEN = "handwritten"  # an activation written out (1 / (1 + exp(-z))): no call to rewrite in place


class Origin:
    """One step that brought a value to its use, for messages: "`p` is assigned on line 3".
    Its line and text are computed when a message needs them (positions cost a pass, and
    quoting an argument, ``passed``, reads the source around it)."""

    def __init__(self, binding: Binding | None, name: str | None, verb: str = "is assigned on",
                 line: int | None = None, path: str | None = None, node: cst.CSTNode | None = None,
                 owner: "Model | None" = None, name_node: cst.CSTNode | None = None,
                 name_owner: "Model | None" = None, passed: cst.CSTNode | None = None) -> None:
        self.binding, self._name, self._verb, self._line, self.path = binding, name, verb, line, path
        self.node = node if node is not None else (binding.node if binding is not None else None)
        self.owner, self._name_node, self._name_owner = owner, name_node, name_owner or owner
        self._passed = passed  # the argument a call site passes (verb: "is passed `arg` on")

    @property
    def verb(self) -> str:
        if self._passed is not None:
            self._verb, self._passed = f"is passed `{_short(self.owner, self._passed)}` on", None  # type: ignore[arg-type]
        return self._verb

    @property
    def name(self) -> str:
        if self._name is None:
            self._name = _short(self._name_owner, self._name_node, 60)  # type: ignore[arg-type]
        return self._name

    def line_in(self, ctx: "Model") -> int:
        if self._line is None:
            self._line = (self.owner or ctx).file_line(self.node)  # type: ignore[arg-type]
        return self._line


@dataclass
class Resolved:
    """A value an expression may take: the expression computing it (in ``ctx``,
    ``scope``) and the steps crossed to reach it."""

    expr: cst.BaseExpression
    scope: Scope
    origins: list[Origin] = field(default_factory=list)
    via: frozenset[str] = frozenset()
    ctx: "Model | None" = None  # the file holding ``expr`` (None: the asking file)
    # the first name followed from the asking expression, and the asking file's model: a fix
    # that repeats ``expr`` there reads its names at that name's statement (:meth:`repeatable`)
    use: cst.Name | None = field(default=None, compare=False, repr=False)
    model: "Model | None" = field(default=None, compare=False, repr=False)

    @property
    def crossed_statements(self) -> bool:
        return bool(self.origins)

    def fixable_in(self, scope: Scope, ctx: "Model | None" = None) -> bool:
        """Whether a fix at ``scope`` may rewrite using ``expr``'s own code: the value is
        the only one reaching there, computed in the same scope of the same file, from names
        that hold the same values there (:meth:`repeatable`)."""
        return (self.scope is scope and not self.via
                and (self.ctx is None or ctx is None or self.ctx is ctx) and self.repeatable)

    @property
    def repeatable(self) -> bool:
        """Whether ``expr``'s code, repeated at the use it was reached from, reads the same
        values: ``q = softmax(x); x = relu(x); log(q)`` cannot become ``log_softmax(x)``."""
        if not self.origins or self.use is None or self.model is None or self.ctx is not None:
            return True
        return self.model.same_values_at(self.use, self.expr, self.scope)

    def repeatable_at(self, outer: "Resolved") -> bool:
        """:attr:`repeatable` for a value found inside ``outer``'s (the log's argument
        ``s = 1 + e``, ``e = exp(x)``): a fix writes it at ``outer``'s use, so its names are
        asked there (``x`` rebound after ``s``), as well as ``outer``'s own."""
        if not outer.repeatable:
            return False
        if outer.use is None or self.model is None or self.ctx is not None:
            return self.repeatable
        return self.model.same_values_at(outer.use, self.expr, self.scope)


def origin_note(ctx: "Model", resolved: Resolved) -> str:
    """`` (`p` is assigned on line 4)`` for a value reached through a name, else ``""``."""
    if not resolved.origins:
        return ""
    origin = resolved.origins[-1]
    line = origin.line_in(ctx)
    where = f" of {origin.path}" if origin.path else ""
    more = " (one of several values that reach here)" if MERGED in resolved.via and len(resolved.origins) == 1 else ""
    return f" (`{origin.name}` {origin.verb} line {line}{where}){more}"


class _Walk:
    def __init__(self, ctx: "Model", shape: bool, calls: bool = True) -> None:
        self.root = ctx
        # what the values found keep of the asking file's model: a weak proxy, since the model
        # keeps them (its memo of values), and a cycle would leave the whole model, its trees
        # included, to the cyclic collector instead of reference counting
        self.root_ref = weakref.proxy(ctx)
        self.shape = shape
        self.calls = calls
        self.out: list[Resolved] = []
        self.active: set[int] = set()  # bindings / functions being expanded (cycles)
        self.use: cst.Name | None = None
        self.overflow = False

    def _held(self, ctx: "Model") -> "Model":
        """``ctx`` as a value found keeps it: the root's weak proxy for the asking file."""
        return self.root_ref if ctx is self.root else ctx

    def emit(self, r: Resolved) -> None:
        if len(self.out) >= MAX_VALUES:
            self.overflow = True
            return
        if r.origins:
            r.use, r.model = self.use, self.root_ref
        self.out.append(r)

    def expand(self, ctx: "Model", expr: cst.BaseExpression, scope: Scope, origins: list[Origin],
               via: frozenset[str], frames: dict, depth: int) -> None:
        here = ctx if ctx is not self.root else None
        if depth <= 0 or self.overflow:
            self.emit(Resolved(expr, scope, origins, via, here))
            return
        kind = type(expr)  # not isinstance: libcst's classes are ABCs, whose misses are slow (no subclasses)
        if kind is cst.Name:
            if self._name(ctx, expr, scope, origins, via, frames, depth):
                return
        elif kind is cst.Attribute:
            if self._attribute(ctx, expr, scope, origins, via, frames, depth):
                return
        elif kind is cst.Call:
            if self._call(ctx, expr, scope, origins, via, frames, depth):
                return
        elif kind is cst.Subscript:
            if self._subscript(ctx, expr, scope, origins, via, frames, depth):
                return
        self.emit(Resolved(expr, scope, origins, via, here))

    # --- names --------------------------------------------------------------------
    def _name(self, ctx, expr: cst.Name, scope, origins, via, frames, depth) -> bool:
        if not origins and self.use is None and ctx is self.root:
            self.use = expr  # a name of the asking expression: where a fix would repeat a value
        found = ctx.reaching(expr, scope)
        if not found:
            return False
        bindings, where = found
        if len(bindings) > 1:
            via = via | {MERGED}
        for b in bindings:
            if id(b) in self.active:
                continue  # a loop's back edge: brings no value the others do not
            self.active.add(id(b))
            try:
                if not self._binding(ctx, b, expr.value, where, origins, via, frames, depth, expr):
                    self.emit(Resolved(expr, scope, origins, via, ctx if ctx is not self.root else None))
            finally:
                self.active.discard(id(b))
        return True

    def _binding(self, ctx, b: Binding, name: str, where: Scope, origins, via, frames, depth, use) -> bool:
        bscope = b.scope or where
        if b.kind == ASSIGN and b.value is not None:
            step = Origin(b, name, owner=self._held(ctx), path=self._path(ctx))
            self.expand(ctx, b.value, bscope, origins + [step], via, frames, depth - 1)
            return True
        if b.kind == UNPACK and b.value is not None:
            step = Origin(b, name, owner=self._held(ctx), path=self._path(ctx))
            sub = _Walk(self.root, self.shape, self.calls)
            sub.active = self.active
            sub.expand(ctx, b.value, bscope, [], via, frames, depth - 1)
            for r in sub.out:
                element = _element(r.expr, b.path)
                rctx = r.ctx or self.root
                if element is None:
                    self.emit(Resolved(use, where, origins + [step], via | {MERGED}, ctx if ctx is not self.root else None))
                    continue
                self.expand(rctx, element, r.scope, origins + [step] + r.origins, r.via | via, frames, depth - 1)
            return True
        if isinstance(b.node, cst.Param):
            return self._param(ctx, b, name, where, origins, via, frames, depth)
        if b.source is not None:  # from .model import predict_proba
            target = definitions.imported(ctx, b)
            if target is None:
                return False
            tctx, texpr, tscope = target
            step = Origin(b, name, "is imported on", owner=self._held(ctx), path=self._path(ctx))
            self.expand(tctx, texpr, tscope, origins + [step], via | {MODULE}, frames, depth - 1)
            return True
        return False

    def _param(self, ctx, b: Binding, name, fscope: Scope, origins, via, frames, depth) -> bool:
        frame = frames.get(id(fscope))
        if frame is not None:
            call, caller_scope, caller_ctx = frame
            arg = argument(fscope.node, b.node, call)
            if arg is None:
                return False
            outer = {k: v for k, v in frames.items() if k != id(fscope)}
            self.expand(caller_ctx, arg, caller_scope, origins, via, outer, depth - 1)
            return True
        if id(fscope) in self.active:
            return False
        sites = ctx.call_sites(fscope)
        if not sites:
            return False
        if len(sites) > 1:
            via = via | {MERGED}
        self.active.add(id(fscope))
        try:
            for call, caller_scope in sites:
                arg = argument(fscope.node, b.node, call)
                if arg is None:
                    self.emit(Resolved(cst.Name(name), fscope, origins, via | {PARAM}, None))
                    continue
                step = Origin(None, name, node=call, owner=self._held(ctx), path=self._path(ctx), passed=arg)
                self.expand(ctx, arg, caller_scope, origins + [step], via | {PARAM}, frames, depth - 1)
        finally:
            self.active.discard(id(fscope))
        return True

    def _attribute(self, ctx, expr: cst.Attribute, scope, origins, via, frames, depth) -> bool:
        if not (isinstance(expr.value, cst.Name) and expr.value.value == "self"):
            return False
        cls = scope.enclosing_class()
        if cls is None:
            return False
        bindings = cls.attributes.get(expr.attr.value)
        if not bindings or any(b.kind != ASSIGN for b in bindings):
            return False
        if len(bindings) > 1:
            via = via | {MERGED}
        for b in bindings:
            if id(b) in self.active:
                continue
            self.active.add(id(b))
            try:
                step = Origin(b, f"self.{expr.attr.value}", owner=self._held(ctx), path=self._path(ctx))
                self.expand(ctx, b.value, b.scope or scope, origins + [step], via, frames, depth - 1)
            finally:
                self.active.discard(id(b))
        return True

    # --- calls ----------------------------------------------------------------------
    def _call(self, ctx, expr: cst.Call, scope, origins, via, frames, depth, index: tuple[int, ...] = ()) -> bool:
        call = ctx.op_call(expr, scope)
        if call is not None:
            if self.shape and call.op == _SHAPE_OP and call.x is not None and not index:
                x = call.x
                items = [e.value for e in x.elements] if isinstance(x, (cst.List, cst.Tuple)) else [x]
                if len(items) > 1:
                    via = via | {MERGED}
                for item in items:
                    self.expand(ctx, item, scope, origins, via | {SHAPE}, frames, depth - 1)
                return True
            return False
        if not self.calls:
            return False
        returned = ctx.returns_of(expr, scope)
        if returned is not None:
            fscope, rets = returned
            if id(fscope) in self.active:
                return False
            self.active.add(id(fscope))
            try:
                inner = dict(frames)
                inner[id(fscope)] = (expr, scope, ctx)
                many = via | ({MERGED} if len(rets) > 1 else set())
                for ret in rets:
                    step = Origin(None, None, "returns it on", node=ret, owner=self._held(ctx), name_node=expr,
                                  path=self._path(ctx))
                    value = ret.value
                    if index:
                        value = _element(value, index)
                        if value is None:
                            self.emit(Resolved(expr, scope, origins, many | {MERGED}, ctx if ctx is not self.root else None))
                            continue
                    self.expand(ctx, value, fscope, origins + [step], many | {CALL}, inner, depth - 1)
            finally:
                self.active.discard(id(fscope))
            return True
        output = models.output(ctx, expr, scope)
        if output is not None and not index:
            for octx, oexpr, oscope, how in output:
                step = Origin(None, None, how, node=oexpr, owner=self._held(octx), name_node=expr, name_owner=self._held(ctx),
                              path=self._path(octx))
                self.expand(octx, oexpr, oscope, origins + [step], via | {MODEL}, {}, depth - 1)
            return True
        target = definitions.called(ctx, expr, scope)
        if target is not None:
            tctx, fscope, rets = target
            for ret in rets:
                value = _element(ret.value, index) if index else ret.value
                if value is None:
                    continue
                step = Origin(None, None, "returns it on", node=ret, owner=self._held(tctx), name_node=expr, name_owner=self._held(ctx),
                              path=self._path(tctx))
                self.expand(tctx, value, fscope, origins + [step], via | {MODULE, CALL}, {}, depth - 1)
            return True
        return False

    def _subscript(self, ctx, expr: cst.Subscript, scope, origins, via, frames, depth) -> bool:
        i = _int_index(expr)
        if i is not None and isinstance(expr.value, cst.Call):  # f(x)[1]
            if self._call(ctx, expr.value, scope, origins, via, frames, depth, index=(i,)):
                return True
        if self.shape:  # p[:, 0], probs[idx]: an element of the same kind
            self.expand(ctx, expr.value, scope, origins, via | {SHAPE}, frames, depth - 1)
            return True
        return False

    def _path(self, ctx) -> str | None:
        if ctx is self.root:
            return None
        try:
            return os.path.relpath(ctx.path)
        except ValueError:  # another drive
            return ctx.path


def values(ctx: "Model", expr: cst.BaseExpression, scope: Scope, shape: bool = False,
           depth: int = MAX_DEPTH, calls: bool = True) -> list[Resolved]:
    """Every value ``expr`` may take (see the module docstring); never empty.  Without
    ``calls``, calls are values themselves (no function, model or module is entered)."""
    walk = _Walk(ctx, shape, calls)
    walk.expand(ctx, expr, scope, [], frozenset(), {}, depth)
    if not walk.out:  # every path was a cycle
        return [Resolved(expr, scope)]
    if walk.overflow:
        for r in walk.out:
            r.via = r.via | {MERGED}
    return walk.out


def via_call(r: Resolved) -> bool:
    return bool(r.via & {CALL, MODEL, MODULE, PARAM})


# --- helpers --------------------------------------------------------------------------
def _element(expr: cst.BaseExpression, path: tuple[int, ...]) -> cst.BaseExpression | None:
    for i in path:
        if not isinstance(expr, (cst.Tuple, cst.List)):
            return None
        elements = expr.elements
        if any(isinstance(e, cst.StarredElement) for e in elements) or not -len(elements) <= i < len(elements):
            return None
        expr = elements[i].value
    return expr


def _int_index(expr: cst.Subscript) -> int | None:
    if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
        return None
    value = expr.slice[0].slice.value
    if isinstance(value, cst.Integer):
        return int(value.evaluated_value)
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus) \
            and isinstance(value.expression, cst.Integer):
        return -int(value.expression.evaluated_value)
    return None


def argument(fdef: cst.CSTNode, param: cst.CSTNode, call: cst.Call) -> cst.BaseExpression | None:
    """The expression ``call`` passes for ``param`` of ``fdef`` (its default if none)."""
    if not isinstance(fdef, cst.FunctionDef) or not isinstance(param, cst.Param):
        return None
    params = fdef.params
    positional = list(params.posonly_params) + list(params.params)
    names = [p.name.value for p in positional]
    method = bool(names) and names[0] in ("self", "cls") and isinstance(call.func, cst.Attribute)
    if method:
        positional, names = positional[1:], names[1:]
    name = param.name.value
    i = 0
    for a in call.args:
        if a.star:
            return None
        if a.keyword is None:
            if i < len(names) and names[i] == name:
                return a.value
            i += 1
        elif a.keyword.value == name:
            return a.value
    return param.default


def parameter(fdef: cst.CSTNode, call: cst.Call, arg: cst.Arg) -> cst.Param | None:
    """The parameter of ``fdef`` that ``call`` binds ``arg`` to (the reverse of :func:`argument`)."""
    if not isinstance(fdef, cst.FunctionDef) or arg.star:
        return None
    params = fdef.params
    positional = list(params.posonly_params) + list(params.params)
    if positional and positional[0].name.value in ("self", "cls") and isinstance(call.func, cst.Attribute):
        positional = positional[1:]
    if arg.keyword is not None:
        return next((p for p in positional + list(params.kwonly_params) if p.name.value == arg.keyword.value), None)
    i = 0
    for a in call.args:
        if a.star:
            return None
        if a is arg:
            return positional[i] if i < len(positional) else None
        if a.keyword is None:
            i += 1
    return None


def _short(ctx: "Model", expr: cst.CSTNode, width: int = 40) -> str:
    text = " ".join(ctx.code(expr).split())
    return text if len(text) <= width else text[:width - 3] + "..."
