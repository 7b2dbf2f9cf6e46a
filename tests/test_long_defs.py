"""A long function is not a statement-sized unit (issue 22): a top-level def or class of more
than ``large.LONG`` characters is cut into its header and its body's statements, and analysed
in pieces of them (:mod:`nanlint.source.large`), so that no libcst tree holds it whole.  The
findings must be those of the whole function, at the file's lines, and so must the fixes.
The sizes are made small here (``LONG``, ``WINDOW``, ``LARGE``, ``LONG_LINES``) so that the
generated functions are cut into many pieces in a test's time."""

from __future__ import annotations

import ast

import pytest

from nanlint.lint.engine import Linter
from nanlint.rules.base import all_rules
from nanlint.source import chunks, large


def _default() -> Linter:
    return Linter([r for r in all_rules() if r.default])


def _found(result) -> list[tuple]:
    return [(f.code, f.start, f.end, f.message) for f in result.findings]


def long_def(n: int) -> str:
    """``def build(x)``: a hazard at its top, one in its middle whose softmax is bound many
    statements above it (one name between), and the long-def bench's ending."""
    lines = ["import tensorflow as tf", "", "", "@tf.function", "def build(x, k=tf.constant(2.0)):",
             "    '''A generated model.'''", "    q = tf.nn.softmax(x)", "    early = tf.math.log(q)"]
    for i in range(n):
        lines.append(f"    x = tf.nn.relu(tf.matmul(x, W_{i}) + b_{i})")
        lines.append(f"    h_{i} = tf.reduce_sum(x * {i}, axis=-1)")
        if i == n // 2:
            lines.append("    late = tf.math.log(q)  # q is bound far above")
    lines += ["    p = tf.nn.softmax(x)", "    return tf.math.log(p) + early + late", ""]
    return "\n".join(lines)


@pytest.fixture
def small_cuts(monkeypatch):
    for name in ("LARGE", "MAX_KEPT", "LONG", "WINDOW"):
        monkeypatch.setattr(large, name, 3_000)
    monkeypatch.setattr(large, "LONG_LINES", 50)


def _unlimited(m) -> None:
    for name in ("LARGE", "MAX_KEPT", "LONG"):
        m.setattr(large, name, 10**9)


def _whole(text: str, monkeypatch) -> list[tuple]:
    with monkeypatch.context() as m:
        _unlimited(m)
        result = _default().lint_source(text.encode(), "model.py")
    assert not result.reduced
    return _found(result)


def _cut(tree, text) -> bool:
    return bool(large._Plan(tree, text, frozenset()).heads)


def test_a_long_def_is_cut_and_gives_the_whole_functions_findings(small_cuts, monkeypatch):
    text = long_def(400)
    assert len(text) > 8 * large.LONG
    tree = ast.parse(text)
    assert _cut(tree, text)
    names = frozenset({"log", "softmax", "relu"})
    pieces = large.pieces(tree, text, names)
    assert isinstance(pieces, list) and len(pieces) >= 5
    for piece, rows, own in pieces:
        ast.parse(piece)  # each piece is a module: the header above the statements it keeps
        assert piece.startswith("import tensorflow as tf\n@tf.function\ndef build(x, k=tf.constant(2.0)):\n")
        assert len(piece) < 2 * large.WINDOW + 200
        assert rows == sorted(rows)
    result = _default().lint_source(text.encode(), "model.py")
    assert result.reduced and result.error is None
    lines = text.split("\n")
    rows = sorted(i + 1 for i, line in enumerate(lines) if "tf.math.log(" in line)
    assert [(f.code, f.start[0]) for f in result.findings] == [("NAN101", row) for row in rows]
    assert _found(result) == _whole(text, monkeypatch)


def test_a_short_file_is_parsed_whole(small_cuts):
    text = long_def(5)
    assert len(text) < large.LARGE
    assert not _default().lint_source(text.encode(), "model.py").reduced


def test_a_body_on_the_headers_line_is_not_cut(small_cuts, monkeypatch):
    """``def f(\n    x): return ...`` puts the body on the header's last line: cutting there
    would leave a header that does not parse, so the def is analysed whole."""
    terms = "".join(f"        + tf.reduce_sum(x * {i}, axis=-1)\n" for i in range(300))
    text = ("import tensorflow as tf\n\ndef build(\n        x): return tf.math.log(tf.nn.softmax(x)) + (0\n" +
            terms + "    )\n")
    tree = ast.parse(text)
    assert len(text) > large.LONG
    assert large.outline(tree.body[1]) is not None and not _cut(tree, text)
    result = _default().lint_source(text.encode(), "model.py")
    assert [f.code for f in result.findings] == ["NAN101"]
    assert _found(result) == _whole(text, monkeypatch)


def test_a_long_method_keeps_its_class_and_init(small_cuts, monkeypatch):
    """A long method of a class is cut too; each piece holds the class header (the base a
    gradient's evidence reads), the class's own statements and ``__init__`` (the attributes)."""
    steps = "".join(f"        h = torch.relu(h @ self.w{i % 4}) + {i}\n" for i in range(300))
    weights = "".join(f"        self.w{i} = nn.Parameter(torch.ones(4, 4))\n" for i in range(54))  # LONG_LINES, not LONG
    text = ("import torch\nfrom torch import nn\n\n\nclass Model(nn.Module):\n    scale = 2.0\n\n"
            "    def __init__(self):\n        super().__init__()\n" + weights + "        self.fc = nn.Linear(4, 4)\n\n"
            "    def forward(self, x):\n        h = self.fc(x)\n" + steps +
            "        d = h.norm(dim=-1)\n        y = torch.where(d > 0, h / d, h)\n"
            "        return torch.log(torch.softmax(y, -1))\n")
    tree = ast.parse(text)
    assert _cut(tree, text)
    pieces = large.pieces(tree, text, frozenset({"log", "softmax", "where", "relu"}))
    assert isinstance(pieces, list) and len(pieces) >= 3
    assert all("class Model(nn.Module):\n    scale = 2.0\n    def __init__(self):\n" in p for p, _, _ in pieces)
    assert all("        self.w53 = nn.Parameter" in p and "self.fc = nn.Linear" in p for p, _, _ in pieces)
    result = _default().lint_source(text.encode(), "model.py")
    assert result.reduced
    assert sorted(f.code for f in result.findings) == ["NAN101", "NAN201"]
    assert any("Model.forward" in f.message for f in result.findings if f.code == "NAN201")
    assert _found(result) == _whole(text, monkeypatch)


def test_a_cut_def_is_fixed_as_the_whole_one(small_cuts, monkeypatch, tmp_path):
    text = long_def(200)
    fixed = _default().fix_source(text.encode(), "model.py", True)
    with monkeypatch.context() as m:
        _unlimited(m)
        whole = _default().fix_source(text.encode(), "model.py", True)
    assert fixed.fixed_source is not None and fixed.fixed_source == whole.fixed_source
    assert b"tf.nn.log_softmax(x)" in fixed.fixed_source


def test_a_large_files_long_def_is_outlined_by_its_chunks(small_cuts, monkeypatch):
    """Above ``LARGE`` the syntax check keeps no tree: the chunk that holds a long def
    records its outline, and the cut is the same as from CPython's whole tree."""
    text = long_def(300)
    skeleton = chunks.compile_large(text, 2_000)
    [(index, kept)] = skeleton.outlines.items()
    whole = large.outline(ast.parse(text).body[index])
    assert (kept.first, kept.head_last, kept.last, kept.name, kept.reads, kept.indent, kept.parts) == \
        (whole.first, whole.head_last, whole.last, whole.name, whole.reads, whole.indent, whole.parts)
    assert kept.reads == {"tf"}
    names = frozenset({"log", "softmax", "relu"})
    assert large.windows(skeleton, text, names, large.WINDOW) == large.windows(ast.parse(text), text, names,
                                                                               large.WINDOW)
    result = _default().lint_source(text.encode(), "model.py")
    assert result.reduced
    assert _found(result) == _whole(text, monkeypatch)


def _outline_fields(o):
    return (o.first, o.head_last, o.last, o.name, o.reads, o.indent, o.kept,
            [p if isinstance(p, tuple) else _outline_fields(p) for p in o.parts])


@pytest.mark.parametrize("shape", ["plain", "clauses", "decorated-methods"])
def test_a_def_larger_than_a_chunk_is_compiled_a_slice_of_its_body_at_a_time(shape, monkeypatch):
    """The syntax check of a def larger than a chunk compiles its body in slices under its
    header (:mod:`nanlint.source.body_cuts`): the skeleton is the one of the whole compile,
    the outline too, and no slice's tree holds the whole body."""
    monkeypatch.setattr(large, "LONG_LINES", 50)
    if shape == "plain":
        text = long_def(1500)
    elif shape == "clauses":  # an if/else and a try/except at the body's level: no cut before a clause
        block = "".join(f"        y_{i} = tf.nn.softmax(x * {i})\n" for i in range(40))
        body = "".join(f"    if c_{j}:\n{block}    else:\n{block}    try:\n{block}    except ValueError:\n"
                       f"        pass\n    finally:\n        z = {j}\n" for j in range(40))
        text = "import tensorflow as tf\n\ndef build(x, c_0=True):\n    '''doc'''\n" + body + "    return x\n"
    else:  # a class whose methods are decorated: no cut between a decorator and its def
        methods = "".join(f"    @staticmethod\n    @tf.function\n    def m_{i}(x):\n"
                          f"        return tf.math.log(tf.nn.softmax(x * {i}))\n\n" for i in range(800))
        text = "import tensorflow as tf\n\n\nclass Model(tf.Module):\n    scale = 2.0\n\n" + methods
    target = 4_000
    assert len(text) > 2 * chunks.BIG * target
    skeleton = chunks.compile_large(text, target)
    [sliced] = [p for p in skeleton.pieces if p[3] is not None]
    assert len(sliced[3].cuts) >= 5
    whole_tree = ast.parse(text)
    unsliced = chunks.compile_large(text, 10**9)
    assert all(p[3] is None for p in unsliced.pieces)
    assert (skeleton.firsts, skeleton.lasts, skeleton.binds, skeleton.imports) == \
        (unsliced.firsts, unsliced.lasts, unsliced.binds, unsliced.imports)
    assert skeleton.firsts == [min([s.lineno] + [d.lineno for d in getattr(s, "decorator_list", [])])
                               for s in whole_tree.body]
    [(index, kept)] = skeleton.outlines.items()
    assert _outline_fields(kept) == _outline_fields(large.outline(whole_tree.body[index]))
    assert [ast.dump(n, include_attributes=True) for n in skeleton.body] == \
        [ast.dump(n, include_attributes=True) for n in unsliced.body]
    assert skeleton.nesting(100) == unsliced.nesting(100)


@pytest.mark.parametrize("error", ["    x = (1,\n", "    else:\n        pass\n", "    return )\n"])
def test_a_syntax_error_in_a_sliced_def_is_the_whole_compiles(error):
    text = long_def(1500)
    lines = text.split("\n")
    at = len(lines) // 2
    text = "\n".join(lines[:at]) + "\n" + error + "\n".join(lines[at:])
    with pytest.raises(SyntaxError) as whole:
        compile(text, "<nanlint>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    with pytest.raises(SyntaxError) as sliced:
        chunks.compile_large(text, 4_000)
    assert (sliced.value.msg, sliced.value.lineno, sliced.value.offset) == \
        (whole.value.msg, whole.value.lineno, whole.value.offset)
