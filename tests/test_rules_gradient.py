"""Precision of the gradient-trap rules NAN201-NAN205: what is flagged, what is not,
and the exact fixes (the measured framework facts live in the framework tables)."""

import textwrap

import pytest

import conftest
from conftest import lint


def fix(source, unsafe=True, select=None):
    return conftest.fix(source, unsafe, select, may=True)


def codes(source, select=None):
    return conftest.codes(source, select, may=True)

RULES = ["NAN201", "NAN202", "NAN203", "NAN204", "NAN205"]


def only(source, code):
    """What the rule flags, on any evidence (the tiers are tested in tests/test_gradient_evidence.py)."""
    return [f for f in lint(source, select=[code], may=True)]


def fixed(source, code):
    return fix(source, select=[code])


def body(source):
    return textwrap.dedent(source)


# (the framework facts are measured in tests/test_framework_facts.py)


# --- NAN201 single-where ------------------------------------------------------------------------
def test_single_where_canonical_fix_is_safe():
    src = """
    import tensorflow as tf

    def f(x):
        return tf.where(x != 0, 1 / x, 0.0)
    """
    found = only(src, "NAN201")
    assert [f.fix_applicability for f in found] == ["safe"]
    assert "tf.where(x != 0, 1 / tf.where(x != 0, x, 1.0), 0.0)" in fix(src, unsafe=False, select=["NAN201"])


@pytest.mark.parametrize("call,flagged", [
    ("tf.where(x > 0, tf.sqrt(x), 0.0)", False),  # TF's sqrt gradient under a where is finite
    ("tf.where(x > 0, tf.math.rsqrt(x), 0.0)", False),
    ("tf.where(x != 0, tf.math.reciprocal(x), 0.0)", False),
    ("tf.where(x > 0, tf.math.log(x), 0.0)", True),
    ("tf.where(x > 0, tf.pow(x, 0.5), 0.0)", True),
    ("tf.where(x > 0, x ** 1.5, 0.0)", True),
    ("tf.where(x != 0, x ** -1, 0.0)", True),
    ("tf.where(x > 0, x ** 2, 0.0)", False),
    ("tf.where(x > 0, tf.pow(x, 3), 0.0)", False),
    ("tf.where(x != 0, 2.0 / x, 0.0)", True),
    ("tf.where(x != 0, x / 2.0, 0.0)", False),
    ("tf.where(x != 0, tf.math.divide(1.0, x), 0.0)", True),
    ("tf.where(x == 0, 0.0, 1 / x)", True),
    ("tf.where(tf.abs(x) > 1e-6, 1 / x, 0.0)", True),
    ("tf.where((x > 0) & (y > 0), tf.math.log(x), 0.0)", True),
    ("tf.where(y > 0, tf.math.log(x), 0.0)", False),  # the condition does not test log's input
    ("tf.where(x > 0, tf.math.log(tf.where(x > 0, x, 1.0)), 0.0)", False),  # already double
    ("tf.where(x > 0, x, 0.0)", False),
])
def test_single_where_tensorflow(call, flagged):
    src = f"""
    import tensorflow as tf

    def f(x, y):
        return {call}
    """
    assert (codes(src, select=["NAN201"]) == ["NAN201"]) is flagged


@pytest.mark.parametrize("call,flagged", [
    ("torch.where(x > 0, torch.sqrt(x), 0.0)", True),
    ("torch.where(x > 0, torch.rsqrt(x), 0.0)", True),
    ("torch.where(x != 0, torch.reciprocal(x), 0.0)", True),
    ("torch.where(x != 0, x.reciprocal(), 0.0)", True),
    ("torch.log(x).masked_fill(x <= 0, 0.0)", True),
    ("x.log().masked_fill(~(x > 0), 0.0)", True),
    ("torch.log(x).masked_fill(m, 0.0)", False),
    ("torch.where(x > 0, torch.exp(x), 0.0)", False),
])
def test_single_where_torch(call, flagged):
    src = f"""
    import torch

    def f(x, m):
        return {call}
    """
    assert (codes(src, select=["NAN201"]) == ["NAN201"]) is flagged


def test_single_where_jax_sqrt_and_rsqrt():
    src = """
    import jax
    import jax.numpy as jnp

    def f(x):
        return jnp.where(x > 0, jnp.sqrt(x), 0.0) + jnp.where(x > 0, jax.lax.rsqrt(x), 0.0)
    """
    assert codes(src, select=["NAN201"]) == ["NAN201", "NAN201"]


def test_single_where_condition_through_a_name_is_repeated():
    src = """
    import torch

    def f(x):
        mask = x > 0
        return torch.where(mask, torch.log(x), 0.0)
    """
    assert "torch.where(mask, torch.log(torch.where(mask, x, 1.0)), 0.0)" in fixed(src, "NAN201")


def test_single_where_impure_condition_is_display_only():
    src = """
    import tensorflow as tf

    def f(x, noise):
        return tf.where((x > 0) & (noise() > 0.5), tf.math.log(x), 0.0)
    """
    found = only(src, "NAN201")
    assert [f.fix_applicability for f in found] == ["display-only"]
    assert fixed(src, "NAN201") == body(src)


@pytest.mark.parametrize("header, call", [
    ("import tensorflow as tf", "tf.where((x > 0) & (tf.random.uniform([]) > 0.5), tf.math.log(x), 0.0)"),
    ("import torch", "torch.where((x > 0) & (torch.rand_like(x) > 0.5), torch.log(x), 0.0)"),
    ("import torch", "torch.where((x > 0) & (torch.nn.functional.dropout(x, 0.5) > 0), torch.log(x), 0.0)"),
])
def test_single_where_random_condition_is_display_only(header, call):
    """A uniform draw (or a dropout's mask) is a framework op but not pure: repeating it draws again."""
    src = f"""
    {header}

    def f(x):
        return {call}
    """
    found = only(src, "NAN201")
    assert [f.fix_applicability for f in found] == ["display-only"]


def test_single_where_tf1_uses_where_v2():
    src = """
    import tensorflow.compat.v1 as tf

    def f(x):
        return tf.where(x > 0, tf.log(x), tf.zeros_like(x))
    """
    assert "tf.log(tf.where_v2(x > 0, x, 1.0))" in fixed(src, "NAN201")


def test_single_where_masked_fill_fix():
    src = """
    import torch

    def f(x):
        return torch.log(x).masked_fill(x <= 0, 0.0)
    """
    assert "torch.log(x.masked_fill(x <= 0, 1.0)).masked_fill(x <= 0, 0.0)" in fixed(src, "NAN201")


def test_single_where_branch_through_assignment_is_unsafe():
    src = """
    import jax.numpy as jnp

    def f(x):
        inv = 1.0 / x
        return jnp.where(x != 0, inv, 0.0)
    """
    assert [f.fix_applicability for f in only(src, "NAN201")] == ["unsafe"]
    assert fix(src, unsafe=False, select=["NAN201"]) == body(src)


def test_single_where_users_own_where_is_not_flagged():
    src = """
    import tensorflow as tf

    def where(c, a, b):
        return a

    def f(x):
        return where(x != 0, 1 / x, 0.0)
    """
    assert codes(src, select=["NAN201"]) == []


# --- NAN202 sqrt-at-zero ------------------------------------------------------------------------------
@pytest.mark.parametrize("expr,flagged", [
    ("tf.sqrt(tf.reduce_sum(tf.square(a - b), axis=-1))", True),
    ("tf.sqrt(tf.reduce_sum((a - b) ** 2))", True),
    ("tf.sqrt(tf.reduce_sum(d * d))", True),
    ("tf.reduce_sum(tf.square(a - b)) ** 0.5", True),
    ("tf.pow(tf.reduce_sum(tf.square(a)), 0.5)", False),  # an arbitrary vector: not plausibly exactly 0
    ("tf.pow(tf.reduce_sum(tf.square(a * mask)), 0.5)", True),  # a masked one is
    ("tf.pow(tf.reduce_sum(tf.square(tf.nn.relu(a))), 0.5)", True),  # and so is a rectified one
    ("tf.sqrt(a ** 2 + sigma_data ** 2)", False),  # a term that is not plausibly 0 keeps the sum positive
    ("tf.sqrt(dx ** 2 + dy ** 2)", True),
    ("tf.norm(a - b, axis=-1)", True),
    ("tf.norm(a - b, ord=1)", False),
    ("tf.norm(a)", False),
    ("tf.sqrt(a)", False),  # arbitrary data
    ("tf.sqrt(tf.reduce_sum(tf.square(a - b)) + 1e-12)", False),
    ("tf.sqrt(tf.maximum(tf.reduce_sum(tf.square(a - b)), 1e-12))", False),
    ("tf.sqrt(tf.reduce_sum(a))", False),
    ("tf.sqrt(tf.reduce_sum(tf.exp(a)))", False),
    ("np.sqrt(np.sum((a - b) ** 2))", False),  # numpy data, no gradient
])
def test_sqrt_at_zero_tensorflow(expr, flagged):
    src = f"""
    import numpy as np
    import tensorflow as tf

    def f(a, b, d, dx, dy, mask, sigma_data):
        return {expr}
    """
    assert (codes(src, select=["NAN202"]) == ["NAN202"]) is flagged


@pytest.mark.parametrize("expr,flagged", [
    ("torch.norm(a - b, dim=-1)", False),  # torch's norm gradient at 0 is 0
    ("torch.linalg.vector_norm(a - b, dim=-1)", False),
    ("(a - b).norm(dim=-1)", False),
    ("((a - b) ** 2).sum(-1).sqrt()", True),
    ("torch.sqrt(((a - b) ** 2).sum(dim=1))", True),
])
def test_sqrt_at_zero_torch(expr, flagged):
    src = f"""
    import torch

    def f(a, b):
        return {expr}
    """
    assert (codes(src, select=["NAN202"]) == ["NAN202"]) is flagged


def test_sqrt_at_zero_fixes():
    src = """
    import jax.numpy as jnp

    def f(a, b):
        return jnp.linalg.norm(a - b, axis=-1, keepdims=True), jnp.sum((a - b) ** 2) ** 0.5
    """
    out = fixed(src, "NAN202")
    assert "jnp.sqrt(jnp.sum(jnp.square(a - b), axis=-1, keepdims=True) + 1e-12)" in out
    assert "(jnp.sum((a - b) ** 2) + 1e-12) ** 0.5" in out
    assert all(f.fix_applicability == "unsafe" for f in only(src, "NAN202"))


def test_sqrt_at_zero_norm_with_ord_is_display_only():
    src = """
    import tensorflow as tf

    def f(a, b):
        return tf.norm(a - b, ord=2, axis=-1)
    """
    assert [f.fix_applicability for f in only(src, "NAN202")] == ["display-only"]


# --- NAN203 normalize-by-norm ---------------------------------------------------------------------------
def test_normalize_by_norm_supersedes_sqrt_at_zero():
    src = """
    import tensorflow as tf

    def f(v, mask):
        x = v * mask
        return x / tf.sqrt(tf.reduce_sum(tf.square(x), axis=-1, keepdims=True))
    """
    assert codes(src, select=["NAN202", "NAN203"]) == ["NAN203"]
    assert "return tf.nn.l2_normalize(x, axis=-1)" in fixed(src, "NAN203")


@pytest.mark.parametrize("header,expr,flagged", [
    ("import tensorflow as tf", "x / tf.norm(x, axis=-1, keepdims=True)", True),
    ("import tensorflow as tf", "tf.math.divide(x, tf.norm(x))", True),
    ("import tensorflow as tf", "x / tf.norm(w)", False),
    ("import tensorflow as tf", "x / (tf.norm(x, axis=-1, keepdims=True) + 1e-8)", False),  # finite in TF
    ("import tensorflow as tf", "x / tf.maximum(tf.norm(x, axis=-1, keepdims=True), 1e-8)", False),
    ("import jax.numpy as jnp", "x / (jnp.linalg.norm(x, axis=-1, keepdims=True) + 1e-8)", True),
    ("import jax.numpy as jnp", "x / jnp.maximum(jnp.linalg.norm(x), 1e-8)", True),
    ("import jax.numpy as jnp", "x / jnp.sqrt(jnp.sum(x ** 2, axis=-1, keepdims=True) + 1e-12)", False),
    ("import torch", "x / x.norm(dim=-1, keepdim=True)", True),
    ("import torch", "x / (x.norm(dim=-1, keepdim=True) + 1e-8)", False),  # torch's norm: gradient 0 at 0
    ("import torch", "x / (torch.sqrt(torch.sum(x ** 2)) + 1e-8)", True),  # measured NaN in torch
    ("import torch", "x / x.norm(dim=-1, keepdim=True).clamp_min(1e-12)", False),
])
def test_normalize_by_norm(header, expr, flagged):
    src = f"""
    {header}

    def f(v, w, mask):
        x = v * mask  # padded rows are zero vectors
        return {expr}
    """
    assert (codes(src, select=["NAN203"]) == ["NAN203"]) is flagged


@pytest.mark.parametrize("value", [
    "self.visual_projection(h)",  # an embedding: never exactly the zero vector
    "torch.randn(4, 3)",  # a random sample
    "v",  # an input nothing is known of
])
def test_normalize_by_norm_of_a_value_not_plausibly_zero_is_silent(value):
    src = f"""
    import torch

    def f(self, h, v):
        x = {value}
        return x / x.norm(dim=-1, keepdim=True)
    """
    assert codes(src, select=["NAN203"]) == []


@pytest.mark.parametrize("value,why", [
    ("a - b", "a difference"), ("v * mask", "a masked value"), ("torch.relu(v)", "a rectified value"),
    ("torch.where(m, v, 0.0)", "a masked value"),
])
def test_normalize_by_norm_says_why_zero_is_plausible(value, why):
    src = f"""
    import torch

    def f(a, b, v, m, mask):
        x = {value}
        return x / x.norm(dim=-1, keepdim=True)
    """
    [finding] = only(src, "NAN203")
    assert why in finding.message


@pytest.mark.parametrize("expr,fixed_expr", [
    ("x / x.norm(dim=1, keepdim=True)", "F.normalize(x, dim=1)"),
    ("x / torch.linalg.vector_norm(x, dim=-1, keepdim=True)", "F.normalize(x, dim=-1)"),
])
def test_normalize_by_norm_torch_fix(expr, fixed_expr):
    src = f"""
    import torch
    import torch.nn.functional as F

    def f(a, b):
        x = a - b
        return {expr}
    """
    assert f"return {fixed_expr}" in fixed(src, "NAN203")


@pytest.mark.parametrize("header,expr", [
    ("import tensorflow as tf", "x / tf.norm(x, axis=1)"),  # no keepdims: not the shape of l2_normalize
    ("import torch", "x / x.norm()"),  # the norm of the whole tensor: F.normalize needs a dim
])
def test_normalize_by_norm_without_axis_or_keepdims_is_display_only(header, expr):
    src = f"""
    {header}

    def f(a, b):
        x = a - b
        return {expr}
    """
    assert [f.fix_applicability for f in only(src, "NAN203")] == ["display-only"]


# --- NAN204 acos-domain --------------------------------------------------------------------------------
@pytest.mark.parametrize("expr,flagged", [
    ("torch.acos((u * v).sum(-1))", True),
    ("torch.acos(torch.sum(torch.mul(u, v), dim=-1))", True),
    ("torch.asin(u @ v)", True),
    ("torch.acos(torch.matmul(u, v))", True),
    ("torch.acos(torch.einsum('i,i->', u, v))", True),
    ("torch.acos(F.cosine_similarity(u, v))", True),
    ("torch.acos(u.dot(v))", True),
    ("torch.acos(c / (u.norm() * v.norm()))", True),
    ("torch.acos(c)", False),  # arbitrary data
    ("torch.acos(torch.clamp((u * v).sum(-1), -1 + 1e-7, 1 - 1e-7))", False),
    ("torch.acos(u.sum(-1))", False),
    ("np.arccos(np.dot(a, b))", False),  # numpy
])
def test_acos_domain(expr, flagged):
    src = f"""
    import numpy as np
    import torch
    import torch.nn.functional as F

    def f(u, v, c, a, b):
        return {expr}
    """
    assert (codes(src, select=["NAN204"]) == ["NAN204"]) is flagged


def test_acos_domain_through_a_name_and_fixes():
    src = """
    import tensorflow as tf

    def f(u, v):
        cos = tf.reduce_sum(u * v, axis=-1)
        return tf.acos(cos)
    """
    assert "tf.acos(tf.clip_by_value(cos, -1 + 1e-7, 1 - 1e-7))" in fixed(src, "NAN204")
    jax_src = """
    import jax.numpy as jnp

    def f(u, v):
        return jnp.arcsin(jnp.tensordot(u, v, axes=1))
    """
    assert "jnp.arcsin(jnp.clip(jnp.tensordot(u, v, axes=1), -1 + 1e-7, 1 - 1e-7))" in fixed(jax_src, "NAN204")


def test_acos_fix_is_not_an_absorbed_epsilon():
    """The clip bound 1 - 1e-7 survives float32 rounding (0.99999988), so the default
    rules (NAN105 absorbed-epsilon among them) stay silent on the fixed code."""
    src = """
    import torch

    def f(u, v):
        return (u * v).sum(-1).acos()
    """
    out = fixed(src, "NAN204")
    assert "(u * v).sum(-1).clamp(-1 + 1e-7, 1 - 1e-7).acos()" in out
    assert codes(out) == []


# --- NAN205 nan-masking ---------------------------------------------------------------------------------
@pytest.mark.parametrize("header,expr,flagged", [
    ("import torch", "torch.nan_to_num(y * torch.log(p))", True),
    ("import torch", "(y * p.log()).nan_to_num()", True),
    ("import torch", "torch.nan_to_num(batch)", False),  # data
    ("import torch", "torch.nan_to_num(y * p)", False),
    ("import torch", "torch.nan_to_num(torch.log(torch.clamp(p, 1e-7, 1.0)))", False),  # guarded
    ("import torch", "t.masked_fill(t.isnan(), 0.0)", True),
    ("import tensorflow as tf", "tf.where(tf.math.is_finite(t), t, 0.0)", True),
    ("import tensorflow as tf", "tf.where(tf.math.is_nan(t), tf.zeros_like(t), t)", True),
    ("import tensorflow as tf", "tf.where(tf.math.is_nan(batch), 0.0, batch)", False),
    ("import tensorflow as tf", "tf.where(tf.math.is_finite(p), t, 0.0)", False),  # tests another tensor
    ("import jax.numpy as jnp", "jnp.nan_to_num(1.0 / p)", True),
    ("import jax.numpy as jnp", "jnp.where(~jnp.isfinite(jnp.sqrt(p)), 0.0, jnp.sqrt(p))", True),
])
def test_nan_masking(header, expr, flagged):
    log = {"import torch": "torch.log", "import tensorflow as tf": "tf.math.log"}.get(header, "jnp.log")
    src = f"""
    {header}

    def f(y, p, batch):
        t = y * {log}(p)
        return {expr}
    """
    assert (codes(src, select=["NAN205"]) == ["NAN205"]) is flagged


def test_nan_masking_is_display_only():
    src = """
    import torch

    def f(y, p):
        return torch.nan_to_num(y * torch.log(p))
    """
    assert [f.fix_applicability for f in only(src, "NAN205")] == ["display-only"]
    assert fixed(src, "NAN205") == body(src)


@pytest.mark.parametrize("call,flagged", [
    # the singular point is *selected*: the value is inf, not a where trap (torch's von_mises)
    ("torch.where(k < 1e-5, 1 / k + k, other)", False),
    ("torch.where(k == 0, 1 / k, other)", False),
    ("torch.where(k != 0, other, 1 / k)", False),
    ("torch.where(k < 3.75, other, k - 0.5 * k.log())", True),
    # a root is singular at 0 and below: k >= 0 selects it at 0, but discards it below
    ("torch.where(k >= 0, torch.sqrt(k), other)", True),
    ("torch.where(k > -1, torch.sqrt(k), other)", True),
    ("torch.where(k >= 0, 1 / k, other)", False),
    ("torch.where((k > 0) & (other > 0), torch.log(k), other)", True),
    ("torch.where(k < 0, 1 / k, other)", True),
    ("torch.where(~(k > 0), other, torch.log(k))", True),
    ("torch.where(~(k > 0), torch.log(k), other)", False),
    ("torch.log(k).masked_fill(k > 0, 0.0)", False),
])
def test_single_where_only_when_the_singular_point_is_discarded(call, flagged):
    src = f"""
    import torch

    def f(k, other):
        return {call}
    """
    assert (codes(src, select=["NAN201"]) == ["NAN201"]) is flagged


@pytest.mark.parametrize("call,flagged", [
    # a comparison with another tensor says nothing about the singular point (torch's smooth_l1)
    ("torch.where(loss < beta, 0.5 * loss ** 2 / beta, loss - 0.5 * beta)", False),
    ("torch.where(u >= 1.0 - eps, -eps, torch.log(u))", False),  # log guarded near 1, not at 0
    ("torch.where(u > EPS, torch.log(u), 0.0)", True),  # a module constant: decided
    ("torch.where(u > eps_arg, torch.log(u), 0.0)", False),  # unknown threshold
])
def test_single_where_needs_a_constant_comparison(call, flagged):
    src = f"""
    import torch

    EPS = 1e-6

    def f(loss, beta, u, eps_arg):
        eps = torch.finfo(u.dtype).eps / 2
        return {call}
    """
    assert (codes(src, select=["NAN201"]) == ["NAN201"]) is flagged


def test_normalize_by_norm_fix_keeps_the_users_epsilon():
    """x / (norm(x) + 1e-8) -> x / sqrt(sum(x^2) + 1e-16): the floor stays 1e-8, so the
    gradient at a zero row is w / 1e-8 as the code meant (1e-12 would make it w / 1e-6)."""
    src = """
    import jax.numpy as jnp

    def f(a, b):
        x = a - b
        return x / (jnp.linalg.norm(x, axis=-1, keepdims=True) + 1e-8), x / jnp.maximum(jnp.linalg.norm(x), 1e-4)
    """
    out = fixed(src, "NAN203")
    assert "jnp.sum(jnp.square(x), axis=-1, keepdims=True) + 1e-16)" in out
    assert "jnp.sum(jnp.square(x)) + 1e-08)" in out


# --- NAN203: in-place division, and a loop that skips the zero ---------------------------------
STABLE_SPAM = """
import torch

def step(params):
    for p in params:
        grad = p.grad
        grad_norm = torch.linalg.norm(grad)
        {guard}
        grad.div_(grad_norm).mul_(0.5)
"""


@pytest.mark.parametrize("guard,flagged", [
    ("", True),  # pytorch-optimizer 3.8.0's StableSPAM: 0/0 for a parameter whose gradient is all zero
    ("if grad_norm == 0:\n            continue", False),  # 3.8.1's fix
    ("if grad_norm == 0:\n            break", False),
    ("if grad_norm == 0:\n            print('zero')", True),  # does not leave the iteration
])
def test_an_in_place_division_by_the_norm_and_the_loop_guard_that_skips_it(guard, flagged):
    found = [f.code for f in lint(STABLE_SPAM.format(guard=guard))]
    assert found == (["NAN203"] if flagged else [])
