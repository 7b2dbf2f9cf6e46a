"""Fixes found on the module made of CPython's tree, moved onto libcst's parse
(``nanlint.fix.translate``, ``Linter.with_edits``): every finding, edit and fixed text must be
the one the rules give when they run on libcst's parse itself (``site_filter=False``: the
engine's libcst path), whatever the layout the user wrote."""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from pathlib import Path

import libcst as cst
import pytest

from nanlint.fix import translate
from nanlint.lint import engine as engine_mod
from nanlint.lint.engine import Linter
from nanlint.rules.base import all_rules
from nanlint.source import from_ast

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("nanlint_snapshot_sources_t", ROOT / "scripts" / "snapshot.py")
snapshot = importlib.util.module_from_spec(_spec)
sys.modules["nanlint_snapshot_sources_t"] = snapshot
_spec.loader.exec_module(snapshot)


def _rows(result) -> list[tuple]:
    return sorted((f.code, f.start, f.end, f.message, f.snippet, f.fix_applicability, f.fix_message, f.may,
                   tuple((e.content, e.start, e.end) for e in f.edits)) for f in result.findings)


@pytest.fixture
def moved(monkeypatch) -> dict:
    """How many fixes ``with_edits`` moved onto libcst's parse, and how many it could not."""
    seen = {"moved": 0, "unpaired": 0, "libcst runs": 0}
    real_fix = translate.Parsed.fix

    def fix(self, f):
        try:
            out = real_fix(self, f)
        except translate.Unpaired:
            seen["unpaired"] += 1
            raise
        seen["moved"] += 1
        return out

    real_run = engine_mod.Linter.run_rules

    def run_rules(self, *args, **kwargs):
        seen["libcst runs"] += 1
        return real_run(self, *args, **kwargs)

    monkeypatch.setattr(translate.Parsed, "fix", fix)
    monkeypatch.setattr(engine_mod.Linter, "run_rules", run_rules)
    return seen


def _same(linter: Linter, source: bytes, label: str) -> None:
    got = linter.lint_source(source, "example.py")
    expected = linter.lint_source(source, "example.py", site_filter=False)
    assert _rows(got) == _rows(expected), label
    fixed = linter.fix_source(source, "example.py", unsafe=True)
    fixed_expected = linter.fix_source(source, "example.py", unsafe=True, site_filter=False)
    assert fixed.fixed_source == fixed_expected.fixed_source, label
    assert _rows(fixed) == _rows(fixed_expected), label


def test_pages_fixtures_and_examples_fix_as_on_libcst_parse(moved):
    rules = all_rules()
    for label, source, settings, codes in snapshot.sources():
        chosen = [r for r in rules if codes is None or r.code in codes]
        _same(Linter(chosen, dict(settings, may=True)), source, label)
    # the fixes are moved (none is not on these sources since stop 44: 1,124 moved; a layout other
    # than libcst's default, past an operator's spacing, inside the replaced node would not be)
    assert moved["moved"] > 1000 and moved["unpaired"] < moved["moved"] / 100, moved


# Layouts where the user's text and the converted module differ most: the fix must keep the
# user's comments, line breaks, parentheses and spacing inside what it rewrites. One is not
# moved (``translate.Unpaired``: parentheses the conversion does not hold, ``((x))``, inside a
# node a fix carries) and falls back to libcst.
LAYOUTS = {
    "comments in a call": """import torch
def f(x):
    return torch.log(  # the probabilities
        torch.softmax(
            x,  # logits
            dim=-1,
        )
    )
""",
    "statements on one line": """import torch
def f(x, y): a = torch.log(torch.softmax(x, -1)); b = torch.log(torch.sigmoid(y)); return a + b
""",
    "one-line suite": """import torch
def f(x, t):
    if t: return torch.log(torch.softmax(x, dim=1))
    while t: t = torch.log(1 + torch.exp(x))
    return x
""",
    "parentheses and continuation": """import torch
def f(x):
    y = ((torch.log((torch.softmax(x,-1)))))
    z = torch.log(1 + \\
        torch.exp(x))
    return y, z
""",
    "implicit concatenation and tabs": """import torch
def f(x):
\ts = ("a" "b")
\treturn torch.log(torch.softmax(x, -1)), s
""",
    "cross entropy on a name": """import tensorflow as tf
def loss(h, W, b, y_):
    y_conv = tf.nn.softmax(tf.matmul(h, W) + b)   # the probabilities
    cross_entropy = -tf.reduce_sum(y_ * tf.log(y_conv))
    return cross_entropy
""",
    "single where": """import tensorflow as tf
def f(x):
    return tf.where(x != 0,   1.0 / x,   tf.zeros_like(x))
""",
    "decorated, async, nested": """import torch
class M(torch.nn.Module):
    @torch.no_grad()
    def a(self, x):
        def inner(v):
            return torch.log( torch.softmax( v , -1 ) )
        return inner(x)
    async def b(self, x):
        return torch.log(1 + torch.exp(x))
""",
}


@pytest.mark.parametrize("label", sorted(LAYOUTS))
def test_layouts_fix_as_on_libcst_parse(label, moved):
    linter = Linter(list(all_rules()), {"may": True})
    _same(linter, LAYOUTS[label].encode(), label)  # moved, or (most of these) linted on libcst's parse


def test_commas_and_parentheses_are_paired_with_the_user_s():
    """The conversion gives each item but the last a comma of its own, as libcst's parse does,
    and ``pair`` maps it, and the parentheses precedence needs, to the user's: a rule that copies
    one (``comma=a.comma``, ``lpar=old.lpar``) writes the user's. Parentheses the conversion does
    not hold (``((x))``: one pair more) stay unpaired."""
    text = "y = f(a ,  b, c)\nz = -( p * q).sum()\nw = ((x)) * 2\n"
    converted, spans = from_ast.convert(ast.parse(text), text)
    parsed = cst.parse_module(text)
    twins = translate.pair(converted, spans, parsed)
    call, user_call = converted.body[0].body[0].value, parsed.body[0].body[0].value
    assert [type(a.comma).__name__ for a in call.args] == ["Comma", "Comma", "MaybeSentinel"]
    assert converted.code == "y = f(a, b, c)\nz = -(p * q).sum()\nw = x * 2\n"  # libcst's default formatting
    assert twins[id(call.args[0].comma)] is user_call.args[0].comma  # written ``a ,  b``
    assert twins[id(call.args[1].comma)] is user_call.args[1].comma
    product = converted.body[1].body[0].value.expression.func.value
    user_product = parsed.body[1].body[0].value.expression.func.value
    assert twins[id(product.lpar[0])] is user_product.lpar[0] and twins[id(product.rpar[0])] is user_product.rpar[0]
    x = converted.body[2].body[0].value.left
    assert not x.lpar and len(parsed.body[2].body[0].value.left.lpar) == 2


def test_each_tuple_s_parentheses_are_paired_with_its_own():
    """A tuple's parentheses, and a generator's, are its own nodes (libcst's default is one pair
    that every tuple made would share, paired with whichever user's tuple came last)."""
    text = "a = ( 1, 2)\nb = (3, 4 )\nc = sum(( x for x in y), 0)\nd = 5, 6\n"
    converted, spans = from_ast.convert(ast.parse(text), text)
    parsed = cst.parse_module(text)
    twins = translate.pair(converted, spans, parsed)
    for k in (0, 1):
        made, user = converted.body[k].body[0].value, parsed.body[k].body[0].value
        assert twins[id(made.lpar[0])] is user.lpar[0] and twins[id(made.rpar[0])] is user.rpar[0]
    gen = converted.body[2].body[0].value.args[0].value
    assert twins[id(gen.lpar[0])] is parsed.body[2].body[0].value.args[0].value.lpar[0]
    bare = converted.body[3].body[0].value  # written without: the conversion's stay unpaired
    assert bare.lpar and not parsed.body[3].body[0].value.lpar and id(bare.lpar[0]) not in twins


def test_statements_sharing_a_line_are_paired_one_by_one():
    """``a; b``: libcst holds both on one line, the converted module on two; the statements
    pair, the body's lines do not (a fix replacing a whole line falls back to libcst's parse)."""
    text = "x = 1; y = 2\nz = 3\n"
    converted, spans = from_ast.convert(ast.parse(text), text)
    parsed = cst.parse_module(text)
    twins = translate.pair(converted, spans, parsed)
    first, second, third = converted.body
    assert twins[id(first.body[0])] is parsed.body[0].body[0]
    assert twins[id(second.body[0])] is parsed.body[0].body[1]
    assert twins[id(third.body[0])] is parsed.body[1].body[0]
    assert not {id(first), id(second), id(third)} & set(twins)  # the lines of that body: none


def test_one_line_suites_and_two_space_files_are_moved(moved):
    """A body libcst holds as a one-line suite pairs statement by statement; a file indented
    by two spaces gives the converted module its indentation (which a fix may lay code out by)."""
    linter = Linter(list(all_rules()), {})
    suite = b"import torch\ndef f(x, t):\n    if t: return torch.log(torch.softmax(x, dim=1))\n    return x\n"
    _same(linter, suite, "suite")
    two = b"import torch\n\n\ndef f(x):\n  y = torch.log(torch.softmax(x, dim=1))\n  return y\n"
    _same(linter, two, "two spaces")
    # the rules ran on libcst's parse only for _same's references (a lint and a fix, twice)
    assert moved["unpaired"] == 0 and moved["moved"] >= 4 and moved["libcst runs"] == 4


@pytest.mark.parametrize("text", [
    "x = 1\n", "def f():\n  return 1\n", "if x: pass\nclass A:\n\t@d\n\tdef f(s): pass\n",
    "def f(\n a): return a\nfor i in x:\n        y\n", "try:\n   pass\nexcept E:\n   pass\n"])
def test_the_converted_module_is_indented_as_libcst_reads_the_file(text):
    converted, _ = from_ast.convert(ast.parse(text), text)
    assert converted.default_indent == cst.parse_module(text).default_indent


def test_a_string_is_converted_as_written():
    """Its quotes, prefix and escapes as the user wrote them; an implicit concatenation (one
    constant to CPython) and a triple-quoted string as the value's repr."""
    text = 'a = "x"\nb = r"\\d"\nc = "p" "q"\nd = """doc"""\ne = f"{k}"\n'
    converted, _ = from_ast.convert(ast.parse(text), text)
    values = [line.body[0].value for line in converted.body]
    assert [v.value for v in values[:4]] == ['"x"', 'r"\\d"', "'pq'", "'doc'"]
    assert isinstance(values[4], cst.FormattedString)


_PERTURBED = (
    (r"\(", "( "),  # a space inside each parenthesis
    (r", ", " , "),  # a space before each comma
    (r"(\w) ([*+/-]) (\w)", r"\1\2\3"),  # operators written tight
    (r", ", ",\n        "),  # arguments broken over lines
    (r"(\w) ([*+/-]) (\w)", "\\1 \\2\n        \\3"),  # broken after each operator (a syntax error outside brackets)
    (r"\(", "(  # c\n        "),  # a comment and a line break after each opening parenthesis
    (r",", ",  # c\n        "),  # ... after each comma
    (r"(\w)\)", r"\1,\n    )"),  # a trailing comma, the closing parenthesis on a line of its own (black's)
)


def test_fixes_on_pages_written_otherwise_are_libcst_s(moved):
    """Each rule page's Bad blocks written with other spacing and line breaks: every finding,
    fix (its edits and the fixed text) and message is the one the rules give on libcst's parse,
    whether the fix was moved or the file fell back (a rule may read the formatting around what
    it rewrites)."""
    rules = all_rules()
    compared = 0
    for label, source, settings, codes in snapshot.sources():
        if not label.startswith("page:") or ":bad:" not in label:
            continue
        linter = Linter([r for r in rules if codes is None or r.code in codes], dict(settings, may=True))
        text = source.decode()
        for pattern, replacement in _PERTURBED:
            variant = re.sub(pattern, replacement, text)
            if variant == text:
                continue
            data = variant.encode()
            got, expected = linter.lint_source(data, "v.py"), linter.lint_source(data, "v.py", site_filter=False)
            assert _rows(got) == _rows(expected), label  # messages too: a node a rule made is quoted as written
            fixed = linter.fix_source(data, "v.py", unsafe=True)
            assert fixed.fixed_source == linter.fix_source(data, "v.py", unsafe=True, site_filter=False).fixed_source
            compared += 1
    # every fix is moved: the conversion's commas (a trailing one too) and parentheses are paired
    # with the user's, what lies just inside a bracket is its own, and a ``deep_replace`` is made
    # again on the twin (before: 365 of the 1,365 fixes of the first five rewritings fell back)
    assert compared > 300 and moved["moved"] > 1000 and moved["unpaired"] == 0, (compared, moved)



NOQA_LAYOUTS = {
    "after code": "import torch\nx = torch.log(torch.softmax(y, -1))  # noqa: NAN101, NAN999\nz = 1  # noqa: NAN101\n",
    "a tab, then another comment": "def f():\n    a = 1\t# noqa: NAN103  # keep\n    return a\n",
    "only code, no space": "w = 2 #noqa:NAN102,NAN104\n",
    "a name and a code": "w = 2  # NOQA: log-softmax NAN105\n",
    "in a call broken over lines": "import torch\ny = torch.log(  # noqa: NAN104\n    torch.exp(x),  # noqa: NAN101\n)\n",
    "non-ASCII before it": "s = 'naïve é'  # noqa: NAN101\n",
    "CRLF": "import torch\r\nz = 1  # noqa: NAN101\r\nw = torch.log(torch.softmax(y, -1))  # noqa: NAN102\r\n",
    "own line and a string": "# noqa: NAN105\ns = '# noqa: NAN101'\nt = 1  # noqa\n",
    "a used one": "import torch\nx = torch.log(torch.softmax(y, -1))  # noqa: NAN101\n",
}


@pytest.mark.parametrize("label", sorted(NOQA_LAYOUTS))
def test_unused_noqa_is_judged_from_the_tokens_without_libcst_s_analysis(label, moved):
    """NAN002 judges the directives of a module made of CPython's tree: read from the file's
    tokens, as libcst's comments give them; its fix, moved onto libcst's parse, rewrites the
    user's comment as on libcst's own analysis."""
    for rules in ([r for r in all_rules() if r.code == "NAN002"], list(all_rules())):
        linter = Linter(rules, {"may": True})
        source = NOQA_LAYOUTS[label].encode()
        before = moved["libcst runs"]
        got = linter.lint_source(source, "n.py")
        fixed = linter.fix_source(source, "n.py", unsafe=True)
        assert moved["libcst runs"] == before  # no analysis on libcst's parse: the fixes were moved
        _same(linter, source, label)
        assert got.findings or label == "a used one"
        assert _rows(got) == _rows(linter.lint_source(source, "n.py", site_filter=False))
        assert fixed.fixed_source == linter.fix_source(source, "n.py", unsafe=True, site_filter=False).fixed_source


@pytest.mark.parametrize("text", [
    # the mission's hand-written cross entropy, written tight (the Bad block of NAN104's page, spaced)
    "import tensorflow as tf\ndef loss(h, W, b, y_):\n    y_conv = tf.nn.softmax(tf.matmul(h, W) + b)\n"
    "    return -tf.reduce_sum(y_*tf.log(y_conv))\n",
    # diffusers' shap_e renderer: the divided expression in parentheses of its own
    'import torch\ndef volume_query_points(volume, grid_size):\n    indices = torch.arange(grid_size**3, device=volume.bbox_min.device)\n    zs = indices % grid_size\n    ys = torch.div(indices, grid_size, rounding_mode="trunc") % grid_size\n    xs = torch.div(indices, grid_size**2, rounding_mode="trunc") % grid_size\n    combined = torch.stack([xs, ys, zs], dim=1)\n    return (combined.float() / (grid_size - 1)) * (volume.bbox_max - volume.bbox_min) + volume.bbox_min\n',
    "import torch\ndef f(x):\n    return torch.log(1+torch.exp(x))\n",
    # tflearn's distances.py: a call broken over lines inside the root a fix guards (its copy, by
    # fixes.replaced, is made again of the user's twin; the carried call is compared but for
    # what its own parentheses hold)
    "import tensorflow as tf\ndef euclidean(a, b):\n    return tf.sqrt(tf.reduce_sum(tf.square(a - b),\n"
    "                                 reduction_indices=0))\n",
    "import torch\ndef f(x, m):\n    return torch.log(torch.softmax(x.masked_fill(m,\n        0.0), dim=-1))\n",
])
def test_operators_spaced_otherwise_or_parenthesized_parents_are_moved(text, moved):
    """Spacing around an operator, a carried node's parent in parentheses of its own, a line
    break inside a call a fix carries whole: the fix never reads them, so it is moved onto
    libcst's parse (not found again there) and is the one libcst's analysis gives."""
    linter = Linter(list(all_rules()), {"may": True})
    source = text.encode()
    got = linter.lint_source(source, "m.py")
    assert any(f.edits for f in got.findings)
    assert moved["moved"] and moved["unpaired"] == 0 and moved["libcst runs"] == 0, moved
    _same(linter, source, text)


@pytest.mark.parametrize("made, written, alike", [
    ("y_ * tf.log(p)", "y_*tf.log(p)", True),
    ("-x", "- x", True),
    ("a if b else c", "a  if b else c", False),
    ("f(a, b)", "f(a,b)", True),  # a comma: paired with the user's, which a fix carries
    ("f(a, -1)", "f(a,\n  -1)", True),  # the space before a unary minus is the comma's
    ("( x )", "(x)", True),  # paired parentheses: a fix that keeps them keeps the user's
    ("(x)", "(  # c\n x)", True),  # a comment, a line break just inside: the bracket's own too
    ("(x)", "((x))", False),
    ("x == None", "x==None", True),
    ("f(a, b)", "f(a, c)", False),
    ("f(a + b)", "f(a +\n  b)", True),  # a fix lays a call out by the user's twin, when applied
    ("f(a + b)", "f(a +  # c\n  b)", True),
    ("f(a, b)", "f(a,\n  b)", True),
    ("f(a, b)", "f(a ,b)", True),
    ("f(a, b)", "f(a b)", False),  # not the same tokens
    ("f((a), b)", "f(a, b)", False),
])
def test_alike_but_operators(made, written, alike):
    assert translate._alike_but_operators(made, written) is alike


@pytest.mark.parametrize("made, written, alike", [
    ("f(a, b)", "f(a,\n  b)", True),  # inside a call's parentheses: a node carried whole
    ("x[a, b]", "x[a,\n  b]", True),
    ("[a, b]", "[a,\n b]", True),
    ("( a + b)", "(a + b)", True),  # a group's own parentheses: paired, a rule that keeps them keeps the user's
    ("(f(a, b))", "( f(a,\n b))", True),
    ("(a + b)", "(\n a + b)", True),
    ("(a + b)", "(a + b,)", False),
    ("(f(a, b))", "(f(a,\n b))", True),
    ("f(a, b), c", "f(a, b),c", True),  # outside any bracket: a comma's, paired
    ("f(a, b) + c", "f(a, b)+ c", True),
    ("( a + b), c", "(a + b), c", True),
])
def test_alike_nested(made, written, alike):
    assert translate._alike_but_operators(made, written, nested=1) is alike


def test_alike_in_a_parent_but_for_its_arguments():
    """A carried node's parent: what is inside an argument's own call does not count, nor a
    sibling's comma (the conversion's commas are paired with the user's: a fix that carries one
    writes the user's); its parentheses do."""
    assert translate._alike_but_operators("f(g(a, b), c)", "f(g(a,\n b), c)", nested=2)
    assert translate._alike_but_operators("f(g(a, b), c)", "f(g(a, b),\n c)", nested=2)
    assert not translate._alike_but_operators("f(g(a, b), c)", "f(( g(a, b)), c)", nested=2)


