"""Lint (and fix) a list of files; write fixed files atomically."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Callable, Sequence

from nanlint.engine import FileResult, Linter


def read(path: Path) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def write_atomic(path: Path, data: bytes, original: bytes) -> str | None:
    """Replace ``path`` with ``data`` via a temporary file in the same directory,
    keeping the mode; returns an error line, or None.  Nothing is written when the
    file changed since it was read (another process fixed or edited it)."""
    try:
        st = os.stat(path)
        if not os.access(path, os.W_OK):
            return f"{path}: cannot write fixes: file is read-only"
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".nanlint-tmp")
    except OSError as exc:
        return f"{path}: cannot write fixes: {exc.strerror or exc}"
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
        if read(path) != original:
            os.unlink(tmp)
            return f"{path}: changed while being fixed; left as it is now"
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return f"{path}: cannot write fixes: {exc.strerror or exc}"
    return None


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
