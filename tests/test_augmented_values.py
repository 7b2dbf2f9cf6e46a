"""An augmented assignment ``s += v`` binds ``s`` to ``s + v`` in the value flow
(``semantic/resolve.py``): every rule and fact that follows a name sees what it adds.
Measured where the finding claims a number: magenta's ``log_sum_exp`` shifts by the max of
the whole tensor (``xs -= tf.reduce_max(xs)``), which is not the per-row stable form, and
is -inf on a row far below that max, in TensorFlow and in torch."""

import textwrap

import numpy as np
import pytest

from conftest import fix, lint
from nanlint.semantic.resolve import ASSIGN, Index
from nanlint.source.walk import parse

WHOLE_MAX_TF = """\
    import tensorflow as tf

    def log_sum_exp(xs):
        maxes = tf.reduce_max(xs, keep_dims=True)
        xs -= maxes
        return tf.squeeze(maxes, [-1]) + tf.log(tf.reduce_sum(tf.exp(xs), -1))
"""
WHOLE_MAX_TORCH = """\
    import torch

    def log_sum_exp(x):
        return x.max() + torch.log(torch.exp(x - x.max()).sum(1))
"""
ROWS = [[0.0, 0.0], [-200.0, -200.0]]
EXACT = [np.log(2.0), -200 + np.log(2.0)]


def run(text, arg):
    space: dict = {}
    exec(compile(textwrap.dedent(text), "lse.py", "exec"), space)
    return space["log_sum_exp"](arg)


def test_an_augmented_assignment_binds_the_operation_on_its_target():
    module = parse(b"s = x\ns *= 2\n")
    index = Index(module)
    first, second = index.module_scope.bindings["s"]
    assert first.kind == ASSIGN and second.kind == ASSIGN
    made = second.value
    assert module.code_for_node(made) == "s * 2"
    assert made.left is module.body[1].body[0].target  # the statement's own target: the flow orders it
    assert index.augmented[id(made)] is module.body[1].body[0]


@pytest.mark.parametrize("source", [
    """\
        import torch

        def f(x):
            p = torch.softmax(x, -1)
            p += 1e-8
            return torch.log(p)
    """,  # an epsilon added in place guards the log
    """\
        import tensorflow as tf

        def f(x):
            p = tf.nn.softmax(x)
            p += 1e-8
            return -tf.reduce_sum(x * tf.math.log(p))
    """,
])
def test_an_epsilon_added_in_place_is_a_guard(source):
    assert lint(source, select=("NAN107", "NAN109", "NAN110"), may=True) == []


def test_a_log_of_a_softmax_scaled_in_place_is_still_the_softmax():
    found = lint("""\
        import torch

        def f(x):
            q = torch.softmax(x, -1)
            q *= 2
            return torch.log(q)
    """, select=("NAN109", "NAN110"), may=True)
    assert [f.code for f in found] == ["NAN110"] and "`q` is assigned on line 5" in found[0].message


def test_whole_tensor_max_shift_is_minus_inf_on_a_low_row_tensorflow():
    tf = pytest.importorskip("tensorflow")
    compat = tf.compat.v1
    source = WHOLE_MAX_TF.replace("import tensorflow as tf", "import tensorflow.compat.v1 as tf")
    before = run(source, compat.constant(ROWS)).numpy()
    assert before[0] == pytest.approx(np.log(2.0)) and before[1] == -np.inf  # the message's claim
    [f] = lint(source)
    assert f.code == "NAN106" and "max of the whole tensor" in f.message and "~87.3" in f.message
    fixed = fix(source)
    assert "tf.reduce_logsumexp(xs, -1)" in fixed
    np.testing.assert_allclose(run(fixed, compat.constant(ROWS)).numpy(), EXACT, rtol=1e-6)
    assert lint(fixed) == []


def test_whole_tensor_max_shift_is_minus_inf_on_a_low_row_torch():
    torch = pytest.importorskip("torch")
    x = torch.tensor(ROWS, requires_grad=True)
    before = run(WHOLE_MAX_TORCH, x)
    before.sum().backward()
    assert before[1].item() == -np.inf and torch.isnan(x.grad[1]).all()
    [f] = lint(WHOLE_MAX_TORCH)
    assert f.code == "NAN106" and f.fix_applicability == "safe" and "~104" in f.message
    fixed = fix(WHOLE_MAX_TORCH)
    assert "torch.logsumexp(x - x.max(), 1)" in fixed
    np.testing.assert_allclose(run(fixed, torch.tensor(ROWS)).numpy(), EXACT, rtol=1e-6)


@pytest.mark.parametrize("source", [
    """\
        import tensorflow as tf

        def log_sum_exp(xs):
            maxes = tf.reduce_max(xs, axis=-1, keepdims=True)
            xs -= maxes
            return tf.squeeze(maxes, [-1]) + tf.math.log(tf.reduce_sum(tf.exp(xs), -1))
    """,  # the max along the summed axis: the stable form
    """\
        import torch

        def log_sum_exp(x):
            return x.max() + torch.log(torch.exp(x - x.max()).sum())
    """,  # one sum over the whole tensor: its max is the row's
])
def test_a_shift_by_the_max_of_what_is_summed_is_silent(source):
    assert lint(source) == []
