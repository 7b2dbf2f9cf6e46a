"""A node's code and place read from the source by CPython's positions
(:mod:`nanlint.source.quoting`, ``from_ast.Spans``) are libcst's: ``code_for_node`` of the
same node in libcst's parse (its own parentheses, not its call's; an argument through its
comma; continuation lines less the block's indentation) and its syntactic position, in
characters. The rules quote code in messages through it (``FileContext.code``)."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from nanlint.semantic.context import FileContext
from nanlint.source import from_ast
from nanlint.source.syntax import precheck
from nanlint.source.walk import FastVisitor


def _converted(source: str) -> FileContext:
    checked = precheck(source.encode())
    module, spans = from_ast.convert(checked.tree, checked.text)
    return FileContext(module, "a.py", text=checked.text, tree=checked.tree, spans=spans)


QUOTED = [
    # (source, the node's code libcst gives: its own parentheses, not its call's)
    ("import torch\ny = torch.log((torch.softmax(x, -1)))\n", "(torch.softmax(x, -1))"),
    ("import torch\ny = torch.log(torch.softmax(x, -1))\n", "torch.softmax(x, -1)"),
    ("import torch\ny = torch.log(( # c\n  torch.softmax(x, -1)  ))\n", "( # c\n  torch.softmax(x, -1)  )"),
    ("import torch\ny = torch.log(torch.softmax(x,-1)) / ( n-1 )\n", "( n-1 )"),
    ("import torch\ny = f('(', torch.softmax(x,-1))\n", "torch.softmax(x,-1)"),
    ("def g():\n    y = f(a,\n          b)\n", "f(a,\n      b)"),
    ("def g():\n    y = f(a,  # c\n          b)\n", "a,  # c\n      "),
    ("y = 'é' + f(x , z)\n", "x , "),
    ("y = f(x for x in z)\n", "x for x in z"),
    ("y = f((x for x in z))\n", "(x for x in z)"),
]


@pytest.mark.parametrize("source,code", QUOTED)
def test_a_node_is_quoted_as_libcst_quotes_it(source, code):
    ctx = _converted(source)
    module = ctx.module
    theirs = cst.parse_module(source)
    mine = {ctx.code(n) for n in _nodes(module)}
    libcst_codes = {theirs.code_for_node(n) for n in _nodes(theirs)}
    assert code in libcst_codes  # the case is what libcst says
    assert code in mine


def _nodes(module):
    out = []

    class All(FastVisitor):
        def _walk(self, node):
            out.append(node)
            super()._walk(node)

    All().walk(module)
    return [n for n in out if type(n).__name__ not in ("Module", "SimpleStatementLine", "IndentedBlock")]


POSITIONED = [
    # (source, the node's type, libcst's syntactic position: (line, column) to (line, column))
    ("y = f(x for x in z)\n", "GeneratorExp", ((1, 6), (1, 18))),  # CPython gives it the call's parentheses
    ("y = f(\n    x for x in z\n)\n", "GeneratorExp", ((2, 4), (2, 16))),
    ("y = (a, b)\n", "Tuple", ((1, 5), (1, 9))),  # CPython's span holds its parentheses
    ("y = f((a - b))\n", "Arg", ((1, 6), (1, 13))),  # an argument holds its value's own parentheses
    ("y = 'é' + g(x)\n", "Call", ((1, 10), (1, 14))),  # characters, not UTF-8 bytes
]


@pytest.mark.parametrize("source,kind,where", POSITIONED)
def test_a_node_is_placed_as_libcst_places_it(source, kind, where):
    ctx = _converted(source)
    wrapper = MetadataWrapper(cst.parse_module(source))
    theirs = wrapper.resolve(PositionProvider)
    libcst_places = {((r.start.line, r.start.column), (r.end.line, r.end.column))
                     for n, r in theirs.items() if type(n).__name__ == kind}
    assert where in libcst_places  # the case is what libcst says
    mine = {ctx.positions.chars(n) for n in _nodes(ctx.module) if type(n).__name__ == kind}
    assert where in mine
