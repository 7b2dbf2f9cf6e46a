"""Name resolution and the light dataflow the rules need, in one pass (libcst's
scope providers cost ~7x the parse on ML code).  Per scope it records what each
name is bound to: imports (qualified names such as ``tensorflow.compat.v1``),
assignments (the assigned expression; ``s += v`` the made ``s + v``), every other
binding (parameters, loops, ``def``/``class``, ``with ... as``), and the values
changed in place.  Each call and binary operation is stored with its scope.

The contract, shared by every rule:

* A name resolves to a qualified name only when every binding of it in the
  nearest scope that binds it is an import (e.g. ``try: import tensorflow.compat.v1
  as tf / except ImportError: import tensorflow as tf``) of one package, or a
  single assignment of an expression that itself resolves (``F = torch.nn.functional``).
  A user's own ``def log(...)`` or ``softmax = lambda z: ...`` never resolves.
* A name is followed to its value only when it has exactly one binding in the
  *same* scope, a plain ``name = value`` that is not under ``if``/``for``/
  ``while``/``try``/``match`` (``with`` blocks are unconditional).
"""

from __future__ import annotations

import libcst as cst

from nanlint.semantic.scopes import ASSIGN, IMPORT, OTHER, UNPACK, Binding, Scope
from nanlint.source.walk import FastVisitor


def dotted(expr: cst.BaseExpression) -> str | None:
    """``a.b.c`` as a string, for Name/Attribute chains only."""
    parts = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if isinstance(expr, cst.Name):
        parts.append(expr.value)
        return ".".join(reversed(parts))
    return None


def augmented_value(node: cst.AugAssign) -> cst.BinaryOperation:
    """``s + v`` for ``s += v`` (any operator): the value the statement binds."""
    operator = getattr(cst, type(node.operator).__name__[:-len("Assign")])()
    return cst.BinaryOperation(node.target, operator, node.value)  # type: ignore[arg-type]


class Index(FastVisitor):  # FastVisitor: ~9x faster walk, same events
    """Scopes, bindings, and every call / binary operation with its scope."""

    def __init__(self, module: cst.Module) -> None:
        self.module_scope = Scope("module", None, module)
        self.scope = self.module_scope
        self.calls: list[tuple[cst.Call, Scope]] = []
        self.binops: list[tuple[cst.BinaryOperation, Scope]] = []
        self.imported_roots: set[str] = set()
        self.scopes: dict[int, Scope] = {}  # id(def/lambda/class node) -> its scope
        self.augmented: dict[int, cst.AugAssign] = {}  # id(made ``s + v``) -> ``s += v``
        self._conditional_depth = [0]
        self.walk(module)

    # --- scopes --------------------------------------------------------------
    def _push(self, kind: str, node: cst.CSTNode) -> None:
        self.scope = Scope(kind, self.scope, node)
        self.scopes[id(node)] = self.scope
        self._conditional_depth.append(0)

    def _pop(self) -> None:
        assert self.scope.parent is not None
        self.scope = self.scope.parent
        self._conditional_depth.pop()

    def _bind(self, name: str, binding: Binding) -> None:
        binding.conditional = binding.conditional or self._conditional_depth[-1] > 0
        binding.scope = self.scope
        scope = self.scope
        if name in scope.globals:
            scope = scope.module()
        scope.bind(name, binding)

    def _bind_target(self, target: cst.BaseExpression, stmt: cst.CSTNode,
                     value: cst.BaseExpression | None = None, path: tuple[int, ...] = ()) -> None:
        if isinstance(target, cst.Name):
            if value is not None and path:
                self._bind(target.value, Binding(UNPACK, stmt, value=value, path=path))
            else:
                self._bind(target.value, Binding(OTHER, stmt))
        elif isinstance(target, (cst.Tuple, cst.List)):
            starred = any(isinstance(e, cst.StarredElement) for e in target.elements)
            for i, element in enumerate(target.elements):
                self._bind_target(element.value, stmt, None if starred else value, path + (i,))
        elif isinstance(target, cst.StarredElement):
            self._bind_target(target.value, stmt)
        elif isinstance(target, cst.Attribute):
            self._bind_attribute(target, Binding(OTHER, stmt))
        elif isinstance(target, cst.Subscript) and (name := dotted(target.value)) is not None:
            self.scope.mutations.setdefault(name, []).append(stmt)

    def _bind_attribute(self, target: cst.Attribute, binding: Binding) -> None:
        """Record ``self.attr = ...`` made in a method, on the class scope."""
        if isinstance(target.value, cst.Name) and target.value.value == "self":
            cls = self.scope.enclosing_class()
            if cls is not None:
                binding.conditional = binding.conditional or self._conditional_depth[-1] > 0
                binding.scope = self.scope
                cls.attributes.setdefault(target.attr.value, []).append(binding)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self._bind(node.name.value, Binding(OTHER, node))
        for decorator in node.decorators:
            self.walk(decorator)
        self.walk(node.params)  # defaults are evaluated in the enclosing scope
        if node.returns is not None:
            self.walk(node.returns)
        self._push("function", node)
        for param in _all_params(node.params):
            self._bind(param.name.value, Binding(OTHER, param))
        self.walk(node.body)
        self._pop()
        return False

    def visit_Param(self, node: cst.Param) -> bool:
        if node.default is not None:
            self.walk(node.default)
        if node.annotation is not None:
            self.walk(node.annotation)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self.walk(node.params)
        self._push("lambda", node)
        for param in _all_params(node.params):
            self._bind(param.name.value, Binding(OTHER, param))
        self.walk(node.body)
        self._pop()
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self._bind(node.name.value, Binding(OTHER, node))
        for decorator in node.decorators:
            self.walk(decorator)
        for arg in node.bases + node.keywords:
            self.walk(arg)
        self._push("class", node)
        self.walk(node.body)
        self._pop()
        return False

    def _comprehension(self, node, parts) -> bool:
        self.walk(node.for_in.iter)  # the first iterable runs in the enclosing scope
        self._push("comprehension", node)
        comp = node.for_in
        first = True
        while comp is not None:
            if not first:
                self.walk(comp.iter)
            first = False
            self._bind_target(comp.target, comp)
            for cond in comp.ifs:
                self.walk(cond)
            comp = comp.inner_for_in
        for part in parts:
            self.walk(part)
        self._pop()
        return False

    def visit_ListComp(self, node: cst.ListComp) -> bool:
        return self._comprehension(node, [node.elt])

    def visit_SetComp(self, node: cst.SetComp) -> bool:
        return self._comprehension(node, [node.elt])

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> bool:
        return self._comprehension(node, [node.elt])

    def visit_DictComp(self, node: cst.DictComp) -> bool:
        return self._comprehension(node, [node.key, node.value])

    # --- conditional blocks -----------------------------------------------------
    def _enter_conditional(self, node) -> None:
        self._conditional_depth[-1] += 1

    def _leave_conditional(self, node) -> None:
        self._conditional_depth[-1] -= 1

    visit_If = visit_While = visit_Try = visit_Match = visit_IfExp = _enter_conditional  # visit_For: below
    leave_If = leave_For = leave_While = leave_Try = leave_Match = leave_IfExp = _leave_conditional
    visit_TryStar = _enter_conditional
    leave_TryStar = _leave_conditional

    # --- bindings ------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = dotted(alias.name)
            if full is None:
                continue
            self.imported_roots.add(full.split(".")[0])
            if alias.asname is not None:
                name = alias.asname.name
                if isinstance(name, cst.Name):
                    self._bind(name.value, Binding(IMPORT, node, qualname=full, source=(0, full, None)))
            else:
                root = full.split(".")[0]
                self._bind(root, Binding(IMPORT, node, qualname=root, source=(0, root, None)))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        base = dotted(node.module) if node.module is not None else None
        relative = bool(node.relative)
        if base is not None and not relative:
            self.imported_roots.add(base.split(".")[0])
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            name_node = alias.asname.name if alias.asname is not None else alias.name
            if not isinstance(name_node, cst.Name):
                continue
            imported = dotted(alias.name)
            level = len(node.relative)
            source = (level, base, imported) if imported is not None else None
            if base is None or relative or imported is None or base == "__future__":
                self._bind(name_node.value, Binding(OTHER, node, source=source))
            else:
                self._bind(name_node.value, Binding(IMPORT, node, qualname=f"{base}.{imported}", source=source))

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self._bind(node.targets[0].target.value, Binding(ASSIGN, node, value=node.value))
            return
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Attribute):
            self._bind_attribute(node.targets[0].target, Binding(ASSIGN, node, value=node.value))
            return
        for target in node.targets:
            if len(node.targets) > 1 and isinstance(target.target, cst.Name):  # a = b = value
                self._bind(target.target.value, Binding(ASSIGN, node, value=node.value))
            else:
                self._bind_target(target.target, node, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name) and node.value is not None:
            self._bind(node.target.value, Binding(ASSIGN, node, value=node.value))
        elif node.value is not None:
            self._bind_target(node.target, node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        """``s += v`` binds ``s`` to ``s + v`` (made here, not in the tree; its left is the
        statement's own target, which the flow gives the bindings before the statement)."""
        if isinstance(node.target, cst.Name):
            value = augmented_value(node)
            self.augmented[id(value)] = node
            self._bind(node.target.value, Binding(ASSIGN, node, value=value))
        else:
            self._bind_target(node.target, node)

    def visit_For(self, node: cst.For) -> None:
        self._enter_conditional(node)
        self._bind_target(node.target, node)

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            if item.asname is not None:
                self._bind_target(item.asname.name, node)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None and isinstance(node.name.name, cst.Name):
            self._bind(node.name.name.value, Binding(OTHER, node))

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        scope = self.scope
        while scope.kind == "comprehension" and scope.parent is not None:
            scope = scope.parent
        if isinstance(node.target, cst.Name):
            scope.bind(node.target.value, Binding(OTHER, node, conditional=True))

    def visit_Del(self, node: cst.Del) -> None:
        self._bind_target(node.target, node)

    def visit_Global(self, node: cst.Global) -> None:
        for item in node.names:
            self.scope.globals.add(item.name.value)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        for item in node.names:
            self._bind(item.name.value, Binding(OTHER, node))

    def visit_MatchAs(self, node) -> None:
        if getattr(node, "name", None) is not None:
            self._bind(node.name.value, Binding(OTHER, node))

    # --- sites ---------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append((node, self.scope))
        f = node.func  # an in-place method: a name ending in ``_``
        if isinstance(f, cst.Attribute) and f.attr.value[-1:] == "_" != f.attr.value[:1] and (name := dotted(f.value)):
            self.scope.mutations.setdefault(name, []).append(node)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self.binops.append((node, self.scope))

    def visit_Return(self, node: cst.Return) -> None:
        if self.scope.kind == "function":
            self.scope.returns.append(node)

    def visit_Yield(self, node: cst.Yield) -> None:
        self.scope.generator = True

    # --- queries ---------------------------------------------------------------------
    def lookup(self, name: str, scope: Scope) -> tuple[list[Binding], Scope] | None:
        """The bindings of ``name`` in the nearest scope (Python's LEGB, class
        scopes skipped from nested functions) that binds it."""
        s: Scope | None = scope
        first = True
        while s is not None:
            if name in s.globals:
                s = s.module()
            if (first or s.kind != "class") and name in s.bindings:
                return s.bindings[name], s
            first = False
            s = s.parent
        return None

    def qualname(self, expr: cst.BaseExpression, scope: Scope, _depth: int = 0) -> str | None:
        """The qualified name of a Name/Attribute chain rooted in an import."""
        if _depth > 8:
            return None
        if type(expr) is cst.Attribute:  # type(), not isinstance: an ABC's miss is slow (no subclass)
            base = self.qualname(expr.value, scope, _depth + 1)
            return f"{base}.{expr.attr.value}" if base is not None else None
        if type(expr) is not cst.Name:
            return None
        found = self.lookup(expr.value, scope)
        if found is None:
            return None
        bindings, where = found
        if all(b.kind == IMPORT for b in bindings):
            roots = {b.qualname.split(".")[0] for b in bindings}  # type: ignore[union-attr]
            return bindings[0].qualname if len(roots) == 1 else None
        if len(bindings) == 1 and bindings[0].kind == ASSIGN and not bindings[0].conditional:
            value = bindings[0].value
            if type(value) is cst.Name or type(value) is cst.Attribute:
                return self.qualname(value, where, _depth + 1)
        return None

    def assignment(self, expr: cst.BaseExpression, scope: Scope) -> Binding | None:
        """The single unconditional assignment a name (or ``self.attr``) refers to.

        A plain name must be assigned in the same scope as its use.  ``self.attr``
        is followed when the class assigns it exactly once, unconditionally, in
        any of its methods (TF1 model classes build ``self.probs`` in one method
        and take its log in another)."""
        if isinstance(expr, cst.Name):
            bindings = scope.bindings.get(expr.value)
            if bindings is None or len(bindings) != 1:
                return None
            b = bindings[0]
        elif (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name)
              and expr.value.value == "self"):
            cls = scope.enclosing_class()
            if cls is None:
                return None
            bindings = cls.attributes.get(expr.attr.value)
            if bindings is None or len(bindings) != 1:
                return None
            b = bindings[0]
        else:
            return None
        if b.kind != ASSIGN or b.conditional or isinstance(b.node, cst.AugAssign):
            return None  # an augmented value is not the statement's own expression to rewrite
        return b

    def function(self, func: cst.BaseExpression, scope: Scope) -> tuple[Binding, Scope] | None:
        """The module's own function a call's ``func`` names, and the function's scope.

        ``name`` must be bound exactly once (by a ``def``) in the nearest scope
        that binds it, ``self.name`` exactly once in the enclosing class; only
        decorators that are imported names (``@tf.function``, ``@jax.jit``) are
        allowed, since a user's decorator may change what is returned."""
        kind = type(func)  # not isinstance: libcst's classes are ABCs, whose misses are slow (no subclasses)
        if kind is cst.Name:
            found = self.lookup(func.value, scope)
            if found is None or len(found[0]) != 1:
                return None
            b = found[0][0]
        elif kind is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self":
            cls = scope.enclosing_class()
            if cls is None or func.attr.value in cls.attributes:
                return None
            bindings = cls.bindings.get(func.attr.value)
            if bindings is None or len(bindings) != 1:
                return None
            b = bindings[0]
        else:
            return None
        node = b.node
        if type(node) is not cst.FunctionDef or b.conditional or node.asynchronous is not None:
            return None
        for d in node.decorators:
            target = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
            if self.qualname(target, scope) is None:
                return None
        fscope = self.scopes.get(id(node))
        if fscope is None or fscope.generator:
            return None
        return b, fscope

    def visible_imports(self, scope: Scope) -> list[tuple[str, str]]:
        """(local name, qualified name) for every import binding usable at ``scope``,
        computed once per scope from the scope's chain and, once per file, the module's."""
        cache = self.__dict__.setdefault("_visible_cache", {})
        if id(scope) not in cache:
            module = self.module_scope
            if "_module_visible" not in self.__dict__:
                self._module_visible = self._chain_imports(module, None, set())
            chain, s = [], scope
            while s is not module and s is not None:
                chain.append(s)
                s = s.parent
            if any(c.globals for c in chain):  # a ``global`` lookup jumps to the module
                cache[id(scope)] = self._chain_imports(scope, None, set())
            else:
                seen: set[str] = set()
                got = self._chain_imports(scope, module, seen)
                cache[id(scope)] = got + [(n, q) for n, q in self._module_visible if n not in seen]
        return cache[id(scope)]

    def _chain_imports(self, scope: Scope, stop: Scope | None, seen: set[str]) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        s: Scope | None = scope
        first = True
        while s is not None and s is not stop:
            if first or s.kind != "class":
                for name, bindings in s.bindings.items():
                    if name in seen:
                        continue
                    seen.add(name)
                    q = self.qualname(cst.Name(name), scope)
                    if q is not None and all(b.kind == IMPORT for b in bindings):
                        out.append((name, q))
            first = False
            s = s.parent
        return out

    def is_bound(self, name: str, scope: Scope) -> bool:
        return self.lookup(name, scope) is not None


def _all_params(params: cst.Parameters) -> list[cst.Param]:
    out = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    if isinstance(params.star_arg, cst.Param):
        out.append(params.star_arg)
    if params.star_kwarg is not None:
        out.append(params.star_kwarg)
    return out
