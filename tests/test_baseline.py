"""Adopting nanlint on legacy code: baselines, --add-noqa, NAN002 unused-noqa and
file-level ``# nanlint: noqa``."""

import json
import textwrap

import pytest

from conftest import fix, lint

HAZARD = "torch.log(F.softmax(z, dim=1))"
MODULE = textwrap.dedent(f"""\
    import torch
    import torch.nn.functional as F


    def loss(z):
        return {HAZARD}


    def other(x):
        return torch.log(torch.sigmoid(x))
""")


def write(tmp_path, name, text):
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


# --- baseline ---------------------------------------------------------------------------------------
@pytest.fixture
def legacy(tmp_path, run_cli):
    src = write(tmp_path, "src/train.py", MODULE)
    code, _, err = run_cli("--isolated", "--write-baseline", "nanlint-baseline.json", "src")
    assert code == 0, err
    assert "Recorded 2 findings in nanlint-baseline.json." in err
    return src


def test_baseline_silences_recorded_findings(run_cli, legacy):
    code, out, err = run_cli("--isolated", "--baseline", "nanlint-baseline.json", "src")
    assert code == 0, out
    assert "All checks passed!" in out
    assert err == ""
    code, out, _ = run_cli("--isolated", "src")  # without the baseline they are there
    assert code == 1 and "Found 2 findings" in out


def test_baseline_survives_lines_moving(run_cli, legacy):
    text = legacy.read_text()
    legacy.write_text("\n".join(f"# header line {i}" for i in range(10)) + "\n" + text.replace("    return", "    y = 1\n    return", 1))
    code, out, err = run_cli("--isolated", "--baseline", "nanlint-baseline.json", "src")
    assert code == 0, out
    assert err == ""
    _, plain, _ = run_cli("--isolated", "src")
    assert "src/train.py:17:12: NAN101" in plain  # it did move


def test_a_second_identical_hazard_is_reported(run_cli, legacy):
    legacy.write_text(legacy.read_text() + f"\n\ndef again(z):\n    return {HAZARD}\n")
    code, out, _ = run_cli("--isolated", "--baseline", "nanlint-baseline.json", "src")
    assert code == 1
    assert out.splitlines()[0].startswith("src/train.py:14:12: NAN101")
    assert "Found 1 finding" in out


def test_a_new_file_with_the_same_hazard_is_reported(run_cli, legacy, tmp_path):
    write(tmp_path, "src/new.py", MODULE)
    code, out, _ = run_cli("--isolated", "--baseline", "nanlint-baseline.json", "src")
    assert code == 1
    assert "Found 2 findings" in out and "src/new.py" in out and "src/train.py" not in out


def test_fixed_hazard_leaves_a_stale_entry_dropped_by_rewriting(run_cli, legacy, tmp_path):
    legacy.write_text(legacy.read_text().replace("torch.log(torch.sigmoid(x))", "F.logsigmoid(x)"))
    code, out, err = run_cli("--isolated", "--baseline", "nanlint-baseline.json", "src")
    assert code == 0
    assert err.strip() == ("nanlint: 1 baseline entry no longer found (fixed or changed); "
                           "`nanlint --write-baseline nanlint-baseline.json` drops it")
    code, _, err = run_cli("--isolated", "--write-baseline", "nanlint-baseline.json", "src")
    assert code == 0 and "Recorded 1 finding in" in err
    _, _, err = run_cli("--isolated", "--baseline", "nanlint-baseline.json", "src")
    assert err == ""


def test_a_baseline_entry_is_for_its_rule_only(run_cli, tmp_path):
    """Two rules flag the same text, `torch.log(p)`: a NAN101 entry recorded for it (p a
    softmax) must not silence the NAN109 finding once p is a norm; a baseline holding both
    rules' entries silences exactly those."""
    body = "import torch\nimport torch.nn.functional as F\n\n\ndef f(z):\n    p = {}\n    return torch.log(p)\n"
    src = write(tmp_path, "src/model.py", body.format("F.softmax(z, dim=1)"))
    select = ("--isolated", "--select", "NAN101,NAN109")
    code, _, err = run_cli(*select, "--write-baseline", "base.json", "src")
    assert code == 0 and "Recorded 1 finding in base.json." in err, err
    src.write_text(body.format("torch.linalg.norm(z, dim=1)"))
    code, out, err = run_cli(*select, "--baseline", "base.json", "src")
    assert code == 1 and "src/model.py:7:12: NAN109" in out and "NAN101" not in out, out
    assert "1 baseline entry no longer found" in err  # the NAN101 entry is stale, not reused
    # a baseline mixing both rules: each entry silences its own finding only
    write(tmp_path, "src/both.py", body.format("F.softmax(z, dim=1)"))
    code, _, err = run_cli(*select, "--write-baseline", "base.json", "src")
    assert code == 0 and "Recorded 2 findings" in err, err
    assert sorted(e["code"] for e in json.loads((tmp_path / "base.json").read_text())["findings"]) == ["NAN101", "NAN109"]
    code, out, err = run_cli(*select, "--baseline", "base.json", "src")
    assert code == 0 and err == "", out + err
    (tmp_path / "src/both.py").write_text(body.format("torch.linalg.norm(z, dim=1)"))  # NAN101 -> NAN109 there
    code, out, err = run_cli(*select, "--baseline", "base.json", "src")
    assert code == 1 and "src/both.py:7:12: NAN109" in out and "src/model.py" not in out, out


def test_baseline_paths_are_relative_to_the_baseline_file(run_cli, legacy, tmp_path):
    data = json.loads((tmp_path / "nanlint-baseline.json").read_text())
    assert data["version"] == 1
    assert {e["path"] for e in data["findings"]} == {"src/train.py"}
    assert all("line" in e and "fingerprint" in e for e in data["findings"])
    # run from another directory with the same baseline: still matches
    code, out, _ = run_cli("--isolated", "--baseline", "../nanlint-baseline.json", ".", cwd=tmp_path / "src")
    assert code == 0, out


def test_stale_only_for_files_linted_in_this_run(run_cli, legacy, tmp_path):
    write(tmp_path, "other/ok.py", "x = 1\n")
    code, _, err = run_cli("--isolated", "--baseline", "nanlint-baseline.json", "other")
    assert code == 0 and err == ""  # src/ was not linted: its entries are not stale


def test_rewriting_from_a_subset_keeps_the_other_files(run_cli, legacy, tmp_path):
    write(tmp_path, "lib/more.py", MODULE)
    run_cli("--isolated", "--write-baseline", "nanlint-baseline.json", "lib")
    data = json.loads((tmp_path / "nanlint-baseline.json").read_text())
    assert sorted({e["path"] for e in data["findings"]}) == ["lib/more.py", "src/train.py"]


def test_bad_baseline_is_an_error(run_cli, tmp_path):
    write(tmp_path, "a.py", MODULE)
    write(tmp_path, "b.json", "{not json")
    code, _, err = run_cli("--isolated", "--baseline", "b.json", "a.py")
    assert code == 2 and "not a nanlint baseline" in err


# --- --add-noqa ----------------------------------------------------------------------------------------
def test_add_noqa_silences_every_finding_and_keeps_lines(run_cli, tmp_path):
    p = write(tmp_path, "m.py", MODULE.replace("torch.sigmoid(x))", "torch.sigmoid(x))  # legacy, see #12"))
    before = p.read_text().splitlines()
    code, _, err = run_cli("--isolated", "--add-noqa", "m.py")
    assert code == 0
    assert "Added 2 noqa directives in 1 file." in err
    after = p.read_text().splitlines()
    assert after[5] == f"    return {HAZARD}  # noqa: NAN101"
    assert after[9] == "    return torch.log(torch.sigmoid(x))  # legacy, see #12  # noqa: NAN102"
    assert [a for a, b in zip(after, before) if a != b] == [after[5], after[9]]
    code, out, _ = run_cli("--isolated", "m.py")
    assert code == 0, out
    run_cli("--isolated", "--add-noqa", "m.py")
    assert p.read_text().splitlines() == after  # idempotent


def test_add_noqa_merges_with_existing_codes_without_duplicates(run_cli, tmp_path):
    text = (
        "import torch\nimport torch.nn.functional as F\n\n"
        "a = torch.log(F.softmax(z, 1)) + torch.log(torch.sigmoid(z))  # noqa: E501,NAN101\n"
    )
    p = write(tmp_path, "m.py", text)
    run_cli("--isolated", "--add-noqa", "m.py")
    assert p.read_text().splitlines()[3].endswith("  # noqa: E501,NAN101, NAN102")


def test_add_noqa_multiline_finding_goes_on_its_first_line(run_cli, tmp_path):
    text = "import torch\n\ny = torch.log(\n    torch.sigmoid(x)\n)\n"
    p = write(tmp_path, "m.py", text)
    run_cli("--isolated", "--add-noqa", "m.py")
    assert p.read_text() == "import torch\n\ny = torch.log(  # noqa: NAN102\n    torch.sigmoid(x)\n)\n"
    code, _, _ = run_cli("--isolated", "m.py")
    assert code == 0


def test_add_noqa_skips_backslash_continuations_and_multiline_strings(run_cli, tmp_path):
    text = (
        "import torch\n\n"
        "y = torch.log(torch.sigmoid(x)) + \\\n    1\n"
        "z = torch.log(torch.sigmoid(f(\"\"\"doc\n\"\"\")))\n"
        "w = torch.log(torch.sigmoid(x))\r\n"
    )
    p = write(tmp_path, "m.py", text)
    p.write_bytes(text.encode())
    code, _, err = run_cli("--isolated", "--add-noqa", "m.py")
    assert code == 0
    assert "m.py:3: ends with a backslash continuation; no noqa added" in err
    assert "m.py:5: inside a multi-line string; no noqa added" in err
    assert "Added 1 noqa directive in 1 file." in err
    new = p.read_bytes().decode()
    assert new == text.replace("w = torch.log(torch.sigmoid(x))\r\n", "w = torch.log(torch.sigmoid(x))  # noqa: NAN102\r\n")
    assert compile(new, "m.py", "exec")


def test_add_noqa_never_writes_into_a_string():
    from nanlint.lint.noqa import add_noqa

    text = 'x = f("""a\nb""") + 1\ny = 2\n'
    result = add_noqa(text, {1: ["NAN102"], 3: ["NAN101"]})
    assert result.source == 'x = f("""a\nb""") + 1\ny = 2  # noqa: NAN101\n'
    assert result.skipped == [(1, "inside a multi-line string")]


# --- NAN002 unused-noqa ------------------------------------------------------------------------------------
def test_unused_noqa_is_opt_in_and_reports_only_nanlint_codes():
    src = """\
        import torch
        import torch.nn.functional as F

        a = torch.log(F.softmax(z, 1))  # noqa: NAN101
        b = F.log_softmax(z, 1)  # noqa: NAN101, E501
        c = 1  # noqa
        d = 2  # noqa: F401
        e = 3  # noqa: NAN999
    """
    assert [f.code for f in lint(src)] == []  # not on by default
    found = lint(src, select={"NAN002", "NAN101"})
    assert [(f.code, f.start[0], f.message) for f in found] == [
        ("NAN002", 5, "Unused `noqa` directive (unused: `NAN101`)"),
        ("NAN002", 8, "Unused `noqa` directive (unknown: `NAN999`)"),
    ]


def test_unused_noqa_asks_rules_that_are_not_enabled():
    src = """\
        import torch

        a = torch.log(torch.sigmoid(x))  # noqa: NAN102
        b = torch.sigmoid(x)  # noqa: log-sigmoid
    """
    found = lint(src, select={"NAN002"})
    assert [(f.start[0], f.message) for f in found] == [(4, "Unused `noqa` directive (unused: `log-sigmoid`)")]


def test_unused_noqa_fix_removes_codes_or_the_directive():
    src = """\
        import torch

        a = torch.log(torch.sigmoid(x))  # noqa: NAN102, NAN101
        b = 1  # noqa: NAN101
        c = 2  # type: ignore  # noqa: NAN101
        d = 3  # noqa: E501, NAN101
    """
    assert fix(src, select={"NAN002", "NAN101", "NAN102"}) == textwrap.dedent("""\
        import torch

        a = torch.log(torch.sigmoid(x))  # noqa: NAN102
        b = 1
        c = 2  # type: ignore
        d = 3  # noqa: E501
    """)


def test_unused_noqa_can_itself_be_silenced():
    src = "x = 1  # noqa: NAN101, NAN002\n"
    assert lint(src, select={"NAN002", "NAN101"}) == []


# --- file-level noqa ------------------------------------------------------------------------------------------
def test_file_level_noqa_skips_the_file():
    assert lint(MODULE) != []
    assert lint("# nanlint: noqa\n" + MODULE) == []
    assert lint(MODULE + "\n    # nanlint: noqa\n") == []


def test_file_level_noqa_with_codes_turns_those_off():
    found = lint(MODULE + "# nanlint: noqa: NAN101\n")
    assert [f.code for f in found] == ["NAN102"]
    found = lint(MODULE + "# NANLINT: NOQA: log-softmax, NAN102\n")
    assert found == []


def test_file_level_noqa_must_be_on_its_own_line():
    found = lint(MODULE.replace("import torch\n", "import torch  # nanlint: noqa\n", 1))
    assert len(found) == 2


def test_file_level_noqa_covers_a_parse_error():
    assert [f.code for f in lint("print 'x'\n")] == ["NAN001"]
    assert lint("# nanlint: noqa\nprint 'x'\n") == []
    assert lint("# nanlint: noqa: NAN001\nprint 'x'\n") == []


def test_file_level_noqa_also_blocks_fixes():
    assert fix("# nanlint: noqa\n" + MODULE) == "# nanlint: noqa\n" + MODULE


def test_noqa_text_inside_a_string_is_not_a_directive(run_cli, tmp_path):
    p = write(tmp_path, "m.py", 'import torch\n\ny = torch.log(torch.sigmoid(x)) if "# noqa" else 0\n')
    code, out, _ = run_cli("--isolated", "m.py")
    assert code == 1 and "NAN102" in out
    run_cli("--isolated", "--add-noqa", "m.py")
    assert p.read_text().endswith('if "# noqa" else 0  # noqa: NAN102\n')
    code, _, _ = run_cli("--isolated", "m.py")
    assert code == 0
