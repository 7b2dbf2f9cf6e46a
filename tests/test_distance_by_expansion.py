"""Issue 24's squared distance by expansion, NAN207's second cancellation: ``|x|^2 + |y|^2 -
2 x.y`` is negative in float32 for coinciding points, so its root or log is NaN. Flagged in
its spellings (operators, ``mm``/``matmul``/``einsum``, names, ``+ eps``), strong under a root,
log or division and the may tier elsewhere, silent when clamped or when it is not the
expansion of the same two values; fixed to a clamp at 1e-12; and the numbers the message
states, measured in the real frameworks (float32)."""


import numpy as np
import pytest

from conftest import lint, fix
from nanlint.rules.base import by_code
from nanlint.rules.nan207_variance_by_cancellation import MEASURED


def _nan207(source, may=False):
    return [f for f in lint(source, may=may) if f.code == "NAN207"]


@pytest.mark.parametrize("source,fixed", [
    ("""\
    import torch

    def dist(x, y):
        d2 = (x ** 2).sum(-1, keepdim=True) + (y ** 2).sum(-1) - 2 * x @ y.T
        return d2.sqrt()
    """, "d2 = ((x ** 2).sum(-1, keepdim=True) + (y ** 2).sum(-1) - 2 * x @ y.T).clamp(min=1e-12)"),
    ("""\
    import torch

    def dist(x, y):
        x2 = (x ** 2).sum(-1)
        y2 = (y ** 2).sum(-1)
        return torch.sqrt(x2[:, None] + y2[None] - 2 * torch.einsum('bd,nd->bn', x, y) + 1e-8)
    """, "torch.sqrt((x2[:, None] + y2[None] - 2 * torch.einsum('bd,nd->bn', x, y) + 1e-8).clamp(min=1e-12))"),
    ("""\
    import torch
    from torch import einsum

    def cdist(x, y):
        x2 = (x ** 2).sum(-1)
        y2 = (y ** 2).sum(-1)
        xy = einsum('b i d, b j d -> b i j', x, y) * -2
        return (x2.unsqueeze(-1) + y2.unsqueeze(-2) + xy).sqrt()
    """, "return (x2.unsqueeze(-1) + y2.unsqueeze(-2) + xy).clamp(min=1e-12).sqrt()"),
    # einops' reduce and rearrange (vector-quantize-pytorch 1.14.0's cdist, tests/fixhistory/)
    ("""\
    import torch
    from torch import einsum
    from einops import rearrange, reduce

    def cdist(x, y):
        x2 = reduce(x ** 2, 'b n d -> b n', 'sum')
        y2 = reduce(y ** 2, 'b n d -> b n', 'sum')
        xy = einsum('b i d, b j d -> b i j', x, y) * -2
        return (rearrange(x2, 'b i -> b i 1') + rearrange(y2, 'b j -> b 1 j') + xy).sqrt()
    """, "return (rearrange(x2, 'b i -> b i 1') + rearrange(y2, 'b j -> b 1 j') + xy).clamp(min=1e-12).sqrt()"),
    ("""\
    import torch

    def dist(x, c):
        d = x.pow(2).sum(1, keepdim=True) - 2 * torch.mm(x, c.t()) + c.norm(dim=1) ** 2
        return torch.log(d)
    """, "torch.log(d)"),
    ("""\
    import tensorflow as tf

    def dist(a, b):
        d2 = tf.reduce_sum(tf.square(a), 1, keepdims=True) + tf.reduce_sum(tf.square(b), 1) - 2 * tf.matmul(a, b, transpose_b=True)
        return tf.sqrt(d2)
    """, "d2 = tf.maximum(tf.reduce_sum(tf.square(a), 1, keepdims=True) + tf.reduce_sum(tf.square(b), 1) - "
         "2 * tf.matmul(a, b, transpose_b=True), 1e-12)"),
    ("""\
    import jax.numpy as jnp

    def dist(a, b):
        d2 = jnp.sum(a ** 2, axis=1, keepdims=True) + jnp.sum(b ** 2, axis=1) - 2 * a @ b.T
        return jnp.sqrt(d2 + 1e-12)
    """, "d2 = jnp.maximum(jnp.sum(a ** 2, axis=1, keepdims=True) + jnp.sum(b ** 2, axis=1) - 2 * a @ b.T, 1e-12)"),
    ("""\
    from keras import ops

    def dist(a, b):
        d2 = ops.sum(ops.square(a), axis=1, keepdims=True) + ops.sum(ops.square(b), axis=1) - 2 * ops.matmul(a, ops.transpose(b))
        return ops.sqrt(d2)
    """, "d2 = ops.maximum(ops.sum(ops.square(a), axis=1, keepdims=True) + ops.sum(ops.square(b), axis=1) - "
         "2 * ops.matmul(a, ops.transpose(b)), 1e-12)"),
])
def test_the_expansion_under_a_root_or_log_is_flagged_and_fixed_to_a_clamp(source, fixed):
    [f] = _nan207(source)
    assert not f.may and f.fix_applicability == "unsafe"
    assert "squared distance by expansion" in f.message and "of it is NaN there" in f.message
    out = fix(source, select=["NAN207"])
    assert fixed in out, out
    assert _nan207(out, may=True) == []


def test_a_division_by_the_expansion_is_flagged():
    [f] = _nan207("""\
        import torch

        def kernel(x, y):
            d2 = (x * x).sum(-1, keepdim=True) + (y * y).sum(-1) - 2 * x @ y.T
            return 1.0 / (1.0 + d2)
    """)
    assert not f.may and "the division by it is of the wrong sign there" in f.message


def test_the_expansion_feeding_nothing_singular_is_the_may_tier():
    """Returned, the distance may meet a root in a caller: the may tier. Only picking an
    index (``d.argmin(1)``) it is silent (tests/test_selections.py)."""
    source = """\
        import torch

        def distances(x, codes):
            d = x.pow(2).sum(1, keepdim=True) - 2 * x @ codes.t() + codes.pow(2).sum(1)
            return d
    """
    assert _nan207(source) == []
    [f] = _nan207(source, may=True)
    assert f.may and "of it is NaN" not in f.message
    assert _nan207(source.replace("return d", "return d.argmin(1)"), may=True) == []


@pytest.mark.parametrize("source", [
    # clamped at a floor or at 0 before the root (vector-quantize-pytorch 1.14.1's fix)
    """\
    import torch

    def dist(x, y):
        d2 = (x ** 2).sum(-1, keepdim=True) + (y ** 2).sum(-1) - 2 * x @ y.T
        return d2.clamp(min=1e-12).sqrt()
    """,
    """\
    import torch
    from torch import einsum

    def cdist(x, y):
        x2 = (x ** 2).sum(-1)
        y2 = (y ** 2).sum(-1)
        xy = einsum('b i d, b j d -> b i j', x, y) * -2
        return (x2[:, :, None] + y2[:, None, :] + xy).clamp(min = 0).sqrt()
    """,
    """\
    import jax.numpy as jnp

    def dist(a, b):
        d2 = jnp.sum(a ** 2, axis=1, keepdims=True) + jnp.sum(b ** 2, axis=1) - 2 * a @ b.T
        return jnp.sqrt(jnp.maximum(d2, 1e-12))
    """,
    # not the expansion of the same values, not twice the product, the product added
    """\
    import torch

    def f(x, y, a, b):
        return torch.sqrt((x ** 2).sum(-1, keepdim=True) + (y ** 2).sum(-1) - 2 * a @ b.T)
    """,
    """\
    import torch

    def f(x, y):
        return torch.sqrt((x ** 2).sum(-1, keepdim=True) + (y ** 2).sum(-1) - x @ y.T)
    """,
    """\
    import torch

    def f(x, y):
        return torch.sqrt((x ** 2).sum(-1, keepdim=True) + (y ** 2).sum(-1) + 2 * x @ y.T)
    """,
    # einops' reduce by a function it is given: not known to be a sum
    """\
    import torch
    from einops import rearrange, reduce

    def dist(x, y, agg):
        x2 = reduce(x ** 2, 'b n d -> b n', agg)
        y2 = reduce(y ** 2, 'b n d -> b n', agg)
        return (rearrange(x2, 'b i -> b i 1') + rearrange(y2, 'b j -> b 1 j') - 2 * x @ y.mT).sqrt()
    """,
    # the direct form: a sum of squared differences
    """\
    import torch

    def dist(x, y):
        return ((x[:, None] - y[None]) ** 2).sum(-1).clamp(min=1e-12).sqrt()
    """,
])
def test_a_clamped_expansion_and_other_sums_are_silent(source):
    assert _nan207(source, may=True) == []


def test_an_expansion_written_all_in_einops_is_flagged_and_its_fix_only_shown():
    """einops' einsum takes its pattern last; with every op of the expansion an einops one,
    the backend is not known, so the clamp is not spelled (display-only)."""
    [f] = _nan207("""\
        import torch
        import einops

        def cdist(x, y):
            x2 = einops.reduce(x ** 2, 'b n d -> b n', 'sum')
            y2 = einops.reduce(y ** 2, 'b n d -> b n', 'sum')
            xy = einops.einsum(x, y, 'b i d, b j d -> b i j') * -2
            return torch.sqrt(einops.rearrange(x2, 'b i -> b i 1') + einops.rearrange(y2, 'b j -> b 1 j') + xy)
    """)
    assert not f.may and "the sqrt of it is NaN there" in f.message
    assert f.fix_applicability == "display-only"


def test_an_einops_variance_by_cancellation_is_flagged_and_its_fix_only_shown():
    """The pattern of einops' reduce is no axis the framework's variance op takes: the fix
    that would carry it is display-only, not a variance over every axis."""
    source = """\
        import torch
        from einops import reduce

        def norm(x):
            var = reduce(x * x, 'b n -> b', 'mean') - reduce(x, 'b n -> b', 'mean') ** 2
            return torch.rsqrt(var + 1e-5)
    """
    [f] = _nan207(source)
    assert not f.may and "E[x^2] - E[x]^2" in f.message
    assert f.fix_applicability == "display-only"


def test_a_bare_sum_or_mean_is_decided_without_libcst(monkeypatch):
    """NAN207 has no file gate: on a file with a sum or a mean but no cancellation, the rule
    itself, run on CPython's tree (``Linter.on_tree``), finds nothing, and libcst never
    parses the file; one with a cancellation is parsed and flagged."""
    from nanlint.lint import engine
    from nanlint.lint.engine import Linter

    parsed: list = []
    real = engine.parse
    monkeypatch.setattr(engine, "parse", lambda source, checked=None: parsed.append(source) or real(source, checked))
    linter = Linter([by_code()["NAN207"]], {})
    for text in ("import torch\ndef f(x):\n    return x.mean()\n",
                 "import torch\n@torch.no_grad()\ndef f(x):\n    return (x ** 2).sum()\n"):
        assert not linter.lint_source(text.encode(), "a.py").findings and not parsed, text
    text = ("import torch\ndef kernel(x, y):\n    d2 = (x * x).sum(-1, keepdim=True) + (y * y).sum(-1) - 2 * x @ y.T\n"
            "    return 1.0 / (1.0 + d2)\n")
    assert [f.code for f in linter.lint_source(text.encode(), "a.py").findings] == ["NAN207"] and parsed


def _rows():
    """16 rows of 64 values uniform in [10, 100] (seed 0), float32: each against itself is 0."""
    return np.random.default_rng(0).uniform(10, 100, size=(16, 64)).astype(np.float32)


def test_the_expansion_is_negative_in_float32_as_the_message_says():
    """The message's numbers: the most negative diagonal of |x|^2 + |y|^2 - 2 x.y for x = y
    (true 0): torch -0.125, TensorFlow and Keras on it -0.0625, JAX -0.03125 or -0.0625 by the
    host CPU (XLA compiles for it; one host gave each); sqrt of it NaN; the clamp at 1e-12 finite."""
    import torch
    import tensorflow as tf
    import jax.numpy as jnp
    from keras import ops

    x = _rows()
    t = torch.tensor(x)
    dt = torch.diagonal((t ** 2).sum(-1, keepdim=True) + (t ** 2).sum(-1) - 2 * t @ t.T)
    assert dt.min().item() == -0.125 and torch.isnan(dt.sqrt()).any()
    assert torch.isfinite(dt.clamp(min=1e-12).sqrt()).all()
    a = tf.constant(x)
    da = tf.linalg.diag_part(tf.reduce_sum(tf.square(a), 1, keepdims=True) + tf.reduce_sum(tf.square(a), 1)
                             - 2 * tf.matmul(a, a, transpose_b=True)).numpy()
    assert da.min() == -0.0625 and np.isnan(tf.sqrt(da).numpy()).any()
    j = jnp.asarray(x)
    dj = np.diag(np.asarray(jnp.sum(j ** 2, 1, keepdims=True) + jnp.sum(j ** 2, 1) - 2 * j @ j.T))
    assert dj.min() in (-0.03125, -0.0625) and np.isnan(np.asarray(jnp.sqrt(dj))).any()
    k = ops.convert_to_tensor(x)
    dk = np.diag(ops.convert_to_numpy(ops.sum(ops.square(k), axis=1, keepdims=True) + ops.sum(ops.square(k), axis=1)
                                      - 2 * ops.matmul(k, ops.transpose(k))))
    assert dk.min() == -0.0625
    assert [MEASURED[f].split()[0] for f in ("torch", "tensorflow", "keras")] == ["-0.125", "-0.0625", "-0.0625"]
    assert MEASURED["jax"].startswith("-0.03125 to -0.0625 ")
    [f] = _nan207("""\
        import torch

        def dist(x, y):
            return ((x ** 2).sum(-1, keepdim=True) + (y ** 2).sum(-1) - 2 * x @ y.T).sqrt()
    """)
    assert "measured -0.125 (torch 2.13) for rows of 64 values in [10, 100] against themselves, true 0" in f.message


def test_two_parameters_bound_to_alike_arguments_are_not_one_value():
    """The cross term must be of the squared norms' own values: ``a`` and ``x`` are both
    ``torch.randn(4, 8)`` at the call site, not the same tensor."""
    assert _nan207("""\
        import torch

        def f(a, b, x, y):
            return torch.sqrt((a ** 2).sum(-1, keepdim=True) + (b ** 2).sum(-1) - 2 * x @ y.T)

        f(torch.randn(4, 8), torch.randn(4, 8), torch.randn(4, 8), torch.randn(4, 8))
    """, may=True) == []


def test_a_whole_power_of_the_expansion_is_not_a_sink():
    """``d2 ** 2`` of a negative d2 is finite: the may tier, as for no sink; ``d2 ** 0.5`` is NaN."""
    source = """\
        import torch

        def f(x, y):
            d2 = (x ** 2).sum(-1, keepdim=True) + (y ** 2).sum(-1) - 2 * x @ y.T
            return d2 ** {}
    """
    assert [f.may for f in _nan207(source.format(2), may=True)] == [True]
    assert [f.may for f in _nan207(source.format(0.5), may=True)] == [False]
