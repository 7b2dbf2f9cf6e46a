"""The precision regression corpora: every finding nanlint makes on the pinned
framework sources (keras, torch, tensorflow/python, jax, optax) and on the training
corpus (model zoos, pipelines, RL agents, probabilistic models: pinned PyPI wheels,
fetched, never installed) has a hand-reviewed verdict in ``tests/corpus/verdicts.json``
and ``tests/corpus/training-verdicts.json``, so precision can only go up; so has every
finding of the default rules and of the opt-in rules being turned on on the scripts
corpus (training code: scripts, agents, paper implementations from pinned PyPI sdists),
in ``tests/corpus/scripts-verdicts.json``.

A new finding fails here until someone reviews it (``python scripts/corpus.py
[--corpus training] --update --show``, then set ``verdict``/``reason`` in the file; see
docs/precision.md).  A recorded true positive that is no longer found fails (lost
recall); a recorded false positive that is no longer found is stale: reported, not a
failure.  Each corpus is linted once per session, in worker processes.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import ALLOW_MISSING, missing_framework

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("nanlint_corpus", ROOT / "scripts" / "corpus.py")
corpus = importlib.util.module_from_spec(_spec)
sys.modules["nanlint_corpus"] = corpus
_spec.loader.exec_module(corpus)
sources = sys.modules["corpus_sources"]
_snap_spec = importlib.util.spec_from_file_location("nanlint_snapshot_corpus", ROOT / "scripts" / "snapshot.py")
snapshot = importlib.util.module_from_spec(_snap_spec)
_snap_spec.loader.exec_module(snapshot)

HOW = ("review it: run `python scripts/corpus.py --corpus {name} --update --show`, read the code shown, and set "
       "\"verdict\" (true-positive / false-positive), a one-line \"reason\" (and for a false positive of the "
       "training corpus a \"class\" tag) in {file} (docs/precision.md)")


def _get(which):
    """The corpus's packages: located, or (a fetched corpus) fetched from PyPI when missing."""
    try:
        return which.locate()
    except corpus.NotInstalled:
        if which.fetch is None:
            raise
    return which.fetch(log=lambda msg: None)


def _packages(which, recorded: dict) -> list:
    """The corpus's pinned packages. One missing (or not fetchable), or at another version,
    fails the corpus tests, unless NANLINT_ALLOW_MISSING_FRAMEWORKS=1 (then they skip, saying why)."""
    try:
        packages = _get(which)
    except corpus.NotInstalled as exc:
        missing_framework(f"the {which.name} corpus is not available: {exc}")
    mismatch = corpus.check_versions(packages, recorded, which.how_to_get)
    if mismatch:
        missing_framework(mismatch)
    return packages


@pytest.fixture(scope="module", params=sorted(corpus.CORPORA))
def run(request):
    which = corpus.CORPORA[request.param]
    recorded = corpus.load_verdicts(which.verdicts)
    packages = _packages(which, recorded)
    findings, stats = corpus.lint_corpus(packages)
    comparison = corpus.compare(findings, recorded)
    table = corpus.precision_table(comparison, stats["default"])
    request.config.pluginmanager.register(_Summary(which.name, stats, table, comparison),
                                          f"nanlint-corpus-summary-{which.name}")
    _FINDINGS[which.name] = findings
    return which, corpus.gated(comparison, stats["default"], which.review_opt_in, which.reviewed_opt_in), table, stats


_FINDINGS: dict = {}  # corpus name -> its findings, for the snapshot test


class _Summary:
    """Prints the precision table (and the stale entries) at the end of the pytest run."""

    def __init__(self, name: str, stats: dict, table: dict, comparison) -> None:
        self.name, self.stats, self.table, self.comparison = name, stats, table, comparison

    def pytest_terminal_summary(self, terminalreporter) -> None:
        s = self.stats
        terminalreporter.write_sep("-", f"nanlint corpus precision: {self.name}")
        terminalreporter.write_line(f"{s['files']} files, {s['lines']} lines, {s['parsed']} parsed, "
                                    f"{s['seconds']} s wall, {s['cpu_seconds']} s CPU, {s['jobs']} jobs")
        terminalreporter.write_line(corpus.format_table(self.table))
        stale = self.comparison.stale
        if stale:
            terminalreporter.write_line(f"{len(stale)} stale entr{'y' if len(stale) == 1 else 'ies'} (recorded, no longer "
                                        f"found; `python scripts/corpus.py --corpus {self.name} --update` drops them):")
            for e in stale[:40]:
                terminalreporter.write_line(f"  stale ({e['verdict']}): {corpus.describe(e)}")


def test_every_finding_is_reviewed(run):
    which, comparison, _, _ = run
    new = [corpus.describe(f) for f in comparison.new]
    unreviewed = [corpus.describe(f) for f, e in comparison.matched if e["verdict"] == "unreviewed"]
    assert not new and not unreviewed, (
        f"{len(new)} new and {len(unreviewed)} unreviewed finding(s) on the {which.name} corpus; "
        f"{HOW.format(name=which.name, file=which.verdicts.relative_to(ROOT))}:\n"
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


def test_recorded_true_positives_still_found(run):
    """A vanished true positive is lost recall: it fails until a person confirms it is
    intended (and runs --update).  A vanished false positive is progress: it is only
    reported as stale in the summary, and the table counts what is found now."""
    which, comparison, _, _ = run
    lost = [corpus.describe(e) for e in comparison.lost]
    assert not lost, (f"{len(lost)} recorded true positive(s) on the {which.name} corpus are no longer reported "
                      f"(lost recall; if intended, run `python scripts/corpus.py --corpus {which.name} --update` "
                      f"to drop them):\n" + "\n".join(lost[:60]))


def test_findings_match_the_pinned_snapshot(run):
    """The behaviour oracle (scripts/snapshot.py): every finding on the corpus, with its
    line and message, is the one pinned in tests/snapshot/corpus-NAME.json. A change of
    behaviour regenerates it in its own commit (NANLINT_UPDATE_SNAPSHOT=1 pytest
    tests/test_corpus.py) and names the reviewed differences."""
    which = run[0]
    got = snapshot.corpus_entries(_FINDINGS[which.name])
    path = snapshot.corpus_path(which.name)
    if os.environ.get("NANLINT_UPDATE_SNAPSHOT") == "1":
        snapshot.save(got, path)
    expected = json.loads(path.read_text(encoding="utf-8"))
    missing = [e for e in expected if e not in got]
    extra = [e for e in got if e not in expected]
    assert not missing and not extra, (f"the {which.name} corpus's findings changed against {path.name}:\n"
                                       + "\n".join([f"gone: {e}" for e in missing[:20]]
                                                    + [f"new: {e}" for e in extra[:20]]))


@pytest.mark.parametrize("name", sorted(corpus.CORPORA))
def test_verdicts_are_reasoned(name):
    which = corpus.CORPORA[name]
    data = corpus.load_verdicts(which.verdicts)  # raises on a bad verdict, a verdict without a reason, a bad class
    keys = [corpus.key_of(e) for e in data["findings"]]
    assert len(keys) == len(set(keys)), f"duplicate fingerprints in {which.verdicts}"


def test_training_false_positives_are_classed_and_versions_pinned():
    """Every reviewed false positive of the training corpus names its class (the docs'
    table counts them), and the reviewed versions are the pinned wheels."""
    which = corpus.CORPORA["training"]
    data = corpus.load_verdicts(which.verdicts)
    unclassed = [corpus.describe(e) for e in data["findings"] if e["verdict"] == "false-positive" and not e.get("class")]
    assert not unclassed, "false positives without a class:\n" + "\n".join(unclassed[:20])
    assert data["versions"] == {w.name: w.version for w in sources.TRAINING}


def test_scripts_corpus_is_training_code_with_a_frozen_held_out_third():
    """The scripts corpus: >= 16 projects across the frameworks, the held-out flags are the
    rule of corpus_sources.held_out_names (fixed before any finding was reviewed), every
    reviewed false positive names its class, every finding of a gradient rule says whether a
    gradient reaches it, and the reviewed versions are the pinned sdists."""
    which = corpus.CORPORA["scripts"]
    names = [s.name for s in sources.SCRIPTS]
    assert len(names) >= 16 and len(set(names)) == len(names)
    assert {s.name for s in sources.SCRIPTS if s.held_out} == sources.held_out_names(names) == which.held_out
    assert len(which.held_out) == len(names) // 3 + (len(names) % 3 > 0)
    frameworks = [s.framework for s in sources.SCRIPTS]
    assert sum("tf" in f for f in frameworks) >= 4
    assert sum("pytorch" in f for f in frameworks) >= 4
    assert sum("jax" in f for f in frameworks) >= 3
    library = {w.dist for w in sources.TRAINING} | {f[1] for f in sources.FRAMEWORKS}
    assert not library & set(names), "a project of the library corpora is not training code"
    data = corpus.load_verdicts(which.verdicts)
    unclassed = [corpus.describe(e) for e in data["findings"] if e["verdict"] == "false-positive" and not e.get("class")]
    assert not unclassed, "false positives without a class:\n" + "\n".join(unclassed[:20])
    untagged = [corpus.describe(e) for e in data["findings"]
                if e["code"].startswith("NAN2") and e["verdict"] != "unreviewed" and "gradient" not in e]
    assert not untagged, "gradient-rule findings without a gradient tag:\n" + "\n".join(untagged[:20])
    assert data["versions"] == {s.name: s.version for s in sources.SCRIPTS}


def test_held_out_precision_is_reported_apart(tmp_path):
    findings = _lint_tmp(tmp_path, HAZARD)
    other = dict(findings[1], package="other")
    recorded = {"findings": [dict(findings[0], verdict="true-positive", reason="r"),
                             dict(other, verdict="false-positive", reason="r")]}
    comparison = corpus.compare([findings[0], other], recorded)
    parts = corpus.split(comparison, frozenset({"other"}))
    assert [f["package"] for f, _ in parts["tuning"].matched] == ["pkg"]
    assert [f["package"] for f, _ in parts["held-out"].matched] == ["other"]
    report = corpus.split_report(comparison, {"NAN101": True}, frozenset({"other"}))
    assert "held out: other" in report and "1/0/0 (1.00)" in report and "0/1/0 (0.00)" in report
    assert "| NAN101 | yes | 1/0/0 (1.00) | 0/1/0 (0.00) |" in corpus.split_report(
        comparison, {"NAN101": True}, frozenset({"other"}), markdown=True)


def test_a_gradient_tag_is_one_of_three(tmp_path):
    path = tmp_path / "v.json"
    entry = {"package": "p", "path": "m.py", "code": "NAN201", "expr": "e", "n": 0, "line": 1,
             "verdict": "false-positive", "class": "no-gradient", "gradient": "none", "reason": "r"}
    corpus.save_verdicts({"versions": {}, "findings": [entry]}, path)
    assert corpus.load_verdicts(path)["findings"][0]["gradient"] == "none"
    corpus.save_verdicts({"versions": {}, "findings": [dict(entry, gradient="maybe")]}, path)
    with pytest.raises(ValueError, match="gradient is one of"):
        corpus.load_verdicts(path)


def test_opt_in_rules_under_review_are_gated_on_the_scripts_corpus(tmp_path):
    findings = _lint_tmp(tmp_path, HAZARD)
    comparison = corpus.compare([dict(findings[0], code="NAN109"), dict(findings[1], code="NAN204")],
                                {"findings": []})
    which = corpus.CORPORA["scripts"]
    judged = corpus.gated(comparison, {"NAN109": False, "NAN204": False}, which.review_opt_in,
                          which.reviewed_opt_in)
    assert [f["code"] for f in judged.unreviewed] == ["NAN109"]


def _sdist(tmp_path: Path, evil: bool = False) -> tuple[Path, object]:
    """An sdist of our own, already in the cache's download folder (no network needed)."""
    import io
    import tarfile

    cache = tmp_path / "cache"
    (cache / "sdists").mkdir(parents=True)
    path = cache / "sdists" / "zoo-1.0.tar.gz"
    files = {"zoo-1.0/setup.py": "from setuptools import setup\nsetup(name='zoo', version='1.0', packages=[])\n",
             "zoo-1.0/PKG-INFO": "Metadata-Version: 2.1\nName: zoo\nVersion: 1.0\n",
             "zoo-1.0/zoo/__init__.py": "", "zoo-1.0/zoo/train.py": HAZARD, "zoo-1.0/zoo/train_test.py": HAZARD,
             "zoo-1.0/zoo/README.md": "not python", **({"zoo-1.0/../evil.py": "outside"} if evil else {})}
    with tarfile.open(path, "w:gz") as t:
        for name, text in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            t.addfile(info, io.BytesIO(text.encode()))
    sdist = sources.Sdist("zoo", "1.0", path.name, sources._sha256(path), "zoo", (".",), ("*_test.py",), "pytorch")
    return cache, sdist


def test_fetch_untars_the_pinned_sdist_sources_and_locates_them(tmp_path):
    cache, sdist = _sdist(tmp_path, evil=True)  # a member outside the top folder is not unpacked
    with pytest.raises(corpus.NotInstalled, match="not fetched"):
        sources.locate_scripts(cache, (sdist,))
    [pkg] = sources.fetch_scripts(cache, (sdist,), log=lambda m: None)
    assert (pkg.name, pkg.version) == ("zoo", "1.0")
    assert [p.relative_to(pkg.root).as_posix() for p in pkg.files()] == ["__init__.py", "train.py"]
    unpacked = sorted(p.relative_to(pkg.root.parent).as_posix() for p in pkg.root.parent.rglob("*") if p.is_file())
    assert unpacked == [".complete", "setup.py", "zoo/__init__.py", "zoo/train.py", "zoo/train_test.py"]
    assert not (tmp_path / "evil.py").exists() and not (cache / "src" / "evil.py").exists()
    findings, stats = corpus.lint_corpus([pkg], jobs=1)
    assert [f["code"] for f in findings] == ["NAN101", "NAN101"] and stats["files"] == 2
    (pkg.root.parent / ".complete").unlink()  # an interrupted unpack is redone, not trusted
    (pkg.root / "train.py").write_text("tampered")
    [again] = sources.fetch_scripts(cache, (sdist,), log=lambda m: None)
    assert (again.root / "train.py").read_text() == HAZARD


def test_fetch_downloads_the_sdist_with_pip_and_checks_the_pinned_hash(tmp_path, monkeypatch):
    """The download path, run for real by pip but offline: a local --find-links index stands
    in for PyPI (without build isolation, so pip prepares the metadata with the setuptools
    installed here instead of fetching one)."""
    cache, sdist = _sdist(tmp_path)
    index = tmp_path / "index"
    index.mkdir()
    (cache / "sdists" / sdist.filename).rename(index / sdist.filename)
    monkeypatch.setattr(sources, "SDIST_INDEX", ("--no-index", "--find-links", str(index), "--no-build-isolation"))
    wrong = sources.Sdist(**{**sdist.__dict__, "sha256": "0" * 64})
    with pytest.raises(corpus.NotInstalled, match="pinned 0000"):
        sources.fetch_scripts(cache, (wrong,), log=lambda m: None)
    assert not (cache / "src" / "sdist-zoo-1.0").exists()  # nothing unpacked from an archive that is not the pinned one
    [pkg] = sources.fetch_scripts(cache, (sdist,), log=lambda m: None)
    assert [p.name for p in pkg.files()] == ["__init__.py", "train.py"]
    missing = sources.Sdist(**{**sdist.__dict__, "version": "2.0", "filename": "zoo-2.0.tar.gz"})
    with pytest.raises(corpus.NotInstalled, match="pip download zoo==2.0 failed"):
        sources.fetch_scripts(cache, (missing,), log=lambda m: None)


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


def test_vanished_true_positives_are_lost_false_positives_stale(tmp_path):
    findings = _lint_tmp(tmp_path, HAZARD)
    recorded = {"findings": [dict(findings[0], verdict="true-positive", reason="r"),
                             dict(findings[1], verdict="false-positive", reason="r", **{"class": "c"})]}
    nothing_found = corpus.compare([], recorded)
    assert [e["verdict"] for e in nothing_found.lost] == ["true-positive"]
    assert [e["verdict"] for e in nothing_found.stale] == ["false-positive"]
    only_true_found = corpus.compare(findings[:1], recorded)
    assert not only_true_found.lost and len(only_true_found.stale) == 1


def test_opt_in_findings_are_gated_only_where_reviewed(tmp_path):
    findings = _lint_tmp(tmp_path, HAZARD)
    opt_in = dict(findings[0], code="NAN109")
    comparison = corpus.compare([opt_in, findings[1]], {"findings": []})
    default = {"NAN101": True, "NAN109": False}
    assert len(corpus.gated(comparison, default, review_opt_in=True).unreviewed) == 2
    assert [f["code"] for f in corpus.gated(comparison, default, review_opt_in=False).unreviewed] == ["NAN101"]


def test_a_class_is_a_short_tag(tmp_path):
    path = tmp_path / "v.json"
    entry = {"package": "p", "path": "m.py", "code": "NAN101", "expr": "e", "n": 0, "line": 1,
             "verdict": "false-positive", "class": "positive-constant-name", "reason": "r"}
    corpus.save_verdicts({"versions": {}, "findings": [entry]}, path)
    assert corpus.false_positive_classes(corpus.load_verdicts(path)["findings"]) == {"positive-constant-name": 1}
    corpus.save_verdicts({"versions": {}, "findings": [dict(entry, **{"class": "Positive constant"})]}, path)
    with pytest.raises(ValueError, match="kebab-case"):
        corpus.load_verdicts(path)


def _wheel(tmp_path: Path) -> tuple[Path, object]:
    """A wheel of our own, already in the cache's download folder (no network needed)."""
    cache = tmp_path / "cache"
    (cache / "wheels").mkdir(parents=True)
    path = cache / "wheels" / "zoo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("zoo/__init__.py", "")
        z.writestr("zoo/models/net.py", HAZARD)
        z.writestr("zoo/models/net_test.py", HAZARD)
        z.writestr("zoo/tools/cli.py", "print(1)\n")
        z.writestr("zoo/data.bin", "not python")
        z.writestr("zoo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: zoo\nVersion: 1.0\n")
        z.writestr("zoo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                              "Tag: py3-none-any\n")
        z.writestr("zoo-1.0.dist-info/RECORD", "")
    wheel = sources.Wheel("zoo", "zoo", "1.0", path.name, sources._sha256(path), "zoo", ("models",), ("*_test.py",))
    return cache, wheel


def test_fetch_unpacks_the_pinned_wheel_sources_and_locates_them(tmp_path):
    cache, wheel = _wheel(tmp_path)
    with pytest.raises(corpus.NotInstalled, match="not fetched"):
        sources.locate_training(cache, (wheel,))
    [pkg] = sources.fetch_training(cache, (wheel,), log=lambda m: None)
    assert (pkg.name, pkg.version) == ("zoo", "1.0")
    assert [p.relative_to(pkg.root).as_posix() for p in pkg.files()] == ["models/net.py"]
    assert sorted(p.relative_to(pkg.root).as_posix() for p in pkg.files(everything=True)) == [
        "__init__.py", "models/net.py", "models/net_test.py", "tools/cli.py"]
    assert not (pkg.root / "data.bin").exists()  # only the Python sources are unpacked
    findings, stats = corpus.lint_corpus([pkg], jobs=1)
    assert [f["code"] for f in findings] == ["NAN101", "NAN101"] and stats["files"] == 1
    # an interrupted unpack (no completion marker) is redone, not trusted
    (pkg.root.parent / ".complete").unlink()
    (pkg.root / "models" / "net.py").write_text("tampered")
    [again] = sources.fetch_training(cache, (wheel,), log=lambda m: None)
    assert (again.root / "models" / "net.py").read_text() == HAZARD


def test_fetch_downloads_with_pip_and_checks_the_pinned_hash(tmp_path, monkeypatch):
    """The download path, run for real by pip but offline: a local --find-links index
    stands in for PyPI."""
    cache, wheel = _wheel(tmp_path)
    index = tmp_path / "index"
    index.mkdir()
    (cache / "wheels" / wheel.filename).rename(index / wheel.filename)
    monkeypatch.setattr(sources, "PLATFORM", ("--no-index", "--find-links", str(index)))
    wrong = sources.Wheel(**{**wheel.__dict__, "sha256": "0" * 64})
    with pytest.raises(corpus.NotInstalled, match="pinned 0000"):
        sources.fetch_training(cache, (wrong,), log=lambda m: None)
    assert not (cache / "src" / "zoo-1.0").exists()  # nothing unpacked from a wheel that is not the pinned one
    [pkg] = sources.fetch_training(cache, (wheel,), log=lambda m: None)  # the download is the pinned wheel: kept
    assert [p.name for p in pkg.files()] == ["net.py"]
    missing = sources.Wheel(**{**wheel.__dict__, "version": "2.0", "filename": "zoo-2.0-py3-none-any.whl"})
    with pytest.raises(corpus.NotInstalled, match="pip download zoo==2.0 failed"):
        sources.fetch_training(cache, (missing,), log=lambda m: None)


def test_a_missing_pinned_package_fails_the_corpus(monkeypatch):
    import dataclasses

    def missing():
        raise corpus.NotInstalled("jax is not installed (pip install -e '.[frameworks]')")

    which = dataclasses.replace(corpus.CORPORA["frameworks"], locate=missing)
    monkeypatch.delenv(ALLOW_MISSING, raising=False)
    with pytest.raises((pytest.fail.Exception, pytest.skip.Exception)) as failed:
        _packages(which, {})
    assert failed.type is pytest.fail.Exception and "jax is not installed" in str(failed.value)
    monkeypatch.setenv(ALLOW_MISSING, "1")
    with pytest.raises((pytest.fail.Exception, pytest.skip.Exception)) as skipped:
        _packages(which, {})
    assert skipped.type is pytest.skip.Exception


def test_the_grown_corpus_table_adds_both_corpora(tmp_path):
    def entry(code, verdict, n):
        return {"package": "p", "path": "m.py", "code": code, "expr": "e", "n": n, "line": 1,
                "verdict": verdict, "reason": "r", **({"class": "c"} if verdict == "false-positive" else {})}

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    corpus.save_verdicts({"versions": {}, "findings": [entry("NAN106", "true-positive", 0),
                                                       entry("NAN106", "false-positive", 1)]}, a)
    corpus.save_verdicts({"versions": {}, "findings": [entry("NAN106", "true-positive", 0),
                                                       entry("NAN201", "unreviewed", 0)]}, b)
    table = corpus.recorded_table([a, b])
    assert table["NAN106"] == {"findings": 3, "true": 2, "false": 1, "unreviewed": 0, "default": True,
                               "precision": 0.667}
    assert table["NAN201"]["unreviewed"] == 1 and table["NAN201"]["precision"] is None
    assert table["NAN101"]["findings"] == 0  # every rule has a row
