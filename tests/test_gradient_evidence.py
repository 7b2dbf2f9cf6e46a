"""Evidence per finding for the hazards that live only in the gradient (issue 21): NAN201
single-where, NAN202 sqrt/norm at 0, NAN203's guarded normalisation, NAN205 NaN masking
report by default when the program shows a gradient reaches them (and say how), go to
the may tier (``--may``) when nothing shows one does, and stay silent when none can."""

import importlib.util
import json
import subprocess
import sys
import textwrap

import pytest

import conftest
from conftest import lint

GRADIENT_RULES = ["NAN201", "NAN202", "NAN203", "NAN205"]


def default(src):
    """The findings of a default run (strong evidence only)."""
    return [f for f in lint(src) if f.code in GRADIENT_RULES]


def may(src):
    return [f for f in lint(src, may=True) if f.code in GRADIENT_RULES]


# --- the tiers -----------------------------------------------------------------------------------
WITHOUT_EVIDENCE = """
import torch

def inverse(x):
    return torch.where(x != 0, 1 / x, 0.0)
"""


def test_rules_are_on_by_default():
    on = {r.code for r in conftest.all_rules() if r.default}
    assert set(GRADIENT_RULES) <= on


def test_no_evidence_is_the_may_tier():
    assert default(WITHOUT_EVIDENCE) == []
    [f] = may(WITHOUT_EVIDENCE)
    assert f.code == "NAN201" and f.may and "may: nothing in this file shows a gradient reaches it" in f.message


def test_proof_of_safety_is_silent_in_every_tier():
    src = """
    import torch

    @torch.no_grad()
    def sample(x):
        return torch.where(x != 0, 1 / x, 0.0)

    loss = sample(x).sum()
    """
    assert default(src) == [] and may(src) == []


def _cli(tmp_path, *args, config=None):
    (tmp_path / "m.py").write_text(textwrap.dedent(WITHOUT_EVIDENCE))
    if config is not None:
        (tmp_path / "pyproject.toml").write_text(config)
    return subprocess.run([sys.executable, "-m", "nanlint", "--no-cache", *args, "m.py"], cwd=tmp_path,
                          capture_output=True, text=True)


def test_the_may_tier_from_the_command_line_and_the_configuration(tmp_path):
    quiet = _cli(tmp_path)
    assert quiet.returncode == 0 and "NAN201" not in quiet.stdout
    shown = _cli(tmp_path, "--may")
    assert shown.returncode == 1 and "NAN201" in shown.stdout and "may:" in shown.stdout
    configured = _cli(tmp_path, config="[tool.nanlint]\nmay = true\n")
    assert configured.returncode == 1 and "NAN201" in configured.stdout
    assert _cli(tmp_path, "--no-may", config="[tool.nanlint]\nmay = true\n").returncode == 0
    bad = _cli(tmp_path, config="[tool.nanlint]\nmay = 1\n")
    assert bad.returncode == 2 and "may must be true or false" in bad.stderr


def test_the_may_tier_enables_the_rules_whose_every_finding_is_weak():
    from nanlint.lint.selection import select_rules

    weak = {r.code for r in conftest.all_rules() if r.may_tier}
    assert weak == {"NAN109", "NAN110"}
    assert weak.isdisjoint(r.code for r in select_rules(conftest.all_rules(), None, [], []))
    assert weak <= {r.code for r in select_rules(conftest.all_rules(), None, [], [], may=True)}


@pytest.mark.parametrize("use", [
    "metrics['q_std'] = jnp.sqrt(jnp.var(q))",
    "self.stats['q_std'] = jnp.sqrt(jnp.var(q))",
    "metrics = {'q_std': jnp.sqrt(jnp.var(q)), 'q_mean': jnp.mean(q)}",
    "metrics.update({'q_std': jnp.sqrt(jnp.var(q))})",
    "writer.add_scalar('q_std', jnp.sqrt(jnp.var(q)), step)",
    "tf.summary.scalar('q_std', jnp.sqrt(jnp.var(q)))",
])
def test_a_statistic_only_logged_as_a_metric_is_silent_in_every_tier(use):
    """A value kept only in a dict of metrics or handed to a summary is logged, never
    differentiated: proof of safety (a metric, a summary), silent even with --may."""
    src = f"""
    import jax.numpy as jnp
    import tensorflow as tf

    def statistics(self, q, writer, step, metrics):
        {use}
        return metrics
    """
    assert may(src) == []


def test_a_statistic_logged_and_used_in_the_loss_is_still_judged():
    src = """
    import jax
    import jax.numpy as jnp

    def loss_fn(q):
        metrics = {'q_std': jnp.std(q)}
        return (jnp.std(q) / jnp.mean(q)) ** 2, metrics

    grads = jax.grad(loss_fn, has_aux=True)(q)
    """
    [f] = default(src)
    assert f.code == "NAN202" and f.start[0] == 7


# --- the evidence, each kind, and the message that names it -------------------------------------
@pytest.mark.parametrize("src,evidence", [
    ("""
     import tensorflow.compat.v1 as tf
     x_ok = tf.not_equal(x, 0.)
     y = tf.where(x_ok, 1. / x, tf.zeros_like(x))
     cost = tf.reduce_sum(y)
     train_op = tf.train.AdamOptimizer(1e-4).minimize(cost)
     """, "through `y` (line 4), `cost` (line 5), minimized on line 6"),
    ("""
     import tensorflow as tf
     def train_step(model, x, opt):
         with tf.GradientTape() as tape:
             y = model(x)
             r = tf.where(y > 0, tf.math.log(y), 0.0)
         grads = tape.gradient(r, model.trainable_variables)
     """, "under the GradientTape on line 4"),
    ("""
     import torch
     class Head(torch.nn.Module):
         def forward(self, d):
             return torch.sqrt(((d[0] - d[1]) ** 2).sum(-1))
     """, "in `Head.forward`, a forward pass"),
    ("""
     import torch
     def dist(a, b):
         return torch.sqrt(((a - b) ** 2).sum(-1))
     class Siamese(torch.nn.Module):
         def forward(self, a, b):
             return dist(self.f(a), self.f(b))
     """, "in `dist`, called on line 7 in `Siamese.forward`"),
    ("""
     import jax
     import jax.numpy as jnp
     def loss_fn(params, x):
         y = x @ params
         return jnp.sum(jnp.where(y > 0, jnp.log(y), 0.0))
     grads = jax.grad(loss_fn)(params, x)
     """, "in `loss_fn`, passed to `jax.grad` on line 7"),
    ("""
     import torch
     def step(model, x, opt):
         y = model(x)
         r = torch.where(y != 0, 1 / y, 0.0)
         total = r.sum()
         total.backward()
     """, "through `r` (line 5), `total` (line 6), back-propagated on line 7"),
    ("""
     import tensorflow as tf
     class Inverse(tf.keras.layers.Layer):
         def call(self, x):
             return tf.where(x != 0, 1 / x, 0.0)
     """, "in `Inverse.call`"),
    ("""
     import tensorflow as tf
     def my_loss(y_true, y_pred):
         return tf.reduce_mean(tf.where(y_pred > 0, tf.math.log(y_pred), 0.0))
     model.compile(optimizer="adam", loss=my_loss)
     """, "compiled as the model's loss on line 5"),
    ("""
     import tensorflow.compat.v1 as tf
     class Model:
         def build(self, x):
             self.inv = tf.where(x != 0, 1. / x, tf.zeros_like(x))
         def train(self):
             self.train_op = tf.train.AdamOptimizer().minimize(tf.reduce_sum(self.inv))
     """, "through `self.inv` (line 5), minimized on line 7"),
])
def test_a_gradient_that_reaches_reports_by_default_and_says_how(src, evidence):
    [f] = default(src)
    assert not f.may and "a gradient reaches it " in f.message and evidence in f.message, f.message


# --- the seeds (../shared/seeds) read as they were written --------------------------------------
@pytest.mark.parametrize("use", ["r.detach()", "r.item()", "r.shape[0]", "r.device", "r.numpy()"])
def test_a_value_that_leaves_autodiff_on_its_way_to_the_loss_is_no_evidence(use):
    """``detach`` (torch's stop-gradient, from its table), a Python number, a shape or a
    device: no gradient flows on to the loss. ``keep(r)`` (a function nothing here shows)
    leaves the value unproven, so the finding stays in the may tier."""
    src = f"""
    import torch
    def step(model, x, opt):
        y = model(x)
        r = torch.where(y != 0, 1 / y, 0.0)
        keep(r)
        total = {use} * y.sum()
        total.backward()
    """
    assert default(src) == []
    assert [f.may for f in may(src)] == [True]


SEED_SINGLE_WHERE = """
import tensorflow as tf

def f(x):
    x_ok = tf.not_equal(x, 0.)
    safe_f_x = tf.zeros_like(x)
    return tf.where(x_ok, 1. / x, safe_f_x)

x = tf.constant([-1., 0, 1])
tf.gradients(f(x), x)[0].eval()
"""

SEED_DOUBLE_WHERE = """
import tensorflow as tf

def safe_f(x):
    x_ok = tf.not_equal(x, 0.)
    safe_x = tf.where(x_ok, x, tf.ones_like(x))
    safe_f_x = tf.zeros_like(x)
    return tf.where(x_ok, 1. / safe_x, safe_f_x)

x = tf.constant([-1., 0, 1])
tf.gradients(safe_f(x), x)[0].eval()
"""

SEED_MASK_NAN = """
import tensorflow as tf

def mask_nan(x,value):
    x_values= tf.add(tf.zeros_like(x),value)
    mask = tf.math.is_finite(x)
    y = tf.where(mask,x,x_values)
    return y
y_=[0.0,1]
y_conv=[0.0,1]
cross_entropy1 = y_*tf.math.log(y_conv)
cross_entropy1 = mask_nan(cross_entropy1,3)
cross_entropy2 =-tf.reduce_sum(cross_entropy1)
"""


def test_the_design_cards_single_where_is_flagged_by_default():
    [f] = default(SEED_SINGLE_WHERE)
    assert f.code == "NAN201" and f.start[0] == 7
    assert "returned by `f` (called on line 10) differentiated by `tensorflow.gradients` on line 10" in f.message
    assert default(SEED_DOUBLE_WHERE) == [] and may(SEED_DOUBLE_WHERE) == []


def test_the_seeds_mask_nan_is_flagged_by_default():
    """As the seed wrote it, on literals: the log of the literal 0 is the finding (no gradient
    reaches a constant); on a model's output, the helper that hides it is (NAN205)."""
    assert [f.code for f in lint(SEED_MASK_NAN)] == ["NAN107"]
    trained = SEED_MASK_NAN.replace("y_conv=[0.0,1]", "y_conv = model(x)")
    [f] = default(trained)
    assert f.code == "NAN205" and f.start[0] == 12 and "masking with is_finite (in `mask_nan`)" in f.message
    assert "a gradient reaches it through `cross_entropy1` (line 12), a loss" in f.message


GRADIENT_AT = """
import json
import tensorflow as tf
x = tf.constant([-1., 0., 1.])
with tf.GradientTape() as tape:
    tape.watch(x)
    y = f(x)
print(json.dumps([None if g != g else g for g in tape.gradient(y, x).numpy().tolist()]))
"""


def test_the_single_where_gradient_is_nan_in_tensorflow_and_the_fix_makes_it_finite(tmp_path):
    """The number behind the default finding: the seed's gradient at 0, before and after the
    fix (in a child process: TensorFlow's import takes over the process's logging)."""
    if importlib.util.find_spec("tensorflow") is None:  # not imported here: see the docstring
        conftest.missing_framework("tensorflow")
    fixed = conftest.fix(SEED_SINGLE_WHERE, unsafe=False, select=["NAN201"])
    assert "tf.where(x_ok, 1. / tf.where(x_ok, x, 1.0), safe_f_x)" in fixed

    def gradient(source):
        program = tmp_path / "seed.py"
        program.write_text(source.split("\nx = tf.constant")[0] + "\n" + GRADIENT_AT)  # the definition only
        run = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-2000:]
        return json.loads(run.stdout.strip().splitlines()[-1])

    assert gradient(textwrap.dedent(SEED_SINGLE_WHERE)) == [-1.0, None, -1.0]  # NaN at the asymptote
    assert gradient(fixed) == [-1.0, 0.0, -1.0]


# --- what a run does not show is said once (issue 23 item 5) -------------------------------------
def test_the_summary_counts_the_findings_not_shown_and_fix_leaves_them(tmp_path):
    run = _cli(tmp_path)
    assert run.stdout.splitlines()[-2:] == [
        "1 file checked, no findings.",
        "1 finding on weak evidence not shown (a hazard only if something the code does not show holds): "
        "--may shows them."] or run.stdout.splitlines()[-2:] == [
        "All checks passed!",
        "1 finding on weak evidence not shown (a hazard only if something the code does not show holds): "
        "--may shows them."]
    assert "not shown" not in _cli(tmp_path, "--may").stdout
    fixed = _cli(tmp_path, "--fix")
    assert fixed.returncode == 0 and (tmp_path / "m.py").read_text() == textwrap.dedent(WITHOUT_EVIDENCE)
    assert "NAN201" in _cli(tmp_path, "--fix", "--may").stdout or \
        "torch.where(x != 0, x, 1.0)" in (tmp_path / "m.py").read_text()


def test_a_noqa_on_a_may_tier_finding_is_used_in_every_run(tmp_path):
    source = textwrap.dedent(WITHOUT_EVIDENCE).replace("0.0)\n", "0.0)  # noqa: NAN201\n")
    (tmp_path / "m.py").write_text(source)
    for extra in ((), ("--may",)):
        run = subprocess.run([sys.executable, "-m", "nanlint", "--no-cache", "--extend-select", "NAN002", *extra,
                              "m.py"], cwd=tmp_path, capture_output=True, text=True)
        assert run.returncode == 0 and "NAN002" not in run.stdout, run.stdout


def test_the_summary_names_the_opt_in_rules_whose_ops_a_file_holds(tmp_path):
    (tmp_path / "a.py").write_text("import torch\n\ndef angle(u, v):\n    return torch.acos((u * v).sum(-1))\n")
    run = subprocess.run([sys.executable, "-m", "nanlint", "--no-cache", "a.py"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert run.returncode == 0
    assert "Not run (opt-in), though their ops are in the files checked: NAN204; " \
           "--extend-select NAN204 (or --select ALL) runs them." in run.stdout.splitlines()
    selected = subprocess.run([sys.executable, "-m", "nanlint", "--no-cache", "--extend-select", "NAN204", "a.py"],
                              cwd=tmp_path, capture_output=True, text=True)
    assert "Not run" not in selected.stdout and "NAN204" in selected.stdout
    cached = [subprocess.run([sys.executable, "-m", "nanlint", "a.py"], cwd=tmp_path, capture_output=True,
                             text=True).stdout for _ in range(2)]
    assert cached[0] == cached[1] == run.stdout  # the second run reads the cache: the same summary


def test_the_machine_formats_say_the_tier(tmp_path):
    (tmp_path / "m.py").write_text(textwrap.dedent(WITHOUT_EVIDENCE))
    def run(fmt):
        out = subprocess.run([sys.executable, "-m", "nanlint", "--no-cache", "--may", "--format", fmt, "m.py"],
                             cwd=tmp_path, capture_output=True, text=True).stdout
        return json.loads(out)
    [finding] = run("json")
    assert finding["code"] == "NAN201" and finding["may"] is True
    [result] = run("sarif")["runs"][0]["results"]
    assert result["ruleId"] == "NAN201" and result["level"] == "warning"


def test_a_single_where_over_the_targets_is_may_tier_not_default():
    """optax 0.1.5's fixed kl_divergence: ``where(targets == 0, 0, log(targets))`` repairs the
    value; the gradient with respect to the targets is still NaN at 0, but training takes
    the gradient of the predictions only (fix-history site optax-0.1.4-0.1.5-kl-divergence).
    A where over a value computed from the model keeps reporting by default."""
    src = """
        import jax.numpy as jnp

        def kl(log_predictions, targets):
            loss = targets * (jnp.where(targets == 0, 0, jnp.log(targets)) - log_predictions)
            return jnp.sum(loss, axis=-1)
        """
    assert "NAN201" not in conftest.codes(src)
    assert "NAN201" in conftest.codes(src, may=True)
    model = src.replace("def kl(log_predictions, targets):", "def kl(log_predictions, logits):\n"
                        "            targets = jnp.exp(logits)")
    assert "NAN201" in conftest.codes(model)
