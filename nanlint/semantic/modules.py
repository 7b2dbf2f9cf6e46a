"""The project's own modules: where an import of one lives, and which files a file depends on.

A name imported from another module of the project (``from .model import predict_proba``,
``from model import Net``, ``import pkg.losses as L``) is followed into that module
(:mod:`nanlint.semantic.definitions` loads it and reads its values); this module finds it.

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

MAX_DEPENDENCIES = 64  # project files one file's result may depend on
MAX_DEPTH = 2  # import levels followed
MAX_REEXPORTS = 2  # ``from M import name`` hops from the module imported to the one defining name
SKIP_ROOTS = frozenset({"tensorflow", "torch", "jax", "jaxlib", "keras", "optax", "flax", "haiku", "numpy",
                         "scipy", "os", "sys", "math", "re", "json", "typing", "collections", "functools",
                         "itertools", "dataclasses", "pathlib", "logging", "abc", "__future__"})
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import\b[ \t\\]*"
                     r"(\([^)]*\)|[\w, \t]*)|import[ \t]+([\w., \t]+))", re.MULTILINE)


# Within one run (:func:`run_memo`): where each import leads, the resolved paths, the import
# lines and content digest of each module file (by resolved path, mtime and size): every file
# of a package imports the same few modules (the training benchmark's warm run spent all but
# 0.5 of 5.5 s finding them again).  Outside a run nothing is remembered.
_MEMO: dict | None = None
_SEEN = "seen"  # in an observing run's memo: path -> stat_of, of each directory looked in and file read


# --- where modules live ---------------------------------------------------------------
def top_of(path: Path) -> Path:
    """The directory above ``path``'s outermost package: where its project is scanned from."""
    key = ("top", os.path.dirname(os.fspath(path)))
    if _MEMO is not None and key in _MEMO:
        return _MEMO[key]
    top = path.parent
    while True:
        observe(top)  # an __init__.py made or removed in it
        if not ((top / "__init__.py").is_file() and top.parent != top):
            break
        top = top.parent
    if _MEMO is not None:
        _MEMO[key] = top
    return top


def roots(path: Path, extra: tuple[str, ...] = ()) -> list[Path]:
    """The directories an absolute import from ``path`` is resolved against."""
    key = ("roots", os.path.dirname(os.fspath(path)), extra)
    if _MEMO is not None and key in _MEMO:
        return _MEMO[key]
    top = top_of(path)
    out = [path.parent, top, top / "src", *(Path(e) for e in extra)]
    seen: list[Path] = []
    for r in out:
        if r not in seen:
            observe(r)
            if r.is_dir():
                seen.append(r)
    if _MEMO is not None:
        _MEMO[key] = seen
    return seen


def _as_file(base: Path, parts: list[str]) -> Path | None:
    target = os.path.join(os.fspath(base), *parts)
    if parts and _is_file(os.path.dirname(target), parts[-1] + ".py"):
        return Path(target + ".py")
    return Path(target, "__init__.py") if _is_file(target, "__init__.py") else None


def _is_file(directory: str, name: str) -> bool:
    """``directory/name`` is a file (or a link to one).  Within a run each directory is listed
    once (an import is tried in several roots, each name of ``from M import a, b`` as a
    submodule: a stat per try was most of a warm run's time)."""
    if _MEMO is None:
        return os.path.isfile(os.path.join(directory, name))
    key = ("files", directory)
    files = _MEMO.get(key)
    if files is None:
        observe(directory or ".")
        try:
            with os.scandir(directory or ".") as it:
                files = _MEMO[key] = frozenset(e.name for e in it if e.is_file())
        except OSError:
            files = _MEMO[key] = frozenset()
    return name in files


def module_file(importer: Path, level: int, module: str | None, name: str | None = None,
                extra: tuple[str, ...] = ()) -> Path | None:
    """The file an import names: ``from {'.' * level}{module} import {name}`` (``name``
    is tried as a submodule first), or ``import module`` (level 0, no name)."""
    return _module_file_from(os.path.dirname(os.fspath(importer)), importer, level, module, name, extra)


def _module_file_from(directory: str, importer: Path, level: int, module: str | None, name: str | None,
                      extra: tuple[str, ...]) -> Path | None:
    """:func:`module_file`, the importer's directory given (one per file, not per name)."""
    if _MEMO is None:
        return _module_file(importer, level, module, name, extra)
    key = ("module", directory, level, module, name, extra)  # no Path built per call
    found = _MEMO.get(key, _MEMO)
    if found is _MEMO:
        found = _MEMO[key] = _module_file(importer, level, module, name, extra)
    return found


def _module_file(importer: Path, level: int, module: str | None, name: str | None,
                 extra: tuple[str, ...]) -> Path | None:
    parts = module.split(".") if module else []
    if level == 0 and (not parts or parts[0] in SKIP_ROOTS):
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
def run_memo(known_lines: dict | None = None, observing: bool = False) -> Iterator[None]:
    """Remember the lookups for the duration of one run.  ``known_lines``: the import lines of
    texts read in earlier runs, by content digest (hex), as :func:`line_record` writes them (the
    cache keeps them, :mod:`nanlint.lint.cache`); the ones this run reads are added to it.
    ``observing``: note what the lookups look at (:func:`observed`), for a cache to keep."""
    global _MEMO
    outer = _MEMO
    _MEMO = {} if outer is None else outer
    if outer is None:
        if known_lines is not None:
            _MEMO[_KNOWN] = known_lines
        if observing:
            _MEMO[_SEEN] = {}
    try:
        yield
    finally:
        _MEMO = outer


def resolved(path: Path) -> Path:
    """``path.resolve()``; within a run remembered, and its directory resolved once for all
    the files in it (``realpath`` stats every component of a path: 9,000 ``lstat`` calls were
    a tenth of a warm run of 610 files)."""
    if _MEMO is None:
        return path.resolve()
    key = ("real", str(path))
    if key not in _MEMO:
        _MEMO[key] = _real(path)
    return _MEMO[key]


def _real(path: Path) -> Path:
    directory, name = os.path.split(os.fspath(path))
    if name in ("", ".", ".."):
        return path.resolve()
    key = ("real dir", directory)
    real_dir = _MEMO.get(key)  # type: ignore[union-attr]
    if real_dir is None:
        observe(directory or ".")  # a link made or removed in it
        real_dir = _MEMO[key] = os.path.realpath(directory or ".")  # type: ignore[index]
    target = os.path.join(real_dir, name)
    return Path(os.path.realpath(target)) if os.path.islink(target) else Path(target)


def _stat_key(kind: str, real: Path) -> tuple | None:
    try:
        st = real.stat()
    except OSError:
        _note(str(real), None)
        return None
    _note(str(real), _stat_tuple(st))  # the stat before the read it stands for
    return kind, str(real), st.st_mtime_ns, st.st_size


def stat_of(path: str) -> tuple | None:
    """(mtime in ns, size, inode) of ``path``, following links; None when there is none."""
    try:
        return _stat_tuple(os.stat(path))
    except (OSError, ValueError):
        return None


def _stat_tuple(st: os.stat_result) -> tuple:
    return st.st_mtime_ns, st.st_size, st.st_ino


def observe(path) -> None:
    """Within an observing run, note ``path``'s stat (once; called before what is read or tested of it)."""
    seen = _MEMO.get(_SEEN) if _MEMO is not None else None
    if seen is not None:
        p = os.fspath(path)
        if p not in seen:
            seen[p] = stat_of(p)


def _note(path: str, stat: tuple | None) -> None:
    """:func:`observe` with the stat already taken."""
    seen = _MEMO.get(_SEEN) if _MEMO is not None else None
    if seen is not None:
        seen.setdefault(path, stat)


def observed() -> dict[str, tuple | None]:
    """What the run so far observed of the file system while finding modules: each directory
    looked in and file read -> its :func:`stat_of` when first observed (before its read).  The
    cache keeps it (:mod:`nanlint.lint.dep_keys`): when none of it changed, neither did what was
    found.  {} outside an observing run."""
    return dict(_MEMO.get(_SEEN, {})) if _MEMO is not None else {}


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
    names taken from it.  Within a run, remembered by the text's digest: a file's own
    dependencies and the importer scan of its root read the same text."""
    if _MEMO is None:
        return _import_lines(text)
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    key = ("lines", digest)
    if key not in _MEMO:
        known = _MEMO.get(_KNOWN)
        found = _from_record(known.get(digest)) if known is not None else None
        if found is None:
            found = _import_lines(text)
            if known is not None:
                known[digest] = line_record(found)
        _MEMO[key] = found
    return _MEMO[key]


_KNOWN = ("known lines",)  # the memo's entry for the import lines of earlier runs


def _strings(value) -> bool:
    return type(value) is list and all(type(v) is str for v in value)


def line_record(lines: list[tuple]) -> list:
    """:func:`import_lines`' result as JSON-able data (its sets as sorted lists)."""
    return [[level, module, names, bound, [sorted(a) for a in attrs]] for level, module, names, bound, attrs in lines]


def _from_record(record) -> list[tuple] | None:
    """:func:`line_record`'s data read back; None when it does not have that shape (then the
    text is scanned again)."""
    if not isinstance(record, list):
        return None
    out = []
    try:
        for level, module, names, bound, attrs in record:
            if not (type(level) is int and isinstance(module, str) and _strings(bound)
                    and (names is None or _strings(names)) and len(attrs) == len(bound)
                    and all(_strings(a) for a in attrs)):
                return None
            out.append((level, module, names, bound, [frozenset(a) for a in attrs]))
    except (TypeError, ValueError):
        return None
    return out


def _import_lines(text: str) -> list[tuple]:
    out = []
    chains = _Chains(text)
    for m in _IMPORT.finditer(text):
        dots, module, names, plain = m.groups()
        if plain is not None:
            for item in plain.split(","):
                parts = item.split()
                if not parts or parts[0].split(".")[0] in SKIP_ROOTS:
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
        skip = not level and module.split(".")[0] in SKIP_ROOTS
        out.append((level, module, [p[0] for p in parts], bound,
                    [frozenset() if skip else chains.attributes(b) for b in bound]))
    return out


_PREFIX = re.compile(r"[A-Za-z_]\w*(?:\.\w+)*")  # a dotted chain's head: ``m``, ``pkg.model``
_BEFORE = re.compile(r"[\w.]")  # what a chain cannot follow (it would be inside another)
_PART = re.compile(r"\w+")


class _Chains:
    """The attributes a text reads of the names its imports bind (``m.f`` -> ``f``)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def attributes(self, prefix: str) -> frozenset[str]:
        """The attributes the text reads of ``prefix`` (``m.f`` -> ``f``): each ``prefix.``
        that does not continue a word or a chain (``am.f``, ``x.m.f``), and the word after it.
        Found with ``str.find``, a pass per name: a regex of every chain in the text cost more
        than the rest of the import scan of a project."""
        head = prefix + "."
        text = self.text
        if head not in text or _PREFIX.fullmatch(prefix) is None:
            return frozenset()
        found = set()
        i = text.find(head)
        while i >= 0:
            if i == 0 or _BEFORE.match(text, i - 1) is None:
                part = _PART.match(text, i + len(head))
                if part is not None:
                    found.add(part.group())
            i = text.find(head, i + 1)
        return frozenset(found)


def direct(path: Path, text: str | list, extra: tuple[str, ...], names: frozenset[str] | None = None) -> list:
    """(module, names taken from it) for the modules ``from M import name`` takes names
    from (values, functions, classes: what the analysis follows), and for a module
    imported whole (``import M as m``, ``from P import M`` of a submodule) whose
    attributes the file reads (``m.f``: the names taken are those attributes).  ``text``:
    the source, or its :func:`import_lines`; ``names``: only the lines binding one of
    them (a line whose names the scan cannot read, ``import *``, always counts)."""
    found: list = []
    where = os.path.dirname(os.fspath(path))
    for level, module, words, bound, attrs in (import_lines(text) if isinstance(text, str) else text):
        if names is not None and (words or words is None) and names.isdisjoint(bound):
            continue
        if level == 0 and module.split(".", 1)[0] in SKIP_ROOTS:
            continue  # a framework's module: never a project file (as module_file says)
        if words is None:  # import M [as m]: M itself, when its attributes are read
            target = _module_file_from(where, path, 0, module, None, extra) if attrs[0] else None
            if target is not None:
                found.append((target, sorted(attrs[0])))
            continue
        target = _module_file_from(where, path, level, module or None, None, extra)
        subs = []
        for word, used in zip(words, attrs):
            sub = _module_file_from(where, path, level, module or None, word, extra)
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
