"""Value flow: hazards and guards reach a use the way training code moves them
(issue: value facts).  Each hazard here is a real -inf/NaN in value or gradient;
each guarded look-alike must stay silent."""

import pytest

import conftest

# the default rules and the opt-in gradient rules (below the precision bar on training code,
# docs/precision.md): value flow serves them all
SELECTED = {r.code for r in conftest.all_rules()
            if r.default or r.code in ("NAN201", "NAN202", "NAN203", "NAN205", "NAN301", "NAN401")}


def lint(src):
    """On any evidence (the may tier too): value flow decides what is flagged at all; the
    gradient rules' tiers are tested in tests/test_gradient_evidence.py."""
    return conftest.lint(src, select=SELECTED, may=True)


def codes(src):
    return [f.code for f in lint(src)]


def one(src, code):
    found = [f for f in lint(src) if f.code == code]
    assert len(found) == 1, [(f.code, f.message) for f in lint(src)]
    return found[0]


# --- 1. conditions written with framework functions, bound to names -------------------
def test_single_where_with_condition_bound_to_a_framework_function():
    src = """\
        import tensorflow as tf
        def f(x):
            x_ok = tf.not_equal(x, 0.)
            safe_f_x = tf.zeros_like(x)
            return tf.where(x_ok, 1. / x, safe_f_x)
    """
    assert "NAN201" in codes(src)


def test_single_where_with_greater_condition_and_log():
    src = """\
        import tensorflow as tf
        def f(x):
            return tf.where(tf.greater(x, 0.), tf.math.log(x), tf.zeros_like(x))
    """
    assert "NAN201" in codes(src)


def test_single_where_torch_method_condition():
    src = """\
        import torch
        def f(x):
            ok = x.ne(0)
            return torch.where(ok, 1 / x, torch.zeros_like(x))
    """
    assert "NAN201" in codes(src)


# --- 2. rebinding and loops ---------------------------------------------------------------
def test_rebinding_through_a_shape_op_inside_a_loop():
    src = """\
        import torch.nn.functional as F
        for batch in loader:
            q = F.softmax(net(batch.x), dim=-1)
            q = q.view(-1, k)
            loss = F.nll_loss(q.log(), batch.y)
    """
    finding = one(src, "NAN101")
    # the fused fix with the view carried (tests/test_layout_fix.py), unsafe: it crosses statements
    assert finding.fix_applicability == "unsafe"
    assert [e.content for e in finding.edits][-1] == "F.log_softmax(q_logits, dim=-1).view(-1, k)"


def test_rebound_clamp_after_the_softmax_is_silent():
    src = """\
        import torch
        import torch.nn.functional as F
        for batch in loader:
            q = F.softmax(net(batch.x), dim=-1)
            q = q.clamp(min=1e-7)
            loss = F.nll_loss(q.log(), batch.y)
    """
    assert "NAN101" not in codes(src)


# --- 3. branches ------------------------------------------------------------------------------
def test_every_branch_a_softmax():
    src = """\
        import tensorflow as tf
        if label_smoothing:
            probs = tf.nn.softmax(logits / T)
        else:
            probs = tf.nn.softmax(logits)
        ce = -tf.reduce_sum(y * tf.math.log(probs), -1)
    """
    finding = one(src, "NAN103")  # the cross entropy, which supersedes NAN101's log(softmax)
    assert finding.fix_applicability == "display-only"  # two softmaxes: no single rewrite
    assert "one of several values" in finding.message


def test_one_branch_clipped_is_silent():
    src = """\
        import tensorflow as tf
        if label_smoothing:
            probs = tf.nn.softmax(logits / T)
        else:
            probs = tf.clip_by_value(tf.nn.softmax(logits), 1e-7, 1.)
        ce = -tf.reduce_sum(y * tf.math.log(probs), -1)
    """
    assert "NAN101" not in codes(src)


# --- 4. functions ------------------------------------------------------------------------------
def test_tuple_return_unpacked():
    src = """\
        import tensorflow as tf
        def encoder(x):
            h = dense(x)
            return h, tf.sigmoid(h)
        _, p = encoder(x)
        bce = -(t * tf.math.log(p) + (1 - t) * tf.math.log(1 - p))
    """
    assert "NAN104" in codes(src) or codes(src).count("NAN102") == 2


def test_tuple_return_subscripted():
    src = """\
        import torch
        def heads(x):
            return x, torch.softmax(x, -1)
        p = heads(z)[1]
        y = torch.log(p)
    """
    assert "NAN101" in codes(src)


def test_parameter_fed_softmax_at_the_call_site():
    src = """\
        import torch.nn.functional as F
        def kl(p, q):
            return (p * (p.log() - q.log())).sum(-1)
        loss = kl(F.softmax(a, -1), F.softmax(b, -1))
    """
    found = [f for f in lint(src) if f.code == "NAN101"]
    assert len(found) == 2
    assert all("line 4" in f.message for f in found)
    assert all(f.fix_applicability == "display-only" for f in found)


def test_parameter_fed_logits_is_silent():
    src = """\
        import torch.nn.functional as F
        def kl(p, q):
            return (p * (p.log() - q.log())).sum(-1)
        loss = kl(a, b)
    """
    assert "NAN101" not in codes(src)


def test_returned_name_rebound_in_sequence():
    src = """\
        import tensorflow as tf
        def predict(x):
            out = tf.matmul(x, w)
            out = tf.nn.softmax(out)
            return out
        loss = -tf.reduce_sum(y * tf.log(predict(x)))
    """
    assert {"NAN101", "NAN103"} & set(codes(src))


# --- 7. operator methods and functions ---------------------------------------------------------
@pytest.mark.parametrize("expr", [
    "torch.exp(z).add(1).log()",
    "torch.log(torch.add(1, torch.exp(z)))",
    "torch.log(1 + z.exp())",
])
def test_softplus_through_operator_methods(expr):
    assert "NAN106" in codes(f"import torch\ny = {expr}\n")


# --- 8. a NaN-masking helper applied to a log output -----------------------------------------------
def test_nan_masking_helper_recognised_by_its_body():
    src = """\
        import tensorflow as tf
        def mask_nan(x, c):
            return tf.where(tf.math.is_finite(x), x, c * tf.ones_like(x))
        ce = y_ * tf.math.log(y_conv)
        ce = mask_nan(ce, 3)
    """
    assert "NAN205" in codes(src)


# --- guards one step away ---------------------------------------------------------------------------
def test_clip_one_statement_before_sqrt_of_exp():
    src = """\
        import tensorflow as tf
        def f(v):
            v = tf.clip_by_value(v, -87., 87.)
            return tf.sqrt(tf.exp(v))
    """
    assert "NAN302" not in codes(src)


def test_maximum_before_where_over_log_is_silent():
    src = """\
        import tensorflow as tf
        def f(p):
            prob = tf.maximum(p, 1e-12)
            return tf.where(p > 0, tf.math.log(prob), tf.zeros_like(p))
    """
    assert "NAN201" not in codes(src)


def test_where_bounded_exponent_is_silent():
    src = """\
        import jax.numpy as jnp
        def softplus(x):
            neg_abs = jnp.where(x >= 0, -x, x)
            return jnp.log1p(jnp.exp(neg_abs)) + jnp.maximum(x, 0)
    """
    assert "NAN106" not in codes(src)


# --- never differentiated: helpers reached only from no_grad code ---------------------------------
HELPER = """\
    import torch
    class Pipeline:
        def _dist(self, a, b):
            return torch.sqrt(((a - b) ** 2).sum(-1))
        {decorator}
        def __call__(self, a, b):
            return self._dist(a, b)
"""


def test_helper_only_called_from_a_no_grad_method_is_silent():
    assert "NAN202" not in codes(HELPER.format(decorator="@torch.no_grad()"))


def test_helper_called_from_a_training_method_is_flagged():
    assert "NAN202" in codes(HELPER.format(decorator="@staticmethod"))


# --- 5. model objects ---------------------------------------------------------------------------------
@pytest.mark.parametrize("src,code", [
    ("import torch\nfrom torch import nn\nhead = nn.Sequential(nn.Linear(d, 1), nn.Sigmoid())\n"
     "y = torch.log(head(x))\n", "NAN102"),
    ("import torch\nfrom torch import nn\nclass Net(nn.Module):\n    def __init__(self):\n"
     "        super().__init__()\n        self.fc = nn.Linear(4, 3)\n    def forward(self, x):\n"
     "        return torch.softmax(self.fc(x), -1)\nmodel = Net()\nloss = -(y * torch.log(model(x))).sum()\n",
     "NAN103"),
    ("import tensorflow as tf\nfrom tensorflow import keras\nfrom tensorflow.keras import layers\n"
     "clf = keras.Sequential([layers.Dense(64, 'relu'), layers.Dense(k, activation='softmax')])\n"
     "y = tf.math.log(clf(x))\n", "NAN101"),
    ("import tensorflow as tf\nfrom tensorflow import keras\nfrom tensorflow.keras import layers\n"
     "inp = keras.Input((4,))\nout = layers.Dense(3, activation=tf.nn.softmax)(layers.Dense(8)(inp))\n"
     "model = keras.Model(inp, out)\ny = tf.math.log(model(x))\n", "NAN101"),
    ("import jax\nimport jax.numpy as jnp\nimport flax.linen as nn\nclass Policy(nn.Module):\n"
     "    @nn.compact\n    def __call__(self, x):\n        return jax.nn.softmax(nn.Dense(4)(x))\n"
     "model = Policy()\nlogp = jnp.log(model.apply(params, obs))\n", "NAN101"),
    ("import torch\nfrom torch import nn\nclass Head(nn.Module):\n    def __init__(self):\n"
     "        super().__init__()\n        self.act = nn.Softmax(dim=1)\n    def forward(self, x):\n"
     "        return self.act(x)\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
     "        self.head = Head()\n    def loss(self, x):\n        return torch.log(self.head(x))\n", "NAN101"),
])
def test_model_outputs(src, code):
    finding = one(src, code)
    assert finding.fix_applicability == "display-only"


@pytest.mark.parametrize("src", [
    # a log-softmax last layer with nll_loss: the fused form already
    "import torch.nn.functional as F\nfrom torch import nn\nnet = nn.Sequential(nn.Linear(4, 3), nn.LogSoftmax(1))\n"
    "loss = F.nll_loss(net(x), y)\n",
    # a model returning logits into cross_entropy
    "import torch\nimport torch.nn.functional as F\nfrom torch import nn\nclass Net(nn.Module):\n"
    "    def forward(self, x):\n        return self.fc(x)\nmodel = Net()\nloss = F.cross_entropy(model(x), y)\n"
    "p = torch.log(model(x))\n",
    # a keras model without an activation on its last layer
    "import tensorflow as tf\nfrom tensorflow import keras\nfrom tensorflow.keras import layers\n"
    "clf = keras.Sequential([layers.Dense(64, 'relu'), layers.Dense(k)])\ny = tf.math.log(clf(x))\n",
])
def test_model_outputs_silent(src):
    assert codes(src) == []


# --- NAN201: branches without a gradient, and a double where through a name ---------------------------
def test_single_where_over_counts_is_silent():
    src = """\
        import torch
        def iou(mask_logits, d):
            area_i = torch.sum((mask_logits > d) & (mask_logits > -d), dim=-1).float()
            area_u = torch.sum(mask_logits > -d, dim=-1).float()
            return torch.where(area_u > 0, area_i / area_u, 1.0)
    """
    assert "NAN201" not in codes(src)


def test_single_where_with_a_learned_numerator_is_flagged():
    src = """\
        import torch
        def ratio(score, mask_logits, d):
            area_u = torch.sum(mask_logits > -d, dim=-1).float()
            return torch.where(area_u > 0, score / area_u, 1.0)
    """
    assert "NAN201" in codes(src)


def test_double_where_through_a_name_is_silent():
    src = """\
        import tensorflow as tf
        def variance(df, scale):
            first_denom = tf.where(df > 2., df - 2., 1.)
            return tf.where(df > 2., scale * df / first_denom, float("inf"))
    """
    assert "NAN201" not in codes(src)


# --- never differentiated: hand-written derivatives, inference locations ---------------------------
@pytest.mark.parametrize("src", [
    "import torch\nfrom torch.autograd.function import once_differentiable\nclass F(torch.autograd.Function):\n"
    "    @staticmethod\n    @once_differentiable\n    def backward(ctx, g):\n        a, b = ctx.saved_tensors\n"
    "        return torch.sqrt(((a - b) ** 2).sum(-1))\n",
    "import torch\nclass F(torch.autograd.Function):\n    @staticmethod\n    def backward(ctx, g):\n"
    "        a, b = ctx.saved_tensors\n        return torch.sqrt(((a - b) ** 2).sum(-1))\n",
    "import tensorflow as tf\n@tf.custom_gradient\ndef dist(a, b):\n"
    "    d = tf.sqrt(tf.reduce_sum(tf.square(a - b)))\n    return d, lambda g: (g, -g)\n",
])
def test_hand_written_derivatives_are_not_autodiffed(src):
    assert "NAN202" not in codes(src)


def test_inference_locations_are_not_differentiated(tmp_path):
    from nanlint.lint.engine import Linter
    from nanlint.rules.base import all_rules
    src = b"import torch\ndef dist(a, b):\n    return torch.sqrt(((a - b) ** 2).sum(-1))\n"
    linter = Linter([r for r in all_rules() if r.code in SELECTED], {"may": True})
    assert [f.code for f in linter.lint_source(src, "models/loss.py").findings] == ["NAN202"]
    assert linter.lint_source(src, "diffusers/pipelines/flux/pipeline_flux.py").findings == []
    assert linter.lint_source(src, "torchvision/transforms/v2/_geometry.py").findings == []


def test_a_gradient_by_its_name_is_plausibly_zero():
    src = """\
        import torch
        def newton_step(loss, x, trust_radius):
            g = torch.autograd.grad(loss, [x], create_graph=True)[0]
            return g.pow(2).sum(-1).sqrt() / trust_radius
    """
    [finding] = [f for f in lint(src) if f.code == "NAN202"]
    assert "`g`, a gradient" in finding.message


def test_naive_softplus_in_a_where_under_a_custom_gradient_is_silent():
    src = """\
        import tensorflow as tf
        @tf.custom_gradient
        def softplus(x):
            y = tf.where(x < 20.0, tf.math.log1p(tf.exp(x)), x)
            return y, lambda dy: dy * tf.sigmoid(x)
    """
    assert "NAN106" not in codes(src)
    assert "NAN106" in codes(src.replace("@tf.custom_gradient", ""))


# --- activations written by hand count as what they compute ----------------------------------------
@pytest.mark.parametrize("src,code", [
    ("import tensorflow as tf\ny = tf.math.log(1 / (1 + tf.exp(-z)))\n", "NAN102"),
    ("import torch\ne = torch.exp(z)\np = e / (1 + e)\ny = torch.log(p)\n", "NAN102"),
    ("import numpy as np\nimport torch\ndef sigmoid(z):\n    return 1 / (1 + torch.exp(-z))\n"
     "loss = -(t * torch.log(sigmoid(x))).mean()\n", "NAN102"),
    ("import jax.numpy as jnp\ndef softmax(z):\n    e = jnp.exp(z)\n    return e / jnp.sum(e, axis=-1, keepdims=True)\n"
     "logp = jnp.log(softmax(x))\n", "NAN101"),
])
def test_hand_written_activations(src, code):
    assert code in codes(src)


@pytest.mark.parametrize("src", [
    # a metric that declares it is not differentiable (torchmetrics)
    "import torch\nclass Score:\n    is_differentiable = False\n    def update(self, a, b):\n"
    "        return torch.sqrt(((a - b) ** 2).sum(-1))\n",
    # a value written into a TF variable
    "import tensorflow as tf\ndef rescale(g, v, w):\n    g.assign(tf.sqrt(tf.reduce_sum(tf.square(v - w))))\n",
    # distances between constants built from arange
    "import torch\ndef rel(n):\n    idx = torch.arange(n)\n    d = idx[None, :] - idx[:, None]\n    return (d ** 2) ** 0.5\n",
])
def test_more_never_differentiated_values(src):
    assert "NAN202" not in codes(src)



def test_logsumexp_shifted_on_every_branch_is_silent():
    src = """\
        import torch
        def logsumexp(tensor, dim=-1, keepdim=False):
            max_score, _ = tensor.max(dim, keepdim=keepdim)
            if keepdim:
                stable_vec = tensor - max_score
            else:
                stable_vec = tensor - max_score.unsqueeze(dim)
            return max_score + (stable_vec.exp().sum(dim, keepdim=keepdim)).log()
    """
    assert "NAN106" not in codes(src)


def test_guards_do_not_recurse_without_end():
    """guarded <-> nonnegative once recursed forever (a RecursionError turns the whole
    file into NAN001): the depth now carries across both."""
    import libcst as cst
    from nanlint.semantic.context import FileContext
    from nanlint.analysis.guards import guarded
    src = "import torch\nrk = torch.sum(torch.sigmoid(sim), dim=-1)\nrk = torch.log(1 + rk)\nrk = 1 / (1 + rk)\ny = rk\n"
    ctx = FileContext(cst.parse_module(src))
    value = ctx.index.module_scope.bindings["y"][0].value
    assert guarded(ctx, value, ctx.index.module_scope) in (True, False)
    found = conftest.lint("import torch\ndef f(sim, v):\n    rk = torch.sum(torch.sigmoid(sim), dim=-1)\n"
                          "    if v == 'Ds':\n        rk = torch.log(1 + rk)\n    elif v == 'Dq':\n"
                          "        rk = 1 / (1 + rk)\n    return torch.log(rk)\n", select={"NAN109", "NAN108"})
    assert "NAN001" not in [f.code for f in found]
