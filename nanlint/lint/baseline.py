"""Baselines: adopt nanlint on a codebase with findings by recording today's, then report
only new ones.

A finding's fingerprint is its code, its file (relative to the baseline file's directory),
the flagged source text with whitespace normalized, and its index among identical ones
in that file: not its line, so edits that move lines keep it.  A second identical hazard
gets the next index and is new; a fixed hazard leaves its entry *stale*."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Iterable, Sequence

from nanlint.findings import Finding

VERSION = 1


def normalized(text: str) -> str:
    return " ".join(text.split())


def relative(path: str, base: Path) -> str:
    try:
        return PurePath(os.path.relpath(os.path.abspath(path), os.path.abspath(base))).as_posix()
    except ValueError:
        return PurePath(os.path.abspath(path)).as_posix()


def fingerprints(findings: Sequence[Finding], base: Path) -> list[str]:
    """One fingerprint per finding, in the order given."""
    order = sorted(range(len(findings)), key=lambda i: findings[i].sort_key())
    seen: dict[tuple[str, str, str], int] = {}
    out = [""] * len(findings)
    for i in order:
        f = findings[i]
        key = (f.code, relative(f.path, base), normalized(f.snippet or f.message))
        k = seen.get(key, 0)
        seen[key] = k + 1
        out[i] = hashlib.sha256("\0".join((*key, str(k))).encode("utf-8")).hexdigest()[:20]
    return out


@dataclass
class Entry:
    fingerprint: str
    code: str
    path: str
    line: int  # informational: where it was when recorded

    def as_dict(self) -> dict:
        return {"fingerprint": self.fingerprint, "code": self.code, "path": self.path, "line": self.line}


class BaselineError(Exception):
    pass


def load(file: Path) -> list[Entry]:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        if data.get("version") != VERSION:
            raise BaselineError(f"{file}: unsupported baseline version {data.get('version')!r}")
        return [Entry(e["fingerprint"], e["code"], e["path"], int(e.get("line", 0))) for e in data["findings"]]
    except OSError as exc:
        raise BaselineError(f"{file}: cannot read baseline: {exc.strerror or exc}") from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise BaselineError(f"{file}: not a nanlint baseline ({exc})") from None


def entries(findings: Sequence[Finding], base: Path) -> list[Entry]:
    return [Entry(fp, f.code, relative(f.path, base), f.start[0])
            for f, fp in zip(findings, fingerprints(findings, base))]


def write(file: Path, findings: Sequence[Finding], linted: Iterable[str], keep: Sequence[Entry] = ()) -> int:
    """Record ``findings``; entries of ``keep`` for files not linted in this run are kept
    (a baseline rewritten from a subset of the files does not forget the others)."""
    base = file.absolute().parent
    linted_rel = {relative(p, base) for p in linted}
    new = entries(findings, base) + [e for e in keep if e.path not in linted_rel]
    new.sort(key=lambda e: (e.path, e.line, e.code, e.fingerprint))
    data = {"version": VERSION, "tool": "nanlint",
            "comment": "nanlint --baseline THIS_FILE reports only findings not recorded here; "
                       "nanlint --write-baseline THIS_FILE rewrites it (dropping stale entries)",
            "findings": [e.as_dict() for e in new]}
    file.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return len(new)


@dataclass
class Filtered:
    new: list[Finding] = field(default_factory=list)
    known: int = 0  # findings the baseline suppressed
    stale: list[Entry] = field(default_factory=list)  # recorded, linted, no longer found


def apply(file: Path, recorded: Sequence[Entry], findings: Sequence[Finding], linted: Iterable[str]) -> Filtered:
    base = file.absolute().parent
    known = {e.fingerprint for e in recorded}
    fps = fingerprints(findings, base)
    out = Filtered()
    found = set()
    for f, fp in zip(findings, fps):
        if fp in known:
            out.known += 1
            found.add(fp)
        else:
            out.new.append(f)
    linted_rel = {relative(p, base) for p in linted}
    out.stale = [e for e in recorded if e.fingerprint not in found and e.path in linted_rel]
    return out
