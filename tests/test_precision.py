"""Precision fixes found by the regression corpus (tests/test_corpus.py): each test
is a minimal reproduction of code seen in a real framework package."""

import textwrap

import pytest
import conftest
from conftest import lint


def fix(source, unsafe=True, select=None):
    return conftest.fix(source, unsafe, select, may=True)


def codes(source, select=None):
    """What the rules flag on any evidence: the gradient rules' tiers are tested in
    tests/test_gradient_evidence.py; here, what is flagged at all and what is proven safe."""
    return conftest.codes(source, select, may=True)


def test_recursive_function_with_several_returns_does_not_exhaust_the_stack():
    # tensorflow/python/ops/ragged/ragged_math_ops.py: a function that returns a call
    # of itself on one branch sent op_of following returns into unbounded recursion,
    # reported as NAN001 "cannot analyse" on a file that parses fine.
    source = """
    import tensorflow as tf

    def f(x, n):
        if n == 0:
            return tf.nn.softmax(x)
        return f(x, n - 1)

    y = tf.math.log(f(x, 3))
    """
    assert "NAN001" not in codes(source)


def test_mutually_recursive_functions_do_not_exhaust_the_stack():
    source = """
    import torch

    def f(x):
        if x.dim() > 2:
            return g(x)
        return torch.softmax(x, -1)

    def g(x):
        if x.dim() > 3:
            return f(x[0])
        return torch.softmax(x, -1)

    y = torch.log(f(x))
    """
    assert "NAN001" not in codes(source)


def test_manual_softmax_shift_seen_through_a_cast():
    # jax/experimental/pallas/ops/gpu/softmax.py: exp((row - row_max).astype(f32)) / sum(...)
    source = """
    import jax.numpy as jnp

    def softmax(row):
        row_max = jnp.max(row, axis=0)
        numerator = jnp.exp((row - row_max).astype(jnp.float32))
        denominator = jnp.sum(numerator, axis=0)
        return numerator / denominator
    """
    assert "NAN301" not in codes(source)


def test_manual_softmax_cast_without_a_shift_is_still_flagged():
    source = """
    import tensorflow as tf

    def softmax(z):
        e = tf.exp(tf.cast(z, tf.float32))
        return e / tf.reduce_sum(e, axis=-1, keepdims=True)
    """
    assert "NAN301" in codes(source, select={"NAN301"})


# --- gradient hazards of values that are never differentiated (NAN201/202/203/205) ----------------
# optax/_src/linear_algebra_test.py, contrib/_muon_test.py, _src/alias_test.py: norms computed for
# an assertion or a convergence test.  Every use must be such a sink, resolved through the imports.

DISTANCE = "jnp.sqrt(jnp.sum((a - b) ** 2))"


def in_function(header: str, body: str) -> str:
    """``header`` (ending in a ``def`` line) with ``body`` as the function's body."""
    return textwrap.dedent(header) + textwrap.indent(body, "    ") + "\n"


@pytest.mark.parametrize("body,flagged", [
    (f"np.testing.assert_allclose({DISTANCE}, 1.0)", False),
    (f"chex.assert_trees_all_close({DISTANCE}, 1.0)", False),
    (f"assert {DISTANCE} < 1.0", False),
    (f"print(float({DISTANCE}))", False),
    (f"d = {DISTANCE}\nnp.testing.assert_allclose(d, 1.0, err_msg=f'{{d}}')", False),
    (f"d = {DISTANCE}\nif d < 1e-3:\n    return a", False),  # a Python bool of a value
    (f"d = jax.lax.stop_gradient({DISTANCE})\nreturn d", False),
    # near misses: one use that is differentiated is enough
    (f"d = {DISTANCE}\nnp.testing.assert_allclose(d, 1.0)\nreturn d", True),
    (f"d = {DISTANCE}\nif d < 1e-3:\n    return a\nreturn a * d", True),
    (f"assert_allclose({DISTANCE}, 1.0)", True),  # the user's own function: may do anything
    (f"losses.append({DISTANCE})", True),
])
def test_jax_distance_only_used_by_sinks_is_not_a_gradient_hazard(body, flagged):
    source = in_function("""
    import chex
    import jax
    import jax.numpy as jnp
    import numpy as np

    def assert_allclose(x, y):
        return x - y

    def f(a, b, losses):
    """, body)
    assert (codes(source, select=["NAN202"]) == ["NAN202"]) is flagged


@pytest.mark.parametrize("base,call,flagged", [
    ("parameterized.TestCase", "self.assertLess(err, 1e-3, f'error {err}')", False),
    ("absltest.TestCase", "self.assertAlmostEqual(float(err), 0.0)", False),
    ("MyBase", "self.assertLess(err, 1e-3)", False),  # a TestCase of this module
    ("object", "self.assertLess(err, 1e-3)", True),  # not a test class: its own assertLess
    ("parameterized.TestCase", "self.check(err)", True),
])
def test_norm_in_a_test_assertion_method(base, call, flagged):
    # optax/contrib/_muon_test.py: ortho_error = jnp.linalg.norm(gram - eye); self.assertLess(...)
    source = f"""
    from absl.testing import absltest
    from absl.testing import parameterized
    import jax.numpy as jnp

    class MyBase(absltest.TestCase):
        pass

    class OrthoTest({base}):
        def test_orthogonality(self, gram):
            err = jnp.linalg.norm(gram - jnp.eye(gram.shape[0]))
            {call}
    """
    assert (codes(source, select=["NAN202"]) == ["NAN202"]) is flagged


@pytest.mark.parametrize("tail,flagged", [
    ("", False),  # measured: at a == b the gradient of the returned loss is finite (2, 2, 2)
    ("\n        return (a * d).sum()", True),  # d reaches the loss too
])
def test_python_if_on_a_torch_value(tail, flagged):
    # a Python bool carries no gradient in torch or TF either
    source = """
    import torch

    def f(a, b):
        d = torch.sqrt(torch.sum((a - b) ** 2))
        if d < 1e-3:
            return (a * 2).sum()""" + tail + "\n"
    assert (codes(source, select=["NAN202"]) == ["NAN202"]) is flagged


WHERE = "torch.where(x != 0, torch.log(x), 0.0)"


@pytest.mark.parametrize("source,flagged", [
    (f"with torch.no_grad():\n    y = {WHERE}\nreturn y", False),
    (f"with torch.inference_mode():\n    return {WHERE}", False),
    (f"return {WHERE}.detach()", False),
    (f"return {WHERE}.item()", False),
    (f"return {WHERE}.sum().item()", False),
    (f"return {WHERE}", True),
    (f"with torch.enable_grad():\n    return {WHERE}", True),
    (f"with torch.no_grad():\n    with torch.enable_grad():\n        return {WHERE}", True),
    (f"with torch.no_grad():\n    def g(x):\n        return {WHERE}\nreturn g", True),  # runs later
])
def test_single_where_not_differentiated_in_torch(source, flagged):
    src = in_function("""
    import torch

    def f(x):
    """, source)
    assert (codes(src, select=["NAN201"]) == ["NAN201"]) is flagged


@pytest.mark.parametrize("decorator,flagged", [("@torch.no_grad()", False), ("@torch.inference_mode()", False),
                                               ("@no_grad()", True), ("", True)])
def test_single_where_under_a_no_grad_decorator(decorator, flagged):
    src = f"""
    import torch

    def no_grad():
        return lambda f: f

    {decorator}
    def f(x):
        return {WHERE}
    """
    assert (codes(src, select=["NAN201"]) == ["NAN201"]) is flagged


def test_nan_masking_and_guarded_normalize_in_an_assertion():
    src = """
    import jax.numpy as jnp
    import numpy as np

    def f(x, y, mask):
        d = x * mask
        np.testing.assert_allclose(jnp.nan_to_num(jnp.log(x)), y)
        np.testing.assert_allclose(d / (jnp.linalg.norm(d) + 1e-6), y)
        return jnp.nan_to_num(jnp.log(x)), d / (jnp.linalg.norm(d) + 1e-6)
    """
    assert sorted(codes(src, select=["NAN203", "NAN205"])) == ["NAN203", "NAN205"]


# --- Pallas kernels are lowered, never autodiffed -------------------------------------------------
# jax/experimental/pallas/ops/tpu/flash_attention.py: a private kernel helper, reached from the kernel
# given (through functools.partial) to pl.pallas_call.
KERNEL_MODULE = """
import functools
import jax.numpy as jnp
from jax.experimental import pallas as pl

def _step(l_ref, o_ref):
    l = l_ref[...]
    o_ref[...] = jnp.where(l == 0.0, 1.0, 1.0 / l)

def _kernel(l_ref, o_ref, *, scale):
    kernel = _step
    kernel(l_ref, o_ref)

def direct_kernel(l_ref, o_ref):
    l = l_ref[...]
    o_ref[...] = jnp.where(l == 0.0, 1.0, 1.0 / l)

def attention(l):
    kernel = functools.partial(_kernel, scale=1.0)
    a = pl.pallas_call(kernel, out_shape=l)(l)
    return pl.pallas_call(direct_kernel, out_shape=l)(a)
"""


def test_single_where_in_a_pallas_kernel_is_not_flagged():
    assert codes(KERNEL_MODULE, select=["NAN201"]) == []


def test_kernel_helper_also_called_outside_a_kernel_is_flagged():
    source = KERNEL_MODULE + "\ndef reference(l_ref, o_ref):\n    return _step(l_ref, o_ref)\n"
    assert codes(source, select=["NAN201"]) == ["NAN201"]


def test_function_not_given_to_pallas_call_is_flagged():
    source = KERNEL_MODULE.replace("pl.pallas_call(direct_kernel", "run(direct_kernel")
    assert codes(source, select=["NAN201"]) == ["NAN201"]


# --- NAN201 recall: a norm compared with a threshold --------------------------------------------
# jax/example_libraries/optimizers.py clip_grads: where(norm < max_norm, g, g * (max_norm / norm)).
# A norm is never negative, so `norm < max_norm` only means something for max_norm > 0, and
# then it holds at norm == 0: the discarded branch divides by 0.
@pytest.mark.parametrize("code,flagged", [
    ("norm = l2_norm(g)\nreturn jnp.where(norm < max_norm, g, g * (max_norm / norm))", True),
    ("norm = l2_norm(g)\nreturn jax.tree.map(lambda x: jnp.where(norm < max_norm, x, x * (max_norm / norm)), g)",
     True),
    ("norm = jnp.linalg.norm(g)\nreturn jnp.where(max_norm > norm, g, g * (max_norm / norm))", True),
    # the branch with the division is selected at 0: a value problem, not a where trap
    ("norm = l2_norm(g)\nreturn jnp.where(norm > max_norm, g * (max_norm / norm), g)", True),
    ("norm = l2_norm(g)\nreturn jnp.where(norm < max_norm, g * (max_norm / norm), g)", False),
    # not known to be non-negative: a comparison with another tensor says nothing about 0 (smooth_l1)
    ("return jnp.where(g < max_norm, 0.5 * g ** 2 / max_norm, g)", False),
    ("return jnp.where(n < max_norm, g, g * (max_norm / n))", False),
])
def test_single_where_on_a_norm_below_a_threshold(code, flagged):
    source = in_function("""
    import jax
    import jax.numpy as jnp

    def l2_norm(tree):
        return jnp.sqrt(sum(jnp.vdot(x, x) for x in jax.tree.leaves(tree)))

    def clip(g, max_norm, n):
    """, code)
    assert (codes(source, select=["NAN201"]) == ["NAN201"]) is flagged


# --- NAN106 through names ------------------------------------------------------------------
@pytest.mark.parametrize("code,flagged", [
    ("e = torch.exp(x)\nreturn torch.log(1 + e)", True),
    ("e = torch.exp(x)\nreturn torch.log1p(e)", True),
    ("e = torch.exp(x)\nreturn torch.log(torch.sum(e, dim=-1))", True),
    ("e = torch.exp(x)\nreturn torch.log(e + torch.exp(y))", True),
    ("e = torch.exp(x - x.amax(-1, keepdim=True))\nreturn torch.log(torch.sum(e, dim=-1))", False),  # max-shifted
    ("e = torch.exp(x - x.max())\nreturn torch.log(torch.sum(e, dim=-1))", True),  # by the whole tensor's max
    ("e = torch.exp(x - x.max())\nreturn torch.log(torch.sum(e))", False),  # the max of what is summed
    ("e = torch.exp(-torch.abs(x))\nreturn torch.log(1 + e)", False),  # bounded exponent
    ("e = torch.exp(x) if x.max() < 80 else x\nreturn torch.log(1 + e)", False),
    ("e = torch.exp(x)\nif y:\n    e = y\nreturn torch.log(1 + e)", False),  # reassigned
])
def test_log_sum_exp_through_a_name(code, flagged):
    source = in_function("""
    import torch

    def f(x, y):
    """, code)
    assert (codes(source, select=["NAN106"]) == ["NAN106"]) is flagged


def test_log_sum_exp_through_a_name_is_an_unsafe_fix_naming_the_assignment():
    source = """
    import torch

    def f(x):
        e = torch.exp(x)
        return torch.log(1 + e)
    """
    (finding,) = lint(source, select=["NAN106"])
    assert "`e` is assigned on line 5" in finding.message
    assert finding.fix_applicability == "unsafe"
    assert "return torch.nn.functional.softplus(x)" in fix(source, select=["NAN106"])
    assert fix(source, unsafe=False, select=["NAN106"]) == textwrap.dedent(source)
