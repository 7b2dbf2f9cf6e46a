"""The fix-history corpus (tests/fixhistory/README.md): NaN/Inf fixes real projects made
between released versions.  A fixed line is never flagged by the default rules; a parent
recorded as flagged stays flagged; every reproducer shows the NaN/Inf in the parent's
form and none in the fixed form, in the real framework."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import missing_framework
from nanlint.lint.engine import Linter
from nanlint.rules.base import all_rules

HERE = Path(__file__).resolve().parent / "fixhistory"
CLASSES = {"statistic-zero-division", "root-at-zero", "variance-cancellation", "masked-row-softmax",
           "float16-limit", "single-where", "absorbed-epsilon", "unconstrained-log", "other"}
MODULES = {"torch": "torch", "tensorflow": "tensorflow", "keras": "tensorflow", "jax": "jax"}


def sites() -> list[dict]:
    found = []
    for path in sorted(HERE.glob("*.json")):
        found.extend(json.loads(path.read_text()))
    return found


SITES = sites()
_spec = importlib.util.spec_from_file_location(
    "fixhistory_packages", Path(__file__).resolve().parent.parent / "scripts" / "fixhistory_packages.py")
packages = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(packages)
_LINTER = Linter([r for r in all_rules() if r.default])


def flagged_lines(path: Path) -> dict[int, list[str]]:
    result = _LINTER.lint_source(path.read_bytes(), str(path))
    assert result.error is None, result.error
    lines: dict[int, list[str]] = {}
    for f in result.findings:
        lines.setdefault(f.start[0], []).append(f.code)
    return lines


def test_records_are_well_formed():
    ids = [s["id"] for s in SITES]
    assert len(ids) == len(set(ids)), "duplicate site ids"
    for s in SITES:
        assert s["class"] in CLASSES, s["id"]
        assert s["framework"] in MODULES, s["id"]
        assert s["parent_lines"] and s["fixed_lines"], s["id"]
        for name in ("before.py", "after.py", "repro.py"):
            assert (HERE / "sites" / s["id"] / name).is_file(), f"{s['id']}: {name} missing"
        # written by scripts/fixhistory.py --packages: the same lines in the real files
        for excerpt, real in (("parent_lines", "file_parent_lines"), ("fixed_lines", "file_fixed_lines")):
            if real in s:
                assert len(s[real]) == len(s[excerpt]) and all(n >= 1 for n in s[real]), s["id"]


@pytest.mark.parametrize("site", SITES, ids=lambda s: s["id"])
def test_fixed_line_is_silent_and_recall_is_kept(site):
    folder = HERE / "sites" / site["id"]
    after = flagged_lines(folder / "after.py")
    loud = {n: after[n] for n in site["fixed_lines"] if n in after}
    assert not loud, f"{site['id']}: the fixed line is flagged: {loud}"
    before = flagged_lines(folder / "before.py")
    hit = sorted({c for n in site["parent_lines"] for c in before.get(n, ())})
    if site["flagged"]:
        assert hit, f"{site['id']}: the parent line is no longer flagged (lost recall)"
    else:
        assert not hit, (f"{site['id']}: the parent line is now flagged ({', '.join(hit)}): "
                         "set \"flagged\": true in its record")


_RUNNER = r"""
import json, math, runpy, sys
import numpy as np

def arrays(v):
    if isinstance(v, (tuple, list)):
        for x in v:
            yield from arrays(x)
        return
    if hasattr(v, "detach"):
        v = v.detach().cpu().numpy()
    elif hasattr(v, "numpy"):
        v = v.numpy()
    yield np.asarray(v, dtype=np.float64)

out = {}
for path in sys.argv[1:]:
    ns = runpy.run_path(path)
    row = {}
    for which in ("parent", "fixed"):
        try:
            row[which] = all(np.isfinite(a).all() for a in arrays(ns[which]()))
        except Exception as e:  # a reproducer that raises is reported, not hidden
            row[which] = f"{type(e).__name__}: {e}"
    out[path] = row
print(json.dumps(out))
"""


@pytest.mark.parametrize("framework", sorted({s["framework"] for s in SITES}))
def test_reproducers_show_the_hazard_and_its_fix(framework):
    module = MODULES[framework]
    try:
        __import__(module)
    except ImportError:
        missing_framework(f"{module} is needed to run the fix-history reproducers")
    paths = [str(HERE / "sites" / s["id"] / "repro.py") for s in SITES if s["framework"] == framework]
    proc = subprocess.run([sys.executable, "-c", _RUNNER, *paths], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3",
                                            "JAX_PLATFORMS": "cpu", "CUDA_VISIBLE_DEVICES": ""})
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads(proc.stdout.strip().splitlines()[-1])
    wrong = {Path(p).parent.name: r for p, r in rows.items() if r["parent"] is not False or r["fixed"] is not True}
    assert not wrong, f"reproducers that do not show a NaN/Inf in the parent and none in the fix: {wrong}"


@pytest.mark.parametrize("site", SITES, ids=lambda s: s["id"])
def test_package_mode_maps_the_excerpt_lines_into_the_file(site):
    """scripts/fixhistory.py --packages finds the excerpt's top-level statement verbatim in
    the real file (offline here: a file made of other code around the excerpt's statements),
    and refuses a statement found twice rather than guess."""
    excerpt = (HERE / "sites" / site["id"] / "before.py").read_text()
    body = "\n".join(f"def other_{k}(x):\n    return x + {k}\n" for k in range(7))
    real = body + "\n" + excerpt.replace("\n", "   \n") + "\n" + body  # trailing blanks differ
    shift = body.count("\n") + 1
    assert packages.map_lines(excerpt, real, site["parent_lines"]) == [n + shift for n in site["parent_lines"]]
    with pytest.raises(RuntimeError, match="found 2 times"):
        packages.map_lines(excerpt, real + "\n" + excerpt, site["parent_lines"])
    assert packages.header_path(excerpt, "?").endswith(".py")
