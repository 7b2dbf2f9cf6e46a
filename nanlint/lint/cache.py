"""A content-hash cache of lint results: a file whose bytes, and whose linter,
did not change since the last run is not parsed again.

One entry per (linter, content) pair under ``<project root>/.nanlint_cache/``:
the key hashes nanlint's version, a stamp of nanlint's own source files (so an
edited rule invalidates everything during development), the enabled rules, the
settings (framework versions from the configuration...) and the file's bytes.
The path is not part of the key: an entry holds the findings without their
path, and a renamed or copied file hits.  Beside them, one file keeps the import lines of
the texts seen (by content digest, :meth:`Cache.import_lines`): a file's key holds the
contents of the project files it imports and of those that import it, and a warm run finds
them without scanning every text of the project again; and one more keeps what the last run
found for each file's dependencies, with the stats that vouch for it (:mod:`nanlint.lint.dep_keys`).

Entries are written atomically (a temporary file in the same directory, then
``os.replace``), so concurrent runs never see a half-written entry; two runs
writing the same key write the same content.  An entry that cannot be read or
does not have the expected shape is ignored (and overwritten).  Nothing here
imports libcst.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Iterable

from nanlint import __version__

DIRNAME = ".nanlint_cache"
SCHEMA = 1
MAX_IMPORT_RECORDS = 20_000  # texts whose import lines are kept (about 0.5 KB each: ~10 MB at most)


def _package_stamp() -> str:
    """Size and mtime of every module of nanlint itself."""
    root = Path(__file__).resolve().parent.parent  # the nanlint package
    h = hashlib.blake2b(digest_size=16)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                st = os.stat(os.path.join(dirpath, name))
                h.update(f"{os.path.relpath(os.path.join(dirpath, name), root)}:{st.st_size}:{st.st_mtime_ns};".encode())
    return h.hexdigest()


_STAMP: str | None = None


def package_stamp() -> str:
    """:func:`_package_stamp`, computed once per process."""
    global _STAMP
    if _STAMP is None:
        _STAMP = _package_stamp()
    return _STAMP


def linter_fingerprint(rule_codes: Iterable[str], settings: dict, extra: str = "") -> str:
    """What, besides a file's bytes, decides its findings."""
    package_stamp()
    settings_text = json.dumps(settings, sort_keys=True, default=str)
    text = f"{SCHEMA}|{__version__}|{_STAMP}|{','.join(sorted(rule_codes))}|{settings_text}|{extra}"
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def project_stamp(root: Path, config_path: Path | None = None) -> str:
    """The project files findings may depend on besides the linted file: the
    configuration, and the dependency pins version-aware rules read
    (``pyproject.toml``, ``requirements*.txt`` in the root)."""
    h = hashlib.blake2b(digest_size=16)
    root = Path(root)
    try:
        candidates = sorted(root.glob("requirements*.txt"))
    except OSError:
        candidates = []
    for path in [config_path, root / "pyproject.toml", root / "nanlint.toml", *candidates]:
        if path is None:
            continue
        try:
            data = Path(path).read_bytes()
        except OSError:
            data = b"<none>"
        h.update(f"{path}:{len(data)}:".encode())
        h.update(data)
    return h.hexdigest()


class Cache:
    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self._entries = self.directory / f"v{SCHEMA}"
        self._ready = False
        self._imports_read: int | None = None  # records import_lines() read
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(fingerprint: str, source: bytes) -> str:
        h = hashlib.blake2b(fingerprint.encode(), digest_size=20)
        h.update(source)
        return h.hexdigest()

    def _path(self, key: str) -> Path:
        return self._entries / key[:2] / f"{key}.json"

    def get(self, key: str) -> tuple[list[dict], int, list[str]] | None:
        """The findings stored under ``key`` (dicts of Finding fields, no path), the count of
        those on weak evidence the run did not show and the opt-in rules not run whose ops the
        file holds, or None."""
        try:
            with open(self._path(key), "rb") as fh:
                data = json.loads(fh.read())
            if not isinstance(data, dict) or data.get("key") != key or not isinstance(data.get("findings"), list):
                raise ValueError("bad entry")
            findings, hidden, opt_in = data["findings"], data.get("hidden", 0), data.get("opt_in", [])
            if not all(isinstance(f, dict) for f in findings) or not isinstance(hidden, int) \
                    or not all(isinstance(c, str) for c in opt_in):
                raise ValueError("bad finding")
        except (OSError, ValueError, TypeError, UnicodeDecodeError):
            self.misses += 1
            return None
        self.hits += 1
        return findings, hidden, opt_in

    def put(self, key: str, findings: list[dict], hidden: int = 0, opt_in: list[str] | None = None) -> None:
        """Store atomically; a cache that cannot be written is silently skipped."""
        path = self._path(key)
        try:
            if not self._ready:
                self._prepare()
            path.parent.mkdir(parents=True, exist_ok=True)
            payload = json.dumps({"key": key, "findings": findings, "hidden": hidden, "opt_in": opt_in or []},
                                 separators=(",", ":")).encode()
            _write_atomic(path, payload)
        except OSError:
            pass

    def import_lines(self) -> dict:
        """The import lines of the texts earlier runs read (content digest -> the record
        :func:`nanlint.semantic.modules.line_record` writes): a warm run finds each file's
        dependencies and importers without scanning its text again.  Written by the same
        nanlint (the package stamp names the file); {} when there is none or it cannot be read."""
        try:
            with open(self._imports_path(), "rb") as fh:
                data = json.loads(fh.read())
        except (OSError, ValueError, UnicodeDecodeError):
            data = {}
        data = data if isinstance(data, dict) else {}
        self._imports_read = len(data)
        return data

    def store_import_lines(self, lines: dict) -> None:
        """Write ``lines`` (atomically) when this run added to what :meth:`import_lines` read,
        keeping the ``MAX_IMPORT_RECORDS`` most recent; the files of other stamps are removed."""
        if len(lines) == self._imports_read:
            return
        if len(lines) > MAX_IMPORT_RECORDS:
            lines = dict(list(lines.items())[-MAX_IMPORT_RECORDS:])
        self._store_stamped(self._imports_path(), "imports-*.json", lines)

    def _imports_path(self) -> Path:
        return self._entries / f"imports-{package_stamp()}.json"

    def dep_keys(self) -> object:
        """The record of the last run's dependency key parts (:mod:`nanlint.lint.dep_keys`),
        written by the same nanlint; None when there is none or it cannot be read."""
        try:
            with open(self._dep_keys_path(), "rb") as fh:
                return json.loads(fh.read())
        except (OSError, ValueError, UnicodeDecodeError):
            return None

    def store_dep_keys(self, record: dict | None) -> None:
        """Write ``record`` atomically (None: remove the one there); the records of other stamps
        are removed."""
        self._store_stamped(self._dep_keys_path(), "deps-*.json", record)

    def _dep_keys_path(self) -> Path:
        return self._entries / f"deps-{package_stamp()}.json"

    def _store_stamped(self, path: Path, pattern: str, data: dict | None) -> None:
        """``data`` as ``path``'s JSON, written atomically (None: ``path`` removed), and the files of
        ``pattern`` beside it removed (other stamps'); a cache that cannot be written is skipped."""
        try:
            if not self._ready:
                self._prepare()
            path.parent.mkdir(parents=True, exist_ok=True)
            for old in path.parent.glob(pattern):
                if old != path:
                    old.unlink(missing_ok=True)
            if data is None:
                path.unlink(missing_ok=True)
            else:
                _write_atomic(path, json.dumps(data, separators=(",", ":")).encode())
        except OSError:
            pass

    def _prepare(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        for name, text in (("CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n"
                                            "# This directory is nanlint's cache (https://bford.info/cachedir/)\n"),
                           (".gitignore", "# Automatically created by nanlint.\n*\n")):
            marker = self.directory / name
            if not marker.exists():
                try:
                    marker.write_text(text)
                except OSError:
                    pass
        self._ready = True


def _write_atomic(path: Path, payload: bytes) -> None:
    """A temporary file in the same directory, then ``os.replace``: no reader sees half of it."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def encode(finding) -> dict:
    """A Finding as JSON-able data, without its path (the entry is keyed by content)."""
    out = {}
    for f in dataclasses.fields(finding):
        if f.name == "path":
            continue
        value = getattr(finding, f.name)
        if f.name == "edits":
            value = [[e.content, list(e.start), list(e.end)] for e in value]
        elif isinstance(value, tuple):
            value = list(value)
        out[f.name] = value
    return out


def decode(data: dict, path: str, finding_cls, edit_cls):
    """The Finding for ``path`` from :func:`encode`'s data (raises on a bad shape)."""
    values = dict(data)
    values["start"] = tuple(values["start"])
    values["end"] = tuple(values["end"])
    values["edits"] = [edit_cls(c, tuple(a), tuple(b)) for c, a, b in values["edits"]]
    return finding_cls(path=path, **values)
