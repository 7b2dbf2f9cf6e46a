"""Start-up (issue 22): libcst, about half of nanlint's import time, is loaded only when a file
is parsed with it; ``nanlint --version``, a warm run and a run whose files no rule can report in
never load it, and a run that parses gets the real module."""

import subprocess
import sys
import textwrap

LOADED = "import sys; print(sorted(m for m in sys.modules if m.startswith('libcst.')))"


def _python(code: str, cwd=None) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, check=True)
    return done.stdout.strip()


def _nanlint_imports(args, cwd) -> tuple[str, str]:
    """(stdout, the modules the run imported as -X importtime lists them)."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "nanlint", *args], capture_output=True,
                          text=True, cwd=cwd)
    assert done.returncode in (0, 1), done.stderr
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")]
    return done.stdout, " ".join(imported)


def test_importing_every_layer_loads_no_libcst():
    code = ("import nanlint.cli, nanlint.server.lsp, nanlint.rules.base as b; b.all_rules(); " + LOADED)
    assert _python(code) == "[]"


def test_version_and_a_warm_run_load_no_libcst(tmp_path):
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        import torch

        def loss(logits):
            return torch.log(torch.softmax(logits, -1))
    """))
    out, imported = _nanlint_imports(["--version"], tmp_path)
    assert out.startswith("nanlint") and "libcst._nodes" not in imported
    cache = str(tmp_path / "cache")
    cold, imported = _nanlint_imports(["--cache-dir", cache, "train.py"], tmp_path)
    assert "NAN101" in cold and "libcst._nodes" in imported  # the file was parsed
    warm, imported = _nanlint_imports(["--cache-dir", cache, "train.py"], tmp_path)
    assert warm == cold and "libcst._nodes" not in imported


def test_the_stand_in_becomes_the_module():
    code = textwrap.dedent("""\
        import sys
        import nanlint
        import libcst as cst
        stand_in = cst
        assert type(stand_in).__name__ == "_Deferred"
        name = cst.Name("x")  # the first use loads it
        import libcst
        assert type(libcst).__name__ == "module" and sys.modules["libcst"] is libcst
        assert stand_in.Name is libcst.Name and isinstance(name, libcst.Name)
        assert stand_in.parse_module("x = 1\\n").code == "x = 1\\n"
        from libcst.metadata import PositionProvider  # a submodule after the load
        print("ok")
    """)
    assert _python(code) == "ok"
