"""The shapes rules start from, read from CPython's tree (nanlint/syntax_sites.py), and
the nesting bound of the syntax check: each must say yes wherever the rule (or the
exact count) would."""

from __future__ import annotations

import ast
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


# --- NAN111's gate (nanlint/analysis/gates/statistic_sites.py, issue 22) --------------------------
def stat_site(src: str) -> bool:
    from nanlint.analysis.gates.statistic_sites import statistic_denominator
    return statistic_denominator(ast.parse(src), src)


@pytest.mark.parametrize("src", [
    "y = (r - r.mean()) / r.std()",
    "s = r.std(0)\ny = (r - m) / s",
    "m, v = tf.nn.moments(x, [0])\ny = x / tf.sqrt(v)",
    "var = jnp.mean((x - jnp.mean(x)) ** 2)\ny = (x - mu) / jnp.sqrt(var)",
    "y = x * torch.rsqrt(x.var(0))",
    "y = x * x.var() ** -0.5",                              # a negative power: the base is the denominator
    "y = i / (len(xs) - 1)",
    "y = i / (x.shape[0] - 1)",
    "one = 1\ny = i / (num_steps - one)",                   # a name bound to a constant: may be 1
    "n = len(xs)\ny = torch.arange(n) / (n - 1)",
    "from torch import std as sd\ny = x / sd(x)",           # the statistic under another name
    "sd = torch.std\ny = x / sd(x)",
    "from .stats import spread\ny = x / spread(x)",         # a project module's value: unknown
    "def f(r):\n    s = r.std()\n    return s\ny = x / f(x)",
    "class N:\n    def __init__(self, s):\n        self.s = s\n    def f(self, x):\n        return x / self.s\nN(x.std())",
    "def f(x, s=None):\n    return x / s\nf(x, s=x.std().view(-1, 1))",
    "y = x / torch.div(a, b.std())",
    "class P:\n    def __init__(self, xs):\n        self.k = len(xs) - 1\n    def f(self, x):\n"
    "        return x / self.k",                      # the attribute that was set
    "cache[i] = x.std()\ny = x / cache[0]",            # a container the statistic is stored in
    "class Net(nn.Module):\n    def forward(self, r):\n        return r.std()\ny = x / net(x)",  # a model's call
    "from torch.nn import Module as M\nclass Net(M):\n    def forward(self, r):\n        return r.std()\n"
    "y = x / net(x)",
])
def test_statistic_denominator_sites(src):
    assert stat_site(src)


@pytest.mark.parametrize("src", [
    "y = x / 2",
    "y = x / torch.sqrt(h)",                    # a root of something not a variance
    "y = x / (a + x.std())",                    # a sum: not every value is the statistic
    "y = x / (a - 1)",                          # ``a``: not a count
    "y = x / (x.shape[0] - 2)",
    "s = x.std()\ny = s ** 2",                  # no division
    "y = beta1 ** step",                        # a power with no negative exponent
    "def f(s):\n    return x / s\ng(x.std())",     # a std passed to another function
    "y = (x - 1) * z / w",
    # ``self.k = n - 1`` binds the attribute k, not self: another attribute is no statistic
    # (issue 22: every diffusers pipeline sets one, and every ``x / self.a.b`` of it passed)
    "class P:\n    def __init__(self, xs):\n        self.k = len(xs) - 1\n    def f(self, x):\n"
    "        return x / self.vae.config.scaling_factor",
    "cache[i] = len(xs) - 1\ny = x / i",              # an index is read, not bound
    # a __call__ of a class that is no model (a pipeline returning its output): not a model's call
    "class Pipe(Base):\n    def __call__(self, r):\n        return r.std()\ny = x / run(x)",
])
def test_no_statistic_denominator_site(src):
    assert not stat_site(src)
