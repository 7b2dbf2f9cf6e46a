import os
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from nanlint.cli import main
from nanlint.lint.engine import Linter
from nanlint.rules.base import all_rules


@pytest.fixture
def run_cli(monkeypatch, tmp_path):
    """Run the CLI in-process from ``tmp_path``; returns (exit code, stdout, stderr)."""

    def run(*args, cwd: Path | None = None):
        monkeypatch.chdir(cwd or tmp_path)
        result = CliRunner().invoke(main, list(args), catch_exceptions=False)
        return result.exit_code, result.stdout, result.stderr

    return run


def lint(source: str, select=None, unsafe=True, may=False):
    """Findings for ``source`` (dedented) with the default rules, or those whose codes are in
    ``select``; ``may``: the may tier too (findings on weak evidence)."""
    rules = [r for r in all_rules() if (r.code in select if select else r.default)]
    return Linter(rules, {"may": True} if may else None).lint_source(textwrap.dedent(source).encode(),
                                                                      "example.py").findings


def fix(source: str, unsafe=True, select=None, may=False) -> str:
    rules = [r for r in all_rules() if (r.code in select if select else r.default)]
    result = Linter(rules, {"may": True} if may else None).fix_source(textwrap.dedent(source).encode(),
                                                                       "example.py", unsafe)
    assert result.error is None, result.error
    return (result.fixed_source or textwrap.dedent(source).encode()).decode()


def codes(source: str, select=None, may=False) -> list[str]:
    return [f.code for f in lint(source, select, may=may)]


ALLOW_MISSING = "NANLINT_ALLOW_MISSING_FRAMEWORKS"


def missing_allowed() -> bool:
    """Whether this run says a missing framework may be skipped (NANLINT_ALLOW_MISSING_FRAMEWORKS=1)."""
    return os.environ.get(ALLOW_MISSING) == "1"


def missing_framework(why: str) -> None:
    """A test that needs a framework (or a pinned package) that is not installed: it fails,
    so runtime proof never vanishes silently, unless the run says skipping is allowed with
    NANLINT_ALLOW_MISSING_FRAMEWORKS=1 (CI never sets it: it installs everything)."""
    if missing_allowed():
        pytest.skip(f"{why} (skipped: {ALLOW_MISSING}=1)")
    pytest.fail(f"{why}: install it (python3 -m pip install -e \".[test,frameworks]\"), or set "
                f"{ALLOW_MISSING}=1 to skip what needs it", pytrace=False)
