"""Bad input never crashes nanlint, and a fix never damages a file.

Every error is one line on stderr starting ``nanlint: error:``, never a traceback;
a file that does not parse is a NAN001 finding and the other files are still linted.
Most tests run the CLI in-process (click's CliRunner); those that must see the real
process (exit status, a native crash, concurrency) run ``python -m nanlint``.
"""

from __future__ import annotations

import difflib
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import libcst as cst
import pytest

from nanlint.fix import fixes as fixes_mod
from nanlint.lint import writer
from nanlint.lint.engine import Linter
from nanlint.rules.base import Rule, all_rules

ROOT = Path(__file__).resolve().parent.parent
HAZARD = "import torch\nimport torch.nn.functional as F\n\n\ndef loss(z):\n    return torch.log(F.softmax(z, dim=1))  # keep me\n"
FIXED = "import torch\nimport torch.nn.functional as F\n\n\ndef loss(z):\n    return F.log_softmax(z, dim=1)  # keep me\n"
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def default_linter() -> Linter:
    return Linter([r for r in all_rules() if r.default])


def nanlint(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "nanlint", "--no-cache", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env=env)


def assert_clean_errors(stderr: str) -> list[str]:
    """stderr holds only one-line ``nanlint: error:`` messages (and warnings), no traceback."""
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    for line in lines:
        assert line.startswith(("nanlint: error: ", "nanlint: warning: ")) or not line.startswith(" "), line
    return [line for line in lines if line.startswith("nanlint: error: ")]


def write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


# --- files that do not parse: NAN001, the others still linted --------------------------------

PY2 = {
    "print_stmt.py": ('print "x"\n', "Missing parentheses in call to 'print'"),
    "except_comma.py": ("try:\n    pass\nexcept ValueError, e:\n    pass\n", "multiple exception types must be parenthesized"),
    "syntax.py": ("def f(:\n    pass\n", "SyntaxError"),
}


@pytest.mark.skipif(sys.version_info >= (3, 14), reason="Python 3.14 accepts `except A, B:` (PEP 758)")
def test_python2_and_syntax_errors_are_nan001_and_the_other_files_are_linted(tmp_path):
    for name, (source, _) in PY2.items():
        write(tmp_path / name, source)
    write(tmp_path / "good.py", HAZARD)
    proc = nanlint(".", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert assert_clean_errors(proc.stderr) == []
    for name, (_, reason) in PY2.items():
        line = next(line for line in proc.stdout.splitlines() if line.startswith(name))
        assert "NAN001" in line and reason in line, line
    assert "good.py:6:12: NAN101" in proc.stdout


@pytest.mark.parametrize("data,reason", [
    (b"x = 1\x00\ny = 2\n", "not a text file: it contains NUL bytes"),
    (bytes(range(256)) * 4, "not a text file: it contains NUL bytes"),  # not "decode"/"encoding" (issue 23)
    (b"# caf\xe9\nimport torch\n", "encoding"),  # latin-1 without a cookie
    (b"\xff\xfe" + "x = 1\n".encode("utf-16-le"), ""),  # UTF-16: not Python source
])
def test_binary_and_undecodable_files_are_nan001(run_cli, tmp_path, data, reason):
    write(tmp_path / "bad.py", data)
    write(tmp_path / "good.py", HAZARD)
    code, out, err = run_cli(".", "--no-cache")
    assert code == 1, (out, err)
    assert assert_clean_errors(err) == []
    bad = [line for line in out.splitlines() if line.startswith("bad.py")]
    assert len(bad) == 1 and "NAN001" in bad[0] and reason in bad[0], out
    assert "good.py:6:12: NAN101" in out


def test_latin1_with_a_coding_cookie_lints_and_is_fixed_in_latin1(run_cli, tmp_path):
    source = "# -*- coding: latin-1 -*-\n# café, naïve\n" + HAZARD.replace("# keep me", "# dépend")
    path = write(tmp_path / "latin.py", source.encode("latin-1"))
    code, out, err = run_cli("latin.py", "--no-cache")
    assert code == 1 and "NAN101" in out, (out, err)
    code, out, err = run_cli("--fix", "latin.py", "--no-cache")
    assert code == 0, (out, err)
    expected = ("# -*- coding: latin-1 -*-\n# café, naïve\n" + FIXED.replace("# keep me", "# dépend")).encode("latin-1")
    assert path.read_bytes() == expected


@pytest.mark.parametrize("name,transform", [
    ("bom", lambda s: b"\xef\xbb\xbf" + s.encode()),
    ("crlf", lambda s: s.replace("\n", "\r\n").encode()),
    ("mixed", lambda s: "".join(line + ("\r\n" if i % 2 else "\n")
                                for i, line in enumerate(s.splitlines())).encode()),
    ("bare-cr", lambda s: s.replace("\n", "\r").encode()),
    ("tabs", lambda s: s.replace("    ", "\t").encode()),
    ("no-final-newline", lambda s: s.rstrip("\n").encode()),
])
def test_fix_keeps_bom_line_endings_and_indentation(run_cli, tmp_path, name, transform):
    path = write(tmp_path / f"{name}.py", transform(HAZARD))
    code, out, err = run_cli("--fix", path.name, "--no-cache")
    assert (code, assert_clean_errors(err)) == (0, []), (out, err)
    assert path.read_bytes() == transform(FIXED)


def test_empty_and_blank_files(run_cli, tmp_path):
    write(tmp_path / "empty.py", b"")
    write(tmp_path / "blank.py", b"\n\n   \n")
    write(tmp_path / "comment.py", b"# nothing\n")
    code, out, err = run_cli(".", "--no-cache")
    assert (code, assert_clean_errors(err)) == (0, []), (out, err)
    code, out, err = run_cli("--fix", ".", "--no-cache")
    assert code == 0 and (tmp_path / "empty.py").read_bytes() == b""


def test_a_10mb_generated_file_finishes_in_reasonable_time(tmp_path):
    """A generated data module (no framework in it: CPython's parser checks it, libcst never
    sees it). A 10 MB file that imports a framework goes through libcst in full: ~30 s per MB."""
    lines = ["import struct\n", "TABLE = [\n"]
    size = i = 0
    while size < 10_000_000:
        line = f"    ({i}, {i * 0.5!r}, 'row-{i}', struct.pack('f', {i % 97}) if {i} % 3 else None),\n"
        lines.append(line)
        size += len(line)
        i += 1
    lines.append("]\n")
    write(tmp_path / "big.py", "".join(lines))
    write(tmp_path / "good.py", HAZARD)
    start = time.monotonic()
    proc = nanlint(".", cwd=tmp_path, timeout=300)
    elapsed = time.monotonic() - start
    assert proc.returncode == 1 and "good.py:6:12: NAN101" in proc.stdout, proc.stderr
    assert assert_clean_errors(proc.stderr) == []
    assert elapsed < 120, f"{elapsed:.0f} s for a 10 MB file"


# --- nesting: CPython's parser first, no native stack overflow, no RecursionError --------------

DEEP = {
    "parens": "x = " + "(" * 5000 + "1" + ")" * 5000 + "\n",  # killed the process in libcst's native parser
    "lists": "x = " + "[" * 3000 + "]" * 3000 + "\n",
    "calls": "import torch\nx = " + "torch.exp(" * 1000 + "y" + ")" * 1000 + "\n",
    "unary": "x = " + "-" * 2900 + "1\n",
    "chain": "x = a" + "[0]" * 2900 + "\n",  # libcst alone: minutes
    "and": "x = " + " and ".join(["a"] * 20000) + "\n",
    "lambdas": "f = " + "lambda: " * 400 + "0\n",  # parses, then recursion in the analysis
    "mixed": "x = " + "(-" * 190 + "1" + ")" * 190 + "\n",
}


# a framework import and a hazard: the prefilter sends the file to the full lint
LINTED = "import torch\ny = torch.log(torch.softmax(x, 1))\n"


def test_deep_nesting_is_nan001_not_a_crash(tmp_path):
    for name, source in DEEP.items():
        write(tmp_path / f"{name}.py", LINTED + source)
    write(tmp_path / "good.py", HAZARD)
    start = time.monotonic()
    proc = nanlint(".", cwd=tmp_path, timeout=300)
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr[-2000:])
    assert assert_clean_errors(proc.stderr) == []
    for name in DEEP:
        if name == "mixed":
            continue  # within every limit: linted normally
        line = next((line for line in proc.stdout.splitlines() if line.startswith(f"{name}.py")), "")
        assert "NAN001" in line, (name, proc.stdout)
    assert "good.py:6:12: NAN101" in proc.stdout
    assert time.monotonic() - start < 120


def test_deep_nesting_in_fix_mode_writes_nothing(tmp_path):
    for name, source in DEEP.items():
        write(tmp_path / f"{name}.py", LINTED + source)
    proc = nanlint("--fix", ".", cwd=tmp_path, timeout=300)
    assert proc.returncode == 1 and assert_clean_errors(proc.stderr) == [], proc.stderr[-2000:]
    for name, source in DEEP.items():
        if name != "mixed":
            assert (tmp_path / f"{name}.py").read_text() == LINTED + source


# --- paths and configuration -------------------------------------------------------------------

def test_missing_path_is_exit_2_one_line(run_cli, tmp_path):
    write(tmp_path / "good.py", HAZARD)
    code, out, err = run_cli("good.py", "missing.py")
    assert code == 2
    assert assert_clean_errors(err) == ["nanlint: error: path does not exist: missing.py"]


def test_missing_path_subprocess(tmp_path):
    proc = nanlint("nope/", cwd=tmp_path)
    assert proc.returncode == 2 and assert_clean_errors(proc.stderr) == ["nanlint: error: path does not exist: nope"]


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs Linux /proc")
def test_unreadable_file_even_as_root(run_cli, tmp_path):
    """chmod 000 does not stop root, so the file is a link to /proc/self/mem, which
    nobody can read from offset 0 (EIO)."""
    os.symlink("/proc/self/mem", tmp_path / "mem.py")
    write(tmp_path / "good.py", HAZARD)
    code, out, err = run_cli(".", "--no-cache")
    assert code == 2
    assert assert_clean_errors(err) == ["nanlint: error: mem.py: cannot read: Input/output error"]
    assert "good.py:6:12: NAN101" in out


@pytest.mark.skipif(IS_ROOT, reason="running as root: chmod 000 does not block reads (see test_unreadable_file_even_as_root)")
def test_unreadable_file_and_directory_chmod(run_cli, tmp_path):
    path = write(tmp_path / "secret.py", HAZARD)
    hidden = write(tmp_path / "closed" / "inner.py", HAZARD).parent
    write(tmp_path / "good.py", HAZARD)
    path.chmod(0)
    hidden.chmod(0)
    try:
        code, out, err = run_cli(".", "--no-cache")
    finally:
        path.chmod(0o644)
        hidden.chmod(0o755)
    errors = assert_clean_errors(err)
    assert code == 2 and len(errors) == 2, err
    assert "good.py:6:12: NAN101" in out


def test_unreadable_directory_as_root_is_an_error_not_a_crash(run_cli, tmp_path):
    """A directory that cannot be listed (a file where a directory is expected, for root)."""
    write(tmp_path / "notadir", "x = 1\n")
    code, out, err = run_cli("notadir/x.py")
    assert code == 2 and len(assert_clean_errors(err)) == 1


def test_symlink_loops_and_a_directory_named_x_py(run_cli, tmp_path):
    os.symlink("loop.py", tmp_path / "loop.py")
    os.symlink("b", tmp_path / "a")
    os.symlink("a", tmp_path / "b")
    os.symlink(".", tmp_path / "self")  # a directory link to itself: never followed
    write(tmp_path / "pkg.py" / "inner.py", HAZARD)  # a directory named pkg.py
    code, out, err = run_cli(".", "--no-cache")
    assert code == 2
    assert assert_clean_errors(err) == ["nanlint: error: loop.py: broken or looping symbolic link"]
    assert "pkg.py/inner.py:6:12: NAN101" in out
    code, out, err = run_cli("loop.py")
    assert code == 2 and assert_clean_errors(err) == ["nanlint: error: loop.py: broken or looping symbolic link"]
    code, out, err = run_cli("pkg.py", "--no-cache")
    assert code == 1 and "NAN101" in out


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_a_fifo_named_x_py_does_not_hang(tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    write(tmp_path / "good.py", HAZARD)
    proc = nanlint(".", cwd=tmp_path, timeout=60)
    assert proc.returncode == 1 and "good.py:6:12: NAN101" in proc.stdout
    proc = nanlint("pipe.py", cwd=tmp_path, timeout=60)
    assert proc.returncode == 2
    assert assert_clean_errors(proc.stderr) == ["nanlint: error: pipe.py: not a file or directory"]


@pytest.mark.parametrize("toml,wanted", [
    ("[tool.nanlint\nselect = 1\n", "invalid TOML"),
    ("[tool.nanlint]\nselect = [\"NAN1\"\n", "invalid TOML"),
    (b"[tool.nanlint]\nselect = [\"\xff\"]\n", "not UTF-8"),
    ("[tool.nanlint]\nselekt = [\"NAN1\"]\n", "unknown key 'selekt'"),
    ("[tool.nanlint]\nselect = \"NAN1\"\n", "select must be a list of strings"),
    ("[tool.nanlint]\nignore = [1, 2]\n", "ignore must be a list of strings"),
    ("[tool.nanlint]\nunsafe-fixes = \"yes\"\n", "unsafe-fixes must be true or false"),
    ("[tool.nanlint]\nper-file-ignores = [\"x\"]\n", "per-file-ignores must be a table"),
    ("[tool.nanlint]\nper-file-ignores = { \"a/*\" = 3 }\n", "per-file-ignores.a/* must be a list"),
    ("[tool.nanlint.frameworks]\ntensorflow = 2.3\n", "must be a version string"),
    ("[tool.nanlint.frameworks]\ntheano = \"1.0\"\n", "unknown framework 'theano'"),
    ("[tool.nanlint]\nselect = [\"NAN999\"]\n", "unknown rule selector"),
])
def test_bad_configuration_is_exit_2_one_line(run_cli, tmp_path, toml, wanted):
    write(tmp_path / "pyproject.toml", toml)
    write(tmp_path / "good.py", HAZARD)
    code, out, err = run_cli("good.py", "--no-cache")
    errors = assert_clean_errors(err)
    assert code == 2 and len(errors) == 1 and wanted in errors[0], err


def test_bad_configuration_subprocess(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.nanlint]\nselect = [\n")
    write(tmp_path / "good.py", HAZARD)
    proc = nanlint("good.py", cwd=tmp_path)
    assert proc.returncode == 2 and len(assert_clean_errors(proc.stderr)) == 1, proc.stderr
    assert proc.stderr.startswith("nanlint: error: ") and "invalid TOML" in proc.stderr


# --- fixes are safe ------------------------------------------------------------------------------

def test_read_only_file_is_reported_not_written_even_as_root(run_cli, tmp_path):
    path = write(tmp_path / "ro.py", HAZARD)
    path.chmod(0o444)
    code, out, err = run_cli("--fix", "ro.py", "--no-cache")
    assert code == 2
    assert assert_clean_errors(err) == ["nanlint: error: ro.py: cannot write fixes: file is read-only"]
    assert path.read_text() == HAZARD and stat.S_IMODE(path.stat().st_mode) == 0o444
    assert "NAN101" in out  # the finding is still reported


def test_fix_keeps_mode_and_symlinks_and_leaves_no_temporary_file(run_cli, tmp_path):
    real = write(tmp_path / "real" / "train.py", HAZARD)
    real.chmod(0o751)
    os.symlink("real/train.py", tmp_path / "link.py")
    code, out, err = run_cli("--fix", "link.py", "--no-cache")
    assert (code, assert_clean_errors(err)) == (0, []), (out, err)
    assert (tmp_path / "link.py").is_symlink() and real.read_text() == FIXED
    assert stat.S_IMODE(real.stat().st_mode) == 0o751
    assert sorted(p.name for p in real.parent.iterdir()) == ["train.py"]


def test_writer_leaves_the_file_when_it_changed_meanwhile(tmp_path):
    path = write(tmp_path / "a.py", "edited by someone else\n")
    error = writer.write_atomic(path, b"fixed\n", b"original\n")
    assert error == f"{path}: changed while being fixed; left as it is now"
    assert path.read_text() == "edited by someone else\n"
    write(path, "fixed\n")  # another nanlint wrote the same fix: not an error
    assert writer.write_atomic(path, b"fixed\n", b"original\n") is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py"]


def test_writer_reports_an_unwritable_directory(tmp_path):
    path = write(tmp_path / "a.py", "x\n")
    missing = tmp_path / "gone" / "a.py"
    assert writer.write_atomic(missing, b"y\n", b"x\n").startswith(f"{missing}: cannot write fixes:")
    assert path.read_text() == "x\n"


class _Broken(Rule):
    """Flags every ``torch.log(...)`` call with a fix built by ``make``."""

    code = "NAN990"
    name = "broken-test-rule"
    summary = "test"
    fix = "safe"
    make = None

    def check(self, ctx):
        for call in ctx.calls("log"):
            ctx.report(call.node, "test", self.make(call.node))


def _rule(make, code="NAN990") -> Rule:
    return type("R", (_Broken,), {"code": code, "make": staticmethod(make)})()


def test_a_fix_that_produces_invalid_code_leaves_the_file_and_names_the_rule():
    def invalid(node):  # `lambda` as an attribute name: libcst builds it, nothing parses it
        return fixes_mod.Fix("safe", "bad", [(node, node.with_changes(func=cst.Attribute(cst.Name("torch"), cst.Name("lambda"))))])

    result = Linter([_rule(invalid)]).fix_source(HAZARD.encode(), "t.py", unsafe=False)
    assert result.fixed_source is None and result.fixed == 0
    assert result.error.startswith("t.py: fix for NAN990 produced code that does not parse")
    assert [f.code for f in result.findings] == ["NAN990"]


def test_an_oscillating_fix_is_reported_as_no_fixpoint():
    def flip(node):  # torch.log(a) <-> torch.log((a)), forever
        arg = node.args[0].value
        new = arg.with_changes(lpar=[], rpar=[]) if arg.lpar else arg.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return fixes_mod.Fix("safe", "flip", [(node, node.with_changes(args=[node.args[0].with_changes(value=new)]))])

    result = Linter([_rule(flip)]).fix_source(HAZARD.encode(), "t.py", unsafe=False)
    assert result.fixed_source is None
    assert "NAN990" in result.error and "fixpoint" in result.error


def test_a_crashing_rule_is_one_error_line_and_the_other_rules_still_report():
    def crash(node):
        raise ZeroDivisionError("boom\nsecond line")

    rules = [_rule(crash)] + [r for r in all_rules() if r.default]
    for result in (Linter(rules).lint_source(HAZARD.encode(), "t.py"),
                   Linter(rules).fix_source(HAZARD.encode(), "t.py", unsafe=True)):
        assert "\n" not in result.error
        assert "NAN990 crashed (ZeroDivisionError: boom second line)" in result.error
    lint = Linter(rules).lint_source(HAZARD.encode(), "t.py")
    assert [f.code for f in lint.findings] == ["NAN101"]
    fixed = Linter(rules).fix_source(HAZARD.encode(), "t.py", unsafe=True)
    assert fixed.fixed_source == FIXED.encode()


REALISTIC = '''\
"""Training utilities (a realistic module: comments, odd formatting, strings)."""
# -*- keep this comment -*-
import math
import torch
import torch.nn.functional as F   # functional alias
from torch import nn


class Head(nn.Module):
    """log(softmax(x)) in a docstring is text, not code."""

    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, 10)  # weird   spacing   kept

    def forward(self, x, y):
        logits = self.proj(x)
        logp = torch.log(F.softmax(logits,
                                   dim=-1))   # multi-line call, comment after
        msg = "torch.log(F.softmax(z))"
        ls = torch.log(torch.sigmoid(logits))
        return -(y * logp).sum() + ls.mean() + math.log(2.0)


def unrelated( a,b ):
    return  a+b   # untouched formatting
'''


@pytest.mark.parametrize("source", [REALISTIC, *(p.read_text() for p in sorted((ROOT / "examples").glob("*.py")))],
                         ids=["realistic", *(p.name for p in sorted((ROOT / "examples").glob("*.py")))])
def test_only_the_hazardous_lines_change(source):
    linter = Linter(list(all_rules()))
    before = linter.lint_source(source.encode(), "m.py")
    result = linter.fix_source(source.encode(), "m.py", unsafe=True)
    assert result.error is None
    if result.fixed_source is None:
        pytest.skip("nothing fixable")
    rows = set()
    for f in before.findings:
        if f.fixable(True):
            for e in f.edits:
                rows.update(range(e.start[0], e.end[0] + 1))
    old = source.splitlines(keepends=True)
    new = result.fixed_source.decode().splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            changed = set(range(i1 + 1, i2 + 1))
            assert changed <= rows, f"lines {sorted(changed - rows)} changed but hold no fixable finding"
        if tag == "insert":  # only added imports
            assert all(line.startswith(("import ", "from ")) for line in new[j1:j2]), new[j1:j2]
    again = linter.fix_source(result.fixed_source, "m.py", unsafe=True)
    assert again.error is None and again.fixed_source is None  # a fixpoint
    compile(result.fixed_source, "m.py", "exec")


def test_nanlint_never_imports_or_runs_the_code(tmp_path):
    marker = tmp_path / "imported.marker"
    write(tmp_path / "evil.py", f"open({str(marker)!r}, 'w').write('ran')\nimport sys\nsys.exit(3)\n" + HAZARD)
    write(tmp_path / "evil_pkg" / "__init__.py", f"open({str(marker)!r}, 'w')\nraise SystemExit(4)\n")
    write(tmp_path / "evil_pkg" / "mod.py", "from . import something\nimport evil\n" + HAZARD)
    for args in ([".",], ["--fix", "--unsafe-fixes", "."]):
        proc = nanlint(*args, cwd=tmp_path)
        assert proc.returncode in (0, 1), proc.stderr
        assert not marker.exists()
    assert "sys.exit(3)" in (tmp_path / "evil.py").read_text()


def test_two_concurrent_fix_processes_never_truncate_a_file(tmp_path):
    sources = {}
    examples = [HAZARD, REALISTIC, *(p.read_text() for p in sorted((ROOT / "examples").glob("*.py")))]
    for i in range(50):
        sources[f"pkg{i % 5}/m{i}.py"] = examples[i % len(examples)] + f"\n\nX_{i} = {i}\n" * (1 + i % 7)
    expected = {}
    linter = default_linter()
    for rel, src in sources.items():
        fixed = linter.fix_source(src.encode(), rel, unsafe=False).fixed_source
        expected[rel] = fixed if fixed is not None else src.encode()
    assert sum(expected[r] != s.encode() for r, s in sources.items()) >= 30
    for round_ in range(3):
        tree = tmp_path / f"round{round_}"
        for rel, src in sources.items():
            write(tree / rel, src)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        procs = [subprocess.Popen([sys.executable, "-m", "nanlint", "--no-cache", "--fix", "-q", "."], cwd=tree,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
                 for _ in range(2)]
        outputs = [p.communicate(timeout=300) for p in procs]
        for p, (out, err) in zip(procs, outputs):
            assert p.returncode in (0, 1, 2), err
            for line in assert_clean_errors(err):
                assert "changed while being fixed" in line, line
        for rel, src in sources.items():
            now = (tree / rel).read_bytes()
            assert now in (src.encode(), expected[rel]), f"round {round_}: {rel} is neither original nor fixed"
        leftovers = [p for p in tree.rglob("*") if p.name.endswith(".nanlint-tmp")]
        assert leftovers == []


@pytest.mark.parametrize("data", [
    b"{not json", b"\xff\xfe\x00", b'{"cells": 3}', b"[]", b"",
    b'{"cells": [{"cell_type": "code", "source": 5}]}',
    b'{"cells": [{"cell_type": "code", "source": ["x = (((("]}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}',
])
def test_malformed_notebooks_never_crash(run_cli, tmp_path, data):
    path = write(tmp_path / "nb.ipynb", data)
    write(tmp_path / "good.py", HAZARD)
    for args in ([".", "--no-cache"], ["--fix", ".", "--no-cache"]):
        code, out, err = run_cli(*args)
        assert code in (1, 2) and len(assert_clean_errors(err)) <= 1, (out, err)
    assert path.read_bytes() == data


@pytest.mark.parametrize("source", [
    "type Pair = tuple[int, int]\n\n\ndef first[T](z: T):\n    return torch.log(torch.softmax(z, 1))\n",  # PEP 695
    'd = {"a": 1}\ns = f"{d["a"]}"\ny = torch.log(torch.softmax(z, 1))\n',  # PEP 701
])
def test_syntax_newer_than_the_running_python_is_linted_not_nan001(source):
    source = "import torch\n" + source
    result = default_linter().fix_source(source.encode(), "new.py", unsafe=False)
    assert result.error is None and [f.code for f in result.findings] == []
    assert result.fixed_source == source.replace("torch.log(torch.softmax(z, 1))", "torch.log_softmax(z, 1)").encode()


NEWER = [  # syntax Python 3.11 rejects and libcst reads, with a hazard beside it
    "type Pair = tuple[int, int]\n\n\ndef first[T](z: T):\n    return torch.log(torch.softmax(z, 1))\n",
    'd = {"a": 1}\ns = f"{d["a"]}"\ny = torch.log(torch.softmax(z, 1))\n',
    'class C[T: int](object):\n    def f(self, z: T):\n        m = f"\u00e4{z["k"]!r:>{10}}\u00e9"  # \u00e9\n'
    '        return torch.log(torch.softmax(z, 1)) / f"""{z["a"]}\nx"""\n',
]


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="CPython reads this syntax itself from 3.12 on")
@pytest.mark.parametrize("source", NEWER)
def test_syntax_newer_than_the_running_python_is_analysed_on_cpythons_tree(source, monkeypatch):
    """The syntax check blanks what 3.11 cannot read (nanlint/source/newer.py): the rules run
    on CPython's tree of the rest, never on libcst's parse; the finding is placed and quoted
    from the file itself, and its fix rewrites the file's own text."""
    from nanlint.source import syntax

    source = "import torch\n" + source
    analysed_on_libcst = []
    real = Linter.run_rules
    monkeypatch.setattr(Linter, "run_rules", lambda self, *a, **k: analysed_on_libcst.append(1) or real(self, *a, **k))
    checked = syntax.precheck(source.encode())
    assert checked.tree is not None and checked.rejected is None and checked.text == source
    linter = default_linter()
    found = linter.lint_source(source.encode(), "new.py").findings
    assert [(f.code, f.snippet) for f in found] == [("NAN101", "torch.log(torch.softmax(z, 1))")]
    row, col = found[0].start
    assert source.splitlines()[row - 1][col - 1:].startswith("torch.log(")
    fixed = linter.fix_source(source.encode(), "new.py", unsafe=False)
    assert fixed.error is None and fixed.fixed_source == \
        source.replace("torch.log(torch.softmax(z, 1))", "torch.log_softmax(z, 1)").encode()
    assert analysed_on_libcst == []


def test_blanking_keeps_every_other_character_in_place():
    from nanlint.source import newer

    for source in NEWER:
        text = "import torch\n" + source
        out = newer.blanked(cst.parse_module(text), text)
        assert out is not None and len(out) == len(text) and len(out.encode()) == len(text.encode())
        assert [i for i, c in enumerate(out) if c == "\n"] == [i for i, c in enumerate(text) if c == "\n"]
        assert "torch.log(torch.softmax(z, 1))" in out and "type " not in out and "[T" not in out
        assert "\u00e4" not in source or "\u00e4" in out  # inside the filler string, as written
    for cannot in ("def f[\n    T,\n](x):\n    pass\n", 's = f"{\n    1}"\n'):
        assert newer.blanked(cst.parse_module(cannot), cannot) is None


@pytest.mark.parametrize("size", [2_000, 1_200_000])  # a small file and one past the large-file bound
def test_a_syntax_error_is_nan001_without_a_libcst_parse_of_the_file(size, monkeypatch):
    """CPython's rejection is the answer unless the file can hold syntax newer than it
    (f-strings, PEP 695): libcst is not asked to parse the rest (it took 34 s on 2 MB)."""
    from nanlint.source import syntax

    parsed = []
    monkeypatch.setattr(syntax, "fast_parse", lambda source: parsed.append(len(source)) or cst.parse_module(""))
    body = "y = torch.log(torch.softmax(z, 1)) / (types[0] + classes[1])\n"
    source = ("import torch\n" + body * (size // len(body)) + "def broken(x):\n    return x +\n").encode()
    result = default_linter().lint_source(source, "broken.py")
    assert [f.code for f in result.findings] == ["NAN001"] and parsed == []
    assert result.findings[0].start[0] == source.count(b"\n")  # the line of `return x +`


def test_a_worker_that_dies_neither_hangs_nor_loses_the_other_files(tmp_path, monkeypatch):
    """A crash in native code kills a worker process: the run goes on, the other
    files are linted, and the file that killed it is an error, left unchanged."""
    import os as _os

    from nanlint.lint import runner
    from nanlint.lint.engine import Linter
    from nanlint.rules.base import Rule, all_rules

    parent = _os.getpid()

    class Killer(Rule):
        code = "NAN990"
        name = "test-killer"
        summary = "kills the process on files named die*.py"

        def check(self, ctx):
            if _os.path.basename(ctx.path).startswith("die"):
                assert _os.getpid() != parent, "expected to run in a worker process"
                _os._exit(13)

    hazard = "import torch\ny = torch.log(torch.softmax(z, 1))\n"
    files = []
    for i in range(6):
        p = tmp_path / f"ok{i}.py"
        p.write_text(hazard)
        files.append(p)
    dead = tmp_path / "die.py"
    dead.write_text(hazard)
    files.insert(3, dead)
    linter = Linter([r for r in all_rules() if r.code == "NAN101"] + [Killer()])
    monkeypatch.setattr(runner, "MIN_PARALLEL", 2)
    monkeypatch.setattr(runner, "MIN_PARALLEL_BYTES", 0)
    results = runner.run(files, lambda p: linter, fix=False, unsafe=False, write=False, jobs=2,
                         cache=None, prefilter=False)
    by_name = {_os.path.basename(r.path): r for r, _ in results}
    assert by_name["die.py"].error and "died" in by_name["die.py"].error
    for i in range(6):
        assert [f.code for f in by_name[f"ok{i}.py"].findings] == ["NAN101"]
    assert dead.read_text() == hazard


def test_fix_never_rewrites_a_file_no_fix_changed(tmp_path):
    """libcst drops a final bare CR; --fix on a file with nothing to fix must not
    write that lossy round-trip back."""
    import subprocess
    import sys

    p = tmp_path / "cr.py"
    original = b"import torch\ny = torch.softmax(x, 1)\r"
    p.write_bytes(original)
    proc = subprocess.run([sys.executable, "-m", "nanlint", "--isolated", "--no-cache", "--fix", str(p)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert p.read_bytes() == original


def test_a_large_framework_file_is_reduced_to_the_statements_that_can_hold_a_finding(run_cli, tmp_path):
    """Above 1 MB, only the statements mentioning an op some rule starts from (and the
    imports and bindings they read) are parsed with libcst; findings keep their lines."""
    from nanlint.source import large
    from nanlint.lint.engine import Linter
    from nanlint.rules.base import all_rules

    rows = "".join(f"    'layer{i}.weight': torch.tensor([{i % 7}.0, 0.5, -1.0]),\n" for i in range(25_000))
    source = ("import torch\nimport torch.nn.functional as F\nWEIGHTS = {\n" + rows + "}\n"
              "def f(z):\n    p = F.softmax(z, -1)\n    return torch.log(p)\n").encode()
    assert len(source) > large.LARGE
    result = Linter([r for r in all_rules() if r.default]).lint_source(source, "weights.py")
    [finding] = result.findings
    assert result.reduced and finding.code == "NAN101" and finding.start == (25_007, 12)
    write(tmp_path / "weights.py", source)
    code, out, err = run_cli("--fix", "weights.py", "--no-cache")  # its fix is unsafe: not applied
    assert code == 1 and err == "" and (tmp_path / "weights.py").read_bytes() == source
    code, out, err = run_cli("--fix", "--unsafe-fixes", "weights.py", "--no-cache")  # tests/test_large_fixes.py
    assert code == 0 and (tmp_path / "weights.py").read_bytes() == source.replace(b"torch.log(p)",
                                                                                  b"F.log_softmax(z, -1)")
