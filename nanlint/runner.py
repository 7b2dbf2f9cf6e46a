"""Lint (and fix) a list of files."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

from nanlint.engine import FileResult, Linter
from nanlint.writer import read, write_atomic


def process(path: Path, linter: Linter, fix: bool, unsafe: bool, write: bool) -> tuple[FileResult, bytes | None]:
    """Lint or fix one file. Returns the result and the original bytes (None when unreadable)."""
    try:
        source = read(path)
    except OSError as exc:
        return FileResult(str(path), error=f"{path}: cannot read: {exc.strerror or exc}"), None
    if fix:
        result = linter.fix_source(source, str(path), unsafe)
        if write and result.fixed_source is not None:
            error = write_atomic(path, result.fixed_source, source)
            if error is not None:
                result = linter.lint_source(source, str(path))
                result.error = error
    else:
        result = linter.lint_source(source, str(path))
    return result, source


def run(files: Sequence[Path], linter_for: Callable[[Path], Linter], fix: bool, unsafe: bool,
        write: bool) -> list[tuple[FileResult, bytes | None]]:
    return [process(path, linter_for(path), fix, unsafe, write) for path in files]
