"""Packaging: the wheel ships the rule pages, `nanlint rule` reads them from an
installed wheel, and linting never imports a framework."""

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(f"building the wheel failed: {proc.stderr[-2000:]}")
    [whl] = out.glob("nanlint-*.whl")
    return whl


def test_wheel_contains_every_rule_page(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    pages = sorted(p.name for p in (ROOT / "rules").glob("NAN*.md"))
    assert pages
    for page in pages:
        assert f"nanlint/_rule_pages/{page}" in names


def test_rule_command_from_installed_wheel(wheel, tmp_path):
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
                   check=True, capture_output=True)
    env = dict(os.environ, PYTHONPATH=str(site))
    proc = subprocess.run([sys.executable, "-m", "nanlint", "rule", "NAN101"], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# NAN101 log-softmax")
    where = subprocess.run([sys.executable, "-c", "import nanlint.lint.catalogue as c; print(c.pages_dir())"],
                           cwd=tmp_path, env=env, capture_output=True, text=True).stdout.strip()
    assert where.startswith(str(site)), where


def test_linting_imports_no_framework(tmp_path):
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from nanlint.cli import main\n"
        f"r = CliRunner().invoke(main, ['--fix', '--unsafe-fixes', '--diff', {str(ROOT / 'examples')!r}])\n"
        "assert r.exit_code == 1, r.output\n"
        "loaded = [m for m in ('tensorflow', 'torch', 'jax', 'keras', 'numpy') if m in sys.modules]\n"
        "print(loaded)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_runtime_dependencies_are_libcst_and_click_only():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    deps = sorted(d.split(">")[0].split("=")[0].split("<")[0].strip() for d in project["dependencies"])
    assert deps == ["click", "libcst"]


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    """The wheel installed (without dependencies) into its own directory, console script included."""
    site = tmp_path_factory.mktemp("installed") / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
                   check=True, capture_output=True)
    env = dict(os.environ, PYTHONPATH=str(site), PATH=str(site / "bin") + os.pathsep + os.environ["PATH"])
    return site, env


def _readme_command(number: int) -> str:
    import re

    block = re.search(r"```sh\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL).group(1)
    commands = [line for line in block.splitlines() if line.strip() and not line.startswith("#")]
    return commands[number - 1]


def test_readme_command_1_runs_the_installed_console_script(installed):
    """From the checkout, `python3 -m nanlint` would import the source tree, not what was installed."""
    site, env = installed
    install, _, run = _readme_command(1).partition(" && ")
    assert install == "python3 -m pip install ."
    assert run.split()[0] == "nanlint", run
    proc = subprocess.run(run, shell=True, cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr  # it finds hazards
    assert "examples/torch_losses.py:" in proc.stdout
    where = subprocess.run(["nanlint", "--version"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert where.returncode == 0 and where.stdout.startswith("nanlint, version")
    script = (site / "bin" / "nanlint").read_text()
    assert "from nanlint.cli import main" in script


def test_verify_from_an_installed_wheel_uses_the_shipped_fixtures(installed, tmp_path):
    site, env = installed
    shipped = sorted(p.name for p in (site / "nanlint" / "_fixtures").iterdir() if p.is_dir())
    assert shipped == sorted(p.name for p in (ROOT / "fixtures").iterdir() if p.is_dir())
    pytest.importorskip("jax")
    proc = subprocess.run([sys.executable, "-m", "nanlint", "verify", "--rules", "NAN302", "--frameworks", "jax"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # not "path does not exist: fixtures"
    assert "1 fixtures, 2 cases: 0 failed" in proc.stdout


def test_frameworks_extra_installs_on_linux_and_macos():
    """tensorflow-cpu has no macOS wheels: the extra picks tensorflow there, at the same pinned version."""
    import tomllib

    from packaging.requirements import Requirement

    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["frameworks"]
    reqs = [Requirement(r) for r in extra]
    chosen = {}
    for platform in ("linux", "darwin"):
        env = {"sys_platform": platform, "platform_system": {"linux": "Linux", "darwin": "Darwin"}[platform]}
        chosen[platform] = {r.name: str(r.specifier) for r in reqs if r.marker is None or r.marker.evaluate(env)}
        assert all(spec.startswith("==") for spec in chosen[platform].values()), chosen[platform]
    assert "tensorflow-cpu" in chosen["linux"] and "tensorflow" not in chosen["linux"]
    assert "tensorflow" in chosen["darwin"] and "tensorflow-cpu" not in chosen["darwin"]
    assert chosen["linux"]["tensorflow-cpu"] == chosen["darwin"]["tensorflow"]
    assert {k: v for k, v in chosen["linux"].items() if k != "tensorflow-cpu"} == \
        {k: v for k, v in chosen["darwin"].items() if k != "tensorflow"}


def test_plot_extra_brings_matplotlib_and_the_tests_have_it():
    """`nanlint verify --plot` needs matplotlib: the `plot` extra installs it, and the `test` extra too
    (tests/test_harness_plot.py draws real pictures); the linter and a plain verify never import it."""
    import tomllib

    from packaging.requirements import Requirement

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra in ("plot", "test"):
        found = {Requirement(r).name: str(Requirement(r).specifier) for r in extras[extra]}
        assert found.get("matplotlib") == ">=3.8", (extra, found)


def test_click_floor_matches_what_the_tests_use():
    """tests/conftest.py reads CliRunner's ``result.stderr`` separately from stdout, which
    click has only since 8.2: pyproject.toml must not accept an older click."""
    import re
    import tomllib

    import click
    from click.testing import Result

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (spec,) = [d for d in project["dependencies"] if d.startswith("click")]
    floor = tuple(int(x) for x in re.fullmatch(r"click>=(\d+)\.(\d+)", spec.replace(" ", "")).groups())
    assert floor >= (8, 2), spec
    assert "stderr" in Result.__init__.__code__.co_varnames or hasattr(Result, "stderr"), click.__version__
