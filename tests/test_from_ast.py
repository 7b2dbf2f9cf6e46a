"""libcst's nodes made from CPython's tree (nanlint/source/from_ast.py), and the engine's
use of them: the rules run on that module first, and libcst parses only a file where
they find something.  ``tests/test_speed.py::test_prefilter_never_hides_a_finding``
compares every finding with and without this gate on the rule pages, the fixtures and
framework files; here, the conversion itself and the engine's decisions."""

from __future__ import annotations

import ast
from pathlib import Path

import libcst as cst
import pytest

from conftest import missing_framework
from nanlint.lint import engine as engine_mod
from nanlint.lint.engine import Linter
from nanlint.rules.base import all_rules
from nanlint.source import from_ast

SITE = Path(cst.__file__).resolve().parent.parent

# each: the conversion's code must parse back into the same CPython tree
SNIPPETS = [
    # precedence: the parentheses CPython's tree drops must come back where they bind
    "y = a / (b + c) - (d - e) - f\n", "y = (a ** b) ** c + a ** (b ** c) + (-a) ** b + a ** -b\n",
    "y = not (a and b) or (c or d) and e\n", "y = (a and b) and c\n", "y = (a < b) < c\n",
    "y = (a if b else c) if d else (e if f else g)\n", "y = (lambda: 1)() + (yield)\n",
    "y = (await x).z\n", "y = (a + b).c[d](e)\n", "y = -(-a) + ~(a | b) ^ (c & d) << (e >> f)\n",
    "y = [*a, *(b or c)]\nf(*(a or b), **(c or d))\n", "(y := f(x))\nif (n := len(a)) > 1:\n    pass\n",
    # subscripts: a tuple of indices, one index that is a tuple, slices, a starred index
    "m[a, b] = m[(a, b)] + m[(a), (b)] + m[a,] + m[(a,)] + m[()] + m[1:2, ::3] + m[(d <= 2) & (d > 1), :]\n",
    "m[(\n    a,\n    b\n)] = 1\n", "y = m[*a]\n",
    # strings: concatenation, bytes, f-strings with nested quotes, conversions and specs
    "s = 'a' 'b' + b'c' + u'd' + '''e\n''' + r'\\x'\n", "s = f\"it's {x!r:>{w}} {y['k']}\" + f'a\"b{c}'\n",
    "s = f\"{', '.join(f'{i[0]}' for i in x)}\"\n", "s = f'{{braces}} {x}'\n",
    # numbers as written, constants
    "y = 1_000 + 0x1F + 1e-8 + 2j + .5 + None + True + ...\n",
    # calls: a positional after a keyword, star arguments
    "f(a, *b, c=1, *d, **e)\nf(x=1, *y)\n",
    # parameters of every kind
    "def f(a, b=1, /, c=2, *args, d, e=3, **kw) -> int:\n    return a\n",
    "def f(a, *, b):\n    pass\n", "g = lambda a, b=1, *c, d, **e: a\n", "def f(a, /):\n    pass\n",
    # statements
    "@dec\n@dec2(x)\nclass C(Base, metaclass=M, *bases):\n    x: int = 1\n    y: int\n\n"
    "    async def m(self):\n        async with a as (b, c), d:\n            async for i in x:\n"
    "                await i\n        return [j async for j in y]\n",
    "if a:\n    pass\nelif b:\n    pass\nelse:\n    if c:\n        pass\n",
    "for i, (j, k) in x:\n    continue\nelse:\n    break\nwhile a:\n    pass\nelse:\n    pass\n",
    "try:\n    pass\nexcept (A, B) as e:\n    raise C from e\nexcept D:\n    raise\nelse:\n    pass\n"
    "finally:\n    del a, b[0], c.d\n",
    "try:\n    pass\nexcept* E as g:\n    pass\n",
    "import a.b.c as d, e\nfrom .. import f\nfrom .g import (h as i, j)\nfrom k import *\n",
    "def f():\n    global a, b\n    nonlocal_ = 1\n    def g():\n        nonlocal nonlocal_\n    yield from x\n",
    "x = y = z\nx += 1\nx @= m\nassert x, 'message'\na, *b = c\n[a, b] = c\n",
    "match x:\n    case 1 | 2:\n        pass\n    case [a, *rest] if a > 0:\n        pass\n    case (a, b) | [a, b]:\n"
    "        pass\n    case a, b:\n        pass\n    case {'k': v, **kw}:\n        pass\n"
    "    case Point(1, y=2) as p:\n        pass\n    case None | True:\n        pass\n"
    "    case -1 | 1.5 | a.b | -1+2j:\n        pass\n    case (1 | 2) as q:\n        pass\n"
    "    case [*_] | []:\n        pass\n    case _:\n        pass\n",
    "y = {a: b, **c}\ny = {a, *b}\ny = {k: v for k, v in x if k if v}\ny = (i for i in x)\n"
    "y = [i for i in x for j in i]\n",
]


@pytest.fixture(autouse=True)
def _every_noted_node_kept(monkeypatch):
    """Every node the conversion notes is kept alive while a test runs: a node made, noted and
    dropped keeps its own id, which a later node could otherwise take (the check below then
    passed or failed by chance)."""
    kept = []
    at, p = from_ast.Expressions.at, from_ast.Expressions.p

    def kept_at(self, made, node):
        kept.append(made)
        return at(self, made, node)

    def kept_p(self, node, need):
        made = p(self, node, need)
        kept.append(made)
        return made

    monkeypatch.setattr(from_ast.Expressions, "at", kept_at)
    monkeypatch.setattr(from_ast.Expressions, "p", kept_p)
    yield kept


def _same(text: str) -> None:
    tree = ast.parse(text)
    module, spans = from_ast.convert(tree, text)
    assert ast.dump(ast.parse(module.code)) == ast.dump(tree), module.code
    # every place noted is a node of the module: none of a node made and dropped (a copy was
    # kept, in parentheses), whose id a later node could take
    assert set(spans) <= {id(module)} | {id(n) for n in walk_nodes(module)}


@pytest.mark.parametrize("text", SNIPPETS)
def test_conversion_reads_back_as_the_same_tree(text):
    _same(text)


def test_conversion_of_framework_sources():
    files = sorted((SITE / "torch" / "nn").rglob("*.py"))[:80] + sorted((SITE / "keras" / "src" / "layers").rglob("*.py"))[:80]
    if len(files) < 100:
        missing_framework("the frameworks' sources are not installed")
    unsupported = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        try:
            _same(text)
        except from_ast.Unsupported:  # the engine parses such a file with libcst instead
            unsupported += 1
    assert unsupported < len(files) // 20


def test_spans_are_cpython_positions():
    text = "import torch\n\n\ndef f(x):\n    y = torch.log(\n        x)\n    return (y\n            + 1)\n"
    tree = ast.parse(text)
    module, spans = from_ast.convert(tree, text)
    positions = from_ast.Spans(spans, lambda n: None)
    call = module.body[1].body.body[0].body[0].value
    assert isinstance(call, cst.Call) and positions[call].start.line == 5 and positions[call].end.line == 6
    assert positions[call].start.column == 8
    returned = module.body[1].body.body[1].body[0].value
    assert positions[returned].start.line == 7 and positions[returned].end.line == 8


def test_an_fstring_it_cannot_build_is_a_blank_string_and_validation_restored():
    """An f-string whose expression holds quotes an f-string of Python < 3.12 cannot hold
    again is converted as a string of spaces (what its expressions hold is not analysed), and
    the nodes made before that was known leave no place behind (their ids would be reused)."""
    text = 'y = g(1) + len(f"""{x.replace("\'", "")}""")\n'
    module, spans = from_ast.convert(ast.parse(text), text)
    call = module.body[0].body[0].value.right
    assert isinstance(call.args[0].value, cst.SimpleString) and call.args[0].value.value == '" "'
    assert set(spans) <= {id(module)} | {id(n) for n in walk_nodes(module)}  # none of a node dropped
    with pytest.raises(cst.CSTValidationError):  # libcst validates again once a conversion is done
        cst.Name("not a name")


def test_type_parameters_are_left_out():
    """CPython 3.12's tree of ``def f[T](x)`` holds ``type_params``: the conversion leaves them
    out (here set by hand on 3.11's tree, which has no such syntax), as the syntax check blanks
    them on an older CPython."""
    text = "def f(x):\n    return x\nclass C(B):\n    pass\n"  # no blank lines: the conversion writes none
    tree = ast.parse(text)
    for node in tree.body:
        node.type_params = [ast.Name("T")]
    module, _ = from_ast.convert(tree, text)
    assert module.code == text


def walk_nodes(root):
    from nanlint.source.walk import child_nodes

    stack = [root]
    while stack:
        for child in child_nodes(stack.pop()):
            yield child
            stack.append(child)


def test_makers_give_what_the_constructors_give():
    """``make.M.X(...)`` (the conversion's constructors, without the dataclass's ``__init__``)
    against ``cst.X(...)``, for every node of libcst's parse of a rich source: the same fields
    given, the same node; a field left out takes the constructor's default, a default
    factory's value made once per node class (``make.formatting``) and shared."""
    import dataclasses

    from nanlint.source.make import M, formatting
    from nanlint.source.walk import building

    kinds: dict[type, list] = {}

    class Collect(cst.CSTVisitor):
        def on_visit(self, node):
            kinds.setdefault(type(node), []).append(node)
            return True

    for text in [*SNIPPETS, Path(from_ast.__file__).read_text()]:
        try:
            cst.parse_module(text).visit(Collect())
        except cst.ParserSyntaxError:  # a snippet of syntax libcst's parser does not read
            continue
    assert len(kinds) > 80
    for kind, nodes in kinds.items():
        fields = [f for f in dataclasses.fields(kind) if f.init]
        for node in nodes[:20]:
            given = {f.name: getattr(node, f.name) for f in fields}
            made = getattr(M, kind.__name__)(**given)
            assert type(made) is kind and made.deep_equals(node), kind
            assert all(getattr(made, name) is value for name, value in given.items())
        required = {f.name: getattr(nodes[0], f.name) for f in fields
                    if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
        with building():  # the constructor as the conversion would call it: no validation
            c = kind(**required)
        a, b = getattr(M, kind.__name__)(**required), getattr(M, kind.__name__)(**required)
        assert a.deep_equals(c), kind
        for f in fields:
            if f.default_factory is not dataclasses.MISSING:
                assert getattr(a, f.name) is getattr(b, f.name) is formatting(kind)[f.name], (kind, f.name)
    with pytest.raises(AttributeError):
        M.parse_module  # noqa: B018 - not a node class


def test_a_conversion_leaves_no_reference_cycle():
    """What exists when a conversion ends is frozen out of the collector's reach
    (``walk.building``, in a run that freezes its heap); a reference cycle left behind (the
    builder and a table of its own bound methods, holding every node's span) would never be
    freed: the training corpus's one process grew to 704 MB with one."""
    import gc

    from nanlint.source import walk

    text = Path(walk.__file__).read_text()
    tree = ast.parse(text)
    gc.collect()
    module, spans = from_ast.convert(tree, text)
    assert module.body and spans
    del module, spans
    assert gc.collect() == 0


@pytest.fixture
def parses(monkeypatch):
    """The sources the engine hands to libcst's parser."""
    seen: list = []
    real = engine_mod.parse

    def counting(source, checked=None):
        seen.append(source)
        return real(source, checked)

    monkeypatch.setattr(engine_mod, "parse", counting)
    return seen


def test_libcst_parses_only_files_with_a_finding(parses):
    linter = Linter([r for r in all_rules() if r.default], {})
    clean = b"import torch\n\ndef f(z):\n    return torch.log(torch.sigmoid(z) + 1)\n"
    flagged = b"import torch\n\ndef f(z):\n    return torch.log(torch.softmax(z, dim=1))\n"
    result = linter.lint_source(clean, "clean.py")
    assert not result.findings and not result.skipped and parses == []  # the site filter let it through
    result = linter.lint_source(flagged, "flagged.py")
    assert [f.code for f in result.findings] == ["NAN101"] and parses == [flagged]
    assert result.findings[0].start == (4, 12) and result.findings[0].edits  # libcst's tree: the fix is there
    # a finding only the may tier shows is still counted; no fix of it is shown: libcst never parses it
    weak = b"import tensorflow as tf\n\ndef inv(x):\n    return tf.where(x != 0, 1 / x, tf.zeros_like(x))\n"
    assert linter.lint_source(weak, "weak.py").hidden == 1 and parses == [flagged]
    fixed = linter.fix_source(clean, "clean.py", unsafe=True)
    assert fixed.fixed == 0 and fixed.fixed_source is None and parses == [flagged]


def test_an_fstring_it_does_not_build_leaves_the_rules_on_cpythons_tree(parses, monkeypatch):
    """The rules run on the converted module (an f-string it cannot build is a blank string),
    not on libcst's parse, which spells the fix's edits only."""
    analysed_on_libcst = []
    real = Linter.run_rules
    monkeypatch.setattr(Linter, "run_rules", lambda self, *a, **k: analysed_on_libcst.append(1) or real(self, *a, **k))
    linter = Linter([r for r in all_rules() if r.default], {})
    source = (b"import torch\n\ndef f(z, k):\n    print(f\"\"\"{k.replace(\"'\", '')}\"\"\")\n"
              b"    return torch.log(torch.softmax(z, dim=1))\n")
    found = linter.lint_source(source, "m.py").findings
    assert [(f.code, f.start) for f in found] == [("NAN101", (5, 12))] and found[0].edits
    assert parses == [source] and analysed_on_libcst == []


def test_unused_noqa_is_judged_on_libcst(parses):
    rules = [r for r in all_rules() if r.default or r.code == "NAN002"]
    source = b"import torch\n\ndef f(z):\n    return torch.log(torch.sigmoid(z) + 1)  # noqa: NAN101\n"
    codes = [f.code for f in Linter(rules, {}).lint_source(source, "n.py").findings]
    assert codes == ["NAN002"] and parses == [source]


def test_libcst_concrete_node_classes_have_no_subclass():
    """The analysis compares node classes with ``type(x) is cst.Name`` where it is hot: libcst's
    classes are ABCs, and ``isinstance`` on one that does not match runs ``ABCMeta``'s check
    (0.2 us; 5 million a training-corpus run). That equals ``isinstance`` only while no
    concrete node class has a subclass: a libcst release that adds one must fail here."""
    import inspect

    concrete = [c for c in vars(cst).values() if isinstance(c, type) and issubclass(c, cst.CSTNode)
                and not inspect.isabstract(c) and not c.__name__.startswith("Base")]
    assert len(concrete) > 150
    assert [c.__name__ for c in concrete if c.__subclasses__()] == []
