"""NAN111 divide-by-statistic (issue 24): a division by a std or a variance, 0 when every value
is equal (an episode of equal rewards, a constant feature), or by ``n - 1`` of a count, 0 for
one element.  The frameworks' values are measured here; each pattern, its guarded forms, the
may tier and the fix are checked on source."""

import math

import pytest

from conftest import fix, lint
from nanlint.lint.engine import Linter
from nanlint.rules.base import by_code

SELECT = {"NAN111"}


def nan111(source, may=False):
    return [f for f in lint(source, select=SELECT, may=may)]


# --- the frameworks' numbers the page and messages state --------------------------------------
def test_torch_std_of_equal_values_is_0_and_of_one_element_nan():
    import torch

    assert torch.tensor([1.0, 1.0, 1.0]).std().item() == 0.0
    assert torch.tensor([1.0, 1.0, 1.0]).var().item() == 0.0
    with pytest.warns(UserWarning):
        assert math.isnan(torch.tensor([1.0]).std().item())
    r = torch.tensor([2.0, 2.0, 2.0])
    assert torch.isnan((r - r.mean()) / r.std()).all()
    assert ((r - r.mean()) / (r.std() + 1e-7)).eq(0).all()
    assert torch.isinf(torch.tensor(3.0) / (1 - 1))  # x / (n - 1), n = 1


def test_tensorflow_keras_jax_std_of_equal_values_is_0():
    import jax.numpy as jnp
    import keras
    import tensorflow as tf

    x = tf.constant([1.0, 1.0, 1.0])
    assert float(tf.math.reduce_std(x)) == 0.0 and float(tf.math.reduce_variance(x)) == 0.0
    assert float(tf.math.reduce_std(tf.constant([1.0]))) == 0.0  # no correction: 0, not NaN
    assert math.isnan(float(tf.reduce_sum((x - tf.reduce_mean(x)) / tf.math.reduce_std(x))))
    assert float(keras.ops.std(keras.ops.array([1.0, 1.0]))) == 0.0
    a = jnp.array([1.0, 1.0, 1.0])
    assert float(jnp.std(a)) == 0.0 and math.isnan(float(jnp.std(jnp.array([1.0]), ddof=1)))
    assert bool(jnp.isnan((a - a.mean()) / jnp.std(a)).all())
    assert float(jnp.sum((a - a.mean()) / (jnp.std(a) + 1e-7))) == 0.0


def test_the_epsilon_keeps_the_gradient_finite_in_torch_and_tensorflow():
    import tensorflow as tf
    import torch

    x = torch.tensor([1.0, 1.0, 1.0], requires_grad=True)
    ((x - x.mean()) / (x.std() + 1e-7)).sum().backward()
    assert torch.isfinite(x.grad).all()
    t = tf.constant([1.0, 1.0, 1.0])
    with tf.GradientTape() as tape:
        tape.watch(t)
        y = tf.reduce_sum((t - tf.reduce_mean(t)) / (tf.math.reduce_std(t) + 1e-7))
    assert bool(tf.reduce_all(tf.math.is_finite(tape.gradient(y, t))))


def test_jax_std_gradient_at_equal_values_is_nan_even_with_the_epsilon():
    # what the page says: the fix mends the value; jnp.std's own gradient at 0 (a sqrt) stays NaN
    import jax
    import jax.numpy as jnp

    a = jnp.array([1.0, 1.0, 1.0])
    g = jax.grad(lambda x: jnp.sum((x - x.mean()) / (jnp.std(x) + 1e-7)))(a)
    assert bool(jnp.isnan(g).all())
    g = jax.grad(lambda x: jnp.sum((x - x.mean()) / jnp.sqrt(jnp.var(x) + 1e-7)))(a)
    assert bool(jnp.isfinite(g).all())


# --- the patterns ----------------------------------------------------------------------------
@pytest.mark.parametrize("source,shown", [
    ("""\
        import torch
        def returns(R):
            return (R - R.mean()) / R.std()
     """, "`R.std()`"),
    ("""\
        import torch
        def normalize(advantages):
            std = advantages.std()
            return advantages / std
     """, "`advantages.std()`"),
    ("""\
        import torch
        def standardize(x):
            mean = x.mean(0)
            std = torch.std(x, 0)
            return (x - mean) / std
     """, "`torch.std(x, 0)`"),
    ("""\
        import torch
        def standardize(x):
            mean = x.mean(0)
            var = x.var(0)
            return (x - mean) / var
     """, "the variance"),
    ("""\
        import tensorflow as tf
        def standardize(x):
            return (x - tf.reduce_mean(x, 0)) / tf.math.reduce_std(x, 0)
     """, "`tf.math.reduce_std(x, 0)`"),
    ("""\
        import tensorflow.compat.v1 as tf
        def standardize(x):
            mean, var = tf.reduce_mean(x, 0), tf.math.reduce_variance(x, 0)
            return (x - mean) / tf.sqrt(var)
     """, "`tf.sqrt(var)`"),
    ("""\
        from keras import ops
        def standardize(x):
            return (x - ops.mean(x, axis=0)) / ops.std(x, axis=0)
     """, "`ops.std(x, axis=0)`"),
    ("""\
        import jax.numpy as jnp
        def standardize(rewards):
            return (rewards - rewards.mean()) / jnp.std(rewards)
     """, "`jnp.std(rewards)`"),
    ("""\
        import jax.numpy as jnp
        def z_score_fitness(fitness):
            return (fitness - jnp.mean(fitness)) / jnp.std(1e-05 + fitness)
     """, "`jnp.std(1e-05 + fitness)`"),  # evosax 0.0.9: the epsilon inside the std
    ("""\
        import jax.numpy as jnp
        def standardize(x):
            mu = jnp.mean(x)
            var = jnp.mean((x - jnp.mean(x)) ** 2)
            return (x - mu) / jnp.sqrt(var)
     """, "`jnp.sqrt(var)`"),
    ("""\
        import torch
        def layer_norm(x):
            return (x - x.mean(-1, keepdim=True)) * torch.rsqrt(x.var(-1, keepdim=True))
     """, "rsqrt of the variance"),
])
def test_a_statistic_of_the_scaled_values_is_strong(source, shown):
    [f] = nan111(source)
    assert f.code == "NAN111" and not f.may and shown in f.message, f.message
    assert "equal" in f.message and f.fix_applicability == "unsafe"


def test_torch_messages_say_nan_for_one_element_and_others_do_not():
    [f] = nan111("import torch\ndef n(R):\n    return (R - R.mean()) / R.std()\n")
    assert "NaN for a single element in torch" in f.message
    [f] = nan111("import torch\ndef n(R):\n    return (R - R.mean()) / R.std(correction=0)\n")
    assert "single element" not in f.message
    [f] = nan111("import jax.numpy as jnp\ndef n(R):\n    return (R - R.mean()) / jnp.std(R)\n")
    assert "single element" not in f.message


@pytest.mark.parametrize("source", [
    "import torch\ndef n(R):\n    return (R - R.mean()) / (R.std() + 1e-8)\n",
    "import torch\ndef n(R):\n    return (R - R.mean()) / R.std().clamp_min(1e-8)\n",
    "import torch\ndef n(R):\n    return (R - R.mean()) / torch.clamp(R.std(), min=1e-8)\n",
    "import tensorflow as tf\ndef n(x):\n    return x / tf.maximum(tf.math.reduce_std(x), 1e-8)\n",
    "import jax.numpy as jnp\ndef n(x):\n    s = jnp.std(x)\n    return x / jnp.where(s > 0, s, 1.0)\n",
    "import jax.numpy as jnp\ndef n(x):\n    return x / jnp.sqrt(jnp.var(x) + 1e-5)\n",
    "import torch\ndef n(x):\n    std = x.std(0)\n    std[std == 0] = 1.0\n    return (x - x.mean(0)) / std\n",
    "import torch\ndef n(x):\n    std = x.std(0)\n    std = std + 1e-6\n    return (x - x.mean(0)) / std\n",
    "import torch\ndef n(x):\n    std = x.std()\n    if std == 0:\n        std = 1.0\n    return x / std\n",
    "import torch\ndef n(x):\n    std = x.std()\n    if std > 0:\n        return x / std\n    return x\n",
    "import torch\ndef n(x):\n    std = x.std()\n    print('ratio', x.mean() / std)\n",
    "import torch\ndef n(x):\n    std = x.std()\n    return torch.where(std > 0, x / std, x)\n",
])
def test_a_guarded_or_logged_statistic_is_silent(source):
    assert nan111(source, may=True) == []


@pytest.mark.parametrize("source", [
    "import torch\ndef init(self):\n    return self.weight / self.weight.std()\n",
    "import torch\ndef draw():\n    z = torch.randn(8, 4)\n    return z / z.std()\n",
    "import torch\ndef scale(model):\n    for p in model.parameters():\n        p.data = p.data / p.data.std()\n",
])
def test_a_parameter_or_a_random_draw_is_not_reported(source):
    assert nan111(source, may=True) == []


def test_another_tensors_statistic_is_the_may_tier():
    source = "import torch\ndef scale(a, b):\n    return a / b.std()\n"
    assert nan111(source) == []
    [f] = nan111(source, may=True)
    assert f.may and "`b.std()`" in f.message


# --- n - 1 -----------------------------------------------------------------------------------
@pytest.mark.parametrize("source,how", [
    ("""\
        import torch
        def unbiased(x):
            n = x.shape[0]
            return x.var(correction=0) * n / (n - 1)
     """, "the size `n`"),
    ("""\
        import torch
        def unbiased(x):
            return ((x - x.mean()) ** 2).sum() / (len(x) - 1)
     """, "the length `len(x)`"),
    ("""\
        import torch
        def unbiased(x):
            return ((x - x.mean()) ** 2).sum() / (x.size(0) - 1)
     """, "the size `x.size(0)`"),
    ("""\
        import tensorflow as tf
        def timescales(num_timescales, min_timescale, max_timescale):
            n = tf.shape(num_timescales)[0]
            return tf.math.log(max_timescale / min_timescale) / tf.cast(n - 1, tf.float32)
     """, None),
])
def test_n_minus_one_of_a_length_or_a_size_is_strong(source, how):
    found = nan111(source)
    if how is None:  # n - 1 under a cast: the cast of the difference is not followed (left alone)
        assert found == [] and nan111(source, may=True) == []
        return
    [f] = found
    assert not f.may and how in f.message and "max(n - 1, 1)" in f.message, f.message


def test_a_cast_count_minus_one_is_read_through_the_cast():
    """tensor2tensor's get_timing_signal_1d, ``... / (tf.to_float(num_timescales) - 1)``: 0 for
    one timescale (``channels == 2``); its fix, ``tf.maximum(..., 1)``, is the one nanlint writes.
    A cast of a size is strong, as the size is."""
    source = """\
        import math
        import tensorflow as tf
        def signal(length, channels, min_timescale=1.0, max_timescale=1.0e4):
            num_timescales = channels // 2
            return math.log(float(max_timescale) / float(min_timescale)) / (tf.to_float(num_timescales) - 1)
    """
    assert nan111(source) == []
    [f] = nan111(source, may=True)
    assert f.may and "the count `num_timescales` is 1" in f.message
    fixed = fix(source, select=["NAN111"], unsafe=True, may=True)
    assert "tf.maximum(tf.to_float(num_timescales) - 1, 1)" in fixed, fixed
    [g] = nan111("""\
        import tensorflow as tf
        def unbiased(x):
            return tf.reduce_sum(tf.square(x - tf.reduce_mean(x, 0)), 0) / (tf.cast(tf.shape(x)[0], tf.float32) - 1)
    """)
    assert not g.may and "the size" in g.message
    # keras' linspace: the division runs only when num > 1 (the guard tests what the cast counts)
    assert nan111("""\
        import tensorflow as tf
        def linspace(start, stop, num, dtype):
            step = tf.constant(float("nan"))
            if num > 1:
                step = (stop - start) / (tf.cast(num, dtype) - 1)
            return step
    """, may=True) == []


@pytest.mark.parametrize("source", [
    "import tensorflow as tf\ndef f(lo, hi, num_timescales):\n    return tf.math.log(hi / lo) / (tf.to_float(num_timescales) - 1)\n",
    "import torch\ndef f(x, num_steps):\n    return x.sum() / (num_steps.float() - 1)\n",
])
def test_the_site_filter_keeps_a_cast_count_minus_one(source):
    """NAN111 alone, with and without the site filter: the gate reads a cast (a function or a
    method) of a count as the check does."""
    linter = Linter([by_code()["NAN111"]], {"may": True})
    kept = linter.lint_source(source.encode(), "train.py").findings
    every = linter.lint_source(source.encode(), "train.py", site_filter=False).findings
    assert [f.code for f in every] == ["NAN111"] and [f.code for f in kept] == ["NAN111"]


def test_n_minus_one_named_as_a_count_is_the_may_tier():
    source = """\
        import tensorflow as tf
        def timescales(num_timescales, lo, hi):
            return tf.math.log(hi / lo) / (num_timescales - 1)
    """
    assert nan111(source) == []
    [f] = nan111(source, may=True)
    assert f.may and "`num_timescales`" in f.message


@pytest.mark.parametrize("source", [
    "import torch\ndef u(x):\n    n = x.shape[0]\n    return x.var() * n / max(n - 1, 1)\n",
    "import torch\ndef u(x):\n    n = x.shape[0]\n    if n > 1:\n        return x.sum() / (n - 1)\n    return x.sum()\n",
    "import torch\ndef u(x):\n    n = len(x)\n    if n < 2:\n        return x\n    return x.sum() / (n - 1)\n",
    "import torch\ndef u(x):\n    n = len(x)\n    assert n > 1\n    return x.sum() / (n - 1)\n",
    "import torch\ndef u(x):\n    n = len(x)\n    return x.sum() / (n - 1) if n > 1 else x.sum()\n",
    "import torch\ndef u(x):\n    return x.sum() / (4 - 1)\n",
    # Python numbers: 1 / 0 raises ZeroDivisionError, no NaN
    "import torch\ndef frac(i, steps):\n    n = len(steps)\n    return i / (n - 1)\n",
])
def test_a_checked_or_python_n_minus_one_is_silent(source):
    assert nan111(source, may=True) == []


# --- the fixes -------------------------------------------------------------------------------
def test_the_std_fix_adds_an_epsilon():
    source = "import torch\ndef n(R):\n    return (R - R.mean()) / R.std()\n"
    assert fix(source, select=SELECT) == "import torch\ndef n(R):\n    return (R - R.mean()) / (R.std() + 1e-7)\n"
    half = "import torch\ndef n(R):\n    R = R.half()\n    return (R - R.mean()) / R.std()\n"
    assert "(R.std() + 1e-4)" in fix(half, select=SELECT)


def test_the_count_fix_floors_n_minus_one_at_1():
    source = "import torch\ndef u(x):\n    n = x.shape[0]\n    return x.var(correction=0) * n / (n - 1)\n"
    fixed = fix(source, select=SELECT)
    assert "/ (max(n - 1, 1))" in fixed and nan111(fixed, may=True) == []


def test_a_statistic_from_another_module_is_display_only(tmp_path):
    from nanlint.lint.engine import Linter
    from nanlint.rules.base import find

    (tmp_path / "stats.py").write_text("import torch\ndef spread(x):\n    return x.std()\n")
    main = tmp_path / "main.py"
    main.write_text("import torch\nfrom stats import spread\ndef n(rewards):\n"
                    "    s = spread(rewards)\n    return (rewards - rewards.mean()) / s  # std\n")
    found = Linter([find("NAN111")], {"may": True}).lint_source(main.read_bytes(), str(main)).findings
    [f] = found
    assert f.fix_applicability == "display-only" and "stats.py" in f.message


@pytest.mark.parametrize("source", [
    # a ratio of spreads: one tensor rescaled to another's (classifier-free guidance rescale)
    """\
        import torch
        def rescale(noise_cfg, noise_pred_text):
            std_text = noise_pred_text.std(dim=list(range(1, noise_pred_text.ndim)), keepdim=True)
            std_cfg = noise_cfg.std(dim=list(range(1, noise_cfg.ndim)), keepdim=True)
            return noise_cfg * (std_text / std_cfg)
    """,
    # a whole sample's statistic (several axes at once)
    """\
        import torch
        def normalize(source):
            mean = source.mean(dim=(1, 2, 3), keepdim=True)
            std = source.std(dim=(1, 2, 3), keepdim=True)
            return (source - mean) / std
    """,
])
def test_a_ratio_of_spreads_or_a_whole_samples_statistic_is_the_may_tier(source):
    assert nan111(source) == []
    [f] = nan111(source, may=True)
    assert f.may


# --- what reach follows: returns, parameters (the gate before issue 22 missed them) ----------
@pytest.mark.parametrize("src", [
    # a std returned by the file's own function
    """
    import torch
    def get_std(r):
        return r.std()
    def norm(rewards):
        return (rewards - rewards.mean()) / get_std(rewards)
    """,
    # a std passed to a parameter at a call site
    """
    import torch
    def scale(rewards, s):
        return (rewards - rewards.mean()) / s
    def run(rewards):
        return scale(rewards, rewards.std())
    """,
])
def test_a_statistic_through_returns_and_parameters(src):
    # the gate before issue 22 walked denominators for a statistic's name only: it hid these
    assert [f.code for f in nan111(src)] == ["NAN111"]


def test_a_division_written_as_a_negative_power_passes_the_site_filter():
    """``x * var ** -0.5`` in a file with no ``/``: the site filter's negative-power key
    lets it through, so the rule alone finds what it finds with the filter off."""
    from nanlint.lint.engine import Linter
    from nanlint.rules.base import all_rules

    source = (b"import torch\n\n\nclass Whiten(torch.nn.Module):\n    def forward(self, x):\n"
              b"        return (x - x.mean(-1, keepdim=True)) * x.var(-1, keepdim=True) ** -0.5\n")
    linter = Linter([r for r in all_rules() if r.code == "NAN111"], {"may": True})
    filtered = [f.code for f in linter.lint_source(source, "whiten.py").findings]
    unfiltered = [f.code for f in linter.fix_source(source, "whiten.py", unsafe=False, site_filter=False).findings]
    assert filtered == unfiltered == ["NAN111"]
