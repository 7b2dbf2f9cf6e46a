"""``nanlint verify --plot DIR``: the sweep from a benign case to a hazard case, drawn from the
harness's own numbers (real nanlint, a real torch worker, real matplotlib), and the sweep's
pairing and paths on their own."""

from __future__ import annotations

import json
import math
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import missing_framework
from nanlint.harness import cli, launch, plot, sweep

ROOT = Path(__file__).resolve().parents[1]

SWEPT = '''import torch
import torch.nn.functional as F

DTYPE = torch.float32
SWEEP = {"param": "logits", "index": 1, "label": "logit z[1]"}
CASES = {
    "hazard_saturated": {"logits": [0.0, 200.0, -200.0]},
    "hazard_other_shape": {"logits": [0.0, 200.0]},
    "benign_small": {"logits": [0.5, -1.0, 2.0]},
}


def loss(z):
    return -torch.log(F.softmax(z, dim=0))[0]


def compute(case, device):
    z = torch.tensor(case["logits"], dtype=DTYPE, requires_grad=True)
    out = loss(z)
    out.backward()
    return {"loss": out, "grad": z.grad}
'''


def _need() -> None:
    why = launch.available("torch") or plot.missing()
    if why:
        missing_framework(why)


def _verify(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nanlint", "verify", "--frameworks", "torch", "--timeout", "300",
                           *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def nan101(tmp_path_factory):
    """One real run of NAN101's torch fixtures with --plot (and --json: the same run's report)."""
    _need()
    out = tmp_path_factory.mktemp("plot")
    proc = _verify("--rules", "NAN101", "--plot", str(out / "plots"), "--json", str(out / "report.json"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((out / "report.json").read_text())
    return out / "plots", {f["id"]: f for f in report["fixtures"]}


def _case(report_fixture: dict, name: str) -> dict:
    [case] = [c for c in report_fixture["cases"] if c["case"] == name]
    return case["outputs"]


def test_the_plotted_numbers_are_the_harness_run_and_show_the_hazard(nan101):
    plots, report = nan101
    data = json.loads((plots / "NAN101-log-softmax" / "torch_complement.json").read_text())
    assert data["verdict"] == "PASS" and data["reference"] == "float64"
    [path] = [p for p in data["paths"] if p["hazard"] == "hazard_saturated_class"]
    assert path["benign"] == "benign_moderate_logits" and len(path["t"]) == sweep.POINTS
    assert path["t"][0] == 0 and path["t"][-1] == 1
    loss = path["outputs"]["loss"]
    assert loss["summary"] == "value" and loss["dtype"] == {"unfixed": "float32", "fixed": "float32",
                                                            "reference": "float64"}
    # t = 1 is the hazard case: unfixed is non-finite there, fixed equals the float64 reference
    assert not math.isfinite(plot.decode(loss["unfixed"][-1])) and sweep.POINTS - 1 in loss["nonfinite"]["unfixed"]
    fixed, ref = plot.decode(loss["fixed"][-1]), plot.decode(loss["reference"][-1])
    tol = data["reference_tolerance"]
    assert math.isfinite(ref) and abs(fixed - ref) <= tol + tol * abs(ref), (fixed, ref)
    assert loss["nonfinite"]["fixed"] == [] and loss["nonfinite"]["unfixed"][0] > 0  # finite at the benign end
    # ... and the plotted endpoints are the very numbers the harness judged in the same run
    hazard = _case(report["NAN101-log-softmax/torch_complement.py"], "hazard_saturated_class")
    benign = _case(report["NAN101-log-softmax/torch_complement.py"], "benign_moderate_logits")
    assert loss["unfixed"][-1] == hazard["unfixed"]["loss"]["values"][0]
    assert loss["fixed"][-1] == hazard["fixed"]["loss"]["values"][0]
    assert loss["reference"][-1] == hazard["reference"]["loss"]["values"][0]
    assert loss["unfixed"][0] == benign["unfixed"]["loss"]["values"][0]
    grad = path["outputs"]["dloss/dlogits"]
    assert grad["summary"] == "max |x|" and grad["elements"] == 6
    assert grad["fixed"][-1] == max(abs(v) for v in hazard["fixed"]["dloss/dlogits"]["values"])


def test_the_png_is_a_real_picture(nan101):
    plots, _ = nan101
    png = plots / "NAN101-log-softmax" / "torch_complement.png"
    head = png.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR"
    width, height = struct.unpack(">II", head[16:24])
    assert width >= 800 and height >= 300, (width, height)
    assert png.stat().st_size > 20_000  # curves, markers, text: not a blank canvas


def test_the_index_shows_every_fixture_with_its_verdict_and_why_none_was_drawn(nan101):
    plots, report = nan101
    page = (plots / "index.html").read_text()
    assert set(report) == {"NAN101-log-softmax/torch.py", "NAN101-log-softmax/torch_complement.py"}
    for fid in report:
        assert fid in page
    assert page.count('class="badge PASS"') >= 2 and "FAIL</span>" not in page
    assert 'src="NAN101-log-softmax/torch_complement.png"' in page
    # torch.py's benign case has another shape than its hazards: no picture, and the page says why
    assert not (plots / "NAN101-log-softmax" / "torch.png").exists()
    assert "No sweep drawn for <b>hazard_saturated_logits</b>" in page and "another shape" in page
    data = json.loads((plots / "NAN101-log-softmax" / "torch.json").read_text())
    assert data["paths"] == [] and set(data["no_sweep"]) == {"hazard_saturated_logits", "hazard_confidently_wrong"}


def test_sweep_declares_its_axis(tmp_path):
    _need()
    (tmp_path / "fx" / "NAN101-swept").mkdir(parents=True)
    (tmp_path / "fx" / "NAN101-swept" / "torch.py").write_text(SWEPT)
    proc = _verify("--plot", str(tmp_path / "plots"), str(tmp_path / "fx"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads((tmp_path / "plots" / "NAN101-swept" / "torch.json").read_text())
    [path] = data["paths"]
    assert path["x_label"] == "logit z[1]" and path["x"][0] == -1.0 and path["x"][-1] == 200.0
    assert "another shape" in data["no_sweep"]["hazard_other_shape"]
    assert (tmp_path / "plots" / "NAN101-swept" / "torch.png").stat().st_size > 20_000


def test_plot_without_matplotlib_stops_before_running(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(plot.importlib.util, "find_spec", lambda name: None)
    assert cli.main(["--plot", str(tmp_path / "p"), str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "--plot needs matplotlib" in err and "nanlint[plot]" in err
    assert not (tmp_path / "p").exists()


def test_pairing_needs_the_same_structure():
    cases = {"hazard_a": {"z": [0.0, 200.0], "y": [1.0, 0.0]},
             "hazard_int": {"z": [0.0, 1.0], "k": 3},
             "benign_wide": {"z": [0.0, 1.0, 2.0], "y": [1.0, 0.0, 0.0]},
             "benign_b": {"z": [0.5, -1.0], "y": [1.0, 0.0]},
             "benign_int": {"z": [0.5, -1.0], "k": 2}}
    paths, none = sweep.plan(cases)
    assert paths == [{"hazard": "hazard_a", "benign": "benign_b"}]  # the first benign case that fits
    assert "'k' is an integer that differs" in none["hazard_int"] and "other keys (k, y)" in none["hazard_int"]
    assert sweep.plan(cases, {"from": "benign_wide"})[1]["hazard_a"].startswith("no benign case")
    assert "unknown keys" in sweep.plan(cases, {"axis": "z"})[1]["hazard_a"]
    assert sweep.mismatch({"flag": True}, {"flag": False}) and sweep.mismatch({"s": "a"}, {"s": "b"})
    assert sweep.mismatch({"s": "a", "x": 1.0}, {"s": "a", "x": 9.0}) is None


def test_the_path_ends_exactly_at_both_cases():
    benign, hazard = {"z": [[0.1, -0.7]], "k": 3, "on": True}, {"z": [[0.3, 200.0]], "k": 3, "on": True}
    assert sweep.between(benign, hazard, 0) == benign and sweep.between(benign, hazard, 1) == hazard
    mid = sweep.between(benign, hazard, 0.5)
    assert mid["z"] == [[0.2, 99.65]] and mid["k"] == 3 and mid["on"] is True
