"""The values of the project's other modules: a module loaded and analysed like the file
that imports it, and an imported name followed to its definition there.

:mod:`nanlint.semantic.modules` says where an import lives; this module reads what it
binds: :func:`imported` (a name's value in the module defining it, through at most
``MAX_REEXPORTS`` re-exports), :func:`definition` (the ``def`` or ``class`` a call
reaches), :func:`called` (a project function's ``return`` statements). A module is parsed
on first use, once per process and file version.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import libcst as cst

from nanlint.semantic.model import Model
from nanlint.semantic.modules import MAX_DEPTH, MAX_REEXPORTS, SKIP_ROOTS, extra_roots, module_file
from nanlint.semantic.resolve import ASSIGN, Binding, Scope
from nanlint.source.walk import parse

_LOADED: dict[str, tuple[tuple[int, int], "Model | None"]] = {}


def load(path: Path, like: "Model") -> "Model | None":
    """The analysed module at ``path``, a context of the same kind and settings as ``like``
    (parsed once per process and file version)."""

    key = str(path.resolve())
    try:
        st = os.stat(key)
    except OSError:
        return None
    stamp = (st.st_mtime_ns, st.st_size)
    got = _LOADED.get(key)
    if got is not None and got[0] == stamp:
        return got[1]
    ctx = None
    try:
        ctx = type(like)(parse(Path(key).read_bytes()), key, like.settings)
    except Exception:  # noqa: BLE001 - a module that does not parse has no values to give
        ctx = None
    _LOADED[key] = (stamp, ctx)
    return ctx


def _importer(ctx: "Model") -> Path | None:
    if not ctx.path or ctx.path.startswith("<"):
        return None
    p = Path(ctx.path)
    return p if p.is_file() else None


_SUMMARIES: dict[str, tuple[tuple[int, int], dict[str, str]]] = {}


def summary(path: Path) -> dict[str, str]:
    """What each top-level name of a module is bound to (``def``, ``class``, ``assign``,
    ``from:LEVEL:MODULE:NAME`` for ``from MODULE import NAME``, ``other``), from CPython's
    parser: deciding whether a name is worth following costs no libcst parse."""
    key = str(path)
    try:
        st = os.stat(key)
    except OSError:
        return {}
    stamp = (st.st_mtime_ns, st.st_size)
    got = _SUMMARIES.get(key)
    if got is not None and got[0] == stamp:
        return got[1]
    kinds: dict[str, str] = {}
    try:
        tree = ast.parse(Path(key).read_bytes())
    except (SyntaxError, ValueError, OSError, MemoryError, RecursionError):
        tree = None
    for node in tree.body if tree is not None else ():
        names: list[tuple[str, str]] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names = [(node.name, "def")]
        elif isinstance(node, ast.ClassDef):
            names = [(node.name, "class")]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [(t.id, "assign") for t in targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.ImportFrom) and node.names[0].name != "*":  # a re-export: followed
            names = [(a.asname or a.name, f"from:{node.level}:{node.module or ''}:{a.name}") for a in node.names]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [((a.asname or a.name).split(".")[0], "other") for a in node.names]
        for name, kind in names:
            kinds[name] = kind if name not in kinds else "other"  # bound twice: not followed
    _SUMMARIES[key] = (stamp, kinds)
    return kinds


def _target(ctx: "Model", binding: Binding, kinds: tuple[str, ...]) -> tuple[Path, str] | None:
    """The module file a ``from M import name`` binding imports from, and the name, when
    the module binds the name once, to one of ``kinds``."""
    if binding.source is None:
        return None
    level, module, name = binding.source
    importer = _importer(ctx)
    if importer is None or name is None:
        return None
    return _bound_in(ctx, importer, level, module, name, kinds)


def _bound_in(ctx: "Model", importer: Path, level: int, module: str | None, name: str,
              kinds: tuple[str, ...]) -> tuple[Path, str] | None:
    """The module file ``from {level}{module} import {name}`` takes ``name`` from (through
    a package's re-exports), when it binds the name once, to one of ``kinds``: found from
    CPython's summaries, nothing loaded."""
    extra = extra_roots(ctx.settings)
    for _ in range(MAX_REEXPORTS + 1):  # through re-exports: a package's ``from .model import f``
        file = module_file(importer, level, module, None, extra)
        kind = summary(file).get(name) if file is not None else None
        if kind is None or not kind.startswith("from:"):
            break
        _, hop, module, name = kind.split(":", 3)
        importer, level, module = file, int(hop), module or None
    return (file, name) if file is not None and kind in kinds else None


def _loaded(ctx: "Model", target: tuple[Path, str] | None) -> tuple["Model", str] | None:
    if target is None:
        return None
    other = load(target[0], ctx)
    return (other, target[1]) if other is not None and other is not ctx else None


def _attribute_target(ctx: "Model", func: cst.Attribute, scope: Scope,
                      kinds: tuple[str, ...]) -> tuple[Path, str] | None:
    """``m.f`` (``m.sub.f``) where ``m`` is a project module imported whole (``import
    models.gan as m``, ``from . import model as m``, ``from pkg import nets``, ``import
    pkg.nets``): the module binding ``f``, as for ``from M import f``."""
    path: list[str] = []
    root: cst.BaseExpression = func.value
    while isinstance(root, cst.Attribute):
        path.insert(0, root.attr.value)
        root = root.value
    if not isinstance(root, cst.Name) or len(path) > MAX_DEPTH:
        return None
    found = ctx.index.lookup(root.value, scope)
    if found is None or len(found[0]) != 1 or found[0][0].source is None:
        return None
    level, module, name = found[0][0].source
    parts = (module.split(".") if module else []) + ([name] if name else []) + path
    importer = _importer(ctx)
    if importer is None or not parts or (level == 0 and parts[0] in SKIP_ROOTS):
        return None
    return _bound_in(ctx, importer, level, ".".join(parts), func.attr.value, kinds)


def _module_binding(other: "Model", name: str) -> Binding | None:
    bindings = other.index.module_scope.bindings.get(name)
    if not bindings or len(bindings) != 1 or bindings[0].conditional:
        return None
    return bindings[0]


def imported(ctx: "Model", binding: Binding) -> tuple["Model", cst.BaseExpression, Scope] | None:
    """The value a name imported from a project module is assigned there."""
    found = _loaded(ctx, _target(ctx, binding, ("assign",)))
    if found is None:
        return None
    other, name = found
    b = _module_binding(other, name)
    if b is None or b.kind != ASSIGN or b.value is None:
        return None
    return other, b.value, other.index.module_scope


def defining_file(ctx: "Model", func: cst.BaseExpression, scope: Scope) -> tuple[Path, str] | None:
    """The module file defining the ``def``/``class`` a name imported from a project module
    is (``f`` of ``from M import f``, or ``m.f`` of a module ``m`` imported whole), and the
    name it has there; nothing is parsed with libcst."""
    if isinstance(func, cst.Attribute):
        return _attribute_target(ctx, func, scope, ("def", "class"))
    if isinstance(func, cst.Name):
        found = ctx.index.lookup(func.value, scope)
        if found is None or len(found[0]) != 1:
            return None
        return _target(ctx, found[0][0], ("def", "class"))
    return None


def definition(ctx: "Model", func: cst.BaseExpression, scope: Scope) -> tuple["Model", cst.CSTNode] | None:
    """The ``def``/``class`` a name imported from a project module is, and its module, loaded."""
    target = _loaded(ctx, defining_file(ctx, func, scope))
    if target is None:
        return None
    other, name = target
    b = _module_binding(other, name)
    if b is None or not isinstance(b.node, (cst.FunctionDef, cst.ClassDef)):
        return None
    return other, b.node


def called(ctx: "Model", call: cst.Call, scope: Scope) -> tuple["Model", Scope, list[cst.Return]] | None:
    """For a call of a function imported from a project module: its module, scope and returns."""
    found = definition(ctx, call.func, scope)
    if found is None or not isinstance(found[1], cst.FunctionDef):
        return None
    other, node = found
    fake = cst.Call(cst.Name(node.name.value))
    returned = other.returns_of(fake, other.index.module_scope)
    if returned is None:
        return None
    return other, returned[0], returned[1]
