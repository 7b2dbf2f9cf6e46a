"""--force-exclude (and ``force-exclude = true``): excludes apply to files named on the
command line, as pre-commit names them; the shipped hooks pass it."""

import shlex
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from nanlint.cli import main

ROOT = Path(__file__).resolve().parent.parent
HAZARD = "import torch\nimport torch.nn.functional as F\n\nx = torch.log(F.softmax(z, dim=1))\n"


@pytest.fixture
def vendored(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.nanlint]\nextend-exclude = ["vendor"]\n')
    (tmp_path / "vendor" / "deep").mkdir(parents=True)
    (tmp_path / "vendor" / "deep" / "x.py").write_text(HAZARD)
    (tmp_path / "own.py").write_text(HAZARD)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def invoke(*args):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_explicit_excluded_file_is_linted_without_force_exclude(vendored):
    code, out, _ = invoke("vendor/deep/x.py")
    assert code == 1 and "vendor/deep/x.py:4:5: NAN101" in out


def test_force_exclude_flag_drops_files_below_an_excluded_directory(vendored):
    code, out, err = invoke("--force-exclude", "vendor/deep/x.py", "own.py")
    assert code == 1
    assert "own.py:4:5: NAN101" in out
    assert "vendor" not in out
    code, out, err = invoke("--force-exclude", "vendor/deep/x.py")
    assert code == 0, out
    assert err == ""  # no "no Python files found" warning: the file was excluded on purpose


def test_force_exclude_from_config_and_no_force_exclude(vendored):
    (vendored / "pyproject.toml").write_text('[tool.nanlint]\nextend-exclude = ["vendor"]\nforce-exclude = true\n')
    assert invoke("vendor/deep/x.py")[0] == 0
    assert invoke("--no-force-exclude", "vendor/deep/x.py")[0] == 1


def test_force_exclude_must_be_a_bool(vendored):
    (vendored / "pyproject.toml").write_text('[tool.nanlint]\nforce-exclude = "yes"\n')
    code, _, err = invoke("own.py")
    assert code == 2
    assert "force-exclude must be true or false" in err


def test_force_exclude_keeps_pattern_excludes_by_path(vendored):
    (vendored / "gen").mkdir()
    (vendored / "gen" / "a_pb2.py").write_text(HAZARD)
    assert invoke("--force-exclude", "--extend-exclude", "gen/*_pb2.py", "gen/a_pb2.py")[0] == 0
    assert invoke("--force-exclude", "--extend-exclude", "*_pb2.py", "gen/a_pb2.py")[0] == 0


@pytest.mark.parametrize("hook", yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text()),
                         ids=lambda h: h["id"])
def test_shipped_hooks_neither_report_nor_rewrite_excluded_files(vendored, hook):
    """Each hook's entry, run as pre-commit runs it: the staged file names appended."""
    argv = shlex.split(hook["entry"])
    assert argv[0] == "nanlint"
    code, out, _ = invoke(*argv[1:], "vendor/deep/x.py")
    assert code == 0, out
    assert (vendored / "vendor" / "deep" / "x.py").read_text() == HAZARD
    code, out, _ = invoke(*argv[1:], "vendor/deep/x.py", "own.py")
    assert code == 1  # the project's own file is still linted (or fixed)
