"""The harness's own options, end to end (real nanlint, real torch workers): ``nanlint
verify`` passes its arguments through, ``--rules`` and ``--frameworks`` filter (a fixture
they must leave out would fail the run), ``--keep`` keeps nanlint's fixed copy, and
``--timeout`` kills a worker that hangs; and the missing-framework switch of the tests."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ALLOW_MISSING, missing_framework
from nanlint.harness import launch

ROOT = Path(__file__).resolve().parents[1]

FIXTURE = '''import torch
import torch.nn.functional as F

DTYPE = torch.float32
CASES = {
    "hazard_saturated": {"logits": [0.0, 200.0, -200.0]},
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
BROKEN = "raise RuntimeError('this fixture must have been filtered out')\n"


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def _need_torch() -> None:
    why = launch.available("torch")
    if why:
        missing_framework(why)


def test_verify_filters_by_rule_and_framework_and_keeps_the_fixed_copy(tmp_path):
    _need_torch()
    _write(tmp_path / "fx", {"NAN101-good/torch.py": FIXTURE,
                             "NAN101-good/jax.py": BROKEN,  # --frameworks torch leaves it out
                             "NAN109-other/torch.py": BROKEN})  # --rules NAN101 leaves it out
    out, keep = tmp_path / "report.json", tmp_path / "kept"
    proc = subprocess.run([sys.executable, "-m", "nanlint", "verify", "--rules", "nan101", "--frameworks", "torch",
                           "--keep", str(keep), "--timeout", "300", "--json", str(out), str(tmp_path / "fx")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(out.read_text())
    assert [f["id"] for f in data["fixtures"]] == ["NAN101-good/torch.py"] and data["ok"]
    assert set(data["frameworks"]) == {"torch"}
    kept = keep / "NAN101-good" / "torch.py"
    assert kept.is_file() and "F.log_softmax(z, dim=0)" in kept.read_text() and "torch.log(" not in kept.read_text()
    assert sorted(p.relative_to(keep).as_posix() for p in keep.rglob("*.py")) == ["NAN101-good/torch.py"]
    assert "NAN109" not in proc.stdout and "jax" not in proc.stdout.split("\n\n")[0]


def test_verify_rejects_an_unknown_framework(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "nanlint", "verify", "--frameworks", "pytorch", str(ROOT / "fixtures")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "unknown framework(s) pytorch" in proc.stderr, proc.stderr


def test_timeout_kills_a_hanging_worker(tmp_path):
    _need_torch()
    _write(tmp_path / "fx", {"NAN101-hangs/torch.py": FIXTURE.replace("DTYPE = ", "import time\ntime.sleep(120)\nDTYPE = ")})
    out = tmp_path / "report.json"
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "nanlint.harness", "--timeout", "15", "--json", str(out),
                           str(tmp_path / "fx")], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert time.monotonic() - start < 60, "the worker was not killed at --timeout"
    assert proc.returncode == 1, proc.stdout + proc.stderr
    data = json.loads(out.read_text())
    assert any("timed out after 15 s (--timeout)" in p for p in data["problems"]), data["problems"]
    (entry,) = data["fixtures"]
    assert entry["status"] == "FAIL" and any("timed out after 15 s" in e for e in entry["errors"]), entry["errors"]
    assert "PROBLEM: the torch worker exited killed: timed out after 15 s (--timeout)" in proc.stdout


def _outcome(why: str):
    """What missing_framework(why) does: the pytest outcome exception it raises."""
    with pytest.raises((pytest.fail.Exception, pytest.skip.Exception)) as raised:
        missing_framework(why)
    return raised


def test_missing_framework_fails_unless_the_switch_allows_it(monkeypatch):
    monkeypatch.delenv(ALLOW_MISSING, raising=False)
    failed = _outcome("torch is not installed")
    assert failed.type is pytest.fail.Exception, failed
    assert "torch is not installed: install it" in str(failed.value) and f"set {ALLOW_MISSING}=1" in str(failed.value)
    for other in ("0", "true", ""):  # one explicit value, nothing that merely looks like yes
        monkeypatch.setenv(ALLOW_MISSING, other)
        assert _outcome("torch is not installed").type is pytest.fail.Exception, other
    monkeypatch.setenv(ALLOW_MISSING, "1")
    skipped = _outcome("torch is not installed")
    assert skipped.type is pytest.skip.Exception and f"skipped: {ALLOW_MISSING}=1" in str(skipped.value)


def test_ci_never_allows_missing_frameworks():
    assert ALLOW_MISSING not in (ROOT / ".ci" / "run").read_text()


# --------------------------------------------------------------------------- issue 23, item 7

def _verify(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nanlint", "verify", "--timeout", "300", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def test_verifying_nothing_fails_unless_allow_empty_says_so(tmp_path):
    """Every fixture skipped (here: a REQUIRES no installed torch meets; the same holds for
    --allow-missing without the framework) is 0 cases run: not PASSED."""
    _need_torch()
    _write(tmp_path / "fx", {"NAN101-old/torch.py": FIXTURE.replace("DTYPE = ", 'REQUIRES = {"torch": "<1.0"}\nDTYPE = ')})
    proc = _verify(str(tmp_path / "fx"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "1 fixtures, 0 cases: 0 failed, 1 skipped" in proc.stdout
    assert "PASSED" not in proc.stdout and "nothing verified" in proc.stdout, proc.stdout
    assert "--allow-empty" in proc.stdout, proc.stdout
    allowed = _verify("--allow-empty", str(tmp_path / "fx"))
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert "PASSED" not in allowed.stdout and allowed.stdout.rstrip().endswith("nothing verified"), allowed.stdout


def test_verifying_nothing_fails_when_every_framework_is_missing(tmp_path, monkeypatch):
    """The issue's case in-process: no framework installed, --allow-missing: every fixture
    skipped, 0 cases, which is not a pass (``available`` is made to say missing, so the run
    does exactly what it does without the frameworks)."""
    from nanlint.harness import summary, verify

    _write(tmp_path / "fx", {"NAN101-good/torch.py": FIXTURE, "NAN101-good/jax.py": FIXTURE})
    monkeypatch.setattr(launch, "available", lambda fw: f"{fw} is not installed (simulated)")
    result = verify.run(verify.Options(paths=[tmp_path / "fx"], allow_missing=True))
    assert [f.status for f in result.fixtures] == ["skip", "skip"]
    assert not result.ok and "nothing verified" in summary.table(result).splitlines()[-1]
    allowed = verify.run(verify.Options(paths=[tmp_path / "fx"], allow_missing=True, allow_empty=True))
    assert allowed.ok and summary.table(allowed).splitlines()[-1] == "nothing verified"
    assert summary.to_json(allowed)["summary"]["nothing_verified"] is True


MISSING = "nanlint_no_such_package_for_tests"


def test_a_missing_package_a_fixture_imports_is_missing_like_a_framework(tmp_path):
    """A fixture's own import (optax for the NAN505 jax fixture) that is not installed stops
    the run in one line, as a missing framework does; --allow-missing skips that fixture."""
    _need_torch()
    _write(tmp_path / "fx", {"NAN101-needs-more/torch.py": f"import {MISSING}\n" + FIXTURE,
                             "NAN101-good/torch.py": FIXTURE})
    proc = _verify(str(tmp_path / "fx"))
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout + proc.stderr
    assert proc.stderr.startswith(f"nanlint harness: error: {MISSING} is not installed (no module {MISSING}), "
                                  f"needed by NAN101-needs-more/torch.py: python3 -m pip install {MISSING} "), proc.stderr
    assert "--allow-missing" in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    out = tmp_path / "report.json"
    skipped = _verify("--allow-missing", "--json", str(out), str(tmp_path / "fx"))
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    assert "Traceback" not in skipped.stdout + skipped.stderr
    entries = {f["id"]: f for f in json.loads(out.read_text())["fixtures"]}
    assert entries["NAN101-good/torch.py"]["status"] == "ok"
    assert entries["NAN101-needs-more/torch.py"]["status"] == "skip", entries["NAN101-needs-more/torch.py"]
    assert entries["NAN101-needs-more/torch.py"]["skipped"].startswith(f"{MISSING} is not installed")
    assert f"{MISSING} is not installed (no module {MISSING}): 1 fixture(s) NOT verified" in skipped.stdout


def test_an_optional_import_is_not_required(tmp_path):
    """Only what a fixture cannot run without counts: an import under try/except is the fixture's business."""
    _need_torch()
    guarded = f"try:\n    import {MISSING}\nexcept ImportError:\n    pass\n"
    _write(tmp_path / "fx", {"NAN101-good/torch.py": guarded + FIXTURE})
    proc = _verify(str(tmp_path / "fx"))
    assert proc.returncode == 0 and "PASSED" in proc.stdout, proc.stdout + proc.stderr


def test_progress_line_on_a_terminal_only(tmp_path):
    """On a terminal each finished fixture updates one ``\\r`` line; piped (tests, CI), nothing extra."""
    import os
    import pty

    _need_torch()
    _write(tmp_path / "fx", {"NAN101-good/torch.py": FIXTURE, "NAN101-again/torch.py": FIXTURE})
    piped = _verify(str(tmp_path / "fx"))
    assert piped.returncode == 0 and "\r" not in piped.stdout and "verifying" not in piped.stdout, piped.stdout
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "nanlint", "verify", "--timeout", "300", str(tmp_path / "fx")],
                            cwd=ROOT, stdout=follower, stderr=subprocess.PIPE)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert proc.wait(timeout=600) == 0, proc.stderr.read()
    shown = b"".join(chunks).decode()
    assert re.search("\r(?!\n)", shown) and "2/2 fixtures" in shown, shown  # the terminal shows \n as \r\n
    assert "PASSED" in shown and shown.index("2/2 fixtures") < shown.index("PASSED"), shown
