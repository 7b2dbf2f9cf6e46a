"""The harness compares every hazard case's fixed values and gradients with an exact
reference (fixtures/README.md, "References"), so a fix that is finite but wrong fails.

The judging is tested on hand-made worker results; the self-test plants the wrong fix the
mutation audit used, ``log(softmax(z) + 1e-30)`` for NAN101's ``log_softmax``, in a scratch
copy of nanlint, and runs the real harness (nanlint fixing, JAX running) on the real
NAN101 JAX fixture: every hazard case is finite after that fix, and the harness must fail it.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import missing_framework
from nanlint.harness import fixtures, judging, launch, verify
from nanlint.harness import summary as report

ROOT = Path(__file__).resolve().parents[1]


def _run(values, dtype="float32"):
    values = values if isinstance(values, list) else [values]
    enc = [v if math.isfinite(v) else ("nan" if math.isnan(v) else "inf" if v > 0 else "-inf") for v in values]
    return {"device": "cpu (test)", "outputs": {"loss": {
        "shape": [len(values)], "dtype": dtype, "nan": sum(math.isnan(v) for v in values),
        "inf": sum(math.isinf(v) for v in values), "values": enc}}}


def _judge(fixed, reference=None, plan=None, **extra) -> fixtures.Fixture:
    f = fixtures.Fixture("NAN101", "log-softmax", "jax", Path("jax.py"), mode="fix")
    hazard = {"unfixed": _run(math.nan), "fixed": fixed}
    if reference is not None:
        hazard["reference"] = reference
    raw = {"tolerance": 1e-5, "fixed_ran": True, "reference": plan or {"source": "float64", "no_reference": {}},
           "cases": {"hazard_saturated": hazard, "benign_small": {"unfixed": _run(1.0), "fixed": _run(1.0)}}, **extra}
    judging.judge_fixture(f, raw)
    return f


def test_finite_but_wrong_fix_misses_the_reference():
    # the audit's numbers: log(softmax(z) + 1e-30) gives a loss of 69.08 where the exact one is 200
    wrong = _judge(_run(69.08), _run(200.0, "float64"))
    case = wrong.cases[0]
    assert case.fixed == "finite" and not wrong.ok  # finite, so the NaN/Inf criterion alone passed it
    assert case.problems == ["the fixed code misses the float64 reference in 'loss': 1 element(s) differ by "
                             "more than the tolerance 1e-05"]
    assert case.reference == "float64" and case.ref_err == pytest.approx(130.92)
    right = _judge(_run(200.0001), _run(200.0, "float64"))
    assert right.ok, right.cases[0].problems
    assert right.cases[0].ref_err == pytest.approx(1e-4) and right.cases[1].ref_err is None  # benign: no reference
    loose = _judge(_run(200.5), _run(200.0, "float64"), reference_tolerance=0.01)
    assert loose.ok and loose.reference_tolerance == 0.01
    bad_tol = _judge(_run(200.0), _run(200.0, "float64"), reference_tolerance="1e-3")
    assert not bad_tol.ok and any("REFERENCE_TOLERANCE must be" in e for e in bad_tol.errors)


def test_every_hazard_case_needs_a_reference_or_a_reason():
    missing = _judge(_run(200.0), plan={"source": None, "no_reference": {}})
    assert not missing.ok and "no reference for this hazard case" in missing.cases[0].problems[0]
    reason = "the hazard is a divergence"
    stated = _judge(_run(200.0), plan={"source": None, "no_reference": reason})
    assert stated.ok and stated.cases[0].reference == f"none: {reason}" and stated.cases[0].ref_err is None
    result = verify.Result([stated], {}, {}, 1.0)
    text = report.table(result)
    assert "NO REFERENCE" in text and f"NAN101-log-softmax/jax.py hazard_saturated: {reason}" in text
    data = report.to_json(result)
    assert data["summary"]["hazard_no_reference"] == 1 and data["summary"]["hazard_vs_reference"] == 0
    assert data["fixtures"][0]["cases"][0]["reference"] == f"none: {reason}"
    per_case = _judge(_run(200.0), plan={"source": "float64", "no_reference": {"hazard_typo": "x"}})
    assert not per_case.ok and any("NO_REFERENCE names 'hazard_typo'" in e for e in per_case.errors)


def test_a_reference_must_be_exact_and_float64():
    narrow = _judge(_run(200.0), _run(200.0, "float32"))
    assert not narrow.ok and "not float64 in loss: does every input use DTYPE?" in narrow.cases[0].problems[0]
    overflow = _judge(_run(200.0), _run(math.inf, "float64"))
    assert not overflow.ok and "the float64 reference is not finite" in overflow.cases[0].problems[0]
    raised = _judge(_run(200.0), {"error": "Traceback...\nTypeError: boom"})
    assert not raised.ok and "the float64 reference raised" in raised.cases[0].problems[0]
    # a closed form may mark undefined elements (the gradient of x / |x| at 0) NaN: not compared
    closed = {"source": "closed form", "no_reference": {}}
    partial = _judge(_run([1.0, 5.0]), _run([1.0, math.nan], "float64"), plan=closed)
    assert partial.ok and partial.cases[0].reference == "closed form (1 undefined)"
    wrong = _judge(_run([2.0, 5.0]), _run([1.0, math.nan], "float64"), plan=closed)
    assert not wrong.ok and wrong.cases[0].ref_err == pytest.approx(1.0)
    # a float64 run that is NaN is an overflow, never "undefined"
    assert not _judge(_run([1.0, 5.0]), _run([1.0, math.nan], "float64")).ok


PLANTED = '''    new, imports = built
    # PLANTED (tests/test_harness_reference.py): finite but wrong, log(softmax(z) + 1e-30)
    new = log.node.with_changes(args=[cst.Arg(cst.BinaryOperation(
        left=softmax.node, operator=cst.Add(), right=cst.Float("1e-30")))])
'''


def test_harness_fails_a_planted_finite_but_wrong_fix(tmp_path):
    """A real run: nanlint (a scratch copy whose NAN101 fix is log(softmax(z) + 1e-30))
    fixes the repository's NAN101 JAX fixture and JAX runs it."""
    why = launch.available("jax")
    if why:
        missing_framework(why)
    scratch = tmp_path / "scratch"
    shutil.copytree(ROOT / "nanlint", scratch / "nanlint", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "pyproject.toml", scratch / "pyproject.toml")
    rule = scratch / "nanlint" / "rules" / "_fused.py"  # NAN101's fix: log_softmax_fix
    text = rule.read_text()
    anchor = "    new, imports = built\n"
    fix_start = text.index("def log_softmax_fix(")
    assert text.count(anchor, fix_start, text.index("\ndef ", fix_start + 1)) == 1, \
        "NAN101's log_softmax_fix changed: update PLANTED to plant the wrong fix again"
    rule.write_text(text[:fix_start] + text[fix_start:].replace(anchor, PLANTED, 1))
    fixtures = tmp_path / "fixtures" / "NAN101-log-softmax"
    fixtures.mkdir(parents=True)
    shutil.copy2(ROOT / "fixtures" / "NAN101-log-softmax" / "jax.py", fixtures / "jax.py")
    out = tmp_path / "report.json"
    env = {**os.environ, "PYTHONPATH": str(scratch)}
    proc = subprocess.run([sys.executable, "-m", "nanlint.harness", "--json", str(out), str(fixtures.parent)],
                          cwd=scratch, env=env, capture_output=True, text=True, timeout=600)
    data = json.loads(out.read_text())
    (entry,) = data["fixtures"]
    assert "+ 1e-30" in entry["fix_diff"], entry["fix_diff"]  # the planted fix is what nanlint applied
    assert proc.returncode == 1 and entry["status"] == "FAIL", proc.stdout
    hazards = [c for c in entry["cases"] if c["kind"] == "hazard"]
    assert hazards and all(c["unfixed"] != "finite" and c["fixed"] == "finite" for c in hazards), hazards
    for c in hazards:  # finite, so only the reference catches it: 69.08 where float64 says 200 and 400
        assert c["reference"] == "float64" and c["reference_max_err"] > 100, c
        assert any(p.startswith("the fixed code misses the float64 reference in 'loss'") for p in c["problems"]), c
        assert any("'dloss/dlogits'" in p for p in c["problems"]), c  # and the all-zero gradient
    assert "misses the float64 reference" in proc.stdout and "FAILED" in proc.stdout
