"""Paths -> Python files: recursive, with default and configured excludes."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path, PurePath

DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".bzr", ".venv", "venv", ".tox", ".nox", "__pycache__", "build", "dist",
    "site-packages", "node_modules", ".eggs", "*.egg-info", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", ".nanlint_cache", "__pypackages__", ".ipynb_checkpoints",
)


@dataclass
class Discovered:
    files: list[Path] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # one line each
    missing: list[str] = field(default_factory=list)
    force_excluded: list[Path] = field(default_factory=list)  # named explicitly, dropped by --force-exclude
    # why: a force-excluded path -> the pattern that excludes it; below a walked directory,
    # pattern -> how many files and directories it left out
    why: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, pattern: str) -> None:
        self.skipped[pattern] = self.skipped.get(pattern, 0) + 1


VENV = "a virtual environment (pyvenv.cfg)"


def _excluded(path: Path, root: Path, patterns: tuple[str, ...]) -> str | None:
    """The first of ``patterns`` that excludes ``path``, or None."""
    name = path.name
    rel = None
    for pattern in patterns:
        if "/" in pattern.rstrip("/"):
            if rel is None:
                try:
                    rel = PurePath(os.path.relpath(path, root)).as_posix()
                except ValueError:
                    rel = path.as_posix()
            p = pattern.rstrip("/")
            if fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(rel, p + "/*"):
                return pattern
        elif _matches(name, pattern.rstrip("/")):
            return pattern
    return None


def _matches(name: str, pattern: str) -> bool:
    """``fnmatch``, with a pattern that has no wildcard compared as the name it is (most of the
    defaults: a walk asks every directory and file)."""
    if not _WILDCARD.intersection(pattern):
        return name == pattern if os.path.normcase("A") == "A" else os.path.normcase(name) == os.path.normcase(pattern)
    return fnmatch.fnmatch(name, pattern)


_WILDCARD = frozenset("*?[")


def excluded_with_parents(path: Path, root: Path, patterns: tuple[str, ...]) -> str | None:
    """Whether ``path`` or one of the directories it is in, below ``root``, is excluded
    (``vendor/x.py`` under ``extend-exclude = ["vendor"]``): the pattern that does it, or None."""
    path = Path(os.path.abspath(path))
    root = Path(os.path.abspath(root))
    if path == root:
        return None
    if pattern := _excluded(path, root, patterns):
        return pattern
    for parent in path.parents:
        if parent == root or root not in parent.parents:
            break
        if pattern := _excluded(parent, root, patterns):
            return pattern
        if os.path.exists(parent / "pyvenv.cfg"):
            return VENV
    return None


def discover(paths: list[Path], exclude: tuple[str, ...], root: Path, force_exclude: bool = False) -> Discovered:
    """Expand ``paths``; a file named explicitly is linted unless ``force_exclude`` (what
    pre-commit needs: it names every staged file), excludes apply below directories."""
    out = Discovered()
    seen: set[Path] = set()

    def add(p: Path) -> None:
        key = p.absolute()
        if key not in seen:
            seen.add(key)
            out.files.append(p)

    for given in paths:
        try:
            os.lstat(given)
        except FileNotFoundError:
            out.missing.append(str(given))
            continue
        except OSError as exc:  # a parent directory without search permission, a name too long...
            out.errors.append(f"{given}: cannot access: {exc.strerror or exc}")
            continue
        if force_exclude and (pattern := excluded_with_parents(given, root, exclude)):
            out.force_excluded.append(given)
            out.why[str(given)] = pattern
            continue
        if os.path.isfile(given):
            add(given)
            continue
        if not os.path.isdir(given):
            if os.path.islink(given):
                out.errors.append(f"{given}: broken or looping symbolic link")
            else:
                out.errors.append(f"{given}: not a file or directory")
            continue

        def onerror(exc: OSError) -> None:
            out.errors.append(f"{exc.filename}: cannot read directory: {exc.strerror}")

        for dirpath, dirnames, filenames in os.walk(given, onerror=onerror):
            d = Path(dirpath)
            kept = []
            for name in sorted(dirnames):
                child = d / name
                # os.path's predicates, unlike Path's, answer False instead of raising
                # PermissionError below an unreadable directory
                pattern = _excluded(child, root, exclude) or (VENV if os.path.exists(child / "pyvenv.cfg") else None)
                if pattern:
                    out.skip(pattern)
                    continue
                if os.path.islink(child):  # never follow directory links: no loops
                    continue
                kept.append(name)
            dirnames[:] = kept
            for name in sorted(filenames):
                child = d / name
                if not name.endswith((".py", ".pyi", ".ipynb")):
                    continue
                if pattern := _excluded(child, root, exclude):
                    out.skip(pattern)
                    continue
                if os.path.isdir(child):
                    continue
                if os.path.exists(child) and not os.path.isfile(child):
                    continue  # a FIFO or device named x.py: reading it could block forever
                if os.path.islink(child) and not os.path.exists(child):
                    out.errors.append(f"{child}: broken or looping symbolic link")
                    continue
                add(child)
    return out
