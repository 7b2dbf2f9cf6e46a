"""The shapes rules start from, read from CPython's tree (nanlint/syntax_sites.py), and
the nesting bound of the syntax check: each must say yes wherever the rule (or the
exact count) would."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from nanlint.source import ast_tree, syntax
from nanlint.analysis.gates import syntax_sites
from nanlint.analysis.gates.sites import last_names
from nanlint.vocabulary import ops as o

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


def zero_log(src: str) -> bool:
    """NAN107's site: a log whose operand may hold a source's value."""
    from nanlint.analysis import zeros

    return zeros.site(ast.parse(src), src, frozenset({o.LOG}), affine=True)


@pytest.mark.parametrize("src", [
    "p = F.softmax(logits, -1)\nq = p.view(-1)\ny = torch.log(q)",                 # through names
    "def f(p):\n    return torch.log(p)\ny = f(torch.sigmoid(self.logits))",        # a parameter's argument
    "def g(x, p):\n    return p.log()\ny = g(x, p=torch.relu(h))",                  # by keyword
    "class M:\n    def __init__(self):\n        self.head = nn.Sigmoid()\n"
    "    def loss(self, x):\n        return torch.log(self.head(x))",               # an attribute
    "def probs(z):\n    return z.softmax(-1)\ny = torch.log(probs(h @ w))",            # a local function's return
    "s = 1 / (1 + torch.exp(-(x @ w)))\ny = torch.log(1 - s)",                     # a hand-written sigmoid
    "d = torch.clamp(a - b, min=0)\ny = torch.log(d)",                             # clamped at 0
    "self.head = nn.Sequential(nn.Linear(4, 2), nn.Softmax(1))\ny = torch.log(self.head(x))",  # a model
    "h = F.dropout(x, 0.1)\ny = torch.log(h)",                                      # a dropout output
    "self.drop = nn.Dropout(0.1)\ny = torch.log(self.drop(x))",                    # a dropout layer
    "y_conv = [0.0, 1.0]\nce = tf.log(y_conv)",                                     # a literal holding 0
    "keep = t != ignore\nn = keep.sum()\ny = torch.log(n)",                         # a count of a mask
    "h = x @ W + b\ny = tf.log(h)",                                                 # an affine output
    "from torch import log as ln\ny = ln(q)",                                       # the sink renamed
])
def test_zero_sink_sites(src):
    assert zero_log(src)


@pytest.mark.parametrize("src", [
    "y = torch.log(x)",                                        # a value nothing computes here
    "def f(p):\n    return torch.log(p)\ny = f(x)",           # its callers pass data
    "p = F.softmax(z, -1)\ny = torch.log(x + 1)",              # the source reaches no log
    "y = math.log(2) * torch.softmax(z, -1)",
    "p = torch.sigmoid(z)\ny = p / 2",                          # no log at all
    "p = F.softmax(z, -1)\ny = torch.log(p)",                   # a softmax of a value not called a logit (NAN110's)
    "n = mask.sum()\ny = torch.log(n)",                         # a mask passed in (NAN110's)
    "n = (ids != pad_id).sum()\ny = torch.log(n)",              # a padding mask (NAN110's)
    "d = torch.clamp(v, min=1e-6)\ny = torch.log(d)",           # clamped away from 0
    "n = x.sum(-1)\ny = torch.log(n + 1e-6)",                   # a reduction's axis is no zero
    "y = torch.log(x.view(-1, 0))",                              # nor a layout op's argument
    "f = lambda p: torch.log(p)",                                # a lambda's parameter: no value in sight
    "d = torch.clamp(v - 1, min=0)\ny = torch.log(d + 1)",     # guarded where it is used
    "d = torch.clamp(x + 3, min=0)\ny = torch.log(d)",          # a clamp of no value shown to go negative
    "self.norm = RMSNorm(dim, eps=eps)\nact = F.relu(h)\ny = torch.log(self.norm(x))",  # a layer's arguments
])
def test_no_zero_sink_site(src):
    assert not zero_log(src)


@pytest.mark.parametrize("features, expected", [
    ("import torch.nn.functional as F\n\ndef activations(x):\n    return F.relu(x)\n", True),
    ("from .layers import act\n", True),                     # re-exported by the module imported
    ("def activations(x):\n    return x * 2\n", False),      # its value is no source
])
def test_zero_sink_site_of_another_module(tmp_path, features, expected):
    """A name imported from a module of the project is searched there (the findings it
    leads to are display-only, pointing to that module); a third-party one is not."""
    from nanlint.analysis import zeros

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "features.py").write_text(features)
    (pkg / "layers.py").write_text("import torch\n\ndef act(x):\n    return torch.sigmoid(x @ w)\n")
    src = "import torch\nfrom .features import activations\nfrom .layers import act\n" \
          "y = torch.log(activations(x))\n"
    if "act\n" in features:
        src = src.replace("from .layers import act\n", "").replace("import activations", "import act as activations")
    train = pkg / "train.py"
    train.write_text(src)
    assert zeros.site(ast.parse(src), src, frozenset({o.LOG}), path=train) is expected
    assert not zeros.site(ast.parse(src), src, frozenset({o.LOG}))  # no file: no module to read
    third = src.replace("from .features", "from einops")
    assert not zeros.site(ast.parse(third), third, frozenset({o.LOG}), path=train)


@pytest.mark.parametrize("src, expected", [
    ("y = torch.div(1, 1 + torch.exp(-logits))\nz = x / y", True),    # a hand-written sigmoid, as a call
    ("y = torch.div(1, 1 + torch.exp(-h))\nz = x / y", False),        # of no logit
    ("y = a.truediv(b)\nz = x / y", False),                            # a method's one argument (it raised)
])
def test_a_division_written_as_a_call(src, expected):
    from nanlint.analysis import zeros

    assert zeros.site(ast.parse(src), src, frozenset({o.DIVIDE}), divide=True) is expected


def test_an_accumulator_is_not_a_zero_constant():
    from nanlint.analysis import zeros

    def div(src: str) -> bool:
        return zeros.site(ast.parse(src), src, frozenset({o.DIVIDE}), divide=True)

    assert not div("n = 0\nfor b in batches:\n    n += len(b)\nmean = total / n")
    assert div("n = 0\nmean = total / n")  # the one value reaching the division
    assert div("mean = total / 0")


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


# --- NAN207's gate (syntax_sites.cancellation_site, issue 22) ------------------------------------
SQUARE, POW, SUB = (last_names(frozenset({op})) for op in (o.SQUARE, o.POW, o.SUBTRACT))


def cancel_site(src: str) -> bool:
    return syntax_sites.cancellation_site(ast.parse(src), SQUARE, POW, SUB)


@pytest.mark.parametrize("src", [
    "v = torch.mean(x * x) - torch.mean(x) ** 2",
    "v = (x ** 2).mean() - x.mean() ** 2",
    "v = x.pow(2).mean(0) - x.mean(0).pow(2)",
    "v = jnp.mean(jnp.square(x)) - jnp.square(jnp.mean(x))",
    "m2 = (x * x).mean()\nm = x.mean()\nv = torch.sub(m2, m * m)",
    "from torch import square as sq\nv = sq(x).mean() - m",   # the square under another name
    "sub = tf.subtract\nv = sub(a, b)",
])
def test_cancellation_sites(src):
    assert cancel_site(src)


@pytest.mark.parametrize("src", [
    "v = torch.mean((x - x.mean()) ** 2)",          # two-pass: one square
    "v = x.var()\ny = x - 1",
    "v = torch.mean(x * y) - torch.mean(x) ** 2",    # x * y: no square
    "v = torch.mean(x * x) + torch.mean(x) ** 2",    # no subtraction
])
def test_no_cancellation_site(src):
    assert not cancel_site(src)


# --- NAN202's and NAN203's gates (nanlint/analysis/gates/root_sites.py, issue 22) ---------------
from nanlint.analysis.gates import root_sites  # noqa: E402


@pytest.mark.parametrize("src", [
    "d = torch.sqrt(((a - b) ** 2).sum(-1))",
    "s = (a - b).pow(2).sum(-1)\nd = s.sqrt()",
    "d = (dx ** 2 + dy ** 2) ** 0.5",
    "v = x.var(0)\ny = torch.sqrt(v)",
    "y = torch.rsqrt(x.var(0))",
    "y = torch.pow(torch.mean(d * d), 0.5)",
    "d = a - b\nn = torch.linalg.norm(d)",
    "n = (a - b).norm(dim=-1)",
    "def f(s):\n    return torch.sqrt(s)\nf(x.sum())",               # a parameter bound at a call site
    "from torch import sqrt as r\ny = r(s)",                        # a root under another name
    "from .utils import total\ny = torch.sqrt(total)",             # a project module's value: anything
    "s = (a - b) * (a - b)\nd = torch.sqrt(s)",                     # b * b: a square
    "q = dx ** 2\nd = torch.sqrt(q + dy ** 2)",                     # a sum of squares through a name
    "import torch\nd = a - b\nn = torch.norm(d)",                   # a module's function: its argument
    "import torch as T\nd = a - b\nn = T.norm(d)",
    "from torch import *\nd = a - b\nn = thing.norm(d)",           # a star import: any name a module
])
def test_root_sites(src):
    assert root_sites.root_site(ast.parse(src))


@pytest.mark.parametrize("src", [
    "y = math.sqrt(2)",
    "y = 1 / math.sqrt(fan_in)",                                    # a name no sum or variance reaches
    "n = torch.linalg.norm(w)",                                     # a norm of a weight, not a difference
    "y = x ** 2",
    # the roots the check does not read as a variance, a sum of squares or a square (issue 22:
    # they made most model files reach libcst)
    "y = torch.sqrt(running_var + eps)",                            # an epsilon under the root: the fix
    "y = math.sqrt(2.0 * (layer_id + 1))",                          # a product of two values
    "dim = dim * 2\ny = dim ** 0.5",
    "y = torch.sqrt(torch.add(a, b))",                              # an add call: no sum of squares
    "y = torch.sqrt(sigma ** 2 + 1)",                               # a constant term keeps it positive
    # a method's input is its receiver: a layer's call self.norm(x) is not a norm of x
    "class B(nn.Module):\n    def forward(self, a, b):\n        x = a - b\n        return self.norm(x)",
])
def test_no_root_site(src):
    assert not root_sites.root_site(ast.parse(src))


@pytest.mark.parametrize("src", [
    "y = x / x.norm(dim=-1, keepdim=True)",
    "n = torch.linalg.norm(x, axis=-1)\ny = x / n",
    "y = x / torch.sqrt((x ** 2).sum(-1))",
    "y = x / (x.norm() + 1e-8)",
    "y = x / torch.clamp(x.norm(), min=1e-8)",
    "y = tf.math.divide(x, tf.norm(x))",
    "s = (x * x).sum(-1)\ny = x / s ** 0.5",
])
def test_norm_division_sites(src):
    assert root_sites.norm_division_site(ast.parse(src), src)


@pytest.mark.parametrize("src", [
    "y = x / math.sqrt(d)",                                         # a root of no sum
    "y = x / (x.norm() + scale)",                                   # plus a value, not a constant
    "n = x.norm()\ny = n * 2",                                      # no division
])
def test_no_norm_division_site(src):
    assert not root_sites.norm_division_site(ast.parse(src), src)
