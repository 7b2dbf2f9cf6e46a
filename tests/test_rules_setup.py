"""Precision tests for the overflow, division and training-setup rules:
NAN301 manual-softmax, NAN302 sqrt-of-exp, NAN401 masked-mean, NAN501-NAN505,
and the project target versions they read (nanlint.semantic.project_versions)."""

import textwrap

import pytest
import conftest


def codes(source, select=None):
    """What is flagged on any evidence (the tiers of NAN301/NAN401: tests/test_value_facts.py)."""
    return conftest.codes(source, select, may=True)


def lint(source, select=None, unsafe=True):
    return conftest.lint(source, select, unsafe, may=True)


def fix(source, unsafe=True, select=None):
    return conftest.fix(source, unsafe, select, may=True)

from nanlint.semantic import project_versions as pv
from nanlint.lint.engine import Linter
from nanlint.rules.base import by_code


def only(code, source):
    return codes(source, select=[code])


def applicability(code, source):
    return [f.fix_applicability for f in lint(source, select=[code])]


# --- NAN301 manual-softmax ----------------------------------------------------------------
@pytest.mark.parametrize("source", [
    """
    import tensorflow as tf
    def f(x):
        return tf.math.divide(tf.exp(x), tf.reduce_sum(tf.exp(x), axis=1, keepdims=True))
    """,
    """
    import torch
    def f(x):
        e = x.exp()
        return e.div(e.sum(dim=-1, keepdim=True))
    """,
    """
    import tensorflow as tf
    def f(x):
        return tf.exp(-x) / tf.reduce_sum(tf.exp(-x), axis=-1, keepdims=True)
    """,
    # squared distances of unknown sign factor: still a softmax over logits
    """
    import torch
    def f(d, t):
        return torch.exp(d ** 2 / t) / torch.exp(d ** 2 / t).sum(-1, keepdim=True)
    """,
    """
    import jax
    def f(x):
        return jax.lax.exp(x) / jax.numpy.sum(jax.lax.exp(x))
    """,
])
def test_manual_softmax_flagged(source):
    assert only("NAN301", source) == ["NAN301"]


@pytest.mark.parametrize("source", [
    # stabilized, inline and through a name
    """
    import tensorflow as tf
    def f(x):
        m = tf.reduce_max(x, axis=-1, keepdims=True)
        return tf.exp(x - m) / tf.reduce_sum(tf.exp(x - m), axis=-1, keepdims=True)
    """,
    """
    import torch
    def f(x):
        z = torch.sub(x, x.amax(-1, keepdim=True))
        return z.exp() / z.exp().sum(-1, keepdim=True)
    """,
    # numpy on data, a user's own exp, different tensors
    """
    import numpy as np
    import torch
    def f(x):
        return np.exp(x) / np.exp(x).sum()
    """,
    """
    import torch
    def exp(v):
        return v
    def f(x):
        return exp(x) / torch.sum(exp(x))
    """,
    """
    import torch
    def f(x, y):
        return torch.exp(x) / torch.exp(y).sum(-1, keepdim=True)
    """,
    """
    import torch
    def f(x, y):
        return torch.exp(x) / y.sum(-1, keepdim=True)
    """,
    # a Gaussian kernel: the exponent is never positive
    """
    import jax.numpy as jnp
    def kernel(x, sigma):
        k = jnp.exp(-0.5 * (x / sigma) ** 2)
        return k / jnp.sum(k)
    """,
    """
    import tensorflow as tf
    def kernel(x, s):
        return tf.exp(-tf.square(x) / (2.0 * s)) / tf.reduce_sum(tf.exp(-tf.square(x) / (2.0 * s)))
    """,
])
def test_manual_softmax_not_flagged(source):
    assert only("NAN301", source) == []


def test_manual_softmax_fix_needs_an_equivalent_axis():
    head = "import tensorflow as tf\ndef f(x, k):\n    return "
    assert applicability("NAN301", head + "tf.exp(x) / tf.reduce_sum(tf.exp(x))\n") == ["display-only"]
    assert applicability("NAN301", head + "tf.exp(x) / tf.reduce_sum(tf.exp(x), axis=-1)\n") == ["display-only"]
    assert applicability("NAN301", head + "tf.exp(x) / tf.reduce_sum(tf.exp(x), axis=k, keepdims=True)\n") \
        == ["display-only"]
    # without keepdims the leading axis broadcasts like keepdims=True
    source = head + "tf.exp(x) / tf.reduce_sum(tf.exp(x), axis=0)\n"
    assert applicability("NAN301", source) == ["safe"]
    assert fix(source, select=["NAN301"]).endswith("return tf.nn.softmax(x, axis=0)\n")


def test_manual_softmax_fix_keeps_aliases_and_parenthesizes_method_receiver():
    source = """
    import torch.nn.functional as F
    import torch
    def f(a, b):
        return (a + b).exp() / (a + b).exp().sum(1, keepdim=True)
    """
    assert fix(source, select=["NAN301"]).splitlines()[-1] == "    return (a + b).softmax(1)"
    source = """
    from torch.nn import functional as F
    from torch import exp
    def f(x):
        return exp(x) / exp(x).sum(dim=-1, keepdim=True)
    """
    assert fix(source, select=["NAN301"]).splitlines()[-1] == "    return F.softmax(x, dim=-1)"


def test_manual_softmax_fixed_values_match():
    torch = pytest.importorskip("torch")
    source = textwrap.dedent("""
    import torch
    def f(x):
        return torch.exp(x) / torch.sum(torch.exp(x), dim=1, keepdim=True)
    """)
    fixed = fix(source, select=["NAN301"])
    ns_bad, ns_good = {}, {}
    exec(source, ns_bad)
    exec(fixed, ns_good)
    x = torch.tensor([[1.0, 2.0, -3.0], [0.5, 0.0, 4.0]])
    assert torch.allclose(ns_bad["f"](x), ns_good["f"](x), rtol=1e-6)
    hazard = torch.tensor([[1000.0, 0.0]])
    assert torch.isnan(ns_bad["f"](hazard)).any() and torch.isfinite(ns_good["f"](hazard)).all()


# --- NAN302 sqrt-of-exp ---------------------------------------------------------------------
@pytest.mark.parametrize("source,expected", [
    ("import tensorflow as tf\ny = tf.sqrt(tf.exp(a + b))\n", "import tensorflow as tf\ny = tf.exp(0.5 * (a + b))\n"),
    ("import torch\ny = torch.pow(torch.exp(lv), 0.5)\n", "import torch\ny = torch.exp(0.5 * lv)\n"),
    ("import jax.numpy as jnp\ny = jnp.exp(-lv) ** 0.5\n", "import jax.numpy as jnp\ny = jnp.exp(0.5 * (-lv))\n"),
    ("from keras import ops\ny = ops.sqrt(ops.exp(self.logvar))\n", "from keras import ops\ny = ops.exp(0.5 * self.logvar)\n"),
])
def test_sqrt_of_exp_fix(source, expected):
    assert applicability("NAN302", source) == ["safe"]
    assert fix(source, select=["NAN302"]) == expected


def test_sqrt_of_exp_through_a_name_is_unsafe():
    source = "import torch\ndef f(lv):\n    var = torch.exp(lv)\n    return torch.sqrt(var)\n"
    assert applicability("NAN302", source) == ["unsafe"]


@pytest.mark.parametrize("source", [
    "import torch\ny = torch.sqrt(var + 1e-6)\n",
    "import math\nimport torch\ny = math.sqrt(math.exp(v))\n",
    "import torch\ny = torch.exp(v) ** 2\n",
    "import torch\ny = torch.sqrt(torch.exp(v) + 1.0)\n",
])
def test_sqrt_of_exp_not_flagged(source):
    assert only("NAN302", source) == []


# --- NAN401 masked-mean ----------------------------------------------------------------------
@pytest.mark.parametrize("source", [
    "import tensorflow as tf\nr = tf.reduce_sum(mask * loss) / tf.reduce_sum(mask)\n",
    "import torch\nr = torch.sum(m * x, dim=1) / torch.sum(m, dim=1)\n",
    "import torch\nr = x.mul(m).sum() / m.sum()\n",
    "import tensorflow as tf\ndef f(x, m):\n    n = tf.reduce_sum(x * m)\n    d = tf.reduce_sum(m)\n    return n / d\n",
])
def test_masked_mean_flagged(source):
    assert only("NAN401", source) == ["NAN401"]
    assert applicability("NAN401", source) == ["unsafe"]


@pytest.mark.parametrize("source", [
    "import tensorflow as tf\nr = tf.math.divide_no_nan(tf.reduce_sum(x * m), tf.reduce_sum(m))\n",
    "import tensorflow as tf\nr = tf.reduce_sum(x * m) / (tf.reduce_sum(m) + 1e-9)\n",
    "import torch\nr = (x * m).sum() / m.sum().clamp(min=1)\n",
    "import torch\nr = (x * m).sum() / torch.clamp(m.sum(), min=1.0)\n",
    "import torch\nr = (x * w).sum() / m.sum()\n",
    "import torch\nr = x.sum() / m.sum()\n",
    "import numpy as np\nr = np.sum(x * m) / np.sum(m)\n",
])
def test_masked_mean_not_flagged(source):
    assert only("NAN401", source) == []


def test_masked_mean_guard_is_exact_and_finite():
    torch = pytest.importorskip("torch")
    source = "import torch\ndef f(x, m):\n    return (x * m).sum() / m.sum()\n"
    ns_bad, ns_good = {}, {}
    exec(source, ns_bad)
    exec(fix(source, select=["NAN401"]), ns_good)
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    some = torch.tensor([1.0, 0.0, 1.0])
    assert ns_good["f"](x, some).item() == ns_bad["f"](x, some).item() == 2.0
    value = ns_good["f"](x, torch.zeros(3))
    value.backward()
    assert value.item() == 0.0 and torch.isfinite(x.grad).all()
    assert torch.isnan(ns_bad["f"](x, torch.zeros(3)))


# --- NAN501 optimizer-lr-kwarg ------------------------------------------------------------------
def test_lr_kwarg_fixed_and_torch_left_alone():
    source = "import keras\nimport torch\na = keras.optimizers.SGD(lr=0.1, momentum=0.9)\nb = torch.optim.SGD(p, lr=0.1)\n"
    assert only("NAN501", source) == ["NAN501"]
    assert "keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)" in fix(source, select=["NAN501"])
    assert "torch.optim.SGD(p, lr=0.1)" in fix(source, select=["NAN501"])


def test_lr_kwarg_with_learning_rate_is_display_only():
    source = "import tensorflow as tf\nopt = tf.optimizers.Adam(lr=0.1, learning_rate=0.1)\n"
    assert applicability("NAN501", source) == ["display-only"]


def test_lr_kwarg_silent_for_old_targets():
    rule = by_code()["NAN501"]
    keras_src = b"import keras\nopt = keras.optimizers.Adam(lr=0.1)\n"
    tf_src = b"import tensorflow as tf\nopt = tf.keras.optimizers.Adam(lr=0.1)\n"

    def n(src, frameworks):
        return len(Linter([rule], {"frameworks": frameworks}).lint_source(src, "x.py").findings)

    assert n(keras_src, {"keras": "2.2"}) == 0 and n(keras_src, {"keras": "2.3"}) == 1
    assert n(tf_src, {"tensorflow": "1.15"}) == 0 and n(tf_src, {"tensorflow": "2.3"}) == 1


# --- NAN502 clipnorm-custom-loop -------------------------------------------------------------------
LOOP = textwrap.dedent("""
    import tensorflow as tf

    opt = tf.keras.optimizers.Adam(1e-3, clipnorm=1.0)

    def step(grads, variables):
        opt.apply_gradients(zip(grads, variables))
""").encode()


def clip_findings(source, settings):
    return Linter([by_code()["NAN502"]], settings).lint_source(source, "x.py").findings


@pytest.mark.parametrize("frameworks,expected", [
    ({}, 0), ({"tensorflow": "2.3"}, 1), ({"tensorflow": "2.0"}, 1), ({"tensorflow": "2.4"}, 0),
    ({"tensorflow": "2.3.4"}, 1), ({"tensorflow": "2.15"}, 0),
])
def test_clipnorm_only_for_tf_before_2_4(frameworks, expected):
    assert len(clip_findings(LOOP, {"frameworks": frameworks})) == expected


@pytest.mark.parametrize("pin,expected", [
    ("tensorflow==2.3.1", 1), ("tensorflow-gpu~=2.3.0", 1), ("tensorflow>=2.1,<2.4", 1),
    ("tensorflow-cpu==2.3.*", 1), ("tensorflow>=2.1", 0), ("tensorflow==2.4.0", 0),
    ("tensorflow<2.4.1", 0), ("tensorflow~=2.3", 0), ("torch==1.4", 0),
])
def test_clipnorm_reads_requirements_pins(tmp_path, pin, expected):
    (tmp_path / "requirements.txt").write_text(f"numpy\n{pin}  # pinned\n")
    pv.project_pins.cache_clear()
    assert len(clip_findings(LOOP, {"frameworks": {}, "root": tmp_path})) == expected


def test_clipnorm_reads_pyproject_dependencies(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["tensorflow==2.2.0"]\n')
    pv.project_pins.cache_clear()
    found = clip_findings(LOOP, {"frameworks": {}, "root": tmp_path})
    assert len(found) == 1 and "project's tensorflow pin" in found[0].message


def test_clipnorm_self_optimizer_and_silent_cases():
    settings = {"frameworks": {"tensorflow": "2.3"}}
    cls = textwrap.dedent("""
        import tensorflow as tf
        class T:
            def __init__(self):
                self.optimizer = tf.keras.optimizers.SGD(0.1, clipvalue=0.5)
            def step(self, g, v):
                self.optimizer.apply_gradients(zip(g, v))
    """).encode()
    assert len(clip_findings(cls, settings)) == 1
    silent = [
        LOOP.replace(b", clipnorm=1.0", b""),  # no clipping asked for
        LOOP.replace(b"opt.apply_gradients(zip(grads, variables))", b"opt.minimize(loss, variables)"),
        LOOP.replace(b"def step", b"opt = make()\ndef step"),  # assigned twice: unknown optimizer
        LOOP.replace(b"tf.keras.optimizers.Adam", b"tf.compat.v1.train.AdamOptimizer"),
    ]
    for source in silent:
        assert clip_findings(source, settings) == [], source.decode()


# --- NAN503 one-sided-gradient-clip -------------------------------------------------------------------
@pytest.mark.parametrize("source", [
    "import torch\nfor p in model.parameters():\n    torch.clamp(p.grad, 0, 1)\n",
    "import torch\ng = torch.autograd.grad(loss, params)\nh = [x.clamp_min(0) for x in g]\n",
    "import tensorflow as tf\ngrads = opt.compute_gradients(loss)\nc = [tf.clip_by_value(g, 0, 5) for g, v in grads]\n",
    "import tensorflow as tf\nfor g, v in zip(tape.gradient(l, vs), vs):\n    tf.clip_by_value(g, 0., 1.)\n",
    "import jax, jax.numpy as jnp\nloss, g = jax.value_and_grad(f)(p)\nc = jnp.clip(g, 0.0, 1.0)\n",
    "import tensorflow as tf\nc = tf.clip_by_value(encoder_grads, 0, 1)\n",
    "import tensorflow as tf\nfor v, d in zip(vs, tape.gradient(l, vs)):\n    tf.clip_by_value(d, 0., 1.)\n",
])
def test_one_sided_clip_flagged(source):
    assert only("NAN503", source) == ["NAN503"]
    assert applicability("NAN503", source) == ["display-only"]


@pytest.mark.parametrize("source", [
    "import tensorflow as tf\ndef f(g):\n    return tf.clip_by_value(g, 0.0, 1.0)\n",  # a gate called g
    "import torch\ng = torch.sigmoid(x)\ny = g.clamp(0, 1)\n",
    "import torch\ny = torch.clamp(grad_norm, 0, 10)\n",
    "import torch\nfor p in model.parameters():\n    p.grad.clamp_(-1, 1)\n",
    "import tensorflow as tf\ngrads = tape.gradient(l, v)\nc = [tf.clip_by_value(g, -1.0, 1.0) for g in grads]\n",
    "import torch\ny = probs.clamp(min=0)\n",
    # the variable of a (gradient, variable) pair is not a gradient
    "import tensorflow as tf\ngv = opt.compute_gradients(loss)\nc = [tf.clip_by_value(v, 0, 1) for g, v in gv]\n",
    "import tensorflow as tf\nfor g, w in zip(tape.gradient(l, vs), vs):\n    tf.clip_by_value(w, 0., 1.)\n",
])
def test_one_sided_clip_not_flagged(source):
    assert only("NAN503", source) == []


# --- NAN504 fp16-adam-epsilon -------------------------------------------------------------------------
@pytest.mark.parametrize("source,expected", [
    ("import torch\nmodel.half()\nopt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-8)\n", "eps=1e-4)"),
    ("import torch\nm = Net().to(dtype=torch.half)\nopt = torch.optim.RAdam(params=m.parameters())\n", "eps=1e-4)"),
    ("import torch\ntorch.set_default_dtype(torch.float16)\nopt = torch.optim.Adam(ps,\n    lr=1e-3,\n)\n",
     "lr=1e-3, eps=1e-4,\n)"),
    ("import tensorflow as tf\nv = tf.Variable(0.0, dtype='float16')\nopt = tf.keras.optimizers.Nadam()\n",
     "Nadam(epsilon=1e-4)"),
])
def test_fp16_adam_flagged_and_fixed(source, expected):
    assert only("NAN504", source) == ["NAN504"]
    assert expected in fix(source, select=["NAN504"])


@pytest.mark.parametrize("source", [
    "import torch\nmodel.half()\nopt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-4)\n",
    "import torch\nmodel.half()\nopt = torch.optim.SGD(model.parameters(), lr=1e-3)\n",
    "import torch\nencoder.half()\nopt = torch.optim.Adam(decoder.parameters())\n",
    "import torch\nx = x.half()\nopt = torch.optim.Adam(model.parameters())\n",
    "import torch\nmodel.half()\nopt = torch.optim.Adam(model.parameters(), **cfg)\n",
    "import torch\nmodel.to(device)\nopt = torch.optim.Adam(model.parameters())\n",
    "import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy('mixed_float16')\nopt = tf.keras.optimizers.Adam()\n",
    "import tensorflow as tf\nv = tf.Variable(0.0, dtype=tf.float32)\nopt = tf.keras.optimizers.Adam()\n",
])
def test_fp16_adam_not_flagged(source):
    assert only("NAN504", source) == []


# --- NAN505 high-learning-rate ------------------------------------------------------------------------
def test_high_learning_rate_is_opt_in_and_adam_only():
    source = "import torch\na = torch.optim.Adam(p, lr=0.1)\nb = torch.optim.Adam(p, 0.01)\nc = torch.optim.SGD(p, lr=0.5)\n"
    assert codes(source) == []  # not a default rule
    found = lint(source, select=["NAN505"])
    assert [f.start[0] for f in found] == [2]
    assert only("NAN505", "import optax\ntx = optax.adamw(learning_rate=1)\n") == ["NAN505"]
    assert only("NAN505", "import tensorflow as tf\no = tf.keras.optimizers.Adam(sched)\n") == []


# --- project_versions ------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec,bound", [
    ("==2.3.1", ((2, 3, 1), False)), ("==2.3.*", ((2, 4), True)), ("~=2.3.0", ((2, 4), True)),
    ("~=2.3", ((3,), True)), ("<2.4", ((2, 4), True)), ("<=2.3.4", ((2, 3, 4), False)),
    (">=2.1,<2.4", ((2, 4), True)), ("<2.5,<=2.3", ((2, 3), False)), (">=2.1", None), ("", None),
    ("==2.3.0rc1", ((2, 3, 0), False)), ("@ https://example.invalid/tf.whl", None),
])
def test_upper_bound(spec, bound):
    assert pv.upper_bound(spec) == bound


def test_requirement_lines():
    assert pv.requirement("TensorFlow_GPU[extra] == 2.3.0 ; python_version < '3.9'") \
        == ("tensorflow", ((2, 3, 0), False))
    assert pv.requirement("-r base.txt") is None
    assert pv.requirement("tensorflow-addons==0.11") is None
    assert pv.requirement("# tensorflow==2.3") is None


def test_loosest_pin_wins_and_unbounded_pin_means_unknown(tmp_path):
    (tmp_path / "requirements.txt").write_text("tensorflow==2.2\n")
    (tmp_path / "requirements-gpu.txt").write_text("tensorflow-gpu==2.3.1\n")
    pv.project_pins.cache_clear()
    assert pv.project_pins(str(tmp_path))["tensorflow"] == ((2, 3, 1), False)
    (tmp_path / "requirements-dev.txt").write_text("tensorflow\n")
    pv.project_pins.cache_clear()
    assert pv.project_pins(str(tmp_path))["tensorflow"] is None
    assert not pv.targets_below({"root": tmp_path}, "tensorflow", "2.4")


def test_explicit_target_beats_pins_and_is_cached(tmp_path):
    (tmp_path / "requirements.txt").write_text("tensorflow==2.10\n")
    pv.project_pins.cache_clear()
    assert not pv.targets_below({"root": tmp_path}, "tensorflow", "2.4")
    assert pv.targets_below({"root": tmp_path, "frameworks": {"tensorflow": "2.3"}}, "tensorflow", "2.4")
    (tmp_path / "requirements.txt").write_text("tensorflow==2.1\n")  # cached per root within a run
    assert not pv.targets_below({"root": tmp_path}, "tensorflow", "2.4")
    pv.project_pins.cache_clear()
    assert pv.targets_below({"root": tmp_path}, "tensorflow", "2.4")
