"""The other direction of :mod:`nanlint.semantic.modules`: which files of the project
import names from a given module (``from .losses import triplet`` in ``train.py`` is an
importer of ``losses.py``, taking ``triplet``).

A helper module's function is differentiated when a file that imports it calls it in a
forward pass or under a tape (:mod:`nanlint.analysis.differentiated`): that fact lives in
the importer, so the importers are part of the helper's cache key
(:func:`nanlint.lint.runner`'s dependencies).

Found without parsing: the ``.py`` files below the project root of the module (the
directory above its top-level package, or its own directory for a script), at most
``MAX_FILES`` of them, whose text names the module's stem, are scanned for import lines,
which are resolved as :func:`modules.dependencies` resolves them.  Within one run
(:func:`modules.run_memo`) the scan of a root is made once.
"""

from __future__ import annotations

import os
from pathlib import Path

from nanlint.semantic import modules

MAX_FILES = 2000  # .py files of one root scanned for importers
_SKIP_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "build", "dist", "venv", "env",
                        ".nanlint_cache"})


def root_of(path: Path) -> Path:
    """The directory the project around ``path`` is scanned from."""
    top = path.parent
    while (top / "__init__.py").is_file() and top.parent != top:
        top = top.parent
    return top


def importers(path: Path, extra: tuple[str, ...] = ()) -> list[tuple[Path, frozenset[str]]]:
    """(file, the names it takes) for each project file that imports names from ``path``
    directly, in a stable order; none for a file outside a directory."""
    try:
        real = path.resolve()
    except OSError:
        return []
    if not real.is_file():
        return []
    found: list[tuple[Path, frozenset[str]]] = []
    for other, lines in _files(root_of(real), real.stem):
        if other == real:
            continue
        names: set[str] = set()
        for dep, words in modules.direct(other, lines, extra):
            if modules.resolved(dep) == real:
                names.update(words or ())
        if names:
            found.append((other, frozenset(names)))
    return found


def _files(root: Path, stem: str) -> list[tuple[Path, list]]:
    """The files below ``root`` with an import line that names the module's stem (or, for
    ``__init__``, its package's), and their import lines."""
    word = root.name if stem == "__init__" else stem
    return [(p, lines) for p, lines in _imports(root)
            if any(word in (module or "").split(".") or (words and word in words) for _, module, words, *_ in lines)]


def _imports(root: Path) -> list[tuple[Path, list]]:
    """Each ``.py`` file below ``root`` (at most ``MAX_FILES``) and its import lines."""
    memo = modules.memo()
    key = ("importer-lines", str(root))
    if memo is not None and key in memo:
        return memo[key]
    out: list[tuple[Path, list]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _SKIP_DIRS)
        for name in sorted(n for n in filenames if n.endswith(".py")):
            p = Path(dirpath, name)
            try:
                text = p.read_text("utf-8", "replace")
            except OSError:
                continue
            if "import" in text:
                out.append((p.resolve(), modules.import_lines(text)))
            if len(out) >= MAX_FILES:
                break
        if len(out) >= MAX_FILES:
            break
    if memo is not None:
        memo[key] = out
    return out
