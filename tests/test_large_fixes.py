"""A large file gets its fixes too (issue 22): the edits of a finding in a reduced text or a
window are moved to the file's lines and applied to its text, pass after pass; everything
else in the file stays byte for byte, and an edit that cannot be sure to mean the same in the
file is not offered."""

import ast
import json
import textwrap

from nanlint.findings import Edit
from nanlint.lint import large_fix
from nanlint.lint.engine import Linter
from nanlint.rules.base import all_rules
from nanlint.source import large

WEIGHTS = "".join(f"    'layer{i}.weight': [{i % 7}.0, 0.5, -1.0],\n" for i in range(40_000))


def _default() -> Linter:
    return Linter([r for r in all_rules() if r.default])


def _small_fix(text: str, unsafe: bool = True) -> str:
    """What --fix makes of ``text`` as a small file (the libcst path)."""
    result = _default().fix_source(text.encode(), "small.py", unsafe)
    return (result.fixed_source or text.encode()).decode()


def test_a_reduced_file_is_fixed_where_the_hazard_is_and_nowhere_else(run_cli, tmp_path):
    head = "import torch\nimport torch.nn.functional as F\nWEIGHTS = {\n" + WEIGHTS + "}\n"
    tail = "def f(z):\n    p = F.softmax(z, -1)\n    return torch.log(p)\n"
    source = (head + tail).encode()
    assert len(source) > large.LARGE
    result = _default().lint_source(source, "weights.py")
    [finding] = result.findings
    assert result.reduced and finding.code == "NAN101" and finding.edits  # offered, at the file's lines
    assert finding.edits[0].start[0] == head.count("\n") + 3
    (tmp_path / "weights.py").write_bytes(source)
    code, out, err = run_cli("--fix", "--unsafe-fixes", "weights.py", "--no-cache")
    assert code == 0 and err == "", err
    fixed = (tmp_path / "weights.py").read_text()
    imports = "import torch\nimport torch.nn.functional as F\n"
    assert _small_fix(imports + tail) == imports + "def f(z):\n    p = F.softmax(z, -1)\n    return F.log_softmax(z, -1)\n"
    assert fixed == head + _small_fix(imports + tail)[len(imports):]  # the same fix as in a small file
    code, out, err = run_cli("weights.py", "--no-cache")
    assert code == 0, out  # nothing left


def test_an_import_a_fix_adds_goes_after_the_files_imports():
    head = "import jax.numpy as jnp\n\nWEIGHTS = {\n" + WEIGHTS + "}\n"
    source = (head + "\ndef g(x):\n    return jnp.log(1 + jnp.exp(x))\n").encode()
    result = _default().fix_source(source, "big.py", unsafe=False)
    assert result.error is None and result.fixed == 1 and result.fixed_codes == {"NAN106": 1}
    fixed = result.fixed_source.decode()
    assert fixed.startswith("import jax.numpy as jnp\nimport jax\n\nWEIGHTS = {\n")
    assert fixed.endswith("def g(x):\n    return jax.nn.softplus(x)\n")
    ast.parse(fixed)
    assert not result.findings  # the last pass linted the fixed text


def test_no_import_is_added_that_a_statement_left_out_may_rebind():
    head = "import jax.numpy as jnp\n\nWEIGHTS = {\n" + WEIGHTS + "}\njax = None  # shadows the module\n"
    source = (head + "\ndef g(x):\n    return jnp.log(1 + jnp.exp(x))\n").encode()
    result = _default().lint_source(source, "big.py")
    [finding] = result.findings
    assert result.reduced and finding.code == "NAN106" and not finding.edits
    fixed = _default().fix_source(source, "big.py", unsafe=True)
    assert fixed.fixed_source is None and fixed.error is None


def test_a_file_analysed_in_windows_is_fixed_in_each_window(tmp_path):
    head = ["import torch\n", "import torch.nn.functional as F\n"]
    body = [f"def layer_{i}(x):\n    return F.log_softmax(x, -1) + {i}\n" for i in range(25_000)]
    body[7_000] = "def hazard_a(x):\n    return torch.log(torch.softmax(x, -1))\n"
    body[20_000] = "def hazard_b(x):\n    return torch.log(torch.softmax(x, 0))\n"
    text = "".join(head + body)
    names = frozenset({"log", "softmax", "log_softmax"})
    assert large.reduce(ast.parse(text), text, names) is None  # windows
    result = _default().fix_source(text.encode(), "big.py", unsafe=False)
    assert result.error is None and result.fixed == 2
    fixed = result.fixed_source.decode().splitlines(True)
    original = text.splitlines(True)
    changed = [i for i, (a, b) in enumerate(zip(original, fixed)) if a != b]
    assert len(fixed) == len(original) and len(changed) == 2
    assert [fixed[i] for i in changed] == ["    return torch.log_softmax(x, -1)\n",
                                           "    return torch.log_softmax(x, 0)\n"]


def _piece(text: str, rows: list[int], binds=frozenset()) -> large_fix.Piece:
    return large_fix.Piece(textwrap.dedent(text), rows, lambda: binds)


def test_an_edit_is_moved_to_the_files_lines_or_not_carried():
    piece = _piece("""\
        import torch
        def f(z):
            return torch.log(z)
    """, [1, 901, 902])
    [moved] = piece.to_file([Edit("torch.special.log1p(z)", (3, 12), (3, 24))])
    assert moved == Edit("torch.special.log1p(z)", (902, 12), (902, 24))
    # an insertion between two kept statements goes right after the first one
    [inserted] = piece.to_file([Edit("import math\n", (2, 1), (2, 1))])
    assert inserted.start == inserted.end == (2, 1)
    # lines not consecutive in the file: the statements between are not in the piece
    assert piece.to_file([Edit("x", (1, 1), (3, 5))]) is None
    # a name the piece never writes: a statement left out could bind or use it
    assert piece.to_file([Edit("torch.log(z + eps)", (3, 12), (3, 24))]) is None
    # an import of a name the file binds at module level where the piece does not show it
    assert _piece("import torch\n", [1], frozenset({"F"})).to_file([Edit("import torch.nn.functional as F\n",
                                                                        (2, 1), (2, 1))]) is None


def test_two_findings_adding_the_same_import_add_it_once():
    head = "import jax.numpy as jnp\n\nWEIGHTS = {\n" + WEIGHTS + "}\n"
    source = (head + "\ndef g(x):\n    return jnp.log(1 + jnp.exp(x))\n\n"
              "def h(y):\n    return jnp.log(1 + jnp.exp(y))\n").encode()
    result = _default().fix_source(source, "big.py", unsafe=False)
    fixed = result.fixed_source.decode()
    assert result.fixed == 2 and fixed.count("import jax\n") == 1 and fixed.count("jax.nn.softplus") == 2
    assert json.dumps(result.fixed_codes) == '{"NAN106": 2}'


def test_a_byte_order_mark_stays_and_does_not_shift_the_first_line():
    first = "import torch; y = torch.log(torch.softmax(torch.ones(3), -1))\n"
    source = b"\xef\xbb\xbf" + (first + "WEIGHTS = {\n" + WEIGHTS + "}\n").encode()
    result = _default().fix_source(source, "big.py", unsafe=False)
    assert result.error is None and result.fixed == 1
    assert result.fixed_source == source.replace(b"torch.log(torch.softmax(torch.ones(3), -1))",
                                                 b"torch.log_softmax(torch.ones(3), -1)")


def test_a_run_that_shows_no_edit_marks_the_same_fixes_without_building_them():
    """Without edits to show (text, statistics), a large file's windows are not parsed with
    libcst for their fixes: whether a fix carries over into the file is decided on a sketch of
    its edits (large_fix.sketch: their lines and the names they write, read on the rules' own
    module). The marks must be those the built edits give: every rule page's first Bad block
    in a file made large by a literal after it."""
    from nanlint.lint import catalogue

    pad = "\nWEIGHTS = {\n" + "".join(f"    'w{i}': [{i % 7}.0, 0.5],\n" for i in range(21_000)) + "}\n"
    rules = [r for r in all_rules() if r.default or r.may_tier]
    carried = not_carried = 0
    for code, page in sorted(catalogue.pages().items()):
        bad = [b for b in page.blocks() if b.kind == "bad"]
        if not bad or code == "NAN001":  # NAN001's Bad blocks do not compile: nothing is reduced
            continue
        source = (bad[0].code + pad).encode()
        assert len(source) > large.LARGE
        settings = dict(page.settings(), may=True)
        shown = Linter(rules, settings).lint_source(source, "big.py")
        quiet = Linter(rules, dict(settings, edits=False)).lint_source(source, "big.py")
        assert not any(f.edits for f in quiet.findings)
        assert quiet.reduced or not quiet.findings, code
        built = [(f.code, f.start, bool(f.edits)) for f in shown.findings]
        assert [(f.code, f.start, f.edits_omitted) for f in quiet.findings] == built, code
        carried += sum(1 for *_, e in built if e)
        not_carried += sum(1 for *_, e in built if not e)
    assert carried > 20 and not_carried > 0  # both answers are exercised
