"""A log-sum-exp written by hand through names (``Z = exp(a).sum() + exp(b).sum();
log(Z + 1e-8)``): NAN106 follows the names to the sums of exponentials, measured in
torch to overflow as the message says; one sum is rewritten to logsumexp, several are
display-only with the stable form in the message."""

import textwrap

import numpy as np
import pytest

from conftest import lint
from nanlint.lint.engine import Linter
from nanlint.rules.base import find

TWO_SUMS = """\
    import torch

    def log_partition(a, b):
        Z = torch.exp(a).sum() + torch.exp(b).sum()
        loss = torch.log(Z + 1e-8)
        return loss
"""
ONE_SUM = """\
    import torch

    def log_partition(a):
        Z = torch.exp(a).sum(-1)
        return torch.log(Z + 1e-8)
"""


def run(text, *args):
    space: dict = {}
    exec(compile(textwrap.dedent(text), "loss.py", "exec"), space)
    return space["log_partition"](*args)


def test_two_sums_through_a_name_overflow_as_the_message_says():
    import torch

    a = torch.tensor([100.0, 0.0], requires_grad=True)
    b = torch.tensor([1.0, 2.0], requires_grad=True)
    value = run(TWO_SUMS, a, b)
    value.backward()
    assert value.item() == float("inf") and torch.isnan(a.grad).any()  # exp(100) is inf in float32
    exact = np.log(np.exp(np.float64(100)) + 1 + np.exp(1.0) + np.exp(2.0))
    stable = torch.logsumexp(torch.cat([a.flatten(), b.flatten()]), 0)
    assert stable.item() == pytest.approx(exact, rel=1e-6)  # the form the message gives
    [f] = lint(TWO_SUMS)
    assert f.code == "NAN106" and f.fix_applicability == "display-only"
    assert "torch.exp(a).sum() + torch.exp(b).sum()" in f.message and "`Z` is assigned on line 4" in f.message
    assert "the 1e-8 added keeps it from -inf" in f.message and "overflows once an exponent passes ~88.7 in float32" in f.message


def test_one_sum_is_rewritten_to_logsumexp_unsafely():
    import torch

    source = textwrap.dedent(ONE_SUM).encode()
    [f] = lint(ONE_SUM)
    assert f.code == "NAN106" and f.fix_applicability == "unsafe"
    fixed = Linter([find("NAN106")]).fix_source(source, "loss.py", unsafe=True).fixed_source.decode()
    assert "return torch.logsumexp(a, -1)" in fixed
    a = torch.tensor([[100.0, 0.0], [-200.0, -201.0]])
    before, after = run(ONE_SUM, a), run(fixed, a)
    assert before[0].item() == float("inf")
    assert before[1].item() == pytest.approx(np.log(1e-8), rel=1e-3)  # the epsilon where the sum underflows
    want = [np.log(np.exp(np.float64(100)) + 1), -200 + np.log1p(np.exp(np.float64(-1)))]
    np.testing.assert_allclose(after.numpy(), want, rtol=1e-6)  # not value-identical: why it is unsafe


@pytest.mark.parametrize("source", [
    """\
        import torch

        def log_partition(a, b):
            m = torch.maximum(a.max(), b.max())
            Z = torch.exp(a - m).sum() + torch.exp(b - m).sum()
            return m + torch.log(Z)
    """,  # the max-shifted (stable) form
    """\
        import torch

        def log_partition(a, c):
            Z = torch.exp(a).sum() + c
            return torch.log(Z)
    """,  # a term the code does not show is an exponential
    """\
        import torch

        def log_partition(a, b):
            Z = torch.exp(a).sum() - torch.exp(b).sum()
            return torch.log(Z)
    """,  # a difference: no log-sum-exp
])
def test_no_finding_without_a_sum_of_exponentials(source):
    assert [f.code for f in lint(source)] == []


def test_tensorflow_and_jax_through_names():
    [tf_finding] = lint("""\
        import tensorflow as tf

        def f(a):
            s = tf.reduce_sum(tf.exp(a), axis=-1)
            return tf.math.log(s + 1e-10)
    """)
    assert tf_finding.code == "NAN106" and tf_finding.fix_applicability == "unsafe"
    assert [e.content for e in tf_finding.edits] == ["tf.reduce_logsumexp(a, axis=-1)"]  # spelled like the file's reduce_sum
    [jax_finding] = lint("""\
        import jax.numpy as jnp

        def f(a, b):
            ea = jnp.exp(a)
            total = jnp.sum(ea) + jnp.sum(jnp.exp(b))
            return jnp.log(total)
    """)
    assert jax_finding.code == "NAN106" and jax_finding.fix_applicability == "display-only"


def test_a_single_exponential_through_a_name_is_no_sum():
    """tfp's ``medium_z = exp((v + z - ls) / a)`` ... ``log(medium_z)``: log(exp(y)) is y,
    no log-sum-exp (reviewed on the training corpus)."""
    assert [f.code for f in lint("""\
        import tensorflow as tf

        def f(v, z, a):
            medium_z = tf.math.exp((v + z) / a)
            return tf.math.log(medium_z)
    """)] == []
