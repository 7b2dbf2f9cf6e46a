"""Ctrl-C stops a run at once, at any -j, and no file is written after it (issue 23).

Real processes and a real SIGINT: a parallel run over a tree that takes far longer than
the bounds here, interrupted once it is under way."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HAZARD = "def f{i}(x):\n    return torch.log(torch.softmax(x, -1))\n\n"
FILES, FUNCTIONS = 24, 300  # ~2-4 s a file: uninterrupted, the run takes well over a minute on 2 cores

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the parallel run forks (Linux only)")


def _tree(tmp_path: Path) -> dict[Path, bytes]:
    src = ("import torch\n\n" + "".join(HAZARD.format(i=i) for i in range(FUNCTIONS))).encode()
    tree = tmp_path / "big"
    tree.mkdir()
    files = {}
    for j in range(FILES):
        p = tree / f"m{j:02d}.py"
        p.write_bytes(src)
        files[p] = src
    return files


def _start(tmp_path: Path, *args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "nanlint", "--isolated", "--no-cache", "-j", "2", *args, "big"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)  # its own group: killed whole if it does not stop


def _stop(proc: subprocess.Popen) -> tuple[float, str]:
    """SIGINT; the seconds until it exits (killed after 10) and its stderr."""
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # workers too: they hold the pipes
        proc.communicate()
        pytest.fail("still running 10 s after SIGINT")
    return time.monotonic() - sent, err.decode()


def test_interrupt_stops_a_parallel_lint(tmp_path):
    _tree(tmp_path)
    proc = _start(tmp_path)
    time.sleep(2)  # reading done, the workers are linting
    assert proc.poll() is None, "the run ended before the interrupt: make the tree bigger"
    elapsed, err = _stop(proc)
    assert proc.returncode == 130, err
    assert elapsed < 5, f"{elapsed:.1f} s to exit after SIGINT"
    assert err.strip().splitlines()[-1] == "nanlint: interrupted"
    assert "Traceback" not in err


def test_interrupt_during_fix_writes_nothing_after_it(tmp_path):
    files = _tree(tmp_path)
    proc = _start(tmp_path, "--fix")
    deadline = time.monotonic() + 60
    while all(p.read_bytes() == src for p, src in files.items()):  # until the first file is fixed
        assert proc.poll() is None and time.monotonic() < deadline, "no file fixed"
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    at_signal = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in files}
    elapsed, err = _stop(proc)
    assert proc.returncode == 130, err
    assert elapsed < 5, f"{elapsed:.1f} s to exit after SIGINT"
    assert "Traceback" not in err
    lines = err.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("nanlint: interrupted"))
    reported = {tmp_path / line.strip() for line in lines[head + 1:]}
    assert reported and reported <= set(files), err
    time.sleep(1)  # nothing left running goes on writing
    after = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in files}
    changed_after_signal = {p for p in files if after[p] != at_signal[p]}
    assert changed_after_signal <= reported, f"written after SIGINT, not reported: {changed_after_signal - reported}"
    changed = {p for p in files if after[p][1] != files[p]}
    assert changed == reported, err  # every file it says it fixed is fixed, and no other
    assert len(changed) < FILES
    assert not [n for n in os.listdir(tmp_path / "big") if n.endswith(".nanlint-tmp")]
