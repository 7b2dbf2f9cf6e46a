"""The pre-commit hooks, installed from this checkout by the real ``pre-commit`` tool into a
temporary git repository, block, fix and pass commits as the README says.

pre-commit builds the hooks' environment itself (``pip install`` of this checkout, so
libcst and click come from the package index): the test needs the index and takes a
minute the first time; it is marked ``slow`` (deselect with ``-m "not slow"``)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
HAZARD = "import torch\nimport torch.nn.functional as F\n\n\ndef loss(z):\n    return torch.log(F.softmax(z, dim=1))\n"


def git(cwd, *args, env=None, check=True):
    return subprocess.run(["git", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=.git/hooks", *args],
                          cwd=cwd, env=env, check=check, capture_output=True, text=True)


def _checkout_files() -> list[str]:
    """The working tree as a user would have it: tracked and untracked-but-not-ignored files."""
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("needs a git checkout of nanlint")
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout.splitlines()
    keep = []
    for name in out:
        top = name.split("/")[0]
        if top in ("nanlint", "rules", "fixtures") or name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml") \
                or name.startswith("LICENSE"):
            if (ROOT / name).is_file() and "__pycache__" not in name:
                keep.append(name)
    return keep


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """A git clone of this working tree to install the hooks from, and a PRE_COMMIT_HOME."""
    pytest.importorskip("pre_commit")
    base = tmp_path_factory.mktemp("precommit")
    hooks = base / "nanlint-hooks"
    for name in _checkout_files():
        dest = hooks / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, dest)
    git(hooks, "init", "-q")
    git(hooks, "add", "-A")
    git(hooks, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "hooks")
    rev = git(hooks, "rev-parse", "HEAD").stdout.strip()
    environ = dict(os.environ, PRE_COMMIT_HOME=str(base / "cache"), GIT_AUTHOR_NAME="t",
                   GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    environ.pop("NO_COLOR", None)
    environ["PRE_COMMIT_COLOR"] = "never"
    return {"hooks": hooks, "rev": rev, "env": environ, "base": base}


def project(env, name, hook_ids):
    repo = env["base"] / name
    repo.mkdir()
    git(repo, "init", "-q")
    hooks = "".join(f"      - id: {h}\n" for h in hook_ids)
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {env['hooks']}\n    rev: {env['rev']}\n    hooks:\n{hooks}")
    subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=repo, env=env["env"], check=True,
                   capture_output=True, text=True)
    git(repo, "add", ".pre-commit-config.yaml")
    git(repo, "commit", "-q", "-m", "config", env=env["env"])
    return repo


def commit(env, repo, *files):
    git(repo, "add", *files)
    result = git(repo, "commit", "-m", "change", env=env["env"], check=False)
    return result.returncode, result.stdout + result.stderr


def test_lint_hook_blocks_a_hazard_and_passes_non_python_commits(env):
    repo = project(env, "lint", ["nanlint"])
    (repo / "notes.txt").write_text("no python here\n")
    code, out = commit(env, repo, "notes.txt")
    assert code == 0, out
    assert "(no files to check)" in out

    (repo / "train.py").write_text(HAZARD)
    code, out = commit(env, repo, "train.py")
    assert code != 0, out
    assert "train.py:6:12: NAN101" in out
    assert git(repo, "log", "--oneline").stdout.count("\n") == 2  # config + notes only


def test_fix_hook_fixes_fails_once_then_passes(env):
    repo = project(env, "fix", ["nanlint-fix"])
    (repo / "train.py").write_text(HAZARD)
    code, out = commit(env, repo, "train.py")
    assert code != 0, out
    assert "files were modified by this hook" in out
    assert "return F.log_softmax(z, dim=1)" in (repo / "train.py").read_text()
    code, out = commit(env, repo, "train.py")
    assert code == 0, out
    assert git(repo, "show", "HEAD:train.py").stdout == HAZARD.replace("torch.log(F.softmax(z, dim=1))",
                                                                         "F.log_softmax(z, dim=1)")


def test_hooks_lint_notebooks(env):
    import json

    repo = project(env, "nb", ["nanlint"])
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                     "source": HAZARD.splitlines(keepends=True)}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (repo / "explore.ipynb").write_text(json.dumps(nb, indent=1) + "\n")
    code, out = commit(env, repo, "explore.ipynb")
    assert code != 0, out
    assert "explore.ipynb:cell 1:line 6:col 12: NAN101" in out


def test_hooks_leave_excluded_files_alone(env):
    """pre-commit names the staged vendored file explicitly: the hooks' --force-exclude keeps
    the configured exclude in force, so it is neither reported nor rewritten."""
    repo = project(env, "vendored", ["nanlint", "nanlint-fix"])
    (repo / "pyproject.toml").write_text('[tool.nanlint]\nextend-exclude = ["vendor"]\n')
    (repo / "vendor").mkdir()
    (repo / "vendor" / "x.py").write_text(HAZARD)
    code, out = commit(env, repo, "pyproject.toml", "vendor/x.py")
    assert code == 0, out
    assert (repo / "vendor" / "x.py").read_text() == HAZARD
