"""[tool.nanlint]: discovery, validation (exit 2 with one line), and effects."""

import pytest

HAZARD = "import torch\nimport torch.nn.functional as F\ny = torch.log(F.softmax(z, dim=1))\n"


def setup(tmp_path, config):
    (tmp_path / "pyproject.toml").write_text(config)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "bad.py").write_text(HAZARD)


@pytest.mark.parametrize("config,message", [
    ("[tool.nanlint]\nselekt = ['NAN1']\n", "unknown key 'selekt' in [tool.nanlint]"),
    ("[tool.nanlint]\nselect = 'NAN1'\n", "select must be a list of strings"),
    ("[tool.nanlint]\nunsafe-fixes = 'yes'\n", "unsafe-fixes must be true or false"),
    ("[tool.nanlint]\nselect = ['NAN9']\n", "unknown rule selector 'NAN9'"),
    ("[tool.nanlint.frameworks]\ntensorflow = 2.3\n", "tensorflow must be a version string"),
    ("[tool.nanlint.frameworks]\ntheano = '1.0'\n", "unknown framework 'theano'"),
    ("[tool.nanlint\nselect = [\n", "invalid TOML"),
    ("[tool.nanlint]\nper-file-ignores = { 'a/*' = ['NOPE'] }\n", "unknown rule selector 'NOPE'"),
])
def test_bad_config_exits_2_with_one_line(run_cli, tmp_path, config, message):
    setup(tmp_path, config)
    code, out, err = run_cli("src")
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("nanlint: error: ") and message in err


def test_nearest_pyproject_with_nanlint_table_is_used(run_cli, tmp_path):
    setup(tmp_path, "[tool.nanlint]\nignore = ['NAN101']\n")
    (tmp_path / "src" / "pyproject.toml").write_text("[project]\nname = 'x'\n")  # no [tool.nanlint]
    assert run_cli("src")[0] == 0
    assert run_cli(".", cwd=tmp_path / "src")[0] == 0
    assert run_cli("--isolated", "src")[0] == 1


def test_config_file_option(run_cli, tmp_path):
    setup(tmp_path, "")
    (tmp_path / "other.toml").write_text("ignore = ['NAN101']\n")
    assert run_cli("src")[0] == 1
    assert run_cli("--config", "other.toml", "src")[0] == 0
    code, _, err = run_cli("--config", "missing.toml", "src")
    assert code == 2 and "config file not found" in err


def test_select_and_extend_select_and_cli_override(run_cli, tmp_path):
    setup(tmp_path, "[tool.nanlint]\nselect = ['NAN102']\n")
    assert run_cli("src")[0] == 0
    assert run_cli("--extend-select", "NAN101", "src")[0] == 1
    assert run_cli("--select", "NAN101", "src")[0] == 1


def test_exclude_from_config(run_cli, tmp_path):
    setup(tmp_path, "[tool.nanlint]\nextend-exclude = ['src']\n")
    assert run_cli(".")[0] == 0
    assert run_cli("src/bad.py")[0] == 1  # a file named explicitly is linted


def test_per_file_ignores(run_cli, tmp_path):
    setup(tmp_path, "[tool.nanlint]\nper-file-ignores = { 'src/*' = ['log-softmax'] }\n")
    assert run_cli(".")[0] == 0
    (tmp_path / "other.py").write_text(HAZARD)
    assert run_cli(".")[0] == 1


def test_frameworks_table_reaches_rules(tmp_path):
    from nanlint.lint import config

    (tmp_path / "pyproject.toml").write_text("[tool.nanlint.frameworks]\ntensorflow = '2.3'\n")
    cfg = config.discover([tmp_path], None, False)
    assert cfg.frameworks == {"tensorflow": "2.3"}
