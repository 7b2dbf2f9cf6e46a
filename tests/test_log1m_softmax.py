"""NAN101 on ``log(1 - softmax(z))``: flagged once (not by NAN107/NAN109/NAN110 too),
rewritten into its exact form (``nanlint.rules._log1m_softmax``) with the file's aliases and
the softmax's axis, the epsilon guard where the exact form cannot be written, and a fix that
survives the engine's fixpoint with every rule selected.  The fixtures
(``fixtures/NAN101-log-softmax/*_complement.py``) run the fixed code in the four frameworks."""

from __future__ import annotations

import importlib
import math

import libcst as cst
import pytest

from conftest import codes, fix, lint
from nanlint.vocabulary import frameworks
from nanlint.vocabulary import ops as o
from nanlint.lint.engine import Linter
from nanlint.rules.base import all_rules, by_code
from nanlint.rules._log1m_softmax import default_axis, repeatable

ALL = [r.code for r in all_rules()]
TORCH = "import torch\nimport torch.nn.functional as F\n\n"


def only_fix(src: str, unsafe: bool = True) -> str:
    return fix(src, unsafe=unsafe, select=["NAN101"])


def exact_torch(p: str, ls: str, dim: str, indent: str = "    ") -> str:
    inner = indent + "    "
    return (f"torch.where(\n{inner}{p} > 0.5,\n"
            f"{inner}torch.logsumexp(torch.where({p} > 0.5, float(\"-inf\"), {ls}), dim={dim}, keepdim=True),\n"
            f"{inner}torch.log1p(-torch.where({p} > 0.5, 0.0, {p})),\n{indent})")


# --- reported once, by NAN101 ---------------------------------------------------------------
@pytest.mark.parametrize("src", [
    TORCH + "def f(logits):\n    return torch.log(1 - F.softmax(logits, dim=-1))\n",
    TORCH + "def f(logits):\n    p = F.softmax(logits, dim=-1)\n    return torch.log(1.0 - p)\n",
    TORCH + "def f(logits):\n    q = 1 - torch.softmax(logits, 1)\n    return q.log()\n",
    "import torch\ndef f(logits):\n    return (1 - logits.softmax(dim=1)).log()\n",
    "import tensorflow as tf\ndef f(logits):\n    return tf.math.log(1.0 - tf.nn.softmax(logits))\n",
    "import tensorflow.compat.v1 as tf\ndef f(logits):\n    return tf.log(1 - tf.nn.softmax(logits))\n",
    "from tensorflow.keras import backend as K\ndef f(logits):\n    return K.log(1 - K.softmax(logits))\n",
    "import jax\nimport jax.numpy as jnp\ndef f(logits):\n    return jnp.log(1 - jax.nn.softmax(logits))\n",
    "from keras import ops\ndef f(logits):\n    return ops.log(1 - ops.softmax(logits, axis=1))\n",
    # not a logit by name: a fused-form rule, like NAN102's log(1 - sigmoid(x))
    "import torch\ndef f(scores):\n    return torch.log(1 - torch.softmax(scores, -1))\n",
])
def test_flagged_once_by_nan101(src):
    assert codes(src) == ["NAN101"]
    assert codes(src, select=ALL) == ["NAN101"]  # NAN107, NAN109, NAN110 leave it to NAN101
    assert "log(1 - softmax(z))" in lint(src)[0].message


@pytest.mark.parametrize("src", [
    TORCH + "def f(logits):\n    return torch.log(1 - F.softmax(logits, dim=-1) + 1e-6)\n",
    TORCH + "def f(logits):\n    return torch.log(torch.clamp(1 - F.softmax(logits, dim=-1), min=1e-6))\n",
    TORCH + "def f(logits):\n    p = F.softmax(logits, -1).clamp(1e-6, 1 - 1e-6)\n    return torch.log(1 - p)\n",
    TORCH + "def f(logits):\n    return torch.log1p(-F.softmax(logits, dim=-1))\n",  # log1p is no log sink
    TORCH + "def f(logits):\n    return torch.log(2 - F.softmax(logits, dim=-1))\n",
    TORCH + "def f(a, b):\n    return torch.log(1 - a * b)\n",
])
def test_not_flagged(src):
    assert "NAN101" not in codes(src, select=ALL)


def test_log2_of_the_complement_stays_nan107s():
    src = TORCH + "def f(logits):\n    return torch.log2(1 - F.softmax(logits, dim=-1))\n"
    assert codes(src) == ["NAN107"]


# --- the exact form ------------------------------------------------------------------------
def test_inline_torch_is_safe_and_exact():
    src = TORCH + "def f(logits):\n    return torch.log(1 - F.softmax(logits, dim=-1))\n"
    [finding] = lint(src, select=["NAN101"])
    assert finding.fix_applicability == "safe"
    p, ls = "F.softmax(logits, dim=-1)", "F.log_softmax(logits, dim=-1)"
    assert fix(src, unsafe=False, select=["NAN101"]) == TORCH + "def f(logits):\n    return " + exact_torch(p, ls, "-1") + "\n"


def test_through_a_name_is_unsafe_and_uses_the_name():
    src = TORCH + "def f(logits):\n    p = F.softmax(logits, dim=1)\n    return torch.log(1 - p)\n"
    [finding] = lint(src, select=["NAN101"])
    assert finding.fix_applicability == "unsafe" and "`p` is assigned on line 5" in finding.message
    assert fix(src, unsafe=False, select=["NAN101"]) == src
    assert only_fix(src).endswith("    return " + exact_torch("p", "F.log_softmax(logits, dim=1)", "1") + "\n")


@pytest.mark.parametrize("imports,log,expect", [
    # the file's aliases, for every call the form writes
    ("import torch as th\nfrom torch.nn import functional as nnf\n",
     "th.log(1 - nnf.softmax(z, 0))",
     ["th.where(", "th.logsumexp(th.where(nnf.softmax(z, 0) > 0.5, float(\"-inf\"), th.log_softmax(z, 0)), dim=0, "
      "keepdim=True)", "th.log1p(-th.where("]),
    ("import torch\n", "(1 - z.softmax(dim=2)).log()",
     ["torch.logsumexp(torch.where(z.softmax(dim=2) > 0.5, float(\"-inf\"), z.log_softmax(dim=2)), dim=2, keepdim=True)"]),
    ("import tensorflow.compat.v1 as tf1\n", "tf1.log(1.0 - tf1.nn.softmax(z, axis=1))",
     ["tf1.where_v2(", "tf1.reduce_logsumexp(", "axis=1, keepdims=True)", "tf1.log1p(-tf1.where_v2("]),
    ("import tensorflow as tf\n", "tf.math.log(1 - tf.nn.softmax(z, axis=None))",  # TF's None is -1
     ["tf.reduce_logsumexp(tf.where(tf.nn.softmax(z, axis=None) > 0.5, float(\"-inf\"), "
      "tf.nn.log_softmax(z, axis=None)), axis=-1, keepdims=True)", "tf.math.log1p("]),
    ("import tensorflow as tf\n", "tf.math.log(1 - tf.nn.softmax(z, dim=1))",  # TF1's dim=
     ["tf.nn.log_softmax(z, dim=1)), axis=1, keepdims=True)"]),
    ("from jax import numpy as np2, nn as jnn\n", "np2.log(1 - jnn.softmax(z))",
     ["np2.where(", "jnn.logsumexp(np2.where(jnn.softmax(z) > 0.5, float(\"-inf\"), jnn.log_softmax(z)), axis=-1, "
      "keepdims=True)", "np2.log1p("]),
    ("import keras\n", "keras.ops.log(1 - keras.ops.softmax(z))",
     ["keras.ops.where(", "keras.ops.logsumexp(", "axis=-1, keepdims=True)", "keras.ops.log1p("]),
    ("import torch\n", "torch.log(1 - torch.softmax(z / self.temperature, -1))",  # arithmetic of names repeats
     ["torch.log_softmax(z / self.temperature, -1)), dim=-1, keepdim=True)"]),
])
def test_spelled_with_the_files_aliases_and_the_softmax_axis(imports, log, expect):
    src = imports + "def f(self, z):\n    return " + log + "\n"
    out = only_fix(src)
    assert out.startswith(imports) and "softmax" in out.split("return ", 1)[1]
    for piece in expect:
        assert piece in out, (piece, out)
    assert not lint(out, select=ALL)


def test_an_import_the_form_needs_is_added():
    src = "import jax.numpy as jnp\nfrom jax.nn import softmax\n\ndef f(z):\n    return jnp.log(1 - softmax(z))\n"
    out = only_fix(src)
    assert "import jax\n" in out and "jax.nn.log_softmax(z)" in out and "jnp.where(" in out
    assert not lint(out, select=ALL)


def test_laid_out_at_the_logs_indentation():
    src = TORCH + ("class M:\n    def f(self, logits, y):\n        if y:\n"
                   "            return -(y * torch.log(1 - F.softmax(logits, dim=-1))).sum()  # loss\n")
    out = only_fix(src)
    p, ls = "F.softmax(logits, dim=-1)", "F.log_softmax(logits, dim=-1)"
    assert out.endswith("            return -(y * " + exact_torch(p, ls, "-1", " " * 12) + ").sum()  # loss\n")


def test_crlf_and_tabs_are_kept():
    src = TORCH.replace("\n", "\r\n") + "def f(logits):\r\n\treturn torch.log(1 - F.softmax(logits, dim=-1))\r\n"
    result = Linter([by_code()["NAN101"]]).fix_source(src.encode(), "example.py", unsafe=False)
    out = result.fixed_source.decode()
    assert result.error is None and "\n" not in out.replace("\r\n", "")
    assert "\treturn torch.where(\r\n\t\tF.softmax(logits, dim=-1) > 0.5,\r\n" in out and out.endswith("\r\n\t)\r\n")


def test_the_reported_edit_is_the_applied_text():
    """The edit in JSON / the language server is the text --fix writes (explicit indentation,
    not the block's, which a detached node would not know)."""
    src = TORCH + "def f(logits):\n    if True:\n        x = torch.log(1 - F.softmax(logits, dim=-1))\n"
    [finding] = lint(src, select=["NAN101"])
    [edit] = finding.edits
    lines = src.splitlines(keepends=True)
    (r0, c0), (r1, c1) = edit.start, edit.end
    patched = "".join(lines[:r0 - 1]) + lines[r0 - 1][:c0 - 1] + edit.content + lines[r1 - 1][c1 - 1:] + "".join(lines[r1:])
    assert patched == only_fix(src)


def test_inside_an_f_string_stays_on_one_line():
    src = TORCH + "def f(logits):\n    return f'{torch.log(1 - F.softmax(logits, dim=-1))}'\n"
    out = only_fix(src)
    assert out.count("\n") == src.count("\n") and "torch.where(F.softmax(logits, dim=-1) > 0.5, " in out


# --- where the exact form cannot be written: the guard, or nothing ----------------------------
@pytest.mark.parametrize("body,needs", [
    ("torch.log(1 - F.softmax(logits))", "the softmax axis"),  # torch: no dim
    ("torch.log(1 - F.softmax(net(x), dim=-1))", "logits the fix can repeat"),
    ("torch.log(1 - F.softmax(logits, dim=-1)[:, 0])", "the whole softmax"),
    ("torch.log(1 - torch.exp(logits) / torch.exp(logits).sum(-1, keepdim=True))", "a softmax call"),
    ("torch.log(1 - F.softmax(logits, dim=pick()))", "the softmax axis"),
])
def test_otherwise_the_guard(body, needs):
    src = TORCH + "def f(net, x, logits):\n    return " + body + "\n"
    [finding] = lint(src, select=["NAN101"])
    assert finding.fix_applicability == "unsafe" and needs in finding.fix_message
    assert only_fix(src).endswith("    return torch.log(torch.clip(" + body[len("torch.log("):-1] + ", 1e-7))\n")


def test_jax_axis_none_gets_the_guard():
    src = "import jax\nimport jax.numpy as jnp\ndef f(z):\n    return jnp.log(1 - jax.nn.softmax(z, axis=None))\n"
    assert only_fix(src).endswith("return jnp.log(jnp.maximum(1 - jax.nn.softmax(z, axis=None), 1e-7))\n")


def test_float16_evidence_gets_the_larger_guard():
    src = TORCH + "def f(net, x):\n    h = x.half()\n    return torch.log(1 - F.softmax(net(h), dim=-1))\n"
    assert "torch.clip(1 - F.softmax(net(h), dim=-1), 1e-4)" in only_fix(src)


def test_a_models_output_is_display_only():
    src = ("import torch\nfrom torch import nn\n\nnet = nn.Sequential(nn.Linear(4, 3), nn.Softmax(dim=-1))\n"
           "def f(x):\n    return torch.log(1 - net(x))\n")
    [finding] = lint(src, select=["NAN101"])
    assert finding.fix_applicability == "display-only" and "Return logits" in finding.fix_message
    assert only_fix(src) == src


# --- the fixpoint: the fixed code is silent under every rule --------------------------------
@pytest.mark.parametrize("src", [
    TORCH + "def f(logits, y):\n    return -(y * torch.log(1 - F.softmax(logits, dim=1))).sum()\n",
    "import tensorflow as tf\ndef f(logits):\n    p = tf.nn.softmax(logits)\n    return tf.math.log(1.0 - p)\n",
    "import jax\nimport jax.numpy as jnp\ndef f(z, y):\n    return jnp.sum(y * jnp.log(1 - jax.nn.softmax(z)))\n",
    "from keras import ops\ndef f(z):\n    return ops.log(1 - ops.softmax(z))\n",
])
def test_fixed_code_is_silent_under_every_rule(src):
    for select in (ALL, None):
        out = fix(src, select=select)
        assert "log1p" in out and not lint(out, select=ALL), out


# --- the helpers -----------------------------------------------------------------------------
@pytest.mark.parametrize("text,ok", [
    ("logits", True), ("self.head.logits", True), ("-z / t", True), ("z * 2.0 + b", True),
    ("out['logits']", True), ("z[:, 1:]", True), ("(0, 1)", True),
    ("net(x)", False), ("z.float()", False), ("z[idx()]", False), ("[z]", False), ("z if a else y", False),
])
def test_repeatable(text, ok):
    assert repeatable(cst.parse_expression(text)) is ok


@pytest.mark.parametrize("framework,axis,expect", [
    ("torch", None, None), ("torch", "1", "1"), ("torch", "None", None),
    ("tensorflow", None, "-1"), ("tensorflow", "None", "-1"), ("tensorflow", "self.axis", "self.axis"),
    ("jax", None, "-1"), ("jax", "None", None), ("keras", None, "-1"), ("keras", "f()", None),
])
def test_default_axis(framework, axis, expect):
    got = default_axis(frameworks.by_name(framework), cst.parse_expression(axis) if axis else None)
    assert (cst.Module([]).code_for_node(got) if got is not None else None) == expect


@pytest.mark.parametrize("op", [o.WHERE, o.LOGSUMEXP, o.LOG1P, o.LOG_SOFTMAX])
def test_every_spelling_the_form_may_write_exists(op):
    """The targets are real functions of the installed frameworks (TF2 has no tf.log1p)."""
    for fw in frameworks.frameworks():
        for qual in fw.targets.get(op, ()):
            module, _, name = qual.rpartition(".")
            while True:
                try:
                    obj = importlib.import_module(module)
                    break
                except ImportError:
                    module, _, attr = module.rpartition(".")
                    name = attr + "." + name
            for part in name.split("."):
                obj = getattr(obj, part)
            assert callable(obj), qual


def test_the_exact_form_is_exact_where_log1p_is_not():
    """The fixed code in PyTorch at a gap of 30: log1p(-p) is -inf, the form is the float64 value."""
    import torch

    src = TORCH + "def f(logits):\n    return torch.log(1 - F.softmax(logits, dim=-1))\n"
    namespace: dict = {}
    exec(only_fix(src), namespace)
    z = torch.tensor([[30.0, 0.0, -1.0]], requires_grad=True)
    out = namespace["f"](z)
    out.sum().backward()
    assert torch.isinf(torch.log1p(-torch.softmax(z.detach(), -1))[0, 0])
    expected = math.log(math.exp(0.0) + math.exp(-1.0)) - math.log(math.exp(30.0) + math.exp(0.0) + math.exp(-1.0))
    assert abs(out[0, 0].item() - expected) < 1e-5 * abs(expected)
    assert torch.isfinite(z.grad).all()
