"""A product over an axis of probabilities under a log (a PonderNet halting probability
``p_n = lam * prod(1 - lam_j)``, a stick-breaking weight) underflows to exactly 0 in
float32: NAN107's strong evidence, reported by default with the product and its factors
named; the zero rules' site check (CPython's tree) lets such a file through."""

import textwrap

import numpy as np
import pytest

from conftest import lint


HALTING = """\
    import torch

    def halting_log_prob(lam, lam_j):
        p_n = lam * torch.prod(1 - lam_j, dim=-1)
        return torch.log(p_n)
"""


def test_the_product_underflows_in_float32_as_the_message_says():
    import torch

    lam_j = torch.full((100,), 0.7, requires_grad=True)
    lam = torch.tensor(0.5)
    p_n = lam * torch.prod(1 - lam_j, dim=-1)
    assert p_n.item() == 0.0  # 0.3 ** 100 = 5e-53 < 1.4e-45
    assert 0.3 ** 100 < float(np.finfo(np.float32).smallest_subnormal)
    value = torch.log(p_n)
    value.backward()
    assert value.item() == float("-inf") and not torch.isfinite(lam_j.grad).all()
    [f] = lint(HALTING)
    assert f.code == "NAN107" and f.fix_applicability == "unsafe"
    assert "prod over an axis of `1 - lam_j`" in f.message and "one minus a value named as a probability" in f.message
    assert "5e-53" in f.message and "sum the logs of the factors" in f.message


@pytest.mark.parametrize("source,factors", [
    ("""\
        import torch

        def stick_breaking(logits):
            v = torch.sigmoid(logits)
            rest = torch.cumprod(1 - v, dim=-1)
            return torch.log(rest).sum()
     """, "`1 - v` (one minus a sigmoid output)"),
    ("""\
        import tensorflow as tf

        def joint(probs):
            return tf.math.log(tf.reduce_prod(probs, axis=-1))
     """, "`probs` (named as a probability)"),
    ("""\
        import jax
        import jax.numpy as jnp

        def survival(scores):
            stay = jax.nn.sigmoid(scores @ w)
            return jnp.log(jnp.prod(stay, axis=1))
     """, "`stay`"),
])
def test_products_of_probabilities_in_each_framework(source, factors):
    [f] = lint(source)
    assert f.code == "NAN107" and factors in f.message, f.message


def test_the_frameworks_agree_that_the_product_is_zero():
    import jax.numpy as jnp
    import tensorflow as tf

    factors = np.full(100, 0.3, dtype=np.float32)
    assert float(tf.reduce_prod(factors)) == 0.0
    assert float(jnp.prod(factors)) == 0.0


@pytest.mark.parametrize("source", [
    """\
        import torch

        def halting_log_prob(lam, lam_j):
            return torch.log(lam) + torch.log1p(-lam_j).sum(-1)
    """,  # the log-space form
    """\
        import torch

        def f(x):
            return torch.log(torch.prod(x + 2, dim=-1))
    """,  # factors not shown in [0, 1]
    """\
        import torch

        def f(lam_j):
            return torch.log(torch.clamp(torch.prod(1 - lam_j), min=1e-7))
    """,  # guarded
])
def test_no_finding_without_the_evidence(source):
    assert [f.code for f in lint(source)] == []


def test_a_division_by_the_product_is_nan108s():
    [f] = lint("""\
        import jax.numpy as jnp

        def normalized(w, lam):
            return w / jnp.prod(1.0 - lam, axis=-1)
    """)
    assert f.code == "NAN108" and "prod over an axis" in f.message


@pytest.mark.parametrize("code", ["NAN107", "NAN108"])
def test_a_product_alone_is_flagged(code):
    """A file whose only source of 0 is the product is flagged (the file gate these rules had
    missed it once; they have none now)."""
    text = textwrap.dedent(HALTING if code == "NAN107" else """\
        import torch

        def normalized(w, lam):
            return w / torch.prod(1 - lam, dim=-1)
    """)
    assert [f.code for f in lint(text, select={code})] == [code]
