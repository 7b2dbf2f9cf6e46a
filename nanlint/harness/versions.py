"""Framework versions against a fixture's ``REQUIRES`` (framework -> version specifier):
the worker runs no case of a fixture whose framework version is outside it.  Standard
library only (it runs in the worker, on whatever interpreter ``--python`` names)."""

from __future__ import annotations

import platform
import re


def _release(text: str) -> tuple:
    """``"2.3.4"`` -> (2, 3, 4); ``"2.21.0rc1"`` -> (2, 21, 0); ``"2.3.*"`` -> (2, 3)."""
    parts = []
    for piece in str(text).split("+")[0].split("."):
        m = re.match(r"\d+", piece)
        if m is None:
            break
        parts.append(int(m.group()))
        if m.end() != len(piece):
            break
    return tuple(parts)


def satisfies(version: str, spec: str) -> bool:
    """Whether ``version`` meets a comma-separated specifier (``"<2.4"``, ``">=2.0,<2.4"``,
    ``"==2.3.*"``), comparing release numbers only."""
    have = _release(version)
    for clause in str(spec).split(","):
        m = re.match(r"^\s*(==|!=|<=|>=|<|>)\s*([0-9][0-9.*]*)\s*$", clause)
        if m is None:
            raise ValueError(f"cannot read the version specifier {clause.strip()!r} (use <, <=, >, >=, ==, !=)")
        op, text = m.groups()
        want = _release(text)
        if text.endswith(".*") and op in ("==", "!="):
            equal = have[:len(want)] == want
            ok = equal if op == "==" else not equal
        else:
            n = max(len(have), len(want))
            a, b = have + (0,) * (n - len(have)), want + (0,) * (n - len(want))
            ok = {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
        if not ok:
            return False
    return True


def unmet_requirement(fw, requires) -> str | None:
    """Why this worker (``fw``: its ``workers.Framework``) cannot run a fixture with ``REQUIRES``
    (framework -> specifier), or None."""
    if not isinstance(requires, dict):
        raise TypeError(f"REQUIRES must be a dict of framework -> version specifier, got {requires!r}")
    versions = fw.versions()
    for name, spec in requires.items():
        have = versions.get(name)
        if have is None:
            raise ValueError(f"REQUIRES names {name!r}, which this worker did not import ({', '.join(versions)})")
        if not satisfies(have, spec):
            return (f"needs {name}{spec} (REQUIRES), this worker has {name} {have} on python "
                    f"{platform.python_version()}: not run here; run it with --python {fw.name}=PYTHON")
    return None
