"""A softmax laid out again before its log (``q = F.softmax(x, -1); q = q.view(-1, 3);
F.nll_loss(q.log(), y)``, in a loop body too) gets the fused fix with the layout ops
carried (``F.log_softmax(x, -1).view(-1, 3)``): unsafe through the rebound names, safe
inline, and the fixed code computes the float64 loss where the original is inf."""

import textwrap

import numpy as np
import pytest

from nanlint.lint.engine import Linter
from nanlint.rules.base import all_rules

REBOUND = """\
    import torch
    import torch.nn.functional as F

    def loss(x, y):
        q = F.softmax(x, -1)
        q = q.view(-1, 3)
        return F.nll_loss(q.log(), y)
"""
IN_LOOP = """\
    import torch
    import torch.nn.functional as F

    def loss(batches):
        total = 0.0
        for x, y in batches:
            q = F.softmax(x, -1)
            q = q.view(-1, 3)
            total = total + F.nll_loss(q.log(), y)
        return total
"""
CROSS_ENTROPY = """\
    import torch
    import torch.nn.functional as F

    def loss(x, y):
        q = F.softmax(x, -1)
        q = q.view(-1, 3)
        return -(y * torch.log(q)).sum(1).mean()
"""
TF_RESHAPED = """\
    import tensorflow as tf

    def loss(z, y):
        p = tf.nn.softmax(z)
        p = tf.reshape(p, [-1, 3])
        return -tf.reduce_sum(y * tf.math.log(p), axis=1)
"""


def fixed(source: str, code: str):
    source = textwrap.dedent(source).encode()
    rules = [r for r in all_rules() if r.code == code]
    [finding] = Linter(rules).lint_source(source, "train.py").findings
    result = Linter(rules).fix_source(source, "train.py", unsafe=True)
    assert result.error is None and result.fixed_source is not None
    return finding, result.fixed_source.decode()


def run(text: str, *args):
    space: dict = {}
    exec(compile(text, "train.py", "exec"), space)
    return space["loss"](*args)


def saturated(shape=(2, 2, 3)):
    """Logits with a class 200 below its row's largest: its probability underflows to 0."""
    x = np.zeros(shape, dtype=np.float32)
    x[..., 0] = 200.0
    return x


def reference(x, labels):  # float64, the stable way
    z = x.reshape(-1, 3).astype(np.float64)
    logp = z - z.max(1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(1, keepdims=True))
    return -logp[np.arange(len(labels)), labels].mean()


def test_a_rebound_softmax_gets_log_softmax_with_the_view_carried():
    import torch

    finding, text = fixed(REBOUND, "NAN101")
    assert finding.fix_applicability == "unsafe"  # the softmax's arguments repeated two lines below
    assert "F.nll_loss(F.log_softmax(x, -1).view(-1, 3), y)" in text
    assert "q = q.view(-1, 3)" in text  # the rebound name still holds the probabilities
    x, y = saturated(), np.array([1, 2, 0, 1])
    before = run(textwrap.dedent(REBOUND), torch.tensor(x), torch.tensor(y))
    after = run(text, torch.tensor(x), torch.tensor(y))
    assert before.item() == float("inf")
    assert after.item() == pytest.approx(reference(x, y), rel=1e-6)


def test_the_same_inside_a_for_loop_body():
    import torch

    finding, text = fixed(IN_LOOP, "NAN101")
    assert finding.fix_applicability == "unsafe"
    assert "F.nll_loss(F.log_softmax(x, -1).view(-1, 3), y)" in text
    x, y = saturated(), np.array([1, 2, 0, 1])
    batches = [(torch.tensor(x), torch.tensor(y))] * 2
    assert run(textwrap.dedent(IN_LOOP), batches).item() == float("inf")
    assert run(text, batches).item() == pytest.approx(2 * reference(x, y), rel=1e-6)


def test_a_hand_written_cross_entropy_of_a_reshaped_softmax():
    import torch

    finding, text = fixed(CROSS_ENTROPY, "NAN103")
    assert finding.fix_applicability == "unsafe"
    assert "torch.log(q)" not in text and "F.log_softmax(x, -1).view(-1, 3)" in text
    x = saturated()
    onehot = np.eye(3, dtype=np.float32)[[1, 2, 0, 1]]
    assert np.isnan(run(textwrap.dedent(CROSS_ENTROPY), torch.tensor(x), torch.tensor(onehot)).item())
    got = run(text, torch.tensor(x), torch.tensor(onehot)).item()
    assert got == pytest.approx(reference(x, np.array([1, 2, 0, 1])), rel=1e-6)


def test_tensorflow_reshape_is_carried():
    import tensorflow as tf

    finding, text = fixed(TF_RESHAPED, "NAN103")
    assert "tf.reshape(tf.nn.log_softmax(z), [-1, 3])" in text
    x = saturated()
    onehot = np.eye(3, dtype=np.float32)[[1, 2, 0, 1]]
    before = run(textwrap.dedent(TF_RESHAPED), tf.constant(x), tf.constant(onehot)).numpy()
    after = run(text, tf.constant(x), tf.constant(onehot)).numpy()
    assert not np.isfinite(before).all()
    labels = np.array([1, 2, 0, 1])
    want = [reference(x.reshape(-1, 3)[i:i + 1], labels[i:i + 1]) for i in range(4)]
    np.testing.assert_allclose(after, want, rtol=1e-6)


@pytest.mark.parametrize("expr,applicability", [
    ("torch.log(F.softmax(x, -1).view(-1, 3))", "safe"),  # inline, the same values
    ("torch.log(F.softmax(x, -1).transpose(0, 1)[0])", "safe"),
    ("torch.log(F.softmax(x, -1).view(-1, 3).double())", "unsafe"),  # a cast rounds the two forms apart
])
def test_inline_layout_is_safe_unless_a_cast_is_carried(expr, applicability):
    source = f"""\
        import torch
        import torch.nn.functional as F

        def loss(x):
            return {expr}
    """
    finding, text = fixed(source, "NAN101")
    assert finding.fix_applicability == applicability
    assert "F.log_softmax(x, -1)" in text and "torch.log" not in text


def test_two_softmaxes_reaching_the_log_get_no_rewrite():
    source = """\
        import torch
        import torch.nn.functional as F

        def loss(x, z, y, flag):
            q = F.softmax(x, -1)
            if flag:
                q = F.softmax(z, -1)
            q = q.view(-1, 3)
            return F.nll_loss(q.log(), y)
    """
    rules = [r for r in all_rules() if r.code == "NAN101"]
    [finding] = Linter(rules).lint_source(textwrap.dedent(source).encode(), "train.py").findings
    assert finding.fix_applicability == "display-only"
