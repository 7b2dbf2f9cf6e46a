"""The nesting bound of the syntax check (``ast_tree.ast_depth``): it must say "too deep"
wherever the exact count would."""

from __future__ import annotations

from pathlib import Path

import pytest

from nanlint.source import ast_tree, syntax

SOURCES = [
    "x = 1\n",
    "@deco(a + b)\ndef f(x, y=1):\n    return g(x)[0] + h(y, z=[1, 2, 3])\n",
    "try:\n    a = (1 + (2 + (3 + (4 + 5))))\nexcept (A, B) as e:\n    pass\n",
    "match x:\n    case [1, 2, *rest] if rest:\n        y = 1\n",
    "f = lambda a: lambda b: lambda c: a + b + c\n",
    "y = (a and b and c and d and e)\nz = not not not not x\n",
    "x = [[[[[[[[1]]]]]]]]\r\ny = 2\r\n",  # CRLF
    "x = {'k': (1, 2),\n     'j': [f(a.b.c.d) for a in range(3) if a]}\n",
    "class C(Base, metaclass=M):\n    def m(self):\n        with open(p) as f, g() as h:\n"
    "            while x < y < z:\n                x = x ** -1\n",
    "x = a" + " + a" * 300 + "\n",
    "x = " + "(" * 60 + "1" + ")" * 60 + "\n",
    "x = f(" + "g(" * 40 + "1" + ")" * 41 + "\ny = 1\n",
]


@pytest.mark.parametrize("limit", [4, 8, 15, 30, 60, 120, 1000])
def test_nesting_bound_decides_as_the_exact_depth(limit):
    """Statements too short to nest past the limit are not walked; the decision
    (deeper than the limit or not) is the exact count's."""
    sources = list(SOURCES) + [p.read_text() for p in sorted(Path(syntax.__file__).parent.glob("*.py"))]
    for src in sources:
        checked = syntax.precheck(src)
        exact = ast_tree.ast_depth(checked.tree, limit)
        bounded = ast_tree.ast_depth(checked.tree, limit, checked.text)
        assert (exact > limit) == (bounded > limit), (src[:60], limit, exact, bounded)


def test_deep_chain_is_still_too_deep():
    src = "x = a" + " + a" * 1500 + "\n"
    with pytest.raises(syntax.NestingTooDeep):
        syntax.parse(src)



@pytest.mark.parametrize("limit", [1000, 3000])
@pytest.mark.parametrize("large", [False, True])
def test_too_deep_is_nan001_whatever_the_recursion_limit(limit, large):
    """A check on CPython's tree (``Linter.on_tree``, a large file's windows) falls back to
    libcst's parse, which reports NAN001, for an expression past ``MAX_DEPTH``: under the
    default recursion limit because the conversion fails, under a raised one (torch raises it
    to 3000 in any process that imports it) because the depth is measured."""
    import sys

    from nanlint.lint.engine import Linter
    from nanlint.rules.base import all_rules
    from nanlint.source import large as large_mod

    src = "import torch\n\nx = torch.log(p) + " + " + ".join(["a"] * 1100) + "\n"
    if large:
        src += "".join(f"y{i} = torch.relu(z{i}) / 2\n" for i in range(large_mod.LARGE // 20))
    linter = Linter([r for r in all_rules() if r.default], {"edits": False})
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(limit)
    try:
        findings = linter.lint_source(src.encode(), "deep.py").findings
    finally:
        sys.setrecursionlimit(before)
    assert findings and findings[0].code == "NAN001" and "nested more than" in findings[0].message
