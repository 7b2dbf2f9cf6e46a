"""Numbers in docs come from a script that writes them with the commit it measured, or the
doc says which commit and command produced them (the house rule; a mutation audit found
docs whose numbers were hand-copied from older runs)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMIT = re.compile(r"commit `([0-9a-f]{7,40})`")


def _bench():
    spec = importlib.util.spec_from_file_location("nanlint_bench_run", ROOT / "bench" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _head() -> str | None:
    proc = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else None


def test_generated_docs_say_which_commit_and_command_made_them():
    robustness = (ROOT / "docs" / "robustness.md").read_text()
    assert COMMIT.search(robustness) and "Produced by `python scripts/robustness.py" in robustness
    results = (ROOT / "bench" / "RESULTS.md").read_text().splitlines()
    assert results[0] == "# nanlint benchmark" and results[2].startswith("Measured at commit `"), results[:3]
    assert "bench/run.py" in results[2]
    readme = (ROOT / "bench" / "README.md").read_text()
    assert "~85% of the files must be parsed" not in readme  # the stale claim (85 of 610 are parsed)
    assert "## Analysis of the run in RESULTS.md (commit `" in readme


def test_bench_writes_its_provenance(tmp_path):
    bench = _bench()
    line = bench.provenance(["--runs", "1"])
    head = _head()
    assert line.startswith("Measured at commit `") and line.endswith("with `python bench/run.py --runs 1`.")
    if head:
        assert f"commit `{head}`" in line
    (tmp_path / "plain.py").write_text("import os\n\ndef f(x):\n    return x + 1\n")
    (tmp_path / "hazard.py").write_text("import torch\n\ndef f(z):\n    return torch.log(torch.softmax(z, dim=1))\n")
    assert bench.parsed_count(tmp_path) == (1, 2)


def test_harness_report_records_its_commit():
    from nanlint.harness import verify

    commit = verify._commit()
    head = _head()
    if head:
        assert commit is not None and commit.split("+")[0] == head
    else:
        assert commit is None
