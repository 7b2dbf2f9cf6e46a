import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from nanlint.cli import main
from nanlint.engine import Linter
from nanlint.rule import all_rules


@pytest.fixture
def run_cli(monkeypatch, tmp_path):
    """Run the CLI in-process from ``tmp_path``; returns (exit code, stdout, stderr)."""

    def run(*args, cwd: Path | None = None):
        monkeypatch.chdir(cwd or tmp_path)
        result = CliRunner().invoke(main, list(args), catch_exceptions=False)
        return result.exit_code, result.stdout, result.stderr

    return run


def lint(source: str, select=None, unsafe=True):
    """Findings for ``source`` (dedented) with the default rules, or those whose codes are in ``select``."""
    rules = [r for r in all_rules() if (r.code in select if select else r.default)]
    return Linter(rules).lint_source(textwrap.dedent(source).encode(), "example.py").findings


def fix(source: str, unsafe=True, select=None) -> str:
    rules = [r for r in all_rules() if (r.code in select if select else r.default)]
    result = Linter(rules).fix_source(textwrap.dedent(source).encode(), "example.py", unsafe)
    assert result.error is None, result.error
    return (result.fixed_source or textwrap.dedent(source).encode()).decode()


def codes(source: str, select=None) -> list[str]:
    return [f.code for f in lint(source, select)]
