"""Rows are CPython's: lines break at \\n, \\r\\n and \\r only. ``str.splitlines`` also breaks at
a form feed (PEP 8's page break), \\v, \\x1c to \\x1e, \\x85, \\u2028 and \\u2029, so every
module that maps a row to its text goes through ``nanlint.source.lines.split_lines``; before,
``--add-noqa`` wrote its comment on the line above the finding's (which stayed reported),
``--format full`` showed another line and garbled the fix, and ``--diff`` numbered its hunk a
line off. The language server's side is in tests/test_server.py."""

from __future__ import annotations

import ast
import difflib
import subprocess
import sys
from pathlib import Path

import pytest

from nanlint.source.lines import split_lines

ROOT = Path(__file__).resolve().parent.parent
SEPARATORS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def _source(separator: str) -> str:
    return f"import torch  # {separator} page\n\n\ndef f(z):\n    return torch.log(torch.sigmoid(z))\n"


def _nanlint(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nanlint", "--isolated", "--no-cache", *args],
                          capture_output=True, text=True, cwd=ROOT)


@pytest.mark.parametrize("separator", SEPARATORS)
def test_split_lines_numbers_lines_as_cpython_does(separator):
    text = f"a = 1  # {separator}\r\nb = '{separator}'\rc = 3\n\nd = 4"
    rows = split_lines(text)
    for node in ast.parse(text).body:
        name = node.targets[0].id  # type: ignore[attr-defined]
        assert rows[node.lineno - 1].startswith(f"{name} = ")
    assert "".join(split_lines(text, keepends=True)) == text
    assert len(rows) == 5 and split_lines("plain\ntext\n") == "plain\ntext\n".splitlines()


@pytest.mark.parametrize("separator", ["\x0c", "\u2028"])
def test_add_noqa_writes_on_the_findings_line(tmp_path, separator):
    path = tmp_path / "feed.py"
    path.write_text(_source(separator), encoding="utf-8", newline="")
    assert _nanlint("--add-noqa", str(path)).returncode == 0
    lines = split_lines(path.read_bytes().decode("utf-8"))
    assert lines[4].endswith("torch.log(torch.sigmoid(z))  # noqa: NAN102") and lines[3] == "def f(z):"
    assert _nanlint(str(path)).returncode == 0  # silenced


@pytest.mark.parametrize("separator", ["\x0c", "\u2028"])
def test_full_format_shows_the_findings_line_and_its_fix(tmp_path, separator):
    path = tmp_path / "feed.py"
    path.write_text(_source(separator), encoding="utf-8", newline="")
    out = _nanlint("--format", "full", str(path)).stdout
    assert "5 |     return torch.log(torch.sigmoid(z))" in out
    assert "+    return torch.nn.functional.logsigmoid(z)" in out


def test_diff_hunks_number_lines_as_cpython_does(tmp_path):
    text = _source("\x0c")
    path = tmp_path / "feed.py"
    path.write_text(text, encoding="utf-8", newline="")
    out = _nanlint("--diff", str(path)).stdout
    fixed = text.replace("torch.log(torch.sigmoid(z))", "torch.nn.functional.logsigmoid(z)")
    expected = difflib.unified_diff(split_lines(text, True), split_lines(fixed, True))
    hunk = next(line for line in expected if line.startswith("@@"))
    assert hunk == "@@ -2,4 +2,4 @@\n" and hunk in out
