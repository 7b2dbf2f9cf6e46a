"""Large files (over ``large.LARGE`` bytes): the syntax check a chunk of top-level
statements at a time (:mod:`nanlint.source.chunks`) and the reduction (:mod:`nanlint.source.large`)
must give what CPython's whole-file compile gives: the same statements, the same
syntax errors at the same lines, the same findings where they are.  Chunks are made
tiny here (``target``) so that every boundary the scanner can choose is exercised."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest

from nanlint.source import ast_tree, chunks, large, syntax
from nanlint.source.lines import BREAK
from nanlint.lint.engine import Linter
from nanlint.rules.base import all_rules


def whole(text: str | bytes) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compile(text, "<nanlint>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)


def chunked(text: str, target: int, source: bytes | None = None) -> chunks.Skeleton:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return chunks.compile_large(text, target, source)


def summary(tree) -> tuple:
    """Per top-level statement: first line, last line, imports, names bound."""
    firsts, lasts, imports, bound = large.statement_lines(tree)  # the same form for both trees
    return list(firsts), list(lasts), set(imports), list(bound)


def statement_starts(tree: ast.Module, text: str) -> set[int]:
    """The offsets of the lines where a top-level statement starts (its decorators included)."""
    starts = [0] + [m.end() for m in BREAK.finditer(text)]
    return {starts[line - 1] for line in large.statement_lines(tree)[0]}


def default_linter() -> Linter:
    return Linter([r for r in all_rules() if r.default])


TRICKY = '''\
"""Module docstring.
def not_code():
    x = (
"""
import os, sys as system
from torch import nn as tnn

@decorator
def f(a,
b):
    return a
# a comment between the decorator and the def
@pytest.mark.parametrize(
    "x",
    [1, 2],
)
# comment
def test(x):
    pass
@dec(a,
     b)
class K:
    """Docstring
class NotAClass:
    """
    y = 1
if a:
    pass
elif b:
    pass
else:
    pass
try:
    pass
except ValueError:
    pass
else:
    pass
finally:
    pass
try:
    pass
except* TypeError:
    pass
for i in x:
    pass
else:
    q = 2
while w:
    pass
else:
    pass
total = 1 + \\
2 + \\
3
s = \'\'\'triple
x = 1
\'\'\' ; t = "one line \\
continued"
data = [
1,
2,
]
call(
x=1,
)
# comment with a backslash \\
after = 1
lam = {k: v for k, v in
zip(a, b)}
with open(p) as fh, \\
        open(q) as gh:
    pass
async def g():
    await h()
\\
    return 1
match cmd:
    case 1:
        pass
z = y = 3
'''


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_chunks_are_cut_only_between_top_level_statements(newline):
    text = TRICKY.replace("\n", newline)
    tree = whole(text)
    valid = statement_starts(tree, text)
    cuts = chunks.cuts(text, 1)  # every candidate considered
    assert cuts and set(cuts) <= valid
    starts = [0] + [m.end() for m in BREAK.finditer(text)]
    lines = {starts.index(c) + 1 for c in cuts}
    # never before else/elif/except/finally, nor between a decorator and its def, nor in strings
    for line in lines:
        first = text[starts[line - 1]:].split(newline, 1)[0]
        assert not first.startswith(("else", "elif", "except", "finally", "def not_code", "class NotAClass", "2", "x =",
                                     "b)", "zip", ")", "]", "continued", "3", "\\"))
        assert not first.startswith(("def f", "def test(x)", "class K")), first
    assert summary(chunked(text, 1)) == summary(tree)


def test_each_chunk_is_compiled_alone_and_the_skeleton_matches_the_whole_tree():
    text = "".join(f"def f{i}(x):\n    '''doc {i}'''\n    import torch as t{i}\n    return t{i}.log(x)\n\n"
                   for i in range(200)) + "a = tf.math\nb, c = tf.log, tf.exp\n"
    tree = whole(text)
    for target in (1, 100, 1000, 10**9):
        skeleton = chunked(text, target)
        assert summary(skeleton) == summary(tree)
        assert len(skeleton.pieces) > 1 or target == 10**9
        scanned = [ast.dump(n) for n in skeleton.body if not isinstance(n, ast.Expr)]
        expected = [ast.dump(n) for n in tree.body[-2:]] + \
            [ast.dump(n) for s in tree.body[:-2] for n in s.body if isinstance(n, ast.Import)]
        assert sorted(scanned) == sorted(expected)
        docs = sorted((n.lineno, n.col_offset, n.end_lineno, n.end_col_offset) for n in skeleton.body
                      if isinstance(n, ast.Expr))
        assert docs == sorted((s.body[0].lineno, s.body[0].col_offset, s.body[0].end_lineno, s.body[0].end_col_offset)
                              for s in tree.body[:-2])


ERRORS = [
    "x = (1,\n 2]\n",  # mismatched brackets on two lines: the message names the opening line
    "s = '''never closed\nmore\n",  # "(detected at line N)" in the message
    "f(\n",  # never closed, at the end of the file
    "else:\n    pass\n",  # an else with no if
    "if x:\ny = 1\n",  # expected an indented block after 'if' statement on line N
    "  x = 1\n",  # unexpected indent
    "def f():\n\tif x:\n        pass\n\telse: pass\n",  # inconsistent tabs
    "@decorator\n",  # a decorator and then the end of the file
    "print 'hello'\n",  # Python 2
    "x = 1 +\n",
    "x = 'abc\n",  # unterminated string literal
    "y = " + "(" * 250 + "1" + ")" * 250 + "\n",  # too many nested parentheses
    "x = 1 \\\n",  # a continuation at the end of the file
    "class A:\n    def f(self):\n        return 1\n  x = 2\n",  # unindent does not match
    "z = {1: 2, 3}\n",
    "x = 1\x00\n",  # a NUL byte
    "s = 'ü' ; x = $\n",  # a column after a non-ASCII character (in bytes or characters: as CPython counts)
    "y = 'é'; \tif x:\n",
]
HEADS = {"utf-8": "", "bom": "\ufeff", "latin-1": "# -*- coding: latin-1 -*-\n"}


@pytest.mark.parametrize("error", ERRORS, ids=range(len(ERRORS)))
@pytest.mark.parametrize("where", ["start", "middle", "end"])
@pytest.mark.parametrize("head", HEADS, ids=list(HEADS))
def test_a_syntax_error_is_the_whole_files_error_at_the_same_line(error, where, head):
    """The engine compiles a file's bytes (CPython counts columns in bytes there, unless
    there is a BOM); the chunks compile the decoded text, and the rest of the file in
    its own bytes once a chunk fails."""
    body = "".join(f"h{i} = torch.relu(h{i - 1} * 0.5)\n" for i in range(1, 400))
    cut = {"start": 0, "middle": len(body) // 2, "end": len(body)}[where]
    cut = body.index("\n", cut - 1) + 1 if cut else 0
    text = HEADS[head] + "import torch\n" + body[:cut] + error + body[cut:]
    source = text.encode("latin-1" if head == "latin-1" else "utf-8")
    text = text.lstrip("\ufeff")

    def outcome(compile_it):
        try:
            compile_it()
        except SyntaxError as err:
            return type(err).__name__, err.msg, err.lineno, err.offset, err.text, err.end_lineno, err.end_offset
        except ValueError as err:
            return type(err).__name__, str(err)
        return None

    expected = outcome(lambda: whole(source))
    assert expected is not None
    for target in (1, 300, 2000):
        assert outcome(lambda t=target: chunked(text, t, source)) == expected


def test_a_big_display_is_compiled_in_slices_and_checked_like_the_whole():
    rows = "".join(f"    'layer{i}.weight': torch.tensor([{i}.5, -1.0, 2e-3]),  # row {i}\n" for i in range(3000))
    text = "import torch\n\nWEIGHTS = {\n" + rows + "}\n\n\ndef loss(logits):\n    return torch.log(logits)\n"
    skeleton = chunked(text, 10_000)
    assert any(slices is not None for _, _, _, slices in skeleton.pieces)  # never one tree of the whole dict
    assert summary(skeleton) == summary(whole(text))
    # an error in one slice, and two kinds of display mixed: CPython's own error
    for bad in (rows.replace("'layer1500.weight': torch", "'layer1500.weight' torch"),
                rows.replace("'layer2000.weight': torch.tensor([2000.5, -1.0, 2e-3]),", "'x',"),
                rows.replace("    'layer2999.weight'", "    *rest, 'layer2999.weight'")):
        broken = "import torch\n\nWEIGHTS = {\n" + bad + "}\n"
        with pytest.raises(SyntaxError) as expected:
            whole(broken)
        with pytest.raises(SyntaxError) as got:
            chunked(broken, 10_000)
        assert (got.value.msg, got.value.lineno, got.value.offset) == \
            (expected.value.msg, expected.value.lineno, expected.value.offset)
    nested = "import torch\nX = torch.tensor([\n" + "".join(f"    [{i}.0, {i}.5],\n" for i in range(4000)) + "])\n"
    rows = "".join(f"    torch.tensor([\n        {i}.0,\n        {i}.5,\n    ]),\n" for i in range(2000))
    multiline = "import torch\nX = [\n" + rows + "]\n"  # items over several lines, commas inside them
    for text in (nested, multiline):
        skeleton = chunked(text, 10_000)
        assert any(slices is not None for _, _, _, slices in skeleton.pieces)
        assert summary(skeleton) == summary(whole(text))



def test_slices_must_cut_between_the_items_of_the_bracket_the_head_leaves_open():
    """Cut inside the calls that are the list's items, each slice compiles (f(a=1) and
    f(0, 7)) while the whole does not (f(a=1, 7)): the outer list spanning head to tail
    is not enough."""
    text = "X = [f(\n    0,\n), f(\n    a=1,\n    7,\n), f(\n    9,\n)]\n"
    starts = [0] + [m.end() for m in BREAK.finditer(text)]
    with pytest.raises(SyntaxError):
        whole(text)
    for k in range(3):
        whole(text[:starts[2]] + text[starts[[2, 4, 7][k]]:starts[[4, 7, 7][k]]] + text[starts[7]:])
    skeleton = chunks.Skeleton(body=[], type_ignores=[])
    skeleton.firsts, skeleton.lasts, skeleton.imports, skeleton.binds = [], [], set(), []
    assert not chunks._take_sliced(skeleton, text, (0, [starts[2], starts[4], starts[7]], len(text)), 1)
    # a slice that closes the head's bracket: each compiles as a tuple starting at that bracket
    for opener, closer in (("[", "]"), ("(", ")")):
        text = f"X = {opener}\n    1,\n{closer}, {{\n    1: 2,\n    3,\n{closer}, {{\n    4: 5,\n}}\n"
        starts = [0] + [m.end() for m in BREAK.finditer(text)]
        with pytest.raises(SyntaxError):
            whole(text)
        whole(text[:starts[2]] + text[starts[2]:starts[4]] + text[starts[7]:])
        whole(text[:starts[2]] + text[starts[4]:starts[7]] + text[starts[7]:])
        assert not chunks._take_sliced(skeleton, text, (0, [starts[2], starts[4], starts[7]], len(text)), 1)
    assert chunks._take_sliced(skeleton, "Y = [\n    1,\n    2,\n    3,\n]\n", (0, [13, 20, 27], 29), 1)
    assert (skeleton.firsts, skeleton.lasts, skeleton.binds) == ([1], [5], ["Y"])


def test_nesting_depth_of_a_large_file_is_measured_chunk_by_chunk():
    deep = "x = " + " + ".join(["a"] * 1200) + "\n"  # a chain libcst nests 1200 deep
    text = "".join(f"v{i} = {i}\n" for i in range(3000)) + deep + "".join(f"w{i} = {i}\n" for i in range(3000))
    skeleton = chunked(text, 2000)
    limit = syntax.MAX_DEPTH
    assert ast_tree.ast_depth(skeleton, limit) == ast_tree.ast_depth(whole(text), limit) > limit
    flat = text.replace(deep, "x = 1\n")
    assert ast_tree.ast_depth(chunked(flat, 2000), limit) == ast_tree.ast_depth(whole(flat), limit) == 4


def _big(before: list[str], after: list[str] = (), fill: int = 30_000) -> str:
    """A file over ``large.LARGE`` bytes: ``before``, many harmless statements, ``after``."""
    pad = "".join(f"c{i} = 'padding padding padding padding'\n" for i in range(fill))
    return "".join(before) + pad + "".join(after)


def test_findings_in_a_large_file_are_at_their_lines():
    head = ["import torch\n", "import torch.nn.functional as F\n", "\x0c\n",  # a form feed is not a line break
            "def f(z):\r\n", "    p = F.softmax(z, -1)\r\n", "    return torch.log(p)\r\n"]
    tail = ["q = torch.softmax(h, -1)\n", "out = torch.log(q)\n"]
    text = _big(head, tail)
    source = text.encode()
    assert len(source) > large.LARGE
    result = default_linter().lint_source(source, "big.py")
    lines = text.replace("\r\n", "\n").split("\n")
    log_rows = [i + 1 for i, line in enumerate(lines) if "torch.log(" in line]
    assert result.reduced
    assert [(f.code, f.start[0]) for f in result.findings] == [("NAN101", row) for row in log_rows]
    assert [f.start[1] for f in result.findings] == [12, 7]


def test_rules_that_start_from_a_shape_still_report_in_a_large_file():
    """NAN105 and NAN503 report only on some shapes of their calls' arguments: a large
    file's statements that hold their calls are kept, and the rules find them there."""
    head = ["import torch\n"]
    tail = ["def f(p):\n", "    return torch.log(1e-10 + 1 - p)\n",
            "def step(model):\n", "    for p in model.parameters():\n", "        p.grad.data.clamp_(min=0)\n"]
    source = _big(head, tail).encode()
    assert len(source) > large.LARGE
    result = default_linter().lint_source(source, "big.py")
    assert sorted(f.code for f in result.findings) == ["NAN105", "NAN503"]


def test_a_large_file_keeps_only_the_statements_of_rules_that_can_report_there():
    """A relu chain with no division holds NAN108's source ops (relu) but none of its sinks:
    the reduced text keeps the log's statement and what it reads, not the whole chain
    (the bench's 10 MB chain went from 5 s to 212 s and 6.8 GB when it did)."""
    lines = ["import torch\n", "h0 = torch.randn(8, 16)\n"]
    lines += [f"h{i} = torch.relu(h{i - 1} * 0.5)\n" for i in range(1, 40_000)]
    lines.append("out = torch.log(torch.softmax(h1, -1))\n")
    source = "".join(lines).encode()
    assert len(source) > large.LARGE
    linter = default_linter()
    checked = syntax.precheck(source)
    assert not linter.cannot_report(checked, "chain.py")
    text, rows = linter._reduced(checked, source)
    assert len(rows) < 10 and "torch.log(torch.softmax(h1" in text
    assert [f.code for f in linter.lint_source(source, "chain.py").findings] == ["NAN101"]
    # with a division the chain is NAN108's to read: more than a reduction keeps, so the file
    # is analysed in windows of statements (memory bounded by a window, issue 22), each with
    # the statements binding what it reads, two levels deep: the division and its operands
    divided = source + b"r = h39999 / h39998\n"
    reduced = linter._reduced(syntax.precheck(divided), divided)
    assert isinstance(reduced, list) and len(reduced) > 1
    last_text, last_rows, own = reduced[-1]
    assert own <= set(last_rows) and max(own) == max(last_rows)  # its own statements: the last ones
    assert "r = h39999 / h39998" in last_text and "h39999 = torch.relu(h39998" in last_text
    assert all(len(text) <= large.MAX_KEPT for text, _, _ in reduced)


@pytest.mark.parametrize("error, message", [
    (["y = (1,\n", "     2]\n"], "does not match opening parenthesis '(' on line"),
    (["s = 'ü' ; x = $\n"], "invalid syntax"),
])
def test_a_large_file_with_a_syntax_error_reports_what_the_whole_file_compile_reports(monkeypatch, error, message):
    text = _big(["import torch\n", "x = torch.log(p)\n"], error + ["z = 1\n"], fill=28_000)
    source = text.encode()
    assert len(source) > large.LARGE
    chunked_findings = default_linter().lint_source(source, "big.py").findings
    monkeypatch.setattr(large, "LARGE", 10**9)  # the whole file's compile, as before chunks
    whole_findings = default_linter().lint_source(source, "big.py").findings
    assert [(f.code, f.message, f.start) for f in chunked_findings] == \
        [(f.code, f.message, f.start) for f in whole_findings]
    [finding] = chunked_findings
    assert finding.code == "NAN001" and finding.start[0] == text.count("\n", 0, text.index(error[-1])) + 1
    assert message in finding.message


def test_a_deeply_nested_statement_in_a_large_file_is_nan001():
    deep = "x = torch.log(p) + " + " + ".join(["a"] * 1100) + "\n"
    text = _big(["import torch\n", deep])
    result = default_linter().lint_source(text.encode(), "big.py")
    [finding] = result.findings
    assert finding.code == "NAN001" and "nested more than" in finding.message
    too_many = "y = torch.log(" + "(" * 250 + "1" + ")" * 250 + ")\n"
    [finding] = default_linter().lint_source(_big(["import torch\n", too_many]).encode(), "big.py").findings
    assert finding.code == "NAN001" and "too many nested parentheses" in finding.message


def test_the_reduction_keeps_what_mentions_a_name_whole_words_only():
    text = ("import torch\nimport numpy as np\ncatalog = 1\nmy_log = 2\nx = catalog + my_log\n"
            "p = torch.softmax(z, -1)\ny = torch.log(p)\nz = np.zeros(3)\n") + "".join(f"a{i} = {i}\n" for i in range(50))
    text = text.replace("\n", "\r\n", 3)  # CRLF on the first lines: rows stay CPython's
    reduced, rows = large.reduce(chunked(text, 40), text, frozenset({"log", "softmax"}))
    assert rows == [1, 2, 6, 7, 8] and reduced.splitlines()[3:] == ["y = torch.log(p)", "z = np.zeros(3)"]


def test_a_display_accepted_slice_by_slice_always_compiles_whole():
    """Random displays of valid items and fragments that are not (a call left open, a
    keyword then a positional, a dict entry in a list, a slice closing the bracket),
    cut at random line starts: whenever the slices are accepted, the whole compiles.
    (Before the checks on the display's own items, 16 of 40,000 such cases slipped
    through.)"""
    import random

    rnd = random.Random(0)
    seq = ["1,", "a,", "*a,", "f(1, 2),", "[1, 2],", "{1: 2},", "x[1:2],", "(1,),", "'s',", "g(\n        a=1,\n    ),"]
    pairs = ["1: 2,", "**b,", "'k': [1],", "k: {1, 2},", "1:\n        2,"]
    tricky = ["], {", "), f(", "}, {", "], [", "), (", "x[1:2,", "f(", "a=1,", "7,", "),", "],", "},", "1: 2,", "3,",
              "x for x in y,", "lambda a,", "b: 1,", "[", "(", "{", "f(a=1,", "2)", "1:"]
    accepted = 0
    for _ in range(8000):
        opener = rnd.choice("[({{")
        pool = pairs if opener == "{" and rnd.random() < 0.6 else seq
        lines = [f"X = {opener}"] + ["    " + rnd.choice(tricky if rnd.random() < 0.25 else pool)
                                     for _ in range(rnd.randint(4, 10))] + [{"[": "]", "(": ")", "{": "}"}[opener]]
        text = "\n".join(lines) + "\n"
        starts = [0] + [m.end() for m in BREAK.finditer(text)]
        inner = starts[1:-2]
        cuts = sorted(rnd.sample(inner, rnd.randint(3, min(6, len(inner)))))
        skeleton = chunks.Skeleton(body=[], type_ignores=[])
        skeleton.firsts, skeleton.lasts, skeleton.imports, skeleton.binds = [], [], set(), []
        if chunks._take_sliced(skeleton, text, (0, cuts, len(text)), 1):
            accepted += 1
            whole(text)  # raises if the slices let an invalid display through
    assert accepted > 100


def test_line_numbers_in_messages_are_the_files_lines():
    """A message that names another line ("`p` is assigned on line N", NAN504's "on line N")
    names it in the user's file, not in the reduced text that was parsed (issue 23)."""
    head = ["import tensorflow as tf\n", "import torch\n", "import torch.nn.functional as F\n"]
    tail = ["def f(z):\n", "    p = F.softmax(z, -1)\n", "    return torch.log(p)\n",
            "def build():\n", '    tf.keras.backend.set_floatx("float16")\n',
            "    return tf.keras.optimizers.Adam(learning_rate=1e-3)\n"]
    text = _big(head, tail)
    source = text.encode()
    assert len(source) > large.LARGE
    rules = [r for r in all_rules() if r.code in ("NAN101", "NAN504")]
    result = Linter(rules).lint_source(source, "big.py")
    assert result.reduced
    lines = text.split("\n")
    row = {needle: next(i + 1 for i, line in enumerate(lines) if needle in line)
           for needle in ("p = F.softmax", "set_floatx")}
    messages = {f.code: f.message for f in result.findings}
    assert sorted(messages) == ["NAN101", "NAN504"]
    assert f"(`p` is assigned on line {row['p = F.softmax']})" in messages["NAN101"], messages["NAN101"]
    assert f"on line {row['set_floatx']}" in messages["NAN504"], messages["NAN504"]


def test_evidence_in_a_statement_of_its_own_is_kept():
    """NAN504 needs float16 evidence that stands in a statement of its own
    (``set_floatx("float16")`` at the top level, the optimizer elsewhere): the reduction
    keeps the statements that name a rule's evidence words (its ``needs``), not only its ops."""
    head = ["import tensorflow as tf\n", 'tf.keras.backend.set_floatx("float16")\n']
    tail = ["opt = tf.keras.optimizers.Adam(learning_rate=1e-3)\n"]
    text = _big(head, tail)
    source = text.encode()
    assert len(source) > large.LARGE
    rules = [r for r in all_rules() if r.code == "NAN504"]
    result = Linter(rules).lint_source(source, "big.py")
    assert result.reduced
    whole = Linter(rules).lint_source(source, "big.py", site_filter=False)
    assert [f.code for f in result.findings] == [f.code for f in whole.findings] == ["NAN504"]
    assert [f.start for f in result.findings] == [f.start for f in whole.findings]


def test_a_file_no_reduction_shrinks_is_analysed_in_windows_at_the_files_lines():
    """Every statement of a generated module holds an op (issue 22's 10 MB module): the
    reduction keeps more than MAX_KEPT, so the file is analysed in windows of statements,
    each with the imports and the statements binding what it reads: memory is a window's,
    not the file's.  A hazard read from a statement in another window is still found,
    and a statement that is in several windows is reported once."""
    head = ["import torch\n", "import torch.nn.functional as F\n", "ZERO = 0.0\n",
            "P = torch.log(torch.softmax(torch.ones(3), -1))\n"]
    body = [f"def layer_{i}(x):\n    return F.log_softmax(x * P[0], -1) + {i}\n" for i in range(25_000)]
    tail = ["def last(z):\n", "    q = torch.softmax(z, -1)\n", "    return torch.log(q) / ZERO\n"]
    text = "".join(head + body + tail)
    source = text.encode()
    assert len(source) > large.MAX_KEPT > 0
    tree = ast.parse(text)
    names = frozenset({"log", "softmax", "log_softmax"})
    assert large.reduce(tree, text, names) is None
    windows = large.windows(tree, text, names)
    assert len(windows) >= 4 and all(len(w[0]) <= large.MAX_KEPT for w in windows)
    result = default_linter().lint_source(source, "big.py")
    assert result.reduced and result.error is None
    lines = text.split("\n")
    row = {needle: next(i + 1 for i, line in enumerate(lines) if needle in line)
           for needle in ("P = torch.log", "return torch.log(q)")}
    found = sorted((f.code, f.start[0]) for f in result.findings)
    assert found == [("NAN101", row["P = torch.log"]), ("NAN101", row["return torch.log(q)"]),
                     ("NAN108", row["return torch.log(q)"])], found


def test_ast_names_are_the_names_ast_walk_finds():
    """The reduction reads a window's names with one walk of the fields (``ast_names``): the
    same names as ``ast.walk``, in every context, on nanlint's own sources and a match."""
    root = Path(__file__).resolve().parent.parent / "nanlint"
    trees = [ast.parse(p.read_text(encoding="utf-8")) for p in sorted(root.rglob("*.py"))]
    trees.append(ast.parse("match p:\n    case C(a, k=b) | [*c]: global g; del d\n    case {'x': e, **f}: pass\n"))
    for tree in trees:
        for ctx in (None, ast.Load, ast.Store, ast.Del):
            walked = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and (ctx is None or isinstance(n.ctx, ctx))}
            assert ast_tree.ast_names(tree, ctx) == walked
