"""The command line: exit codes, output formats, fix modes, selection, noqa."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

HAZARD = textwrap.dedent("""\
    import torch
    import torch.nn.functional as F

    def loss(z):
        return torch.log(F.softmax(z, dim=1))
""")
CLEAN = "import torch\n\nx = torch.log_softmax(torch.zeros(3), 0)\n"
CROSS = textwrap.dedent("""\
    import tensorflow as tf

    def f(z, y):
        p = tf.nn.softmax(z)
        return tf.math.log(p)
""")


def write(tmp_path, name, text):
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def test_clean_file_exits_0(run_cli, tmp_path):
    write(tmp_path, "ok.py", CLEAN)
    code, out, _ = run_cli("ok.py")
    assert code == 0
    assert out == "1 file checked, no findings.\n"  # named files: pre-commit's batches (issue 23)


def test_findings_exit_1_with_ruff_style_lines(run_cli, tmp_path):
    write(tmp_path, "bad.py", HAZARD)
    code, out, _ = run_cli("bad.py")
    assert code == 1
    assert out.splitlines()[0].startswith("bad.py:5:12: NAN101 [*] log of softmax")
    assert "Found 1 finding (1 fixable with --fix)." in out


def test_missing_path_exits_2(run_cli, tmp_path):
    code, _, err = run_cli("nope.py")
    assert code == 2
    assert err.strip() == "nanlint: error: path does not exist: nope.py"


def test_default_path_is_cwd_and_recursive_with_default_excludes(run_cli, tmp_path):
    write(tmp_path, "pkg/sub/bad.py", HAZARD)
    write(tmp_path, ".venv/lib/bad.py", HAZARD)
    write(tmp_path, "build/bad.py", HAZARD)
    write(tmp_path, "env2/pyvenv.cfg", "")
    write(tmp_path, "env2/bad.py", HAZARD)
    code, out, _ = run_cli()
    assert code == 1
    assert [line.split(":")[0] for line in out.splitlines()[:-1]] == [os.path.join("pkg", "sub", "bad.py")]


def test_exclude_and_extend_exclude(run_cli, tmp_path):
    write(tmp_path, "a/bad.py", HAZARD)
    write(tmp_path, "b/bad.py", HAZARD)
    code, out, _ = run_cli("--extend-exclude", "a", ".")
    assert code == 1 and "a/bad.py" not in out and os.path.join("b", "bad.py") in out
    code, out, _ = run_cli("--exclude", "a,b", ".")
    assert code == 0
    # --exclude replaces the defaults: build/ is linted again
    write(tmp_path, "build/bad.py", HAZARD)
    code, out, _ = run_cli("--exclude", "a,b", ".")
    assert code == 1 and "build" in out


def test_parse_error_is_a_finding_and_other_files_are_linted(run_cli, tmp_path):
    write(tmp_path, "py2.py", 'import tensorflow as tf\nprint "loss", 1\n')
    write(tmp_path, "bad.py", HAZARD)
    code, out, _ = run_cli(".")
    assert code == 1
    assert "py2.py:2:1: NAN001 SyntaxError: Missing parentheses in call to 'print'" in out
    assert "bad.py:5:12: NAN101" in out


def test_fix_applies_safe_fixes_and_exits_0_when_nothing_remains(run_cli, tmp_path):
    p = write(tmp_path, "bad.py", HAZARD)
    code, out, _ = run_cli("--fix", "bad.py")
    assert code == 0
    assert "return F.log_softmax(z, dim=1)" in p.read_text()
    assert "Found 1 finding (1 fixed, 0 remaining)." in out


def test_fix_leaves_unsafe_fixes_and_exits_1(run_cli, tmp_path):
    p = write(tmp_path, "cross.py", CROSS)
    code, out, _ = run_cli("--fix", "cross.py")
    assert code == 1
    assert p.read_text() == CROSS
    assert "NAN101 log of softmax" in out  # no [*]: not fixable without --unsafe-fixes
    assert "Found 1 finding (1 fixable with --unsafe-fixes)." in out
    code, out, _ = run_cli("--fix", "--unsafe-fixes", "cross.py")
    assert code == 0
    assert "tf.nn.log_softmax(z)" in p.read_text()


def test_unsafe_fixes_from_config(run_cli, tmp_path):
    write(tmp_path, "pyproject.toml", "[tool.nanlint]\nunsafe-fixes = true\n")
    p = write(tmp_path, "cross.py", CROSS)
    code, _, _ = run_cli("--fix", "cross.py")
    assert code == 0 and "log_softmax" in p.read_text()


def test_fix_with_remaining_findings_exits_1(run_cli, tmp_path):
    write(tmp_path, "a.py", HAZARD)
    write(tmp_path, "b.py", CROSS)
    code, out, _ = run_cli("--fix", ".")
    assert code == 1
    # one parenthesis, not "(1 fixed, 1 remaining) (1 more with --unsafe-fixes)"
    assert "Found 2 findings (1 fixed, 1 remaining; 1 fixable with --unsafe-fixes)." in out


def test_exit_non_zero_on_fix(run_cli, tmp_path):
    write(tmp_path, "bad.py", HAZARD)
    code, _, _ = run_cli("--fix", "--exit-non-zero-on-fix", "bad.py")
    assert code == 1
    code, _, _ = run_cli("--fix", "--exit-non-zero-on-fix", "bad.py")
    assert code == 0  # second run: nothing left to fix


def test_exit_zero(run_cli, tmp_path):
    write(tmp_path, "bad.py", HAZARD)
    code, out, _ = run_cli("--exit-zero", "bad.py")
    assert code == 0 and "NAN101" in out


def test_diff_writes_nothing(run_cli, tmp_path):
    p = write(tmp_path, "bad.py", HAZARD)
    code, out, err = run_cli("--diff", "bad.py")
    assert code == 1
    assert p.read_text() == HAZARD
    assert "-    return torch.log(F.softmax(z, dim=1))" in out
    assert "+    return F.log_softmax(z, dim=1)" in out
    assert "Would fix 1 finding." in err
    write(tmp_path, "ok.py", CLEAN)
    assert run_cli("--diff", "ok.py")[0] == 0


@pytest.mark.parametrize("selector", ["NAN101", "NAN1", "log-softmax", "ALL", "nan101"])
def test_select(run_cli, tmp_path, selector):
    write(tmp_path, "bad.py", HAZARD)
    assert run_cli("--select", selector, "bad.py")[0] == 1


@pytest.mark.parametrize("selector", ["NAN101", "NAN10", "log-softmax"])
def test_ignore(run_cli, tmp_path, selector):
    write(tmp_path, "bad.py", HAZARD)
    assert run_cli("--ignore", selector, "bad.py")[0] == 0


def test_select_other_rule_only(run_cli, tmp_path):
    write(tmp_path, "bad.py", HAZARD)
    assert run_cli("--select", "NAN102", "bad.py")[0] == 0
    assert run_cli("--select", "NAN102", "--extend-select", "NAN101", "bad.py")[0] == 1


def test_unknown_selector_exits_2(run_cli, tmp_path):
    write(tmp_path, "bad.py", HAZARD)
    code, _, err = run_cli("--select", "NAN999", "bad.py")
    assert code == 2
    assert err.startswith("nanlint: error: unknown rule selector 'NAN999'")


@pytest.mark.parametrize("comment,suppressed", [
    ("# noqa", True),
    ("# noqa: NAN101", True),
    ("# noqa: log-softmax", True),
    ("# noqa:NAN101,NAN102", True),
    ("# NOQA: nan101", True),
    ("# noqa: NAN102", False),
    ("# a comment", False),
])
def test_noqa(run_cli, tmp_path, comment, suppressed):
    write(tmp_path, "bad.py", HAZARD.replace("dim=1))", f"dim=1))  {comment}"))
    code, _, _ = run_cli("bad.py")
    assert code == (0 if suppressed else 1)


def test_noqa_on_first_line_of_multiline_finding(run_cli, tmp_path):
    src = "import torch\nx = torch.log(  # noqa: NAN101\n    torch.softmax(z, 1)\n)\n"
    write(tmp_path, "bad.py", src)
    assert run_cli("bad.py")[0] == 0
    src = "import torch\nx = torch.log(\n    torch.softmax(z, 1)  # noqa: NAN101\n)\n"
    write(tmp_path, "bad.py", src)
    assert run_cli("bad.py")[0] == 1


def test_noqa_suppressed_findings_are_not_fixed(run_cli, tmp_path):
    src = HAZARD.replace("dim=1))", "dim=1))  # noqa")
    p = write(tmp_path, "bad.py", src)
    assert run_cli("--fix", "bad.py")[0] == 0
    assert p.read_text() == src


def test_json_noqa_row_of_a_multiline_finding_is_its_first_row(run_cli, tmp_path):
    """A finding over three lines: `noqa_row` is the row a `# noqa` must go on, its first."""
    write(tmp_path, "multi.py", "import torch\nimport torch.nn.functional as F\n\n\ndef loss(z):\n"
                                "    return torch.log(\n        F.softmax(z, dim=1)\n    )\n")
    code, out, _ = run_cli("--format", "json", "--isolated", "multi.py")
    assert code == 1
    (f,) = json.loads(out)
    assert f["location"]["row"] == 6 and f["end_location"]["row"] == 8, f
    assert f["noqa_row"] == 6


def test_quiet_drops_summary(run_cli, tmp_path):
    write(tmp_path, "bad.py", HAZARD)
    code, out, _ = run_cli("-q", "bad.py")
    assert code == 1 and "Found" not in out and out.count("\n") == 1


def test_json_is_ruff_compatible(run_cli, tmp_path):
    write(tmp_path, "bad.py", HAZARD)
    code, out, _ = run_cli("--format", "json", "bad.py")
    assert code == 1
    data = json.loads(out)
    assert isinstance(data, list) and len(data) == 1
    f = data[0]
    ruff_keys = {"cell", "code", "message", "filename", "location", "end_location", "fix", "noqa_row", "url"}
    assert ruff_keys | {"name", "may"} == set(f)  # ruff's keys, and nanlint's name and tier
    assert f["may"] is False
    assert f["code"] == "NAN101" and f["name"] == "log-softmax"
    assert f["filename"] == str(tmp_path / "bad.py")
    assert f["location"] == {"row": 5, "column": 12}
    assert f["end_location"] == {"row": 5, "column": 42}
    assert f["noqa_row"] == 5
    assert f["fix"]["applicability"] == "safe"
    assert f["fix"]["edits"] == [{"content": "F.log_softmax(z, dim=1)",
                                  "location": {"row": 5, "column": 12},
                                  "end_location": {"row": 5, "column": 42}}]
    assert f["url"] is None  # no link to an address that does not exist (report.URL)


def test_json_edits_apply_like_ruff_would(run_cli, tmp_path):
    """A consumer applying the JSON edits gets what --fix writes."""
    write(tmp_path, "bad.py", HAZARD)
    data = json.loads(run_cli("--format", "json", "bad.py")[1])
    lines = HAZARD.splitlines(keepends=True)
    for edit in data[0]["fix"]["edits"]:
        (r1, c1), (r2, c2) = (edit["location"].values()), (edit["end_location"].values())
        assert r1 == r2
        line = lines[r1 - 1]
        lines[r1 - 1] = line[:c1 - 1] + edit["content"] + line[c2 - 1:]
    run_cli("--fix", "bad.py")
    assert "".join(lines) == (tmp_path / "bad.py").read_text()


def test_json_empty_list_when_clean(run_cli, tmp_path):
    write(tmp_path, "ok.py", CLEAN)
    code, out, _ = run_cli("--format", "json", "ok.py")
    assert code == 0 and json.loads(out) == []


def test_no_python_files_is_a_clean_exit(run_cli, tmp_path):
    (tmp_path / "empty").mkdir()
    code, out, err = run_cli("empty")
    assert code == 0
    assert "no Python files found" in err


def test_rule_command_prints_page(run_cli):
    code, out, _ = run_cli("rule", "NAN101")
    assert code == 0 and out.startswith("# NAN101 log-softmax")
    code, out2, _ = run_cli("rule", "log-softmax")
    assert out2 == out
    code, _, err = run_cli("rule", "NAN999")
    assert code == 2 and "unknown rule" in err


def test_rule_all_lists_rules(run_cli):
    code, out, _ = run_cli("rule", "--all")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["Code", "Name", "Fix", "Default", "Frameworks"]
    assert any(line.startswith("NAN101  log-softmax") and "safe" in line and "torch" in line for line in lines)


def test_real_console_script_and_module(tmp_path):
    (tmp_path / "bad.py").write_text(HAZARD)
    proc = subprocess.run([sys.executable, "-m", "nanlint", "--fix", "bad.py"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "F.log_softmax" in (tmp_path / "bad.py").read_text()
    bindir = os.path.dirname(sys.executable)
    exe = os.path.join(bindir, "nanlint")
    if os.path.exists(exe):
        proc = subprocess.run([exe, "--version"], capture_output=True, text=True)
        assert proc.returncode == 0 and "nanlint" in proc.stdout


# --- what a new user meets (issue 23) -------------------------------------------------------------
def test_a_clean_run_on_named_files_counts_them_and_a_directory_run_says_all_passed(run_cli, tmp_path):
    """pre-commit runs nanlint once per batch of files: a clean batch must not read as the
    verdict of the whole hook when another batch printed findings."""
    write(tmp_path, "src/a.py", CLEAN)
    write(tmp_path, "src/b.py", CLEAN)
    code, out, _ = run_cli("--isolated", "src/a.py", "src/b.py")
    assert (code, out) == (0, "2 files checked, no findings.\n")
    assert "All checks passed" not in out
    code, out, _ = run_cli("--isolated", "src")
    assert (code, out) == (0, "All checks passed!\n")


def test_a_missing_path_is_reported_and_the_others_linted(run_cli, tmp_path):
    write(tmp_path, "bad.py", HAZARD)
    code, out, err = run_cli("--isolated", "does/not/exist.py", "bad.py")
    assert code == 2
    assert err == "nanlint: error: path does not exist: does/not/exist.py\n"
    assert out.startswith("bad.py:5:12: NAN101")


def test_a_directory_whose_files_are_all_excluded_names_the_pattern(run_cli, tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.nanlint]\nextend-exclude = ["vendor/*"]\n')
    write(tmp_path, "vendor/lib.py", HAZARD)
    code, out, err = run_cli("vendor")
    assert code == 0
    assert err == 'nanlint: warning: no Python files found under the given paths: 1 path excluded by "vendor/*"\n'
    assert out == "No Python files checked.\n"


def test_a_force_excluded_directory_names_the_pattern(run_cli, tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.nanlint]\nextend-exclude = ["vendor"]\nforce-exclude = true\n')
    write(tmp_path, "vendor/lib.py", HAZARD)
    code, out, err = run_cli("vendor")
    assert code == 0
    assert err == ('nanlint: warning: vendor is excluded by the pattern "vendor" (force-exclude); '
                   "nothing under it was linted\n")
    assert out == "No Python files checked.\n"
    code, out, err = run_cli("vendor/lib.py")  # a file pre-commit names: excluded on purpose, quietly
    assert (code, err) == (0, "")
    assert out == "0 files checked (1 excluded), no findings.\n"


def test_a_binary_file_named_py_is_not_a_text_file(run_cli, tmp_path):
    (tmp_path / "model.py").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00\xff\xd8")
    code, out, _ = run_cli("--isolated", "model.py")
    assert code == 1
    assert out.splitlines()[0] == "model.py:1:1: NAN001 not a text file: it contains NUL bytes (a binary file named .py?)"
