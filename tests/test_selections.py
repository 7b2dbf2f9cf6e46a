"""A squared distance by expansion that only picks an index (a VQ codebook lookup:
``argmin(d)``, ``(-d).max(1).indices``) is silent: a slightly negative distance picks the same
entry and an index has no gradient (``analysis/selections.py``). Any other use keeps the
may-tier finding; a root, log or division keeps the default one."""

import textwrap

import numpy as np
import pytest

from conftest import lint
from nanlint.semantic.context import FileContext
from nanlint.source.walk import parse
from nanlint.vocabulary import ops as o


def _nan207(src: str) -> list[bool]:
    """The NAN207 findings' may flags."""
    return [f.may for f in lint(textwrap.dedent(src), select={"NAN207"}, may=True)]


TORCH = """\
    import torch

    def lookup(x, codebook):
        d = (x ** 2).sum(-1, keepdim=True) + (codebook ** 2).sum(-1) - 2 * x @ codebook.T
        {use}
"""


@pytest.mark.parametrize("use,found", [
    ("return d.argmin(-1)", []),
    ("return torch.argmin(d, dim=1)", []),
    ("return (-d).max(1).indices", []),
    ("return d.min(dim=1)[1]", []),
    ("idx = d.argmin(-1)\n        return codebook[idx]", []),
    ("flat = d.view(-1, d.shape[-1])\n        return flat.argmin(-1)", []),
    ("return d", [True]),  # returned: a caller may take its root
    ("return d.min(dim=1)[0]", [True]),  # the values, not the indices
    ("return d.argmin(-1), d", [True]),  # used otherwise too
    ("return d.sqrt().argmin(-1)", [False]),  # a root first: NaN there, the default finding
    ("return d.half().argmin(-1)", [True]),  # a cast is not followed
])
def test_a_distance_that_only_picks_an_index_is_silent(use, found):
    assert _nan207(TORCH.format(use=use)) == found


@pytest.mark.parametrize("src", [
    """\
    import jax.numpy as jnp

    def lookup(x, e):
        d = jnp.sum(x ** 2, 1, keepdims=True) - 2 * x @ e + jnp.sum(e ** 2, 0, keepdims=True)
        return jnp.argmax(-d, 1)
    """,
    """\
    import tensorflow as tf

    def lookup(x, e):
        d = tf.reduce_sum(x ** 2, 1, keepdims=True) - 2 * tf.matmul(x, e) + tf.reduce_sum(e ** 2, 0, keepdims=True)
        return tf.math.argmin(d, axis=1)
    """,
    """\
    from keras import ops

    def lookup(x, e):
        d = ops.sum(x ** 2, axis=1, keepdims=True) + ops.sum(e ** 2, axis=1) - 2 * ops.matmul(x, ops.transpose(e))
        return ops.argmin(d, axis=-1)
    """,
])
def test_every_framework_s_argmin_and_argmax_is_a_selection(src):
    assert _nan207(src) == []
    assert _nan207(src.replace("argmin", "sum").replace("argmax", "sum")) == [True]


def test_argmin_and_argmax_are_canonical_ops_in_every_table():
    src = textwrap.dedent("""\
        import torch
        import jax.numpy as jnp
        import tensorflow as tf
        from keras import ops
        torch.argmin(d, dim=1); d.argmax(-1); jnp.argmax(d, 1); tf.math.argmin(d, axis=1)
        tf.argmax(d, 1); ops.argmin(d, axis=-1); ops.argmax(d)
    """)
    ctx = FileContext(parse(src))
    got = [(ctx.op_call(c, s).op, ctx.code(ctx.op_call(c, s).x)) for c, s in ctx.index.calls]
    assert got == [(o.ARGMIN, "d"), (o.ARGMAX, "d"), (o.ARGMAX, "d"), (o.ARGMIN, "d"),
                   (o.ARGMAX, "d"), (o.ARGMIN, "d"), (o.ARGMAX, "d")]


def test_the_negative_expansion_picks_the_same_code_in_torch():
    """What the silence rests on: for codes equal to the inputs (true distance 0 on the
    diagonal) the expansion comes out negative in float32, and its argmin is still the
    exact distances' argmin, the diagonal."""
    import torch

    x = torch.tensor(np.random.default_rng(0).uniform(10, 100, size=(16, 64)).astype(np.float32))
    d = (x ** 2).sum(-1, keepdim=True) + (x ** 2).sum(-1) - 2 * x @ x.T
    exact = ((x.double()[:, None] - x.double()[None]) ** 2).sum(-1)
    assert d.min().item() < 0 and torch.isnan(d.sqrt()).any()
    assert torch.equal(d.argmin(-1), exact.argmin(-1)) and torch.equal(d.argmin(-1), torch.arange(16))
    assert torch.equal((-d).max(1).indices, torch.arange(16))


def test_reads_are_those_the_value_flow_gives_the_binding():
    """emu3's lookup rebinds the name: the reads of the expansion's binding are what counts."""
    assert _nan207("""\
        import torch

        def lookup(x, c):
            d = 2 * torch.matmul(x, c.T)
            d = (x ** 2).sum(-1, keepdim=True) + (c ** 2).sum(-1) - d
            return torch.argmin(d, dim=1)
    """) == []
    assert _nan207("""\
        import torch

        def lookup(x, c):
            d = (x ** 2).sum(-1, keepdim=True) + (c ** 2).sum(-1) - 2 * x @ c.T
            idx = d.argmin(-1)
            d = d / 2
            return idx, d
    """) == [True]


def test_an_index_is_a_no_gradient_sink_for_the_gradient_rules():
    """A single where whose result only feeds an argmax sends no gradient back (NAN201)."""
    src = """\
        import torch

        def pick(x, y):
            s = torch.where(x != 0, y / x, torch.zeros_like(x))
            return torch.{use}(s, -1)
    """
    assert [f.code for f in lint(textwrap.dedent(src.format(use="argmax")), select={"NAN201"}, may=True)] == []
    assert [f.code for f in lint(textwrap.dedent(src.format(use="sum")), select={"NAN201"}, may=True)] == ["NAN201"]
