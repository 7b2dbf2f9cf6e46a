"""Positions per statement (nanlint/source/positions.py, issue 22): the same CodeRange as
libcst's whole-module PositionProvider, computed for the one unit (a statement of the
module, or of a def's or class's body) that holds the node asked about."""

from __future__ import annotations

import libcst as cst
import pytest

from nanlint.source.positions import Positions
from nanlint.source.codegen import positions
from nanlint.source.walk import parents, parse

SOURCES = {
    "decorated": "import torch  # c\n\n# lead\n@dec\n@dec2(1,\n      2)\ndef f(x):\n    return x  # noqa\n",
    "semicolons": "a = 1; b = 2\nc = a / b; d = torch.log(c)\nif a: e = 1\n",
    "class": (
        "class M(nn.Module):\n"
        "    \"\"\"Doc.\"\"\"\n\n"
        "    scale = 2  # a class attribute\n\n"
        "    # a comment between methods\n"
        "    @property\n"
        "    def p(self):\n"
        "        return self.scale\n\n"
        "    def forward(self, x, y=(1,\n"
        "                          2)):\n"
        "        s = '''a\n"
        "b'''.strip(); t = x\n"
        "        z = (x +\n"
        "             y) \\\n"
        "            * 2\n"
        "        def inner(q):\n"
        "            class C:\n"
        "                def g(self):\n"
        "                    return torch.log(torch.softmax(q, -1))\n"
        "            return C\n"
        "        return torch.log(z)\n"
    ),
    "tabs": "class A:\n\tdef f(self, x):\n\t\tif x:\n\t\t\treturn x / 2\n\t\treturn x\n",
    "crlf": "import torch\r\n\r\ndef f(x):\r\n    y = torch.exp(x)\r\n    return y / y.sum()\r\n",
    "unicode": "def f(x):\n    naïve = 'é' * 3; ε = 1e-8\n    return torch.log(x + ε)  # é\n",
    "async and nesting": (
        "async def f(x):\n    async with a as b:\n        return await g(x)\n\n"
        "if __name__ == '__main__':\n    def main():\n        return 1\n    main()\n"
    ),
    "footer": "def f(x):\n    return x\n# a footer comment  # noqa\n\n",
    "shared operators": "x = a + 1 if p[0] else -c\ny = {k: b + 2}\nz = [c][0] + d.e - (not f)\n",
}


def lazy_positions(module: cst.Module, text: str) -> Positions:
    up = parents(module)
    return Positions(module, text, lambda node: up.get(id(node)))


def _statement_nodes(module: cst.Module) -> list[cst.CSTNode]:
    out, stack = [], list(module.body)
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(node.children)
    return out


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_every_node_placed_as_the_whole_module_places_it(name):
    text = SOURCES[name]
    module = parse(text)
    whole = positions(module)
    lazy = lazy_positions(module, text)
    nodes = _statement_nodes(module)
    assert nodes
    for node in nodes:
        assert lazy[node] == whole[node], (type(node).__name__, module.code_for_node(node))
    assert lazy._whole is None  # never needed the whole module's


def test_a_node_in_a_method_generates_only_its_statement():
    text = SOURCES["class"]
    module = parse(text)
    log = [n for n in _statement_nodes(module) if isinstance(n, cst.Call) and
           module.code_for_node(n) == "torch.log(z)"][0]
    lazy = lazy_positions(module, text)
    assert lazy[log] == positions(module)[log]
    (unit,) = lazy._done  # one unit generated: the statement, not its method or class
    ret = [n for n in _statement_nodes(module) if isinstance(n, cst.SimpleStatementLine) and
           module.code_for_node(n).strip() == "return torch.log(z)"][0]
    assert unit == id(ret)


def test_statements_that_do_not_pair_up_fall_back_to_the_whole_module():
    text = SOURCES["class"]
    module = parse(text)
    # (``text`` is the module's own text, by construction of FileContext; here CPython's tree
    # holds one statement more than libcst's, so no unit is paired)
    lazy = lazy_positions(module, "x = 1\n" + text)
    whole = positions(module)
    for node in _statement_nodes(module):
        assert lazy[node] == whole[node]
    assert lazy._whole is not None


def test_header_and_footer_comments_are_placed():
    text = "# header\n\ndef f(x):\n    return x\n# footer\n"
    module = parse(text)
    lazy = lazy_positions(module, text)
    comment = module.header[0].comment
    assert lazy[comment] == positions(module)[comment]
    assert lazy[comment].start.line == 1


def test_the_linter_gives_positions_the_syntax_checks_tree(monkeypatch):
    """A file's findings are placed with the tree CPython's syntax check already built: its
    text is not parsed a second time for the statements' lines."""
    from nanlint.lint.engine import Linter
    from nanlint.rules.base import all_rules
    from nanlint.source import positions as positions_mod

    parsed = []
    monkeypatch.setattr(positions_mod, "_module_statements", lambda text: parsed.append(text) or None)
    source = b"import torch\n\n\ndef f(x):\n    p = torch.softmax(x, -1)\n    return torch.log(p)\n"
    result = Linter(all_rules()).lint_source(source, "f.py")
    assert [f.code for f in result.findings] == ["NAN101"] and result.findings[0].start[0] == 6
    assert parsed == []


def _converted(text: str):
    from nanlint.source import from_ast, syntax

    checked = syntax.precheck(text)
    return from_ast.convert(checked.tree, checked.text)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_a_converted_modules_parents_are_found_from_the_statement_asked_about(name):
    """``Parents`` with a converted module's places answers every node as the whole module's
    map does (shared operators and brackets included), and a node of the last statement
    without mapping the others."""
    from nanlint.source.walk import Parents, child_fields

    module, spans = _converted(SOURCES[name])
    whole = parents(module, formatting=False)
    last = Parents(module, formatting=False, spans=spans)
    inner, stack = [], [module.body[-1]]  # its nodes, not below formatting fields (as the map)
    while stack:
        node = stack.pop()
        inner.append(node)
        for field in child_fields(type(node)):
            value = getattr(node, field)
            stack.extend(v for v in (value if isinstance(value, (list, tuple)) else [value])
                         if isinstance(v, cst.CSTNode))
    inner = inner[1:]
    placed = [n for n in inner if id(n) in spans]  # what a rule asks about: nodes with a place
    for node in placed:
        assert last(node) is whole.get(id(node))
    if len(module.body) > 1 and placed:
        assert last._map is None  # only the last statement was mapped
    for node in inner:  # then its operators and brackets, which other statements share
        assert last(node) is whole.get(id(node)), type(node).__name__
    every = Parents(module, formatting=False, spans=spans)
    for node in [module] + _statement_nodes(module):
        assert every(node) is whole.get(id(node)), type(node).__name__
    assert every(cst.Name("elsewhere")) is None
