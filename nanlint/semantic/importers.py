"""The other direction of :mod:`nanlint.semantic.modules`: which files of the project
import names from a given module (``from .losses import triplet`` in ``train.py`` is an
importer of ``losses.py``, taking ``triplet``).

A helper module's function is differentiated when a file that imports it calls it in a
forward pass or under a tape (:mod:`nanlint.analysis.differentiated`): that fact lives in
the importer, so the importers are part of the helper's cache key
(:func:`nanlint.lint.runner`'s dependencies).

Found without parsing: the ``.py`` files below the project root of the module (the
directory above its top-level package, or its own directory for a script), at most
``MAX_FILES`` of them, are scanned for import lines, resolved as
:func:`modules.dependencies` resolves them, and the map is inverted.  Within one run
(:func:`modules.run_memo`) that is done once per root.
"""

from __future__ import annotations

import os
from pathlib import Path

from nanlint.semantic import modules

MAX_FILES = 2000  # .py files of one root scanned for importers
_SKIP_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "build", "dist", "venv", "env",
                        ".nanlint_cache"})


def importers(path: Path, extra: tuple[str, ...] = ()) -> list[tuple[Path, frozenset[str]]]:
    """(file, the names it takes) for each project file that imports names from ``path``
    directly, in a stable order; none for a file outside a directory."""
    try:
        real = modules.resolved(path)
    except OSError:
        return []
    if not real.is_file():
        return []
    found = _reverse(modules.top_of(real), extra).get(real, {})
    return [(p, frozenset(found[p])) for p in sorted(found) if p != real]


def _reverse(root: Path, extra: tuple[str, ...]) -> dict[Path, dict[Path, set[str]]]:
    """Each project module imported by a ``.py`` file below ``root`` (at most ``MAX_FILES``
    scanned) -> the importing files -> the names they take; built once per run."""
    memo = modules.memo()
    key = ("importers", str(root), extra)
    if memo is not None and key in memo:
        return memo[key]
    reverse: dict[Path, dict[Path, set[str]]] = {}
    scanned = 0
    modules.observe(root)  # each directory before the walk lists it, each file before its read
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _SKIP_DIRS)
        for d in dirnames:
            modules.observe(os.path.join(dirpath, d))
        for name in sorted(n for n in filenames if n.endswith(".py")):
            p = Path(dirpath, name)
            modules.observe(p)
            try:
                text = p.read_text("utf-8", "replace")
            except OSError:
                continue
            scanned += 1
            if "import" in text:
                real = p.resolve() if os.path.islink(p) else p  # the walk's directories are real ones
                for dep, words in modules.direct(real, modules.import_lines(text), extra):
                    reverse.setdefault(modules.resolved(dep), {}).setdefault(real, set()).update(words or ())
            if scanned >= MAX_FILES:
                break
        if scanned >= MAX_FILES:
            break
    if memo is not None:
        memo[key] = reverse
    return reverse
