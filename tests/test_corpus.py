"""The precision regression corpus: every finding nanlint makes on the pinned
framework sources (keras, torch, tensorflow/python, jax) has a hand-reviewed
verdict in ``tests/corpus/verdicts.json``, so precision can only go up.

A new finding fails here until someone reviews it (``python scripts/corpus.py
--update --show``, then set ``verdict``/``reason`` in the file; see
docs/precision.md).  The lint runs once per session, in worker processes.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from conftest import ALLOW_MISSING, missing_framework

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("nanlint_corpus", ROOT / "scripts" / "corpus.py")
corpus = importlib.util.module_from_spec(_spec)
sys.modules["nanlint_corpus"] = corpus
_spec.loader.exec_module(corpus)

HOW = ("review it: run `python scripts/corpus.py --update --show`, read the code shown, and set "
       "\"verdict\" (true-positive / false-positive) and a one-line \"reason\" in tests/corpus/verdicts.json "
       "(docs/precision.md)")


def _packages(recorded: dict) -> list:
    """The pinned corpus packages. One missing, or at another version, fails the corpus tests,
    unless NANLINT_ALLOW_MISSING_FRAMEWORKS=1 (then they skip, saying why)."""
    try:
        packages = corpus.locate()
    except corpus.NotInstalled as exc:
        missing_framework(f"the corpus is not installed: {exc}")
    mismatch = corpus.check_versions(packages, recorded)
    if mismatch:
        missing_framework(mismatch)
    return packages


@pytest.fixture(scope="module")
def run(request):
    recorded = corpus.load_verdicts()
    packages = _packages(recorded)
    findings, stats = corpus.lint_corpus(packages)
    comparison = corpus.compare(findings, recorded)
    table = corpus.precision_table(comparison, stats["default"])
    request.config.pluginmanager.register(_Summary(stats, table), "nanlint-corpus-summary")
    return recorded, comparison, table, stats


class _Summary:
    """Prints the precision table at the end of the pytest run."""

    def __init__(self, stats: dict, table: dict) -> None:
        self.stats, self.table = stats, table

    def pytest_terminal_summary(self, terminalreporter) -> None:
        s = self.stats
        terminalreporter.write_sep("-", "nanlint corpus precision")
        terminalreporter.write_line(f"{s['files']} files, {s['lines']} lines, {s['parsed']} parsed, "
                                    f"{s['seconds']} s wall, {s['cpu_seconds']} s CPU, {s['jobs']} jobs")
        terminalreporter.write_line(corpus.format_table(self.table))


def test_every_finding_is_reviewed(run):
    _, comparison, _, _ = run
    new = [corpus.describe(f) for f in comparison.new]
    unreviewed = [corpus.describe(f) for f, e in comparison.matched if e["verdict"] == "unreviewed"]
    assert not new and not unreviewed, (
        f"{len(new)} new and {len(unreviewed)} unreviewed finding(s) on the corpus; {HOW}:\n"
        + "\n".join(["new: " + d for d in new[:40]] + ["unreviewed: " + d for d in unreviewed[:40]]))


def test_false_positives_only_shrink(run):
    """Every false positive found is one recorded as such; a new finding with the
    text of a recorded false positive (another occurrence of it, or the same one
    after its fingerprint changed) is that false positive spreading, not progress."""
    _, comparison, _, _ = run
    known_false = {corpus.key_of(e)[:4] for _, e in comparison.matched if e["verdict"] == "false-positive"}
    known_false |= {corpus.key_of(e)[:4] for e in comparison.vanished if e["verdict"] == "false-positive"}
    spreading = [corpus.describe(f) for f in comparison.new if corpus.key_of(f)[:4] in known_false]
    assert not spreading, ("a known false positive appears beyond those recorded (fix the rule rather than "
                           "recording it again):\n" + "\n".join(spreading))


def test_recorded_findings_still_found(run):
    """A vanished entry is a recall change (true positive) or a fixed false positive:
    either way the record must follow, so that the precision reported is the real one."""
    _, comparison, _, _ = run
    gone = [f"{e['verdict']}: {corpus.describe(e)}" for e in comparison.vanished]
    assert not gone, (f"{len(gone)} recorded finding(s) are no longer reported. A vanished false positive is "
                      f"progress; a vanished true positive is lost recall -- check it is intended. Then run "
                      f"`python scripts/corpus.py --update` to drop them:\n" + "\n".join(gone[:60]))


def test_verdicts_are_reasoned():
    data = corpus.load_verdicts()  # raises on a bad verdict or a verdict without a reason
    keys = [corpus.key_of(e) for e in data["findings"]]
    assert len(keys) == len(set(keys)), "duplicate fingerprints in tests/corpus/verdicts.json"


# --- the machinery, on a small package of our own (no frameworks needed) ----------------
HAZARD = """\
import torch

def f(x):
    return torch.log(torch.softmax(x, -1))

def g(x):
    return torch.log(torch.softmax(x, -1))
"""


def _lint_tmp(tmp_path, source: str):
    (tmp_path / "pkg").mkdir(exist_ok=True)
    (tmp_path / "pkg" / "m.py").write_text(source)
    pkg = corpus.Package("pkg", "0", tmp_path / "pkg", ("*.py",))
    findings, _ = corpus.lint_corpus([pkg], jobs=1)
    return findings


def test_fingerprints_survive_line_shifts_and_count_repeats(tmp_path):
    before = _lint_tmp(tmp_path, HAZARD)
    after = _lint_tmp(tmp_path, "# a new comment\n\n" + HAZARD.replace("def g(x):\n    return", "def g(x):\n    return  "))
    assert [f["code"] for f in before] == ["NAN101", "NAN101"]
    assert [f["n"] for f in before] == [0, 1]  # the same text twice: occurrence 0 and 1
    assert [corpus.key_of(f) for f in before] == [corpus.key_of(f) for f in after]
    assert [f["line"] for f in before] != [f["line"] for f in after]


def test_compare_reports_new_vanished_and_spreading_false_positives(tmp_path):
    findings = _lint_tmp(tmp_path, HAZARD)
    first = dict(findings[0], verdict="false-positive", reason="x is bounded")
    comparison = corpus.compare(findings, {"findings": [first]})
    assert [corpus.key_of(e) for _, e in comparison.matched] == [corpus.key_of(first)]
    assert [f["n"] for f in comparison.new] == [1]
    # the new one has the text of a recorded false positive: it is that false positive spreading
    assert corpus.key_of(comparison.new[0])[:4] == corpus.key_of(first)[:4]
    gone = corpus.compare(findings[:1], {"findings": [first, dict(findings[1], verdict="true-positive",
                                                                       reason="r")]})
    assert [e["n"] for e in gone.vanished] == [1]
    table = corpus.precision_table(comparison, {"NAN101": True})
    assert table["NAN101"]["false"] == 1 and table["NAN101"]["unreviewed"] == 1


def test_a_verdict_needs_a_reason(tmp_path):
    path = tmp_path / "v.json"
    entry = {"package": "p", "path": "m.py", "code": "NAN101", "expr": "e", "n": 0, "line": 1,
             "verdict": "false-positive", "reason": ""}
    corpus.save_verdicts({"versions": {}, "findings": [entry]}, path)
    with pytest.raises(ValueError, match="needs a reason"):
        corpus.load_verdicts(path)
    corpus.save_verdicts({"versions": {}, "findings": [dict(entry, verdict="maybe", reason="r")]}, path)
    with pytest.raises(ValueError, match="bad verdict"):
        corpus.load_verdicts(path)


def test_a_missing_pinned_package_fails_the_corpus(monkeypatch):
    def missing():
        raise corpus.NotInstalled("jax is not installed (pip install -e '.[frameworks]')")

    monkeypatch.setattr(corpus, "locate", missing)
    monkeypatch.delenv(ALLOW_MISSING, raising=False)
    with pytest.raises((pytest.fail.Exception, pytest.skip.Exception)) as failed:
        _packages({})
    assert failed.type is pytest.fail.Exception and "jax is not installed" in str(failed.value)
    monkeypatch.setenv(ALLOW_MISSING, "1")
    with pytest.raises((pytest.fail.Exception, pytest.skip.Exception)) as skipped:
        _packages({})
    assert skipped.type is pytest.skip.Exception
