"""A check whose report shows no edit (``--format text``, ``github``, ``gitlab``, ``junit``,
``--statistics``) takes its findings from the rules run on CPython's tree
(``Linter.on_tree``): libcst never parses the file. Each finding must be the one libcst's
parse gives: the same place (in characters), message, snippet (the baseline's
fingerprint), fix applicability and message, and fixability; only the edits are left out."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from nanlint.cli import main
from nanlint.lint import engine as engine_mod
from nanlint.lint.engine import Linter
from nanlint.rules.base import all_rules

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("nanlint_snapshot_sources", ROOT / "scripts" / "snapshot.py")
snapshot = importlib.util.module_from_spec(_spec)
sys.modules["nanlint_snapshot_sources"] = snapshot
_spec.loader.exec_module(snapshot)

FIELDS = ("code", "name", "message", "path", "start", "end", "fix_applicability", "fix_message", "snippet", "may")


def _rows(findings) -> list[tuple]:
    return sorted(tuple(getattr(f, k) for k in FIELDS) + (f.fixable(False), f.fixable(True)) for f in findings)


@pytest.fixture
def parsed(monkeypatch) -> list:
    """The sources libcst parses (the engine's parse, counted)."""
    seen: list = []
    real = engine_mod.parse
    monkeypatch.setattr(engine_mod, "parse", lambda source, checked=None: seen.append(source) or real(source, checked))
    return seen


def test_pages_fixtures_and_examples_give_libcst_findings_without_libcst(parsed):
    rules = all_rules()
    compared = 0
    for label, source, settings, codes in snapshot.sources():
        chosen = [r for r in rules if codes is None or r.code in codes]
        for may in (False, True):
            given = dict(settings, may=True) if may else dict(settings)
            expected = Linter(chosen, given).lint_source(source, "example.py")
            del parsed[:]
            got = Linter(chosen, dict(given, edits=False)).lint_source(source, "example.py")
            assert _rows(got.findings) == _rows(expected.findings), label
            assert (got.hidden, got.error) == (expected.hidden, expected.error), label
            assert not any(f.edits for f in got.findings), label
            if got.findings and not parsed:
                compared += 1
    assert compared > 200  # most cases with findings are decided on CPython's tree


def test_the_check_parses_nothing_with_libcst_and_json_still_gets_the_edits(tmp_path, parsed):
    from click.testing import CliRunner

    f = tmp_path / "m.py"
    f.write_text("import torch\n\ndef f(x):\n    return torch.log(torch.softmax(x, dim=-1))\n", encoding="utf-8")
    runner = CliRunner()
    text = runner.invoke(main, ["--isolated", "--no-cache", "-j", "1", str(f)])
    assert "NAN101 [*]" in text.output and "1 fixable with --fix" in text.output
    assert not parsed  # the finding and its fixability came from CPython's tree
    out = runner.invoke(main, ["--isolated", "--no-cache", "-j", "1", "--format", "json", str(f)])
    [finding] = json.loads(out.output)
    assert finding["fix"]["edits"][0]["content"] == "torch.log_softmax(x, dim=-1)"
    assert parsed  # edits are libcst's rewrite


def test_a_noqa_is_read_from_the_tokens_of_the_finding_s_statement(parsed):
    """The converted module holds no comment: a directive on a finding's line is read from
    its statement's tokens, as libcst's comment would be (a ``# noqa`` in a string is none)."""
    rules = [r for r in all_rules() if r.default]
    cases = [
        b"import torch\ny = torch.log(torch.softmax(x, -1))  # noqa: NAN101\nz = torch.log(torch.softmax(x, -1))\n",
        b"import torch  # noqa: F401\nz = torch.log(torch.softmax(x, -1))\n",  # no directive on its line
        b"# nanlint: noqa: NAN101\nimport torch\nz = torch.log(torch.softmax(x, -1))\n",  # a file directive
        b"import torch\nz = f('# noqa', torch.log(torch.softmax(x, -1)))\n",  # text in a string
        b"import torch\nz = f(1,\n      torch.log(torch.softmax(x, -1)),  # noqa: NAN101\n      2)\n",
        b"import torch\nz = f(1,\n      torch.log(torch.softmax(x, -1)),  # noqa: NAN999\n      2)\n",
        b"import torch\nz = torch.log(torch.softmax(x, -1))  # NOQA\n",
    ]
    for source in cases:
        expected = Linter(rules).lint_source(source, "a.py")
        del parsed[:]
        got = Linter(rules, {"edits": False}).lint_source(source, "a.py")
        assert _rows(got.findings) == _rows(expected.findings), source
        assert not parsed, source
    silenced = [Linter(rules, {"edits": False}).lint_source(c, "a.py").findings for c in cases]
    assert [len(f) for f in silenced] == [1, 1, 0, 1, 0, 1, 0]


def test_a_large_file_s_findings_are_as_fixable_without_their_edits():
    """A large file's pieces are libcst's (their edits are moved to the file's lines, or not
    carried): without edits, a finding is fixable exactly when its edits were carried."""
    weights = "".join(f"    'layer{i}.weight': [{i % 7}.0, 0.5, -1.0],\n" for i in range(40_000))
    head = "import torch\nimport torch.nn.functional as F\nWEIGHTS = {\n" + weights + "}\n"
    source = (head + "def f(z):\n    p = F.softmax(z, -1)\n    return torch.log(p)\n").encode()
    rules = [r for r in all_rules() if r.default]
    expected = Linter(rules).lint_source(source, "weights.py")
    got = Linter(rules, {"edits": False}).lint_source(source, "weights.py")
    assert expected.reduced and got.reduced and expected.findings[0].edits
    assert _rows(got.findings) == _rows(expected.findings) and not any(f.edits for f in got.findings)


@pytest.mark.parametrize("edits", [False, True])
def test_a_large_file_s_windows_without_a_finding_are_not_parsed_with_libcst(parsed, edits):
    """A large file no reduction shrinks is analysed in windows: each is run on its CPython
    tree first, and libcst parses only the one with a finding (its edits decide whether the
    fix carries into the file), and only in a run that shows edits (else a sketch of the
    edits decides, ``large_fix.sketch``); the finding is the same."""
    from nanlint.source import large

    body = "".join(f"def layer_{i}(x):\n    return F.relu(x) / (x.norm() + 1e-6)\n" for i in range(25_000))
    tail = "def last(z):\n    q = torch.softmax(z, -1)\n    return torch.log(q)\n"
    source = ("import torch\nimport torch.nn.functional as F\n" + body + tail).encode()
    assert len(source) > large.MAX_KEPT
    rules = [r for r in all_rules() if r.default]
    result = Linter(rules, {"edits": edits}).lint_source(source, "big.py")
    assert result.reduced and result.error is None
    [finding] = result.findings
    assert finding.code == "NAN101" and finding.start[0] == source.count(b"\n")
    assert finding.fixable(True) and bool(finding.edits) == edits
    if edits:
        assert len(parsed) == 1 and b"return torch.log(q)" in parsed[0].encode()
    else:
        assert parsed == []


def test_the_editor_s_diagnostics_are_computed_without_libcst_and_its_quick_fix_with_it(tmp_path, parsed):
    """The language server publishes diagnostics from an analysis without edits; a quick
    fix asks for the analysis with them (``NanlintServer.with_edits``)."""
    from nanlint.server import analysis

    text = "import torch\n\ndef f(x):\n    return torch.log(torch.softmax(x, dim=-1))\n"
    quick = analysis.analyse(tmp_path / "m.py", text, analysis.Settings())
    [finding] = quick.findings
    assert finding.edits_omitted and not finding.edits and finding.fixable(False) and not parsed
    [full] = analysis.analyse(tmp_path / "m.py", text, analysis.Settings(), edits=True).findings
    assert parsed and full.edits[0].content == "torch.log_softmax(x, dim=-1)"
    assert (full.code, full.start, full.end, full.message) == (finding.code, finding.start, finding.end, finding.message)


def test_a_format_that_says_it_shows_no_edit_renders_the_same_without_them(tmp_path):
    """``EDITS = False`` is a promise (``report.shows_edits``): such a format's output, and
    every ``--statistics`` table, is the same from findings without edits as with them;
    the others show the edits."""
    from nanlint import report

    path = tmp_path / "m.py"
    path.write_text("import torch\n\ndef f(x):\n    return torch.log(torch.softmax(x, dim=-1))\n"
                    "\ndef g(p):\n    return torch.log(p)\n", encoding="utf-8")
    rules = [r for r in all_rules() if r.default]
    runs = {edits: report.Run(Linter(rules, {"edits": edits}).lint_source(path.read_bytes(), str(path)).findings,
                              files=1, cwd=tmp_path) for edits in (True, False)}
    assert any(f.edits for f in runs[True].findings) and not any(f.edits for f in runs[False].findings)
    for fmt in report.formats():
        same = report.render(fmt, runs[True]) == report.render(fmt, runs[False])
        assert same == (not report.shows_edits(fmt)), fmt
        assert report.render_statistics(fmt, runs[True]) == report.render_statistics(fmt, runs[False]), fmt
        assert not report.shows_edits(fmt, statistics=True)
