"""The fixture harness: every fixture under fixtures/ passes on CPU, and the harness
rejects fixtures that prove nothing or whose fix changes values.

The harness is run once per module (one worker process per framework, never one per
case); the per-fixture tests read its JSON report.  A framework that is not installed
fails the test when ``CI`` is set (CI installs all of them) and skips it otherwise.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import missing_framework
from nanlint.harness import fixtures, judging, launch, static, verify
from nanlint.harness import summary as report

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
# A Python with TensorFlow 2.3 (see docs/verification/tf23-interpreter.md): the NAN502 fixture's hazard
# exists only in TF < 2.4, so it runs there and is skipped (REQUIRES) on the default interpreter.
TF23_PYTHON = os.environ.get("NANLINT_TF23_PYTHON")


def _fixture_ids() -> list[str]:
    if not FIXTURES.is_dir():
        return []
    return sorted(f"{d.name}/{p.name}" for d in FIXTURES.iterdir() if d.is_dir() and fixtures.FIXTURE_DIR.match(d.name)
                  for p in d.glob("*.py") if not p.name.startswith("_"))


def _harness(*args: str, cwd: Path = ROOT) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-m", "nanlint.harness", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=1800)
    return proc.returncode, proc.stdout, proc.stderr


def _missing_or_skip(why: str) -> None:
    missing_framework(why)


@pytest.fixture(scope="module")
def cpu_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("harness") / "report.json"
    on_disk = _fixture_ids()
    rc, stdout, stderr = _harness("--device", "cpu", "--allow-missing", "--json", str(out), str(FIXTURES))
    assert out.is_file(), f"the harness wrote no report (exit {rc}):\n{stdout}\n{stderr}"
    return rc, stdout, json.loads(out.read_text()), on_disk


def default_rule(code: str) -> bool:
    from nanlint.rules.base import all_rules

    return next(r for r in all_rules() if r.code == code).default


def _problems(entry: dict) -> str:
    lines = list(entry["errors"])
    for c in entry["cases"]:
        lines += [f"{c['case']}: {p}" for p in c["problems"]]
    comb = entry.get("combined") or {}
    lines += [f"combined fix: {e}" for e in comb.get("errors", [])]
    for c in comb.get("cases", []):
        lines += [f"combined fix, {c['case']}: {p}" for p in c["problems"]]
    if lines and comb.get("diff_vs_rule_alone"):
        lines.append(comb["diff_vs_rule_alone"])
    return "\n".join(lines)


@pytest.mark.parametrize("fixture_id", _fixture_ids())
def test_fixture_passes_on_cpu(cpu_report, fixture_id):
    _, _, data, _ = cpu_report
    entry = next((f for f in data["fixtures"] if f["id"] == fixture_id), None)
    assert entry is not None, f"the harness did not discover {fixture_id}"
    if entry["requires_unmet"]:  # a fixture for another framework version (REQUIRES): nanlint still reports it
        assert entry["status"] == "skip" and not entry["errors"] and entry["still_reported"], entry
        pytest.skip(entry["skipped"])
    if entry["skipped"]:
        _missing_or_skip(entry["skipped"])
    assert entry["ok"], f"{fixture_id} failed:\n{_problems(entry)}"
    hazards = [c for c in entry["cases"] if c["kind"] == "hazard"]
    benign = [c for c in entry["cases"] if c["kind"] == "benign"]
    assert hazards and benign
    for c in hazards:
        assert c["criterion"] in judging.CRITERIA, c
        # fixed values and gradients match the exact ones (float64 run or closed form), or the
        # fixture says why no exact value exists
        if c["reference"].startswith("none: "):
            assert len(c["reference"]) > len("none: ") + 20 and c["reference_max_err"] is None, c
        else:
            assert c["reference"].startswith(("float64", "closed form")), c
            assert c["reference_max_err"] is not None and c["ok"], c
        if c["criterion"] == "nonfinite":
            assert c["unfixed"] != "finite" and c["fixed"] == "finite", c
        elif c["criterion"] == "raises":
            assert c["observed"].startswith("raises ") and c["fixed"] == "finite", c
        else:
            assert c["observed"].endswith("vs reference") and c["fixed"].startswith("finite; max err"), c
            assert c["max_abs_diff"] is not None and c["max_abs_diff"] <= 10 * entry["tolerance"], c
    for c in benign:
        assert c["unfixed"] == c["fixed"] == "finite" and c["max_abs_diff"] is not None, c
    assert all(c["device"].startswith("cpu") for c in entry["cases"]), [c["device"] for c in entry["cases"]]
    if entry["mode"] == "fix":
        assert entry["fix_diff"], "the fixed copy must differ from the fixture"
    comb = entry["combined"]  # the fix a user gets: all default rules (+ this rule when opt-in)
    assert comb["ok"] and comb["mode"] in ("same", "fix", "keep"), comb
    assert comb["selection"] == "default rules" + ("" if default_rule(entry["rule"]) else f" + {entry['rule']}")
    if not comb["identical"]:
        assert comb["diff_vs_rule_alone"] and comb["cases"] and all(c["ok"] for c in comb["cases"]), comb


def test_run_report_is_consistent(cpu_report):
    rc, stdout, data, on_disk = cpu_report
    assert (rc == 0) == data["ok"], stdout
    assert data["device_requested"] == "cpu" and data["python"] and data["date"] and "commit" in data
    assert {f["id"] for f in data["fixtures"]} >= set(on_disk)
    for name, info in data["frameworks"].items():
        if info["status"] == "ran":
            assert info["versions"][name], info
    assert ("PASSED" if data["ok"] else "FAILED") in stdout


# --------------------------------------------------------------------------- the harness's own logic

def _run(value, nan=0, inf=0, shape=()):
    values = value if isinstance(value, list) else [value]
    enc = [v if math.isfinite(v) else ("nan" if math.isnan(v) else "inf" if v > 0 else "-inf") for v in values]
    return {"device": "cpu (test)", "outputs": {"loss": {"shape": list(shape), "dtype": "float32",
                                                         "nan": sum(math.isnan(v) for v in values),
                                                         "inf": sum(math.isinf(v) for v in values),
                                                         "values": enc}}}


CLOSED_FORM = {"source": "closed form", "no_reference": {}}  # the worker's plan for a fixture with reference(case)


def test_finite_hazard_case_proves_nothing():
    case = judging.judge_case("hazard_big_logits", {"unfixed": _run(1.0), "fixed": _run(1.0)}, 1e-5, True)
    assert not case.ok
    assert any("proves nothing" in p for p in case.problems)


def test_hazard_must_be_finite_after_fix():
    case = judging.judge_case("hazard_x", {"unfixed": _run(math.nan), "fixed": _run(-math.inf)}, 1e-5, True)
    assert not case.ok and any("still not finite" in p for p in case.problems)
    good = judging.judge_case("hazard_x", {"unfixed": _run(math.nan), "fixed": _run(3.0)}, 1e-5, True)
    assert good.ok and good.unfixed == "NaN: loss" and good.fixed == "finite"


def test_fix_that_changes_benign_values_is_rejected():
    case = judging.judge_case("benign_x", {"unfixed": _run([1.0, 2.0], shape=(2,)),
                                        "fixed": _run([1.0, 2.5], shape=(2,))}, 1e-5, True)
    assert not case.ok and case.max_abs_diff == pytest.approx(0.5)
    assert any("changes benign values" in p for p in case.problems)
    close = judging.judge_case("benign_x", {"unfixed": _run([1.0, 2.0], shape=(2,)),
                                         "fixed": _run([1.0, 2.0 + 1e-6], shape=(2,))}, 1e-5, True)
    assert close.ok and close.max_abs_diff == pytest.approx(1e-6)


def test_benign_case_must_be_finite_and_names_must_say_their_kind():
    assert not judging.judge_case("benign_x", {"unfixed": _run(math.inf), "fixed": _run(1.0)}, 1e-5, True).ok
    odd = judging.judge_case("edge_x", {"unfixed": _run(1.0), "fixed": _run(1.0)}, 1e-5, True)
    assert not odd.ok and any("must start with" in p for p in odd.problems)
    unfixed_only = judging.judge_case("hazard_x", {"unfixed": _run(math.nan)}, 1e-5, False)
    assert not unfixed_only.ok


def _raising(exc="ValueError", message="Argument(s) not recognized: {'lr': 0.01}"):
    return {"error": f"Traceback ...\n{exc}: {message}", "exception": exc, "message": message}


def test_raises_criterion():
    good = judging.judge_case("hazard_lr", {"unfixed": _raising(), "fixed": _run(1.0)}, 1e-5, True, "raises")
    assert good.ok, good.problems
    assert good.observed.startswith("raises ValueError: Argument(s) not recognized") and good.unfixed == "raises ValueError"
    silent = judging.judge_case("hazard_lr", {"unfixed": _run(1.0), "fixed": _run(1.0)}, 1e-5, True, "raises")
    assert not silent.ok and any("does not raise" in p for p in silent.problems)
    still = judging.judge_case("hazard_lr", {"unfixed": _raising(), "fixed": _raising()}, 1e-5, True, "raises")
    assert not still.ok and any("fixed code raised" in p for p in still.problems)
    nan = judging.judge_case("hazard_lr", {"unfixed": _raising(), "fixed": _run(math.nan)}, 1e-5, True, "raises")
    assert not nan.ok and any("still not finite" in p for p in nan.problems)
    # without the criterion, an exception is a broken fixture, not a proof
    plain = judging.judge_case("hazard_lr", {"unfixed": _raising(), "fixed": _run(1.0)}, 1e-5, True)
    assert not plain.ok and any("unfixed code raised" in p for p in plain.problems)


def test_reference_criterion():
    ref = _run([20.0, 1.0], shape=(2,))
    wrong, right = _run([100.0, 0.0], shape=(2,)), _run([20.0, 1.0 + 1e-7], shape=(2,))
    good = judging.judge_case("hazard_sat", {"unfixed": wrong, "fixed": right, "reference": ref}, 1e-5, True, "reference")
    assert good.ok, good.problems
    assert good.observed == "max err 80 vs reference" and good.max_abs_diff == pytest.approx(1e-7)
    same = judging.judge_case("hazard_sat", {"unfixed": right, "fixed": right, "reference": ref}, 1e-5, True, "reference")
    assert not same.ok and any("already matches the reference" in p for p in same.problems)
    miss = judging.judge_case("hazard_sat", {"unfixed": wrong, "fixed": _run([20.0, 1.5], shape=(2,)), "reference": ref},
                           1e-5, True, "reference")
    assert not miss.ok and any("misses the reference in 'loss'" in p for p in miss.problems)
    none = judging.judge_case("hazard_sat", {"unfixed": wrong, "fixed": right}, 1e-5, True, "reference")
    assert not none.ok and any("reference(case) did not" in p for p in none.problems)
    bad_ref = judging.judge_case("hazard_sat", {"unfixed": wrong, "fixed": right, "reference": _run([math.nan, 1.0], shape=(2,))},
                              1e-5, True, "reference")
    assert not bad_ref.ok and any("reference is not finite" in p for p in bad_ref.problems)


def test_expect_is_validated():
    odd = judging.judge_case("hazard_x", {"unfixed": _run(math.nan), "fixed": _run(1.0)}, 1e-5, True, "wrong")
    assert not odd.ok and any("unknown criterion" in p for p in odd.problems)
    benign = judging.judge_case("benign_x", {"unfixed": _run(1.0), "fixed": _run(1.0)}, 1e-5, True, "raises")
    assert not benign.ok and any("only hazard* cases" in p for p in benign.problems)
    f = fixtures.Fixture("NAN501", "optimizer-lr-kwarg", "keras", Path("keras.py"), mode="fix")
    judging.judge_fixture(f, {"tolerance": None, "fixed_ran": True, "expect": {"hazard_typo": "raises"}, "cases": {
        "hazard_lr": {"unfixed": _raising(), "fixed": _run(1.0)},
        "benign_x": {"unfixed": _run(1.0), "fixed": _run(1.0)}}})
    assert not f.ok and any("'hazard_typo', which is not a case" in e for e in f.errors)
    assert f.cases[0].criterion == "nonfinite" and not f.cases[0].ok  # the misspelt name did not apply


def test_requires_specifiers():
    from nanlint.harness.versions import satisfies

    assert satisfies("2.3.4", "<2.4") and not satisfies("2.21.0", "<2.4") and not satisfies("2.4.0", "<2.4")
    assert satisfies("2.3.0", ">=2.0,<2.4") and not satisfies("1.15.5", ">=2.0,<2.4")
    assert satisfies("2.3.4", "==2.3.*") and not satisfies("2.30.0", "==2.3.*") and satisfies("2.13.0+cpu", ">=2.13")
    with pytest.raises(ValueError):
        satisfies("2.3.4", "~2.3")


def test_requires_skip_is_not_a_failure_but_errors_still_fail():
    raw = {"requires": {"tensorflow": "<2.4"}, "requires_unmet": "needs tensorflow<2.4 (REQUIRES), this worker has "
                                                                 "tensorflow 2.21.0"}
    f = fixtures.Fixture("NAN502", "clipnorm-custom-loop", "tensorflow", Path("tensorflow.py"), mode="manual")
    judging.judge_fixture(f, raw)
    assert f.status == "skip" and f.requires_unmet and not f.failed and f.requires == {"tensorflow": "<2.4"}
    assert verify.Result([f], {}, {}, 0.0, allow_empty=True).ok  # the skip fails nothing...
    assert not verify.Result([f], {}, {}, 0.0).ok  # ...but a run of nothing else verified nothing
    broken = fixtures.Fixture("NAN502", "clipnorm-custom-loop", "tensorflow", Path("tensorflow.py"))
    broken.errors.append("nanlint does not report NAN502 on this fixture")
    judging.judge_fixture(broken, raw)
    assert broken.status == "FAIL" and broken.failed and not verify.Result([broken], {}, {}, 0.0).ok


def test_python_option_is_validated(tmp_path):
    with pytest.raises(fixtures.UsageError, match="not an executable"):
        verify.run(verify.Options(paths=[FIXTURES], python={"tensorflow": str(tmp_path / "no-python")}))
    with pytest.raises(fixtures.UsageError, match="unknown framework"):
        verify.run(verify.Options(paths=[FIXTURES], python={"tf": sys.executable}))
    rc, _, err = _harness("--python", "tensorflow", str(tmp_path))
    assert rc == 2 and "FRAMEWORK=PYTHON" in err


def test_nan502_hazard_under_tensorflow_2_3(tmp_path):
    """The NAN502 fixture on a real TF 2.3 (apply_gradients ignores clipnorm): NaN unfixed,
    finite with the page's manual clip. Needs NANLINT_TF23_PYTHON (not in CI)."""
    if not TF23_PYTHON:
        pytest.skip("NANLINT_TF23_PYTHON is not set: no TensorFlow 2.3 interpreter (see docs/verification/tf23-interpreter.md)")
    out = tmp_path / "tf23.json"
    rc, stdout, stderr = _harness("--python", f"tensorflow={TF23_PYTHON}", "--json", str(out),
                                  str(FIXTURES / "NAN502-clipnorm-custom-loop"))
    assert rc == 0, stdout + stderr
    data = json.loads(out.read_text())
    assert data["frameworks"]["tensorflow"]["versions"]["tensorflow"].startswith("2.3.")
    entries = {f["id"].split("/")[1]: f for f in data["fixtures"]}
    assert set(entries) == {"tensorflow.py", "tensorflow_one_step.py"}
    for entry in entries.values():
        assert entry["ok"] and entry["mode"] == "manual" and entry["still_reported"], _problems(entry)
    loop = next(c for c in entries["tensorflow.py"]["cases"] if c["kind"] == "hazard")
    assert loop["unfixed"].startswith("NaN") and loop["fixed"] == "finite", loop
    step = next(c for c in entries["tensorflow_one_step.py"]["cases"] if c["kind"] == "hazard")
    # SGD(learning_rate=1, clipnorm=1) on the gradient [30, 40]: moved by [-30, -40], not [-0.6, -0.8]
    assert step["outputs"]["unfixed"]["w"]["values"] == [-30.0, -40.0], step
    assert step["outputs"]["fixed"]["w"]["values"] == pytest.approx([-0.6, -0.8]), step


def test_discovery(tmp_path):
    (tmp_path / "a" / "NAN101-log-softmax").mkdir(parents=True)
    (tmp_path / "a" / "NAN101-log-softmax" / "torch.py").write_text("")
    (tmp_path / "a" / "NAN101-log-softmax" / "tensorflow_tf1.py").write_text("")
    (tmp_path / "a" / "NAN101-log-softmax" / "pytorch.py").write_text("")
    (tmp_path / "a" / "NAN101-log-softmax" / "_helpers.py").write_text("")
    (tmp_path / "notes").mkdir()
    found = {f.path.name: f for f in fixtures.discover([tmp_path])}
    assert set(found) == {"torch.py", "tensorflow_tf1.py", "pytorch.py"}
    assert found["tensorflow_tf1.py"].framework == "tensorflow" and not found["torch.py"].errors
    assert "unknown framework" in found["pytorch.py"].errors[0]
    single = fixtures.discover([tmp_path / "a" / "NAN101-log-softmax" / "torch.py"])
    assert [f.path.name for f in single] == ["torch.py"]
    with pytest.raises(fixtures.UsageError):
        fixtures.discover([tmp_path / "nope"])


def test_repo_fixtures_cover_every_framework():
    for rule_dir in ("NAN101-log-softmax", "NAN102-log-sigmoid"):
        assert {p.stem for p in (FIXTURES / rule_dir).glob("*.py")} >= set(fixtures.FRAMEWORKS)


GOOD_TORCH = '''
import torch
import torch.nn.functional as F

DTYPE = torch.float32

CASES = {{
    "hazard_saturated": {{"logits": [{hazard}]}},
    "benign_small": {{"logits": [0.5, -1.0, 2.0]}},
}}


def loss(z):
    return -torch.log(F.softmax(z, dim=0))[0]


def compute(case, device):
    z = torch.tensor(case["logits"], dtype=DTYPE, requires_grad=True)
    out = loss(z)
    out.backward()
    return {{"loss": out{bias}, "grad": z.grad}}
'''

MANUAL = '''

def probs(z):
    return F.softmax(z, dim=0)


def compute_manual(case, device):
    z = torch.tensor(case["logits"], requires_grad=True)
    out = -F.log_softmax(z, dim=0)[0]
    out.backward()
    return {{"loss": out, "grad": z.grad}}
'''


def test_missing_framework_fails_or_is_skipped(tmp_path, monkeypatch):
    fixture = tmp_path / "NAN101-log-softmax" / "torch.py"
    fixture.parent.mkdir()
    fixture.write_text(GOOD_TORCH.format(hazard="0.0, 200.0, -200.0", bias=""))
    monkeypatch.setattr(launch, "available", lambda fw: f"{fw} is not installed (simulated)")
    monkeypatch.setattr(static, "static_phase", lambda *a: pytest.fail("a missing framework stops before any work"))
    with pytest.raises(fixtures.UsageError) as stopped:
        verify.run(verify.Options(paths=[tmp_path]))
    message = str(stopped.value)
    assert "\n" not in message
    assert message.startswith("torch is not installed (simulated): python3 -m pip install ")
    monkeypatch.undo()
    monkeypatch.setattr(launch, "available", lambda fw: f"{fw} is not installed (simulated)")
    skipped = verify.run(verify.Options(paths=[tmp_path], allow_missing=True))
    assert skipped.fixtures[0].skipped and skipped.fixtures[0].status == "skip"
    assert "NOT verified" in report.table(skipped)


def test_missing_framework_stops_the_cli_at_once_in_one_line(tmp_path, capsys, monkeypatch):
    from nanlint.harness import cli

    fixture = tmp_path / "NAN101-log-softmax" / "torch.py"
    fixture.parent.mkdir()
    fixture.write_text(GOOD_TORCH.format(hazard="0.0, 200.0, -200.0", bias=""))
    monkeypatch.setattr(launch, "available", lambda fw: f"{fw} is not installed (no module {fw})")
    start = time.monotonic()
    assert cli.main([str(tmp_path)]) == 2
    assert time.monotonic() - start < 5
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("nanlint harness: error: torch is not installed (no module torch): "
                          f"{launch.install_command('torch')} (or --frameworks to run others, ")
    assert err.count("\n") == 1


def test_install_command_names_the_pinned_package_for_this_platform():
    requirements = ["click>=8.1", "tensorflow-cpu==2.21.0; sys_platform != 'darwin' and extra == 'frameworks'",
                    "tensorflow==2.21.0; sys_platform == 'darwin' and extra == 'frameworks'",
                    'torch==2.13.0; extra == "frameworks"', "jax[cpu]==0.10.2; extra == 'frameworks'",
                    "keras==3.15.1; extra == 'frameworks'", "pytest>=8; extra == 'test'"]
    assert launch.install_command("torch", requirements) == "python3 -m pip install torch==2.13.0"
    assert launch.install_command("jax", requirements) == "python3 -m pip install 'jax[cpu]==0.10.2'"
    tf = "tensorflow==2.21.0" if sys.platform == "darwin" else "tensorflow-cpu==2.21.0"
    assert launch.install_command("tensorflow", requirements) == f"python3 -m pip install {tf}"
    assert launch.install_command("keras", requirements) == f"python3 -m pip install {tf} keras==3.15.1"
    assert launch.install_command("torch", []) == launch.INSTALL  # not installed as a package: the checkout's extra


def test_table_rows_fit_120_columns_and_wrap_instead_of_cutting():
    long = "NaN: dsoftplus/dx, dlogsumexp/dx, dlogsumexp_method/dx, dlogaddexp/dx; Inf: softplus, logsumexp"
    fixture = fixtures.Fixture("NAN106", "log-sum-exp", "tensorflow", Path("tensorflow_tf1_model.py"), mode="fix")
    fixture.cases = [fixtures.Case("hazard_overflowing_logits_in_all_four_forms", "hazard", "cpu (x86_64)", long,
                                   "finite; max err 2.06e-09 vs reference", 1e-9, "nonfinite", ok=True)]
    result = verify.Result(fixtures=[fixture], frameworks={}, meta={}, seconds=1.0)
    lines = report.table(result).splitlines()
    end = lines.index("")
    rows = lines[:end]  # header, rule, the case's lines
    assert all(len(line) <= report.WIDTH for line in rows), [len(x) for x in rows]
    assert rows[2].startswith("ok ") and "NAN106" in rows[2] and "\u2026" not in "\n".join(rows)
    start = rows[0].index("unfixed")  # the column's text, line by line, is the whole cell
    width = rows[1][start:].index(" ")
    pieces = [r[start:start + width].strip() for r in rows[2:]]
    assert len([p for p in pieces if p]) > 1 and "".join(pieces).replace(" ", "") == long.replace(" ", "")
    assert " ".join(r[:rows[1].index(" ")].strip() for r in rows[2:]).split() == ["ok"]  # status on the first line only


def test_bad_fixtures_are_rejected_end_to_end(tmp_path):
    """One harness run (one torch worker) over fixtures that must each fail, clearly."""
    if launch.available("torch"):
        _missing_or_skip(launch.available("torch"))

    def write(rel: str, text: str) -> None:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(textwrap.dedent(text))

    # inputs that never saturate: the hazard case proves nothing
    write("NAN101-tame/torch.py", GOOD_TORCH.format(hazard="0.0, 1.0, -1.0", bias=""))
    # a "fix" that shifts the loss: the harness must see the benign values change
    write("NAN101-shifted/torch.py", GOOD_TORCH.format(
        hazard="0.0, 200.0, -200.0",
        bias=' + (0.5 if "log_" + "softmax(" in open(__file__).read() else 0.0)'))
    # already in the fused form: nanlint reports nothing, so nothing is proved
    write("NAN101-already-fixed/torch.py", GOOD_TORCH.replace("-torch.log(F.softmax(z, dim=0))",
                                                              "-F.log_softmax(z, dim=0)")
          .format(hazard="0.0, 200.0, -200.0", bias=""))
    write("NAN999-no-such-rule/torch.py", GOOD_TORCH.format(hazard="0.0, 200.0, -200.0", bias=""))
    write("NAN101-good/pytorch.py", GOOD_TORCH.format(hazard="0.0, 200.0, -200.0", bias=""))
    write("NAN101-good/torch.py", GOOD_TORCH.format(hazard="0.0, 200.0, -200.0", bias=""))
    write("NAN101-broken/torch.py", "import torch\nraise RuntimeError('boom')\n")
    # nanlint's fix is display-only here (the softmax is returned by the module's own
    # function): the fixed side is the fixture's compute_manual, and it must exist
    manual = GOOD_TORCH.replace("-torch.log(F.softmax(z, dim=0))[0]", "-torch.log(probs(z))[0]") + MANUAL
    write("NAN101-manual/torch.py", manual.format(hazard="0.0, 200.0, -200.0", bias=""))
    write("NAN101-manual-missing/torch.py", manual.split("def compute_manual")[0]
          .format(hazard="0.0, 200.0, -200.0", bias=""))

    # a reference criterion without reference(), and one whose unfixed side is already exact
    no_dtype = GOOD_TORCH.replace("DTYPE = torch.float32\n", "").replace("dtype=DTYPE, ", "")
    write("NAN101-no-reference/torch.py", no_dtype.format(hazard="0.0, 200.0, -200.0", bias="")
          + '\nEXPECT = {"hazard_saturated": "reference"}\n')
    # no DTYPE, no reference(case), no NO_REFERENCE: the hazard case has nothing exact to match
    write("NAN101-unreferenced/torch.py", no_dtype.format(hazard="0.0, 200.0, -200.0", bias=""))
    write("NAN101-exact/torch.py", GOOD_TORCH.format(hazard="0.0, 1.0, -1.0", bias="") + textwrap.dedent('''
        EXPECT = {"hazard_saturated": "reference"}


        def reference(case):
            z = torch.tensor(case["logits"], dtype=torch.float64, requires_grad=True)
            out = -torch.log_softmax(z, 0)[0]
            out.backward()
            return {"loss": out, "grad": z.grad}
        '''))

    # REQUIRES: a torch this worker does not have skips the fixture (loudly), unless nanlint
    # does not even report it; a specifier the harness cannot read is an error
    old = GOOD_TORCH.format(hazard="0.0, 200.0, -200.0", bias="") + '\nREQUIRES = {"torch": "<1.0"}\n'
    write("NAN101-old-torch/torch.py", old)
    write("NAN101-old-torch-unreported/torch.py", old.replace("-torch.log(F.softmax(z, dim=0))", "-F.log_softmax(z, dim=0)"))
    write("NAN101-odd-requires/torch.py", old.replace('"<1.0"', '"~1.0"'))

    out = tmp_path / "report.json"
    # --python: the torch fixtures run in a worker of their own on the named interpreter
    rc, stdout, stderr = _harness("--device", "cpu", "--python", f"torch={sys.executable}", "--json", str(out),
                                  str(tmp_path))
    assert rc == 1, stdout + stderr
    full = json.loads(out.read_text())
    assert full["frameworks"]["torch"]["interpreter"] == sys.executable and full["frameworks"]["torch"]["python"]
    data = {f["id"]: f for f in full["fixtures"]}
    old_torch = data["NAN101-old-torch/torch.py"]
    assert old_torch["status"] == "skip" and old_torch["requires_unmet"] and old_torch["requires"] == {"torch": "<1.0"}
    assert old_torch["skipped"].startswith("needs torch<1.0 (REQUIRES), this worker has torch ") and not old_torch["cases"]
    assert "NAN101-old-torch/torch.py skipped: needs torch<1.0" in stderr
    assert data["NAN101-old-torch-unreported/torch.py"]["status"] == "FAIL"
    assert "does not report NAN101" in _problems(data["NAN101-old-torch-unreported/torch.py"])
    assert "cannot read the version specifier '~1.0'" in _problems(data["NAN101-odd-requires/torch.py"])

    def problems(fid: str) -> str:
        return _problems(data[fid])

    assert data["NAN101-good/torch.py"]["ok"], problems("NAN101-good/torch.py")
    assert "proves nothing" in problems("NAN101-tame/torch.py")
    shifted = data["NAN101-shifted/torch.py"]
    assert "changes benign values" in problems("NAN101-shifted/torch.py")
    assert next(c for c in shifted["cases"] if c["kind"] == "benign")["max_abs_diff"] == pytest.approx(0.5)
    assert "does not report NAN101" in problems("NAN101-already-fixed/torch.py")
    assert "NAN999 does not exist" in problems("NAN999-no-such-rule/torch.py")
    # an unknown rule's hazard still runs unfixed, so its author sees it reproduce
    assert data["NAN999-no-such-rule/torch.py"]["cases"][0]["unfixed"].startswith("NaN")
    assert "unknown framework" in problems("NAN101-good/pytorch.py")
    assert "boom" in problems("NAN101-broken/torch.py")
    assert data["NAN101-manual/torch.py"]["mode"] == "manual"
    assert data["NAN101-manual/torch.py"]["ok"], problems("NAN101-manual/torch.py")
    assert "must define compute_manual" in problems("NAN101-manual-missing/torch.py")
    assert "must define reference(case)" in problems("NAN101-no-reference/torch.py")
    unreferenced = data["NAN101-unreferenced/torch.py"]
    assert unreferenced["status"] == "FAIL" and "no reference for this hazard case" in problems("NAN101-unreferenced/torch.py")
    good_hazard = next(c for c in data["NAN101-good/torch.py"]["cases"] if c["kind"] == "hazard")
    assert good_hazard["reference"] == "float64" and good_hazard["reference_max_err"] < 1e-4, good_hazard
    assert "already matches the reference" in problems("NAN101-exact/torch.py")
    exact = next(c for c in data["NAN101-exact/torch.py"]["cases"] if c["kind"] == "hazard")
    assert exact["criterion"] == "reference" and exact["fixed"].startswith("finite; max err"), exact
    assert "FAILED" in stdout and "proves nothing" in stdout


COMBINED_TORCH = '''
import torch
import torch.nn.functional as F

DTYPE = torch.float32

CASES = {{
    "hazard_saturated": {{"logits": [[0.0, 200.0, -200.0]], "labels": [[1.0, 0.0, 0.0]]}},
    "benign_moderate": {{"logits": [[0.5, -1.0, 2.0]], "labels": [[0.2, 0.0, 0.8]]}},
}}


def loss(z, y):
    return -(y * torch.log(F.softmax(z, dim=1))).sum()


def compute(case, device):
    z = torch.tensor(case["logits"], dtype=DTYPE, requires_grad=True)
    out = loss(z, torch.tensor(case["labels"], dtype=DTYPE))
    out.backward()
    return {{"loss": out{bias}, "grad": z.grad}}
'''


def test_combined_fix_is_proven_and_a_broken_one_fails(tmp_path):
    """The harness also fixes each fixture with every default rule (as a user runs
    ``nanlint --fix --unsafe-fixes``). Here NAN101 alone gives ``-(y * F.log_softmax(z))``,
    while with the default rules NAN103 (which supersedes NAN101 inside it) rewrites the
    whole loss to ``F.cross_entropy``: a second program, run and judged on its own. The
    "breaks" fixture shifts its loss when nanlint's fused call is in its own text, so only
    the combined copy changes benign values, and the harness must fail it."""
    if launch.available("torch"):
        _missing_or_skip(launch.available("torch"))

    def write(rel: str, text: str) -> None:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)

    write("NAN101-combined-differs/torch.py", COMBINED_TORCH.format(bias=""))
    write("NAN101-combined-breaks/torch.py", COMBINED_TORCH.format(
        bias=' + (0.5 if "cross_" + "entropy(" in open(__file__).read() else 0.0)'))
    write("NAN101-combined-same/torch.py", GOOD_TORCH.format(hazard="0.0, 200.0, -200.0", bias=""))
    out = tmp_path / "report.json"
    rc, stdout, stderr = _harness("--device", "cpu", "--json", str(out), str(tmp_path))
    assert rc == 1, stdout + stderr
    full = json.loads(out.read_text())
    data = {f["id"]: f for f in full["fixtures"]}
    assert full["summary"]["combined_differs"] == 2 and full["summary"]["combined_failed"] == 1, full["summary"]

    same = data["NAN101-combined-same/torch.py"]
    assert same["ok"], _problems(same)
    assert same["combined"]["identical"] is True and same["combined"]["mode"] == "same"
    assert same["combined"]["selection"] == "default rules" and same["combined"]["cases"] == []  # reused, not rerun

    differs = data["NAN101-combined-differs/torch.py"]
    assert differs["ok"], _problems(differs)
    comb = differs["combined"]
    assert comb["identical"] is False and comb["mode"] == "fix" and comb["ok"], comb
    assert "F.log_softmax(z, dim=1)" in differs["fix_diff"] and "cross_entropy" not in differs["fix_diff"]
    assert "+    return F.cross_entropy(" in comb["diff_vs_rule_alone"] and comb["rules_fixed"].get("NAN103"), comb
    cases = {c["case"]: c for c in comb["cases"]}
    assert cases["hazard_saturated"]["unfixed"].startswith("NaN") and cases["hazard_saturated"]["fixed"] == "finite"
    assert cases["benign_moderate"]["ok"] and cases["benign_moderate"]["max_abs_diff"] <= 1e-5, cases
    assert "combined" not in next(c for c in differs["cases"])["outputs"]  # the rule-alone side stays its own

    breaks = data["NAN101-combined-breaks/torch.py"]
    assert all(c["ok"] for c in breaks["cases"]), "the rule-alone fix is fine"
    assert breaks["status"] == "FAIL" and not breaks["ok"] and not breaks["combined"]["ok"]
    benign = next(c for c in breaks["combined"]["cases"] if c["kind"] == "benign")
    assert not benign["ok"] and any("changes benign values" in p for p in benign["problems"])
    assert benign["max_abs_diff"] == pytest.approx(0.5)
    assert "COMBINED FIX" in stdout and "FAIL  NAN101-combined-breaks/torch.py: fixed by NAN103" in stdout, stdout
    assert "combined fix (default rules), benign_moderate: the fix changes benign values" in stdout, stdout
    assert "ok    NAN101-combined-differs/torch.py" in stdout and "NAN101-combined-same" not in stdout.split("COMBINED")[1]


def test_combined_copy_of_a_display_only_fixture(tmp_path):
    """A display-only fixture whose combined copy other rules changed: while its finding is
    still reported, hazards are recorded (the user fixes them by hand) and benign cases must
    keep their values; once no finding is left, the full criteria apply."""
    original, changed = tmp_path / "torch.py", tmp_path / "combined.py"
    original.write_text("x = 1\n")
    changed.write_text("x = 2\n")
    finding = {"location": {"row": 1}, "message": "m", "fix": {"applicability": "display-only"}}

    def fixture(still_reported):
        f = fixtures.Fixture("NAN503", "one-sided", "torch", original, mode="manual")
        f.combined = fixtures.Combined("default rules", changed, still_reported=still_reported)
        static._compare_combined(f)
        return f

    kept = fixture([finding])
    assert kept.combined.identical is False and kept.combined.mode == "keep" and "+x = 2" in kept.combined.diff
    raw = {"tolerance": 1e-5, "fixed_ran": True, "combined_ran": True, "reference": CLOSED_FORM, "cases": {
        "hazard_x": {"unfixed": _run(math.nan), "fixed": _run(1.0), "combined": _run(math.nan), "reference": _run(1.0)},
        "benign_x": {"unfixed": _run(1.0), "fixed": _run(1.0), "combined": _run(1.0)}}}
    judging.judge_fixture(kept, raw)
    assert kept.ok, [c.problems for c in kept.combined.cases]
    assert kept.combined.cases[0].criterion == "still reported" and kept.combined.cases[0].fixed == "NaN: loss"
    raw["cases"]["benign_x"]["combined"] = _run(1.5)
    broken = fixture([finding])
    judging.judge_fixture(broken, raw)
    assert not broken.ok and broken.failed and any("changes benign values" in p for p in broken.combined.cases[1].problems)
    raw["cases"]["benign_x"]["combined"] = _run(1.0)
    raw["cases"]["hazard_x"]["combined"] = _raising()
    raised = fixture([finding])
    judging.judge_fixture(raised, raw)
    assert not raised.ok and "raised where the unfixed code did not" in raised.combined.cases[0].problems[0]
    raw["cases"]["hazard_x"]["combined"] = _run(math.nan)
    gone = fixture([])  # no finding left: the combined copy must fix the hazard itself
    assert gone.combined.mode == "fix"
    judging.judge_fixture(gone, raw)
    assert not gone.ok and any("still not finite" in p for p in gone.combined.cases[0].problems)
    same = fixtures.Fixture("NAN503", "one-sided", "torch", original, mode="manual")
    same.combined = fixtures.Combined("default rules", original)
    static._compare_combined(same)
    assert same.combined.identical and same.combined.mode == "same" and same.combined.path is None


def test_linter_never_imports_the_harness_or_a_framework():
    code = ("import sys, nanlint.cli, nanlint.lint.engine, nanlint.rules.base; nanlint.rules.base.all_rules(); "
            "bad = [m for m in ('nanlint.harness', 'torch', 'tensorflow', 'jax', 'keras', 'numpy') "
            "if m in sys.modules]; print(bad); sys.exit(bool(bad))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_gpu_request_is_never_silently_cpu(tmp_path):
    """--device gpu: without a GPU the fixture fails; with one, every case ran on it."""
    if launch.available("torch"):
        _missing_or_skip(launch.available("torch"))
    fixture = tmp_path / "NAN101-log-softmax" / "torch.py"
    fixture.parent.mkdir()
    fixture.write_text(GOOD_TORCH.format(hazard="0.0, 200.0, -200.0", bias="")
                       .replace('requires_grad=True)', 'requires_grad=True, device="cuda" if device == "gpu" else "cpu")'))
    out = tmp_path / "report.json"
    rc, stdout, stderr = _harness("--device", "gpu", "--json", str(out), str(tmp_path))
    data = json.loads(out.read_text())
    entry = data["fixtures"][0]
    if data["frameworks"]["torch"].get("gpus"):
        assert rc == 0 and all(c["device"].startswith("cuda") for c in entry["cases"]), stdout
    else:
        assert rc == 1 and "sees no GPU" in _problems(entry), stdout + stderr


def test_cases_measured_on_cpu_fail_a_gpu_run():
    f = fixtures.Fixture("NAN101", "log-softmax", "torch", Path("torch.py"), mode="fix")
    raw = {"device_requested": "gpu", "tolerance": 1e-5, "fixed_ran": True, "reference": CLOSED_FORM, "cases": {
        "hazard_x": {"unfixed": _run(math.nan), "fixed": _run(1.0), "reference": _run(1.0)},
        "benign_x": {"unfixed": _run(1.0), "fixed": _run(1.0)}}}
    judging.judge_fixture(f, raw)
    assert not f.ok and all("ran on the CPU although the GPU was requested" in c.problems[0] for c in f.cases)
    raw["device_requested"] = "cpu"
    cpu = fixtures.Fixture("NAN101", "log-softmax", "torch", Path("torch.py"), mode="fix")
    judging.judge_fixture(cpu, raw)
    assert cpu.ok, [c.problems for c in cpu.cases]
