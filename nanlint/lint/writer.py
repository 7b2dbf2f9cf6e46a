"""Reading sources and writing fixed files atomically."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

_WRITE_BITS = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH


def read(path: Path) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def write_atomic(path: Path, data: bytes, original: bytes) -> str | None:
    """Replace ``path`` with ``data`` via a temporary file in the same directory,
    keeping the mode (and, when allowed, the owner); returns an error line, or None.

    * A file without any write permission bit (``chmod 444``) is read-only and is
      not written, also for root, whom ``os.access`` would let write it.
    * A symbolic link stays a link: its target is replaced.
    * Nothing is written when the file changed since it was read (another process
      fixed or edited it); when it already holds ``data``, that is not an error.
    * An interruption leaves the file as it was (the temporary file is removed)."""
    target = Path(os.path.realpath(path))
    try:
        st = os.stat(target)
        if not stat.S_ISREG(st.st_mode):
            return f"{path}: cannot write fixes: not a regular file"
        if not st.st_mode & _WRITE_BITS or not os.access(target, os.W_OK):
            return f"{path}: cannot write fixes: file is read-only"
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".nanlint-tmp")
    except OSError as exc:
        return f"{path}: cannot write fixes: {exc.strerror or exc}"
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
        if hasattr(os, "chown") and (st.st_uid, st.st_gid) != (os.getuid(), os.getgid()):
            try:
                os.chown(tmp, st.st_uid, st.st_gid)
            except OSError:
                pass  # not allowed (not root): the file becomes ours, as with any editor
        current = read(target)
        if current != original:
            return None if current == data else f"{path}: changed while being fixed; left as it is now"
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        return f"{path}: cannot write fixes: {exc.strerror or exc}"
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return None
