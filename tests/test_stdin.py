"""Standard input: ``nanlint -`` and ``--stdin-filename PATH`` (what editor plugins call)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HAZARD = "import torch\nimport torch.nn.functional as F\n\nx = torch.log(F.softmax(z, dim=1))\n"
FIXED = HAZARD.replace("torch.log(F.softmax(z, dim=1))", "F.log_softmax(z, dim=1)")


def nanlint(*args, stdin: str, cwd: Path):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("FORCE_COLOR", None)
    proc = subprocess.run([sys.executable, "-m", "nanlint", *args], input=stdin.encode(), cwd=cwd, env=env,
                          capture_output=True)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def test_dash_lints_standard_input(tmp_path):
    code, out, err = nanlint("-", stdin=HAZARD, cwd=tmp_path)
    assert code == 1, err
    assert out.splitlines()[0].startswith("-:4:5: NAN101 [*] log of softmax")


def test_stdin_filename_names_the_findings_and_uses_its_config(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "nanlint.toml").write_text('per-file-ignores = { "tests/*" = ["NAN101"] }\n'
                                                   'extend-select = ["NAN109"]\n')
    code, out, err = nanlint("--stdin-filename", "pkg/train.py", "--format", "json",
                             stdin=HAZARD + "y = torch.log(w)\n", cwd=tmp_path)
    assert code == 1, err
    found = json.loads(out)
    assert {f["code"] for f in found} == {"NAN101", "NAN109"}  # NAN109 is opt-in: pkg's config was read
    assert {Path(f["filename"]).as_posix() for f in found} == {(tmp_path / "pkg/train.py").as_posix()}
    # per-file-ignores of that config apply to the name given
    code, out, err = nanlint("--stdin-filename", "pkg/tests/test_x.py", "-", stdin=HAZARD, cwd=tmp_path)
    assert code == 0, out + err


def test_stdin_file_need_not_exist_and_disk_is_not_read(tmp_path):
    (tmp_path / "train.py").write_text("print('clean on disk')\n")
    code, out, _ = nanlint("--stdin-filename", "train.py", "--format", "full", stdin=HAZARD, cwd=tmp_path)
    assert code == 1
    assert "4 | x = torch.log(F.softmax(z, dim=1))" in out  # the source lines shown are stdin's
    assert (tmp_path / "train.py").read_text() == "print('clean on disk')\n"


def test_fix_on_stdin_writes_fixed_source_to_stdout(tmp_path):
    (tmp_path / "train.py").write_text(HAZARD)
    code, out, err = nanlint("--fix", "--stdin-filename", "train.py", stdin=HAZARD, cwd=tmp_path)
    assert code == 0, err
    assert out == FIXED
    assert "Found 1 finding (1 fixed, 0 remaining)." in err
    assert (tmp_path / "train.py").read_text() == HAZARD  # nothing written


def test_fix_on_stdin_with_nothing_to_fix_echoes_the_source(tmp_path):
    code, out, _ = nanlint("--fix", "-", stdin="x = 1\r\n", cwd=tmp_path)
    assert code == 0
    assert out == "x = 1\r\n"


def test_diff_on_stdin(tmp_path):
    code, out, _ = nanlint("--diff", "-", stdin=HAZARD, cwd=tmp_path)
    assert code == 1
    assert "+x = F.log_softmax(z, dim=1)" in out


def test_force_exclude_applies_to_stdin_filename(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.nanlint]\nextend-exclude = ["vendor"]\n')
    code, out, _ = nanlint("--stdin-filename", "vendor/x.py", stdin=HAZARD, cwd=tmp_path)
    assert code == 1  # without --force-exclude an explicitly named file is linted
    code, out, _ = nanlint("--force-exclude", "--stdin-filename", "vendor/x.py", stdin=HAZARD, cwd=tmp_path)
    assert (code, out) == (0, "")
    code, out, _ = nanlint("--force-exclude", "--fix", "--stdin-filename", "vendor/x.py", stdin=HAZARD,
                           cwd=tmp_path)
    assert (code, out) == (0, HAZARD)  # an editor replacing its buffer with the output loses nothing


def test_stdin_parse_error_is_nan001(tmp_path):
    code, out, _ = nanlint("-", stdin="def f(:\n", cwd=tmp_path)
    assert code == 1
    assert "-:1:7: NAN001" in out


@pytest.mark.parametrize("args, message", [
    (["-", "other.py"], "`-` (standard input) cannot be combined with other paths"),
    (["--stdin-filename", "a.py", "b.py"], "--stdin-filename names the source read from standard input"),
    (["--add-noqa", "-"], "--add-noqa and --write-baseline act on files"),
])
def test_stdin_usage_errors(tmp_path, args, message):
    code, out, err = nanlint(*args, stdin=HAZARD, cwd=tmp_path)
    assert code == 2
    assert err.startswith(f"nanlint: error: {message}") and err.count("\n") == 1
