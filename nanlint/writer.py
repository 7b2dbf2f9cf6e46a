"""Reading sources and writing fixed files atomically."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


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
