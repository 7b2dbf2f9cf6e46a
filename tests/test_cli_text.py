"""What the command line says: help, one-line usage errors, selector errors that say where
and what was meant, --show-fixes without --fix, NAN001 positions from CPython."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HAZARD = "import torch\nimport torch.nn.functional as F\n\nx = torch.log(F.softmax(z, dim=1))\n"


def test_top_level_help_shows_the_check_options_and_whole_command_summaries(run_cli):
    code, out, _ = run_cli("--help")
    assert code == 0
    for option in ("--fix", "--select", "--force-exclude", "--stdin-filename", "--format", "--unsafe-fixes"):
        assert option in out
    commands = out.split("Commands:")[1]
    assert "Print a rule's page, or list every rule." in commands  # not cut off with "..."
    assert "..." not in commands


@pytest.mark.parametrize("args, expected", [
    (["--fxi", "x.py"], "nanlint: error: No such option '--fxi'"),
    (["--format", "xml", "x.py"], "nanlint: error: Invalid value for '--format'"),
    (["--jobs", "-1"], "nanlint: error: Invalid value for '-j' / '--jobs'"),
    (["rule", "--bogus"], "nanlint: error: No such option '--bogus'"),
])
def test_click_usage_errors_are_one_line(run_cli, args, expected):
    code, out, err = run_cli(*args)
    assert code == 2
    assert err.startswith(expected), err
    assert err.count("\n") == 1, err  # no "Usage:" / "Try ..." / "Error:" block
    assert out == ""


def test_usage_error_is_one_line_from_the_console_entry_point(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", "import sys; from nanlint.cli import main; sys.exit(main())",
                           "--nope"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith("nanlint: error: No such option '--nope'") and proc.stderr.count("\n") == 1


def test_bad_selector_in_pyproject_names_the_file_and_key(run_cli, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.nanlint]\nignore = ["NAN999"]\n')
    (tmp_path / "a.py").write_text(HAZARD)
    code, _, err = run_cli("a.py")
    assert code == 2
    assert err.startswith("nanlint: error: unknown rule selector 'NAN999' in ")
    assert f"{tmp_path / 'pyproject.toml'} ([tool.nanlint] ignore)" in err


def test_bad_selector_in_per_file_ignores_names_the_pattern(run_cli, tmp_path):
    (tmp_path / "nanlint.toml").write_text('per-file-ignores = { "tests/*" = ["log-softmx"] }\n')
    (tmp_path / "a.py").write_text(HAZARD)
    code, _, err = run_cli("a.py")
    assert code == 2
    assert "([tool.nanlint] per-file-ignores 'tests/*')" in err
    assert "did you mean 'log-softmax'?" in err


def test_mistyped_selector_gets_did_you_mean(run_cli, tmp_path):
    (tmp_path / "a.py").write_text(HAZARD)
    code, _, err = run_cli("--select", "log-softmx", "a.py")
    assert code == 2
    assert err.strip() == "nanlint: error: unknown rule selector 'log-softmx' in --select; did you mean 'log-softmax'?"
    code, _, err = run_cli("--ignore", "NAN1O1", "a.py")
    assert "did you mean 'NAN101'?" in err
    code, _, err = run_cli("--select", "zzz", "a.py")
    assert "did you mean" not in err and "use a code like NAN101" in err


def test_show_fixes_without_fix_is_an_error(run_cli, tmp_path):
    (tmp_path / "a.py").write_text(HAZARD)
    code, out, err = run_cli("--show-fixes", "a.py")
    assert code == 2
    assert err.startswith("nanlint: error: --show-fixes lists what --fix changed")


def test_nan001_position_and_message_both_from_cpython(run_cli, tmp_path):
    (tmp_path / "py2.py").write_text('import os\nprint "loss", x\ny = 1\n')
    (tmp_path / "paren.py").write_text("def f(:\n    pass\n")
    code, out, _ = run_cli("py2.py", "paren.py")
    assert code == 1
    assert "paren.py:1:7: NAN001 SyntaxError: invalid syntax" in out
    assert "py2.py:2:1: NAN001 SyntaxError: Missing parentheses in call to 'print'" in out  # not line 3
