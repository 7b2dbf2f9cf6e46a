"""NAN201 through the value a condition tests (issue 24): the singular input is computed
from it by steps that keep 0 at 0 (``theta = sqrt(theta_squared)``,
``where(theta_squared > 0, sin(theta) / theta, ...)``), and the fix guards that step too."""

import textwrap

import pytest

import conftest


def codes(source):
    return conftest.codes(textwrap.dedent(source), ["NAN201"], may=True)


def fixed(source):
    return conftest.fix(textwrap.dedent(source), True, ["NAN201"], may=True)


TF_SQRT = """
import tensorflow as tf
def g(x2):
    x = tf.sqrt(x2)
    k = tf.sin(x) / x
    return tf.where(x2 > 0, k, tf.ones_like(x))
"""

KORNIA = """
import torch
def axis_angle(a):
    theta_squared: torch.Tensor = (a * a).sum(-1)
    theta: torch.Tensor = torch.sqrt(theta_squared)
    half_theta: torch.Tensor = theta * 0.5
    mask: torch.Tensor = theta_squared > 0.0
    k_pos: torch.Tensor = torch.sin(half_theta) / theta
    return torch.where(mask, k_pos, 0.5 * torch.ones_like(theta))
"""


def test_the_condition_on_the_radicand_of_the_divisor_is_flagged():
    assert codes(TF_SQRT) == ["NAN201"]
    assert codes(KORNIA) == ["NAN201"]


@pytest.mark.parametrize("step", ["torch.sqrt(t)", "torch.abs(t)", "t ** 2", "torch.square(t)",
                                  "torch.linalg.norm(t, dim=-1)", "t ** 0.5", "torch.sqrt(torch.abs(t))"])
@pytest.mark.parametrize("test", ["t > 0", "t != 0", "t > 1e-6", "~(t == 0)"])
def test_each_zero_keeping_step_and_test(step, test):
    src = f"""
    import torch
    def f(t):
        d = {step}
        return torch.where({test}, 1.0 / d, torch.zeros_like(d))
    """
    assert codes(src) == ["NAN201"]


@pytest.mark.parametrize("cond", ["x2 > 0", "abs_x > 1e-6", "sq(x2) > 0"])
def test_the_condition_on_the_square_or_abs_of_the_divisor_is_flagged(cond):
    src = f"""
    import torch
    def f(x):
        x2 = x ** 2
        abs_x = torch.abs(x)
        sq = torch.square
        return torch.where({cond}, torch.log(x), torch.zeros_like(x))
    """
    assert codes(src) == ["NAN201"]  # sq(x2) is x ** 4: 0 at 0 too


@pytest.mark.parametrize("radicand", ["x2 + 1e-12", "torch.clamp(x2, min=1e-12)",
                                      "torch.where(x2 > 0, x2, torch.ones_like(x2))"])
def test_a_radicand_kept_off_zero_breaks_the_chain(radicand):
    src = f"""
    import torch
    def f(x2):
        x = torch.sqrt({radicand})
        return torch.where(x2 > 0, torch.sin(x) / x, torch.ones_like(x))
    """
    assert codes(src) == []


@pytest.mark.parametrize("cond", ["x2 == 0", "x2 <= 0", "x2 < beta", "y > 0"])
def test_a_condition_that_keeps_the_branch_at_zero_or_says_nothing_of_it_is_silent(cond):
    src = f"""
    import torch
    def f(x2, y, beta):
        x = torch.sqrt(x2)
        return torch.where({cond}, torch.sin(x) / x, torch.ones_like(x))
    """
    assert codes(src) == []


def test_the_fix_guards_the_sqrt_where_it_is_computed_and_the_divisor_in_the_branch():
    out = fixed(KORNIA)
    assert ("theta: torch.Tensor = torch.where(theta_squared > 0, "
            "torch.sqrt(torch.where(theta_squared > 0, theta_squared, 1.0)), 0.0)") in out
    assert "return torch.where(mask, torch.sin(half_theta) / torch.where(mask, theta, 1.0), " in out
    assert codes(out) == []


def test_the_fixed_program_has_a_finite_gradient_at_the_zero_rotation():
    import torch
    namespace: dict = {}
    exec(fixed(KORNIA), namespace)
    a = torch.tensor([[0.0, 0.0, 0.0], [0.1, -0.2, 0.3]], dtype=torch.float64, requires_grad=True)
    (namespace["axis_angle"](a) * a.sum(-1)).sum().backward()
    assert torch.isfinite(a.grad).all()
    b = a.detach().clone().requires_grad_(True)  # away from 0 the fix moves nothing
    theta = b[1].norm()
    (torch.sin(theta / 2) / theta * b[1].sum()).backward()
    assert torch.allclose(a.grad[1], b.grad[1])


def test_tensorflow_sqrt_needs_only_the_divisor_guarded():
    out = fixed(TF_SQRT)  # the TF table: tf.sqrt's gradient under a zero upstream is 0
    assert "x = tf.sqrt(x2)" in out
    assert "tf.where(x2 > 0, tf.sin(x) / tf.where(x2 > 0, x, 1.0), tf.ones_like(x))" in out


@pytest.mark.parametrize("site, line", [("kornia-0.8.3-0.9.0-axis-angle-to-quaternion", 55),
                                        ("kornia-0.8.3-0.9.0-quaternion-to-axis-angle", 61)])
def test_the_kornia_excerpts_are_flagged_in_the_may_tier_at_their_where(site, line):
    """The fix-history sites: no gradient evidence in the excerpt, so the may tier only; the
    finding is on the where (the records' parent lines are the sqrt and the division)."""
    folder = conftest.Path(__file__).parent / "fixhistory" / "sites" / site
    before = (folder / "before.py").read_text()
    found = conftest.lint(before, ["NAN201"], may=True)
    assert [(f.code, f.start[0], f.may) for f in found] == [("NAN201", line, True)]
    assert conftest.lint((folder / "after.py").read_text(), ["NAN201"], may=True) == []
