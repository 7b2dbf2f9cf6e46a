"""Package mode of scripts/fixhistory.py: each fix-history site linted in its real release.

For each site the OLD and NEW release of the record's package is fetched (``pip download
--no-deps``, the wheel first, as the records were made, then the sdist) into a cache
(``~/.cache/nanlint-fixhistory`` or ``$NANLINT_FIXHISTORY_CACHE``) and unpacked; the real
file (the record's ``path``) is linted where it lies, as ``nanlint pkg/`` lints it: the
project root is found from the file (:func:`nanlint.semantic.modules.top_of`), so the
package's modules that import the file, and those it imports, are part of the evidence.

The excerpt's ``parent_lines``/``fixed_lines`` are mapped to the real file's lines by
finding the excerpt's enclosing top-level statement, verbatim, in the file; the mapped
lines are stored in the record (``file_parent_lines``, ``file_fixed_lines``) so that later
runs need no matching, and a site whose release cannot be had gets ``package_error``.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

CACHE = Path(os.environ.get("NANLINT_FIXHISTORY_CACHE", Path.home() / ".cache" / "nanlint-fixhistory"))
MAX_ARCHIVE = 200 * 2 ** 20  # a release bigger than this is not fetched ("too large")

# pip download tries, in order: the wheel (what the records came from), the wheel of an
# interpreter the release supported (old releases name no 3.11 wheel), the sdist.
_TRIES = [
    ["--only-binary", ":all:"],
    ["--only-binary", ":all:", "--ignore-requires-python"],
    ["--only-binary", ":all:", "--python-version", "3.8", "--platform", "manylinux2014_x86_64",
     "--platform", "manylinux1_x86_64", "--implementation", "cp"],
    ["--no-binary", ":all:", "--ignore-requires-python"],
]


def release(package: str, version: str) -> Path:
    """The unpacked release ``package==version`` (a directory), fetched once; raises
    RuntimeError with pip's last line when no try gets it."""
    folder = CACHE / f"{package}-{version}"
    tree = folder / "tree"
    if tree.is_dir():
        return tree
    failed = folder / "FAILED"
    if failed.is_file():
        raise RuntimeError(failed.read_text().strip())
    download = folder / "download"
    last = ""
    for extra in _TRIES:
        shutil.rmtree(download, ignore_errors=True)
        download.mkdir(parents=True)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(download),
               *extra, f"{package}=={version}"]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900,
                              env={**os.environ, "PIP_CONSTRAINT": ""})
        archives = [p for p in download.iterdir() if p.is_file()]
        if proc.returncode == 0 and archives:
            break
        last = (proc.stderr.strip().splitlines() or ["pip download failed"])[-1]
    else:
        folder.mkdir(parents=True, exist_ok=True)
        failed.write_text(f"download failed: {last}\n")
        raise RuntimeError(f"download failed: {last}")
    archive = archives[0]
    if archive.stat().st_size > MAX_ARCHIVE:
        failed.write_text(f"too large: {archive.name} {archive.stat().st_size >> 20} MiB\n")
        raise RuntimeError(failed.read_text().strip())
    partial = folder / "tree.partial"
    shutil.rmtree(partial, ignore_errors=True)
    _unpack(archive, partial)
    partial.rename(tree)
    shutil.rmtree(download, ignore_errors=True)
    return tree


def _unpack(archive: Path, into: Path) -> None:
    """Only the ``.py`` files: that is all the linter reads."""
    into.mkdir(parents=True)
    name = archive.name
    if name.endswith((".whl", ".zip")):
        with zipfile.ZipFile(archive) as z:
            for member in z.namelist():
                if member.endswith(".py") and not member.startswith("/") and ".." not in member.split("/"):
                    z.extract(member, into)
        return
    with tarfile.open(archive) as t:
        members = [m for m in t.getmembers()
                   if m.isfile() and m.name.endswith(".py") and not m.name.startswith("/")
                   and ".." not in m.name.split("/")]
        t.extractall(into, members=members, filter="data")
        # an sdist's files lie under NAME-VERSION/: make that the tree
        tops = {Path(m.name).parts[0] for m in members}
        if len(tops) == 1:
            top = into / tops.pop()
            for child in top.iterdir():
                child.rename(into / child.name)
            top.rmdir()


def real_file(tree: Path, path: str) -> Path:
    """The record's ``path`` in an unpacked release: at its root (a wheel) or below a
    source folder (an sdist: ``src/``, ``python/``...)."""
    direct = tree / path
    if direct.is_file():
        return direct
    found = sorted(p for p in tree.rglob(Path(path).name) if p.as_posix().endswith("/" + path))
    if not found:
        raise RuntimeError(f"{path} not in the release")
    return min(found, key=lambda p: len(p.parts))


def header_path(excerpt: str, default: str) -> str:
    """The file an excerpt was cut from, as its header names it (``# Excerpt of keras
    2.13.1, keras/src/layers/activation/softmax.py (...``): a file may move between the
    two releases, and the record's ``path`` is the OLD one."""
    match = re.match(r"# Excerpt of \S+ \S+, (\S+\.py)", excerpt)
    return match.group(1) if match else default


def map_lines(excerpt: str, real: str, lines: list[int]) -> list[int]:
    """``lines`` of the excerpt as lines of the real file: each line's enclosing top-level
    statement (decorators included) is found verbatim in the real file, once."""
    ex = excerpt.splitlines()
    rl = [s.rstrip() for s in real.splitlines()]
    tree = ast.parse(excerpt)
    out = []
    for line in lines:
        node = next((n for n in tree.body if _first(n) <= line <= n.end_lineno), None)
        if node is None:
            raise RuntimeError(f"excerpt line {line} is in no top-level statement")
        start, end = _first(node), node.end_lineno
        block = [s.rstrip() for s in ex[start - 1:end]]
        hits = [i for i in range(len(rl) - len(block) + 1)
                if rl[i] == block[0] and rl[i:i + len(block)] == block]
        if len(hits) != 1:
            raise RuntimeError(f"excerpt lines {start}-{end} found {len(hits)} times in the file")
        out.append(hits[0] + 1 + line - start)
    return out


def _first(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def locate(site: dict, excerpts: Path) -> dict:
    """The site in its releases: ``{"before": Path, "after": Path, "parent": [...],
    "fixed": [...]}``, the lines taken from the record's ``file_*_lines`` when it has them
    (else matched, and written into ``site``); raises RuntimeError (and sets the record's
    ``package_error``) when a release or the file cannot be had."""
    folder = excerpts / site["id"]
    try:
        old, new = (folder / "before.py").read_text(), (folder / "after.py").read_text()
        before = real_file(release(site["package"], site["old"]), header_path(old, site["path"]))
        after = real_file(release(site["package"], site["new"]), header_path(new, site["path"]))
        if "file_parent_lines" not in site or "file_fixed_lines" not in site:
            site["file_parent_lines"] = map_lines(old, before.read_text(), site["parent_lines"])
            site["file_fixed_lines"] = map_lines(new, after.read_text(), site["fixed_lines"])
    except (RuntimeError, OSError, subprocess.SubprocessError, zipfile.BadZipFile, tarfile.TarError) as exc:
        site["package_error"] = str(exc)
        raise RuntimeError(str(exc)) from exc
    site.pop("package_error", None)
    return {"before": before, "after": after, "parent": site["file_parent_lines"], "fixed": site["file_fixed_lines"]}
