"""NAN112 x-log-x: ``x * log(x)`` of a value that holds 0 (fix-history site
optax-0.1.4-0.1.5-kl-divergence), its evidence tiers, what silences it, its fixes, and its gate."""

from __future__ import annotations

import textwrap

import pytest

import conftest


def _nan112(src: str, may: bool = False) -> list:
    return [f for f in conftest.lint(src, ["NAN112"], may=may) if f.code == "NAN112"]


def test_a_parameter_or_the_targets_is_strong_evidence():
    src = """
        import jax.numpy as jnp

        def kl_divergence(log_predictions, targets):
            loss = targets * (jnp.log(targets) - log_predictions)
            return jnp.sum(loss, axis=-1)
        """
    [finding] = _nan112(src)
    assert "0 * -inf = NaN" in finding.message and "xlogy" in finding.message
    param = """
        import torch

        def entropy(p):
            return -(p * torch.log(p)).sum(-1)

        def caller(q):
            return entropy(torch.tensor([0.5, 0.5]))
        """
    [finding] = _nan112(param)  # a caller in the module does not hide the contract
    assert "a parameter" in finding.message


def test_a_computed_factor_is_the_may_tier():
    src = """
        import torch

        def entropy_of_counts(h):
            p = h / h.sum()
            return -(p * p.log()).sum()
        """
    assert _nan112(src) == []
    [finding] = _nan112(src, may=True)
    assert finding.may


def test_a_parameter_compared_with_a_number_is_a_scalar_the_may_tier():
    """tensor2tensor's label-smoothing normaliser: ``confidence`` is ``1 - label_smoothing``, and the
    function tests it in a Python ``if`` (a bool of a tensor of many values raises): a hyperparameter,
    0 only for a degenerate configuration (research corpus, reviewed false at default)."""
    src = """
        import tensorflow as tf

        def smoothing_cross_entropy(logits, labels, vocab_size, confidence, gaussian=False):
            normalizing = -(confidence * tf.log(confidence))
            if gaussian and confidence > 0.0:
                labels = tf.cast(labels, tf.float32)
            return normalizing
        """
    assert _nan112(src) == []
    [finding] = _nan112(src, may=True)
    assert finding.may and "compares with a number" in finding.message


@pytest.mark.parametrize("test", [
    "if p is not None:",              # not a number
    "if p.sum() > 0:",                # not the parameter itself
    "if q > 0.5:",                    # another name
    "def inner():\n                if p > 0:\n                    return 1\n            if True:",  # a nested function's
])
def test_what_says_nothing_of_a_parameter_keeps_it_default(test):
    src = f"""
        import torch

        def entropy(p, q=None):
            {test}
                pass
            return -(p * torch.log(p)).sum(-1)
        """
    [finding] = _nan112(src)
    assert "a parameter (a distribution passed in" in finding.message


@pytest.mark.parametrize("body", [
    "n = n + eps\n    return n * torch.log(n)",          # a rebinding with an epsilon
    "return p * torch.log(p + 1e-8)",                    # not the same factor
    "return p * torch.log(torch.clamp(p, min=1e-7))",    # guarded
    "q = torch.softmax(p, -1)\n    return q * torch.log(q)",  # NAN101's (log of a softmax)
    "return 0.5 * torch.log(torch.tensor(0.5))",         # a literal
    "values = p * (1.0 - torch.log(p))\n    return torch.where(p == 0, torch.zeros_like(p), values)",
    "return torch.where(p > 0, p * torch.log(p), 0.0)",   # the value is right (the gradient: NAN201)
    # torch's own poisson_nll_loss(full=True): the Stirling term is masked where target <= 1
    "s = (p * torch.log(p) - p + 0.5 * torch.log(2 * torch.pi * p))\n    return s.masked_fill(p <= 1, 0)",
    "if p > 0:\n        return p * torch.log(p)\n    return p",  # a branch guard
])
def test_silent(body):
    src = f"import torch\n\ndef f(p, eps=1e-7):\n    {body}\n"
    assert _nan112(src, may=True) == [], body


def test_the_fix_is_xlogy_safe_bare_unsafe_distributed():
    bare = """
        import tensorflow as tf

        def entropy(probs):
            return -tf.reduce_sum(probs * tf.math.log(probs), axis=-1)
        """
    assert "tf.math.xlogy(probs, probs)" in conftest.fix(bare, unsafe=False, select=["NAN112"])
    kl = """
        import torch

        def loss(log_q, t):
            return (t * (torch.log(t) - log_q) * 2).sum()
        """
    assert conftest.fix(kl, unsafe=False, select=["NAN112"]) == textwrap.dedent(kl)
    fixed = conftest.fix(kl, unsafe=True, select=["NAN112"])
    assert "((torch.xlogy(t, t) - t * log_q) * 2).sum()" in fixed  # parenthesized under the * 2
    compile(fixed, "fixed.py", "exec")


def test_keras_has_no_xlogy_the_fix_is_display_only():
    src = """
        from keras import ops

        def entropy(probs):
            return -ops.sum(probs * ops.log(probs), axis=-1)
        """
    [finding] = _nan112(src)
    assert finding.fix_applicability == "display-only"
    assert "Keras 3 has no xlogy" in finding.message and "xlogy's too" not in finding.message


def test_the_gradient_clause_follows_the_table_fact():
    tf_src = "import tensorflow as tf\n\ndef h(p):\n    return p * tf.math.log(p)\n"
    torch_src = "import torch\n\ndef h(p):\n    return p * torch.log(p)\n"
    [tf_finding] = _nan112(tf_src)
    [torch_finding] = _nan112(torch_src)
    assert "TensorFlow's xlogy gives 0 there" in tf_finding.message
    assert "stays NaN in PyTorch" in torch_finding.message


@pytest.mark.parametrize("cond", ["step > 0", "np_mask", "tp.sum() > 0"])
def test_a_where_whose_condition_does_not_read_the_factor_does_not_handle_it(cond):
    """The condition is compared as expressions: ``step > 0`` contains the letter ``p`` but does not test ``p``."""
    src = f"import torch\n\ndef f(p, step, np_mask, tp):\n    return torch.where({cond}, p * torch.log(p), 0.0).sum()\n"
    assert [f.code for f in _nan112(src)] == ["NAN112"]
    handled = "import torch\n\ndef f(p, step):\n    return torch.where((p > 0) & (step > 0), p * torch.log(p), 0.0).sum()\n"
    assert _nan112(handled, may=True) == []
