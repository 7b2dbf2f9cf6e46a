"""The dependency part of each file's cache key, remembered between runs.

A file's cache key holds the contents of the project files it imports and of those that
import it (``runner._dependencies``): finding them scans import lines and resolves modules
for every file, most of a warm run's work.  A run with a cache records what it observed of
the file system while finding them -- the stat of every directory it listed or looked for and
of every file it read (:func:`nanlint.semantic.modules.observed`) -- and, per file, the part it
found, with the file's own stat taken before its bytes were read.  The next run stats those
paths again; when none changed (mtime, size, inode; a path that appeared or went away
counts), each file whose own stat is unchanged gets its recorded part without the search.
Any difference drops the whole record, and the run builds it again.

The linted file's bytes are still hashed into its key, as before: only what the key says of
*other* files is vouched for by their stats (as ruff's cache does for everything).  Each stat
is taken before the read it stands for, and one taken within ``RACY_NS`` of a modification
never vouches for anything (git's "racy" entries: a file system's clock may not tell two
writes in the same tick apart), so a file written during or just before a run reads as
changed in the next one.  Nothing here imports libcst.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Callable

from nanlint.semantic import modules

MAX_PATHS = 50_000  # observed paths kept (about 100 bytes each in the record)
RACY_NS = 2_000_000_000  # a stat this close to its mtime is not trusted
_RACY = "racy"  # what a stat too close to its mtime is recorded as: equal to no stat


class DepKeys:
    """One run's view of the record: :meth:`part` gives a file's key part (recorded or
    computed), :meth:`payload` what to store at the end of the run."""

    def __init__(self, record: object) -> None:
        self.valid = False  # the record read stood: nothing it observed changed
        self.reused = 0  # files whose part came from the record
        self.computed = 0  # files whose part was found again
        self._seen: dict[str, object] = {}
        self._parts: dict[str, list] = {}  # "path\0extra" -> [its stat before the read, part]
        self._now = time.time_ns()
        self._cwd = os.getcwd()  # the paths are the run's, relative ones to it
        if isinstance(record, dict) and record.get("cwd") == self._cwd and isinstance(record.get("seen"), dict) \
                and isinstance(record.get("parts"), dict):
            seen, parts = record["seen"], record["parts"]
            if all(_same(s, modules.stat_of(p)) for p, s in seen.items()):
                self.valid, self._seen, self._parts = True, seen, parts

    def part(self, path: Path, stat: tuple | None, extra: tuple[str, ...], compute: Callable[[], str]) -> str:
        """The key part of ``path``, whose stat before its bytes were read is ``stat``: the
        recorded one when the record stands and the stat is the recorded one, else ``compute()``."""
        name = f"{path}\0{json.dumps(extra)}"
        entry = self._parts.get(name)
        if self.valid and stat is not None and isinstance(entry, list) and len(entry) == 2 \
                and isinstance(entry[1], str) and _same(entry[0], stat):  # a file with no stat vouches for nothing
            self.reused += 1
            return entry[1]
        part = compute()
        self.computed += 1
        self._parts[name] = [self._recorded(stat), part]
        return part

    def unchanged(self, observed: dict[str, tuple | None]) -> bool:
        """The record read stood, gave every part asked for and holds all the run observed:
        storing it again would write the same record."""
        return self.valid and not self.computed and all(p in self._seen for p in observed)

    def payload(self, observed: dict[str, tuple | None]) -> dict | None:
        """The record to store: what this run observed, with what the record read had observed
        when it stood; None when the two disagree on a path (it changed during the run) or the
        record grew past ``MAX_PATHS``: then none is kept."""
        seen = dict(self._seen)
        for p, s in observed.items():
            s = self._recorded(s)
            if p in seen and seen[p] != s:
                return None
            seen[p] = s
        if len(seen) > MAX_PATHS:
            return None
        return {"cwd": self._cwd, "seen": seen, "parts": self._parts}

    def _recorded(self, stat: tuple | None) -> object:
        if stat is not None and self._now - stat[0] < RACY_NS:
            return _RACY
        return list(stat) if stat is not None else None


def _same(recorded: object, stat: tuple | None) -> bool:
    """A recorded stat vouches for ``stat`` (a racy one for none; a missing path for a missing one)."""
    if recorded is None:
        return stat is None
    return isinstance(recorded, list) and stat is not None and tuple(recorded) == stat
