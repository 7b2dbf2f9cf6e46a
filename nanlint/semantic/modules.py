"""The project's own modules: where an import of one lives, and its values.

A name imported from another module of the project (``from .model import predict_proba``,
``from model import Net``, ``import pkg.losses as L``) is followed into that module, parsed
on first use (once per process) and analysed with the same layer as the importing file.

Resolution follows Python's: a relative import from the importing file's
package; an absolute one against the project roots -- the importing file's
own directory (a script run as ``python train.py``), the directory above its
top-level package (the nearest ancestor without ``__init__.py``), a ``src/``
directory there, and the ``src = [...]`` roots of the configuration.

:func:`dependencies` lists, without parsing (a scan of import lines), the project files a
file imports, transitively; a file's cached result is keyed by their contents too.
"""

from __future__ import annotations

import hashlib
import os
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import libcst as cst

from nanlint.semantic.resolve import ASSIGN, Binding, Scope
from nanlint.source.walk import parse

from nanlint.semantic.model import Model

MAX_DEPENDENCIES = 64  # project files one file's result may depend on
MAX_DEPTH = 2  # import levels followed
MAX_REEXPORTS = 2  # ``from M import name`` hops from the module imported to the one defining name
_SKIP_ROOTS = frozenset({"tensorflow", "torch", "jax", "jaxlib", "keras", "optax", "flax", "haiku", "numpy",
                         "scipy", "os", "sys", "math", "re", "json", "typing", "collections", "functools",
                         "itertools", "dataclasses", "pathlib", "logging", "abc", "__future__"})
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import\b[ \t\\]*"
                     r"(\([^)]*\)|[\w, \t]*)|import[ \t]+([\w., \t]+))", re.MULTILINE)


# Within one run (:func:`run_memo`): where each import leads, the resolved paths, the import
# lines and content digest of each module file (by resolved path, mtime and size): every file
# of a package imports the same few modules (the training benchmark's warm run spent all but
# 0.5 of 5.5 s finding them again).  Outside a run nothing is remembered.
_MEMO: dict | None = None


# --- where modules live ---------------------------------------------------------------
def roots(path: Path, extra: tuple[str, ...] = ()) -> list[Path]:
    """The directories an absolute import from ``path`` is resolved against."""
    here = path.parent
    top = here
    while (top / "__init__.py").is_file() and top.parent != top:
        top = top.parent
    out = [here, top, top / "src", *(Path(e) for e in extra)]
    seen: list[Path] = []
    for r in out:
        if r not in seen and r.is_dir():
            seen.append(r)
    return seen


def _as_file(base: Path, parts: list[str]) -> Path | None:
    target = base.joinpath(*parts) if parts else base
    module = target.with_suffix(".py") if parts else None
    if module is not None and module.is_file():
        return module
    init = target / "__init__.py"
    return init if init.is_file() else None


def module_file(importer: Path, level: int, module: str | None, name: str | None = None,
                extra: tuple[str, ...] = ()) -> Path | None:
    """The file an import names: ``from {'.' * level}{module} import {name}`` (``name``
    is tried as a submodule first), or ``import module`` (level 0, no name)."""
    if _MEMO is None:
        return _module_file(importer, level, module, name, extra)
    key = ("module", str(importer.parent), level, module, name, extra)
    if key not in _MEMO:
        _MEMO[key] = _module_file(importer, level, module, name, extra)
    return _MEMO[key]


def _module_file(importer: Path, level: int, module: str | None, name: str | None,
                 extra: tuple[str, ...]) -> Path | None:
    parts = module.split(".") if module else []
    if level == 0 and (not parts or parts[0] in _SKIP_ROOTS):
        return None
    if level > 0:
        base = importer.parent
        for _ in range(level - 1):
            base = base.parent
        bases = [base]
    else:
        bases = roots(importer, extra)
    for base in bases:
        if name:
            sub = _as_file(base, parts + [name])
            if sub is not None:
                return sub
        found = _as_file(base, parts)
        if found is not None:
            return found
    return None


def dependencies(path: Path, text: str, extra: tuple[str, ...] = ()) -> list[Path]:
    """The project files ``path`` imports (directly, then theirs, ``MAX_DEPTH`` levels),
    found by scanning import lines: a superset of what the analysis may read.  Of a
    package's ``__init__.py`` only the imports binding the names taken from it count
    (``from ..schedulers import DDPMScheduler`` leads to ``scheduling_ddpm.py``, not to
    every module the package re-exports): the analysis follows a name, not a package."""
    out: list[Path] = []
    listed = {resolved(path)}
    seen: set = set()
    # (file, its resolved path (None: the one given as text), names taken, levels, re-export hops)
    frontier: list = [(path, None, None, 0, 0)]
    while frontier:
        nxt = []
        for file, real_file, names, levels, hops in frontier:
            found = direct(file, text, extra) if real_file is None else _direct_of(file, real_file, extra, names)
            for dep, words in found:
                real = resolved(dep)
                wanted = frozenset(words) if dep.name == "__init__.py" and words else None
                if (real, wanted) in seen or (real, None) in seen:
                    continue
                if names is not None and hops < MAX_REEXPORTS:
                    level, hop = levels, hops + 1  # a package passing a name on: the same level
                else:
                    level, hop = levels + 1, hops
                if level > MAX_DEPTH:
                    continue
                seen.add((real, wanted))
                if real not in listed:
                    listed.add(real)
                    out.append(dep)
                    if len(out) >= MAX_DEPENDENCIES:
                        return out
                if level < MAX_DEPTH or wanted is not None:
                    nxt.append((dep, real, wanted, level, hop))
        frontier = nxt
    return out


def _direct_of(dep: Path, real: Path, extra: tuple[str, ...], names: frozenset[str] | None = None) -> list:
    """:func:`direct` of a module file read from disk (remembered within a run)."""
    key = _stat_key("direct", real) if _MEMO is not None else None
    if key is not None and (key, extra, names) in _MEMO:  # type: ignore[operator]
        return _MEMO[key, extra, names]  # type: ignore[index]
    imports = _imports_of(dep, real)
    found = direct(dep, imports, extra, names) if imports is not None else []
    if key is not None:
        _MEMO[key, extra, names] = found  # type: ignore[index]
    return found


def memo() -> dict | None:  # the run's memo (None outside one), for importers.py
    return _MEMO


@contextmanager
def run_memo() -> Iterator[None]:
    global _MEMO
    outer = _MEMO
    _MEMO = {} if outer is None else outer
    try:
        yield
    finally:
        _MEMO = outer


def resolved(path: Path) -> Path:
    if _MEMO is None:
        return path.resolve()
    key = ("real", str(path))
    if key not in _MEMO:
        _MEMO[key] = path.resolve()
    return _MEMO[key]


def _stat_key(kind: str, real: Path) -> tuple | None:
    try:
        st = real.stat()
    except OSError:
        return None
    return kind, str(real), st.st_mtime_ns, st.st_size


def _imports_of(dep: Path, real: Path) -> list[tuple[int, str, list[str]]] | None:
    key = _stat_key("imports", real) if _MEMO is not None else None
    if key is not None and key in _MEMO:  # type: ignore[operator]
        return _MEMO[key]  # type: ignore[index]
    try:
        found = import_lines(dep.read_text("utf-8", "replace"))
    except OSError:
        return None
    if key is not None:
        _MEMO[key] = found  # type: ignore[index]
    return found


def import_lines(text: str) -> list[tuple]:
    """(level, module, imported names, the names they are bound to, the attributes the
    text reads of each bound name) of each ``from M import names`` line, and of each
    module of an ``import M [as m]`` line (names None; bound: the name its attributes are
    read through, ``m`` or the dotted ``M``).  A name imported whole from a project module
    is followed through its attributes (``m.discriminator(x)``): those attributes are the
    names taken from it."""
    out = []
    chains = _Chains(text)
    for m in _IMPORT.finditer(text):
        dots, module, names, plain = m.groups()
        if plain is not None:
            for item in plain.split(","):
                parts = item.split()
                if not parts or parts[0].split(".")[0] in _SKIP_ROOTS:
                    continue
                prefix = parts[-1] if len(parts) == 3 and parts[1] == "as" else parts[0]
                out.append((0, parts[0], None, [prefix], [chains.attributes(prefix)]))
            continue
        level = len(dots or "")
        if not module and not level:
            continue
        if names and names.startswith("("):  # parenthesized over lines, maybe with comments
            names = re.sub(r"#[^\n]*", "", names[1:-1])
        parts = [n.split() for n in (names or "").split(",") if n.split()]
        bound = [p[-1] for p in parts]
        skip = not level and module.split(".")[0] in _SKIP_ROOTS
        out.append((level, module, [p[0] for p in parts], bound,
                    [frozenset() if skip else chains.attributes(b) for b in bound]))
    return out


_CHAIN = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.\w+)+)")


class _Chains:
    """The dotted chains of a text (``m.f``, ``pkg.model.g``), read once and grouped by their
    first name: what :meth:`attributes` answers for every name an import binds (a regex
    pass per name was quadratic in a module's imports)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.by_root: dict[str, set[str]] | None = None

    def attributes(self, prefix: str) -> frozenset[str]:
        """The attributes the text reads of ``prefix`` (``m.f`` -> ``f``)."""
        if prefix + "." not in self.text:
            return frozenset()
        if self.by_root is None:
            self.by_root = {}
            for chain in _CHAIN.findall(self.text):
                self.by_root.setdefault(chain.split(".", 1)[0], set()).add(chain)
        head = prefix + "."
        return frozenset(c[len(head):].split(".", 1)[0] for c in self.by_root.get(prefix.split(".", 1)[0], ())
                         if c.startswith(head))


def direct(path: Path, text: str | list, extra: tuple[str, ...], names: frozenset[str] | None = None) -> list:
    """(module, names taken from it) for the modules ``from M import name`` takes names
    from (values, functions, classes: what the analysis follows), and for a module
    imported whole (``import M as m``, ``from P import M`` of a submodule) whose
    attributes the file reads (``m.f``: the names taken are those attributes).  ``text``:
    the source, or its :func:`import_lines`; ``names``: only the lines binding one of
    them (a line whose names the scan cannot read, ``import *``, always counts)."""
    found: list = []
    for level, module, words, bound, attrs in (import_lines(text) if isinstance(text, str) else text):
        if names is not None and (words or words is None) and names.isdisjoint(bound):
            continue
        if words is None:  # import M [as m]: M itself, when its attributes are read
            target = module_file(path, 0, module, None, extra) if attrs[0] else None
            if target is not None:
                found.append((target, sorted(attrs[0])))
            continue
        target = module_file(path, level, module or None, None, extra)
        subs = []
        for word, used in zip(words, attrs):
            sub = module_file(path, level, module or None, word, extra)
            if sub is not None and sub != target:
                subs.append((sub, used))
        if target is not None and not (target.name == "__init__.py" and words and len(subs) == len(words)):
            found.append((target, words))
        found.extend((sub, sorted(used)) for sub, used in subs if used)  # from pkg import nets: nets.f
    return found


def extra_roots(settings: dict | None) -> tuple[str, ...]:
    """Import roots from the configuration: its directory, a ``src/`` there, and ``src = [...]``."""
    settings = settings or {}
    out: list[str] = []
    root = settings.get("root")
    if root:
        out += [str(root), str(Path(root) / "src")]
    out += [str(p) for p in settings.get("src") or ()]
    return tuple(out)


def digest(paths: list[Path]) -> str:
    """A hash of the named files' contents (for the cache key)."""
    h = hashlib.blake2b(digest_size=16)
    for p in paths:
        h.update(f"{p}:{_content_digest(p)}:".encode())
    return h.hexdigest()


def _content_digest(p: Path) -> str:
    key = _stat_key("digest", resolved(p)) if _MEMO is not None else None
    if key is not None and key in _MEMO:  # type: ignore[operator]
        return _MEMO[key]  # type: ignore[index]
    try:
        data = p.read_bytes()
        out = f"{len(data)}:" + hashlib.blake2b(data, digest_size=16).hexdigest()
    except OSError:
        out = "<none>"
    if key is not None:
        _MEMO[key] = out  # type: ignore[index]
    return out


# --- loading ------------------------------------------------------------------------------
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
    import ast

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


def _target(ctx: "Model", binding: Binding, kinds: tuple[str, ...]) -> tuple["Model", str] | None:
    """The module a ``from M import name`` binding imports from, and the name, when the
    module binds the name once, to one of ``kinds``."""
    if binding.source is None:
        return None
    level, module, name = binding.source
    importer = _importer(ctx)
    if importer is None or name is None:
        return None
    return _bound_in(ctx, importer, level, module, name, kinds)


def _bound_in(ctx: "Model", importer: Path, level: int, module: str | None, name: str,
              kinds: tuple[str, ...]) -> tuple["Model", str] | None:
    """The module ``from {level}{module} import {name}`` takes ``name`` from (through a
    package's re-exports), loaded, when it binds the name once, to one of ``kinds``."""
    extra = extra_roots(ctx.settings)
    for _ in range(MAX_REEXPORTS + 1):  # through re-exports: a package's ``from .model import f``
        file = module_file(importer, level, module, None, extra)
        kind = summary(file).get(name) if file is not None else None
        if kind is None or not kind.startswith("from:"):
            break
        _, hop, module, name = kind.split(":", 3)
        importer, level, module = file, int(hop), module or None
    if file is None or kind not in kinds:
        return None
    other = load(file, ctx)
    return (other, name) if other is not None and other is not ctx else None


def _attribute_target(ctx: "Model", func: cst.Attribute, scope: Scope,
                      kinds: tuple[str, ...]) -> tuple["Model", str] | None:
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
    if importer is None or not parts or (level == 0 and parts[0] in _SKIP_ROOTS):
        return None
    return _bound_in(ctx, importer, level, ".".join(parts), func.attr.value, kinds)


def _module_binding(other: "Model", name: str) -> Binding | None:
    bindings = other.index.module_scope.bindings.get(name)
    if not bindings or len(bindings) != 1 or bindings[0].conditional:
        return None
    return bindings[0]


def imported(ctx: "Model", binding: Binding) -> tuple["Model", cst.BaseExpression, Scope] | None:
    """The value a name imported from a project module is assigned there."""
    found = _target(ctx, binding, ("assign",))
    if found is None:
        return None
    other, name = found
    b = _module_binding(other, name)
    if b is None or b.kind != ASSIGN or b.value is None:
        return None
    return other, b.value, other.index.module_scope


def definition(ctx: "Model", func: cst.BaseExpression, scope: Scope) -> tuple["Model", cst.CSTNode] | None:
    """The ``def``/``class`` a name imported from a project module is (``f`` of ``from M
    import f``, or ``m.f`` of a module ``m`` imported whole), and its module."""
    if isinstance(func, cst.Attribute):
        target = _attribute_target(ctx, func, scope, ("def", "class"))
    elif isinstance(func, cst.Name):
        found = ctx.index.lookup(func.value, scope)
        if found is None or len(found[0]) != 1:
            return None
        target = _target(ctx, found[0][0], ("def", "class"))
    else:
        return None
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
