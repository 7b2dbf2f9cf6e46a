"""Issue 21, items 3 and 4: value facts that keep a value from its singular point, and
NAN301/NAN401 on by default on evidence.  Each case is linted and run in the real
framework (torch on CPU): a strong finding is a program that gives NaN, a silent one a
program that stays finite on the same extreme input."""

import textwrap

import pytest

from nanlint.lint.engine import Linter
from nanlint.rules.base import by_code

torch = pytest.importorskip("torch")
RULES = by_code()


def _codes(source: str, code: str, may: bool = False) -> list[str]:
    settings = {"may": True} if may else {}
    found = Linter([RULES[code]], settings).lint_source(textwrap.dedent(source).encode(), "t.py").findings
    return [f.message for f in found]


def _run(source: str, name: str, *args):
    namespace: dict = {}
    exec(textwrap.dedent(source), namespace)  # the linted program itself
    return namespace[name](*args)


def test_rules_are_on_by_default():
    assert RULES["NAN301"].default and RULES["NAN401"].default


# --- NAN401 ---------------------------------------------------------------------------
SELECTED = """
import torch

def masked_mean(x, iou):
    m = (iou > 0.5).float()
    return (x * m).sum() / m.sum()
"""

GIVEN = """
import torch

def pooled(hidden, attention_mask):
    m = attention_mask.float()
    return (hidden * m).sum() / m.sum()
"""

BRANCH = """
import torch

def masked_mean(x, iou):
    m = (iou > 0.5).float()
    n = m.sum()
    return torch.zeros(()) if n == 0 else (x * m).sum() / n
"""

SHIFTED = """
import torch

def expectation(v, w):
    p = (w - w.max()).exp()
    return (v * p).sum() / p.sum()
"""


def test_a_mask_this_code_selects_is_strong_and_nan_when_empty():
    messages = _codes(SELECTED, "NAN401")
    assert len(messages) == 1 and "selected here by a comparison" in messages[0] and "(iou > 0.5)" in messages[0]
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    out = _run(SELECTED, "masked_mean", x, torch.tensor([0.1, 0.2]))  # no box matches
    out.backward()
    assert torch.isnan(out) and torch.isnan(x.grad).all()


def test_a_mask_passed_in_is_the_may_tier():
    assert _codes(GIVEN, "NAN401") == []
    messages = _codes(GIVEN, "NAN401", may=True)
    assert len(messages) == 1 and "weak evidence" in messages[0] and "padding or token mask" in messages[0]


def test_a_branch_on_the_count_is_silent_and_finite():
    assert _codes(BRANCH, "NAN401", may=True) == []
    out = _run(BRANCH, "masked_mean", torch.tensor([1.0, 2.0]), torch.tensor([0.1, 0.2]))
    assert torch.isfinite(out)


def test_a_sum_of_max_shifted_exps_is_at_least_one():
    assert _codes(SHIFTED, "NAN401", may=True) == []
    w = torch.tensor([-1000.0, -2000.0, -3000.0])  # exp(w) alone underflows to 0 everywhere
    assert torch.exp(w).sum() == 0
    p = (w - w.max()).exp()
    assert p.sum() >= 1
    assert torch.isfinite(_run(SHIFTED, "expectation", torch.tensor([1.0, 2.0, 3.0]), w))


# --- NAN301 ---------------------------------------------------------------------------
LOGITS = """
import torch

def probs(h, w):
    logits = h @ w
    return torch.exp(logits) / torch.sum(torch.exp(logits), dim=-1, keepdim=True)
"""

UNKNOWN = """
import torch

def weights(z):
    return torch.exp(z) / torch.sum(torch.exp(z), dim=-1, keepdim=True)
"""

BOUNDED = """
import torch

def gate(h):
    e = torch.exp(torch.tanh(h))
    return e / e.sum(-1, keepdim=True)

def kernel(d):
    e = torch.exp(-torch.where(d >= 0, d, -d))
    return e / e.sum(-1, keepdim=True)
"""


def test_a_hand_softmax_of_logits_is_strong_and_nan_past_88():
    messages = _codes(LOGITS, "NAN301")
    assert len(messages) == 1 and "`logits` is named like a logit" in messages[0]
    out = _run(LOGITS, "probs", torch.tensor([[1.0]]), torch.tensor([[1000.0, 0.0]]))
    assert torch.isnan(out).any()
    assert torch.isfinite(torch.softmax(torch.tensor([1000.0, 0.0]), -1)).all()


def test_a_hand_softmax_of_an_unknown_exponent_is_the_may_tier():
    assert _codes(UNKNOWN, "NAN301") == []
    assert len(_codes(UNKNOWN, "NAN301", may=True)) == 1


def test_bounded_exponents_are_silent_and_finite():
    assert _codes(BOUNDED, "NAN301", may=True) == []
    big = torch.tensor([1e4, -1e4, 0.0])
    for name in ("gate", "kernel"):
        assert torch.isfinite(_run(BOUNDED, name, big)).all()


# --- value facts in the zero rules ---------------------------------------------------------
DEFAULT = """
import torch

class Head(torch.nn.Module):
    def __init__(self, floor={floor}):
        super().__init__()
        self.floor = floor

    def forward(self, x):
        r = torch.relu(x)
        return torch.log(r + self.floor)
"""


def test_a_positive_default_guards_and_a_zero_default_does_not():
    # NAN109 (the may tier's bare log): `+ self.floor` is a guard when its default is positive
    assert _codes(DEFAULT.format(floor="1e-6"), "NAN109", may=True) == []
    assert len(_codes(DEFAULT.format(floor="0.0"), "NAN109", may=True)) == 1
    out = _run(DEFAULT.format(floor="1e-6"), "Head")(torch.tensor([-1.0, 2.0]))
    assert torch.isfinite(out).all()
    out = _run(DEFAULT.format(floor="0.0"), "Head")(torch.tensor([-1.0, 2.0]))
    assert torch.isinf(out).any()


ELSE_BRANCH = """
import torch

def log_scale(x):
    s = torch.relu(x)
    if s <= 0:
        return torch.zeros(())
    else:
        return torch.log(s)
"""

EARLY = """
import torch

def mean_pos(loss, y):
    n = (y > 0).sum()
    if n == 0:
        return loss.sum() * 0
    return loss.sum() / n
"""


def test_branch_and_early_return_guards():
    assert _codes(ELSE_BRANCH, "NAN107") == []
    assert len(_codes(ELSE_BRANCH.replace("if s <= 0", "if s >= 100"), "NAN107")) == 1
    assert torch.isfinite(_run(ELSE_BRANCH, "log_scale", torch.tensor(-1.0)))
    assert torch.isinf(torch.log(torch.relu(torch.tensor(-1.0))))
    assert _codes(EARLY, "NAN108") == []
    assert torch.isfinite(_run(EARLY, "mean_pos", torch.tensor([1.0]), torch.tensor([0.0])))


RANGES = """
import torch

def f(x):
    return torch.log(torch.relu(x) + 1)

def g(x):
    return torch.log(torch.where(x >= 0, x, -x) + 1)

def h(x):
    e = torch.exp(x)
    return torch.log(1 + e)
"""


def test_ranges_through_plus_c_abs_and_where_built_abs():
    assert _codes(RANGES, "NAN109", may=True) == []
    assert len(_codes(RANGES.replace("+ 1)", "- 1)"), "NAN109", may=True)) >= 2
    x = torch.tensor([-5.0, 0.0, 5.0], requires_grad=True)
    for name in ("f", "g"):
        out = _run(RANGES, name, x).sum()
        (grad,) = torch.autograd.grad(out, x)
        assert torch.isfinite(out) and torch.isfinite(grad).all()


# --- NAN401: a mask of the labels vs a selection of the model's outputs --------------------------
LABEL_MASK = """
import torch

def event_accuracy(correct, labels, no_event_label):
    events = (labels != no_event_label).float()
    return (correct * events).sum() / events.sum()

def precision(inputs, probs):
    predicted = (probs >= 0.5).float()
    return (inputs * predicted).sum() / predicted.sum()
"""


def test_a_mask_of_the_labels_is_the_may_tier_a_selection_of_outputs_is_strong():
    strong, weak = _codes(LABEL_MASK, "NAN401"), _codes(LABEL_MASK, "NAN401", may=True)
    assert len(strong) == 1 and "`predicted`" in strong[0]
    assert len(weak) == 2 and any("a mask of what the labels hold" in m for m in weak)
    # the strong one is NaN on the model's first steps (no probability past 0.5); the label
    # mask of a batch of real data holds its class
    nan = _run(LABEL_MASK, "precision", torch.ones(4), torch.full((4,), 0.2))
    assert torch.isnan(nan)
    ok = _run(LABEL_MASK, "event_accuracy", torch.ones(4), torch.tensor([0, 3, 0, 2]), 0)
    assert torch.isfinite(ok)
