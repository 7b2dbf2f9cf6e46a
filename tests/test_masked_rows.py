"""NAN402 masked-row-softmax: a softmax of scores filled with -inf where a mask says is NaN on
a row the mask empties.  Strong where the mask can empty a row (a query x key outer product,
a padding mask, the additive ``(1 - m) * -inf``), the may tier for a mask the code does not
show, silent for a causal mask, a top-k filter, a finite fill and a NaN repaired afterwards;
the fix fills with the dtype's most negative finite value, which the real frameworks turn into
a uniform row."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from conftest import fix, lint

TORCH = "import torch\nimport torch.nn.functional as F\n\n"
TF = "import numpy as np\nimport tensorflow as tf\n\n"
JAX = "import jax\nimport jax.numpy as jnp\n\n"


def findings(src: str, may: bool = False):
    return [f for f in lint(src, select=["NAN402"], may=may)]


def strong(src: str):
    found = findings(src)
    return [f for f in found if not f.may]


# --- strong: the mask can empty a row ------------------------------------------------------------
@pytest.mark.parametrize("src,evidence", [
    (TORCH + "def f(s, m):\n    pair = m[:, None] & m[None, :]\n"
     "    return s.masked_fill(~pair, float('-inf')).softmax(-1)\n", "outer product"),
    (TORCH + "def f(s, q, k):\n    m = q.unsqueeze(2) * k.unsqueeze(1)\n"
     "    return F.softmax(s.masked_fill(m == 0, -float('inf')), dim=-1)\n", "outer product"),
    (TORCH + "def f(s, q_mask, k_mask):\n    m = q_mask[..., None] & k_mask[..., None, :]\n"
     "    s = torch.where(m, s, float('-inf'))\n    return torch.softmax(s, -1)\n", "outer product"),
    (TORCH + "def f(s, labels, pair):\n    s = s.masked_fill(~(pair[:, None] & pair[None, :]), float('-inf'))\n"
     "    return F.cross_entropy(s, labels)\n", "outer product"),
    (TF + "def f(s, q, k):\n    pair = tf.logical_and(q[:, :, None], k[:, None, :])\n"
     "    return tf.nn.softmax(tf.where(pair, s, -np.inf))\n", "outer product"),
    (JAX + "def f(s, m):\n    pair = m[:, None] & m[None, :]\n"
     "    return jax.nn.softmax(jnp.where(pair, s, -jnp.inf), axis=-1)\n", "outer product"),
    (JAX + "NEG_INF = float('-inf')\n\ndef f(s, m):\n    pair = m[:, None] & m[None, :]\n"
     "    return jax.nn.log_softmax(jnp.where(pair, s, NEG_INF))\n", "outer product"),
    (TORCH + "def f(s, mask):\n    return F.softmax(s + (1 - mask) * float('-inf'), dim=-1)\n", "0 * -inf"),
    (TORCH + "def f(s, m, t):\n    pair = m[:, None] & m[None, :]\n"
     "    s = s.masked_fill(~pair, float('-inf'))\n    return F.softmax(s / t, dim=-1)\n", "outer product"),
    # in place, through einops, and a softmax a class keeps as ``self.attn_fn`` (x-transformers 0.1.0)
    (TORCH + "from einops import rearrange\n\nclass A(torch.nn.Module):\n    def __init__(self, entmax):\n"
     "        super().__init__()\n        self.attn_fn = entmax if entmax else F.softmax\n\n"
     "    def forward(self, dots, q_mask, k_mask):\n        q_mask = rearrange(q_mask, 'b i -> b () i ()')\n"
     "        k_mask = rearrange(k_mask, 'b j -> b () () j')\n        input_mask = q_mask * k_mask\n"
     "        dots.masked_fill_(~input_mask, float('-inf'))\n        return self.attn_fn(dots, dim=-1)\n",
     "outer product"),
])
def test_strong(src, evidence):
    found = strong(src)
    assert len(found) == 1, [f.message for f in findings(src, may=True)]
    assert evidence in found[0].message


def test_the_finding_is_on_the_fill_and_names_the_softmax_and_the_mask():
    src = TORCH + "def f(s, m):\n    pair = m[:, None] & m[None, :]\n" \
        "    s = s.masked_fill(~pair, float('-inf'))\n    return s.softmax(-1)\n"
    (found,) = strong(src)
    assert found.start[0] == 6 and "where `~pair` says reach the softmax on line 7" in found.message
    assert "`m[:, None] & m[None, :]` is an outer product" in found.message


def test_each_fill_reaching_a_softmax_is_a_finding_with_its_fix():
    src = TORCH + "def f(s, m, tpu):\n    pair = m[:, None] & m[None, :]\n    if tpu:\n" \
        "        s = s.masked_fill(~pair, float('-inf'))\n    else:\n" \
        "        s = torch.where(pair, s, float('-inf'))\n    return F.softmax(s, -1)\n"
    assert [f.start[0] for f in strong(src)] == [7, 9]
    fixed = fix(src, select=["NAN402"])
    assert fixed.count("-torch.finfo(s.dtype).max") == 2 and "float('-inf')" not in fixed


# --- silent -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("src", [
    # a causal mask keeps the diagonal
    TORCH + "def f(s):\n    t = s.size(-1)\n    m = torch.tril(torch.ones(t, t))\n"
    "    return F.softmax(s.masked_fill(m == 0, float('-inf')), dim=-1)\n",
    TORCH + "def f(s):\n    t = s.size(-1)\n    m = torch.ones(t, t).triu(1).bool()\n"
    "    return F.softmax(s.masked_fill(m, float('-inf')), dim=-1)\n",
    TORCH + "class A(torch.nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
    "        self.register_buffer('bias', torch.tril(torch.ones(n, n)).view(1, 1, n, n))\n\n"
    "    def forward(self, att, t):\n        att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float('-inf'))\n"
    "        return F.softmax(att, dim=-1)\n",
    TORCH + "def f(s, causal_mask):\n    return F.softmax(s.masked_fill(causal_mask, float('-inf')), -1)\n",
    TF + "def f(s):\n    causal = tf.linalg.band_part(tf.ones_like(s), -1, 0)\n"
    "    return tf.nn.softmax(tf.where(causal > 0, s, -np.inf))\n",
    # top-k / top-p filtering keeps the largest
    TORCH + "def f(logits, k):\n    kth = torch.topk(logits, k).values[..., -1:]\n"
    "    return F.softmax(logits.masked_fill(logits < kth, float('-inf')), -1)\n",
    # finite fills: a fully masked row is uniform
    TORCH + "def f(s, m):\n    pair = m[:, None] & m[None, :]\n"
    "    return F.softmax(s.masked_fill(~pair, -torch.finfo(s.dtype).max), -1)\n",
    TORCH + "def f(s, m):\n    pair = m[:, None] & m[None, :]\n    return F.softmax(s.masked_fill(~pair, -1e9), -1)\n",
    TORCH + "def f(s, m):\n    pair = m[:, None] & m[None, :]\n    return F.softmax(s + (1 - pair.float()) * -1e4, -1)\n",
    TF + "def f(s, m):\n    pair = m[:, None] & m[None, :]\n    return tf.nn.softmax(tf.where(pair, s, s.dtype.min))\n",
    JAX + "def f(s, m):\n    pair = m[:, None] & m[None, :]\n"
    "    return jax.nn.softmax(jnp.where(pair, s, jnp.finfo(s.dtype).min))\n",
    # +inf is not a mask fill; a where keeping -inf-free values
    TORCH + "def f(s, m):\n    pair = m[:, None] & m[None, :]\n    return F.softmax(s.masked_fill(~pair, 0.0), -1)\n",
    # the NaN is repaired after the softmax
    TORCH + "def f(s, m):\n    pair = m[:, None] & m[None, :]\n"
    "    p = F.softmax(s.masked_fill(~pair, float('-inf')), -1)\n    return torch.nan_to_num(p)\n",
    TORCH + "def f(s, m):\n    pair = m[:, None] & m[None, :]\n"
    "    p = F.softmax(s.masked_fill(~pair, float('-inf')), -1)\n    return p.masked_fill(torch.isnan(p), 0.0)\n",
    # a log of the mask kept from 0 (allennlp 0.4.0's fix)
    TORCH + "def f(vector, mask):\n    vector = vector + (mask + 1e-45).log()\n    return F.log_softmax(vector, dim=1)\n",
    # an in-place fill after the softmax
    TORCH + "def f(s, m):\n    pair = m[:, None] & m[None, :]\n    p = F.softmax(s, -1)\n"
    "    s.masked_fill_(~pair, float('-inf'))\n    return p\n",
    # no softmax of the filled scores
    TORCH + "def f(s, m):\n    pair = m[:, None] & m[None, :]\n    return s.masked_fill(~pair, float('-inf')).max(-1)\n",
])
def test_silent(src):
    assert findings(src, may=True) == []


# --- the may tier: a mask the code does not show ---------------------------------------------------------
@pytest.mark.parametrize("src", [
    TORCH + "def f(s, mask):\n    return F.softmax(s.masked_fill(mask == 0, float('-inf')), dim=-1)\n",
    TORCH + "def f(s, make):\n    return F.softmax(s.masked_fill(make(s.shape), float('-inf')), dim=-1)\n",
    TORCH + "class A:\n    def f(self, s):\n        return F.softmax(s.masked_fill(self.mask == 0, float('-inf')), -1)\n",
    JAX + "def f(s, mask):\n    return jax.nn.softmax(jnp.where(mask, s, -jnp.inf))\n",
    # a padding mask of keys empties a row only for a sequence of only padding
    TORCH + "def f(s, key_padding_mask):\n"
    "    s = s.masked_fill(key_padding_mask[:, None, None, :], float('-inf'))\n    return F.softmax(s, -1)\n",
    TORCH + "def f(s, lengths):\n    keep = torch.arange(s.size(-1))[None, :] < lengths[:, None]\n"
    "    return F.log_softmax(torch.where(keep, s, float('-inf')), -1)\n",
    TORCH + "def f(s, attention_mask):\n    t = s.size(-1)\n    causal = torch.tril(torch.ones(t, t)).bool()\n"
    "    keep = causal & attention_mask[:, None, :].bool()\n"
    "    return F.softmax(s.masked_fill(~keep, float('-inf')), -1)\n",
    TF + "def f(labels, logits, lengths):\n    keep = tf.sequence_mask(lengths, tf.shape(logits)[-1])\n"
    "    logits = tf.where(keep, logits, float('-inf'))\n"
    "    return tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)\n",
    # log of a 0/1 mask is -inf where it is 0 (allennlp 0.3.0's masked_log_softmax)
    TORCH + "def f(vector, mask):\n    vector = vector + mask.log()\n    return F.log_softmax(vector, dim=1)\n",
])
def test_may_tier(src):
    assert strong(src) == []
    found = findings(src, may=True)
    assert len(found) == 1 and found[0].may and "weak evidence" in found[0].message


# --- the fixes ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("src,old,new", [
    (TORCH + "def f(s, m):\n    pair = m[:, None] & m[None, :]\n    return s.masked_fill(~pair, float('-inf')).softmax(-1)\n",
     "float('-inf')", "-torch.finfo(s.dtype).max"),
    ("import torch.nn.functional as F\nfrom torch import finfo\n\ndef f(s, m):\n    pair = m[:, None] & m[None, :]\n"
     "    return F.softmax(s.masked_fill(~pair, -float('inf')), -1)\n", "-float('inf')", "-finfo(s.dtype).max"),
    (TORCH + "def f(s, mask):\n    return F.softmax(s + (1 - mask) * float('-inf'), dim=-1)\n",
     "float('-inf')", "(-torch.finfo(s.dtype).max / 2)"),
    (TF + "def f(s, q, k):\n    pair = tf.logical_and(q[:, :, None], k[:, None, :])\n"
     "    return tf.nn.softmax(tf.where(pair, s, -np.inf))\n", "-np.inf", "s.dtype.min"),
    (JAX + "def f(s, m):\n    pair = m[:, None] & m[None, :]\n    return jax.nn.softmax(jnp.where(pair, s, -jnp.inf))\n",
     "-jnp.inf", "jnp.finfo(s.dtype).min"),
    ("import jax\nfrom jax import numpy as np2\n\ndef f(s, m):\n    pair = m[:, None] & m[None, :]\n"
     "    return jax.nn.softmax(np2.where(pair, s, float('-inf')))\n", "float('-inf')", "np2.finfo(s.dtype).min"),
])
def test_fix(src, old, new):
    (found,) = strong(src)
    assert found.fix_applicability == "unsafe"
    fixed = fix(src, select=["NAN402"])
    assert fixed == src.replace(old, new)
    assert lint(fixed, select=["NAN402"], may=True) == []


def test_fix_is_display_only_where_no_finfo_or_no_name_for_the_dtype():
    keras = "from keras import ops\n\ndef f(s, m):\n    pair = ops.logical_and(m[:, None], m[None, :])\n" \
        "    return ops.softmax(ops.where(pair, s, float('-inf')))\n"
    (found,) = strong(keras)
    assert found.fix_applicability == "display-only"
    inline = TORCH + "def f(q, k, m):\n    pair = m[:, None] & m[None, :]\n" \
        "    return torch.where(pair, q @ k.T, float('-inf')).softmax(-1)\n"
    (found,) = strong(inline)
    assert found.fix_applicability == "display-only"


# --- the numbers, in the real frameworks (float32) --------------------------------------------------
SCORES = [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]
MASK = [[True, True, False], [False, False, False]]


def _run(src: str, name: str, *args):
    scope: dict = {}
    exec(compile(textwrap.dedent(src), "example.py", "exec"), scope)
    return np.asarray(scope[name](*args), dtype=np.float64)


def _check(unfixed, fixed):
    assert np.isnan(unfixed[1]).all() and np.isfinite(unfixed[0]).all()
    np.testing.assert_allclose(fixed[0], unfixed[0], rtol=1e-6)
    np.testing.assert_allclose(fixed[1], [1 / 3] * 3, rtol=1e-6)


def test_torch_fully_masked_row_is_nan_and_the_fix_uniform():
    torch = pytest.importorskip("torch")
    src = TORCH + "def f(s, q, k):\n    pair = q[:, None] & k[None, :]\n" \
        "    return torch.softmax(s.masked_fill(~pair, float('-inf')), dim=-1)\n"
    s, m = torch.tensor(SCORES), torch.tensor(MASK)
    q, k = torch.tensor([True, False]), torch.tensor([True, True, False])
    _check(_run(src, "f", s, q, k), _run(fix(src, select=["NAN402"]), "f", s, q, k))
    additive = TORCH + "def f(s, mask):\n    return torch.softmax(s + (1 - mask) * float('-inf'), dim=-1)\n"
    assert np.isnan(_run(additive, "f", s, m.float())).all()  # 0 * -inf at every kept position
    fixed = _run(fix(additive, select=["NAN402"]), "f", s, m.float())
    _check(np.array([[0.2689414, 0.7310586, 0.0], [np.nan] * 3]), fixed)


def test_tensorflow_fully_masked_row_is_nan_and_the_fix_uniform():
    tf = pytest.importorskip("tensorflow")
    src = TF + "def f(s, q, k):\n    pair = tf.logical_and(q[:, None], k[None, :])\n" \
        "    return tf.nn.softmax(tf.where(pair, s, -np.inf))\n"
    s = tf.constant(SCORES)
    q, k = tf.constant([True, False]), tf.constant([True, True, False])
    _check(_run(src, "f", s, q, k), _run(fix(src, select=["NAN402"]), "f", s, q, k))


def test_jax_fully_masked_row_is_nan_and_the_fix_uniform():
    jnp = pytest.importorskip("jax.numpy")
    src = JAX + "def f(s, q, k):\n    pair = q[:, None] & k[None, :]\n" \
        "    return jax.nn.softmax(jnp.where(pair, s, -jnp.inf), axis=-1)\n"
    s = jnp.asarray(SCORES, jnp.float32)
    q, k = jnp.asarray([True, False]), jnp.asarray([True, True, False])
    _check(_run(src, "f", s, q, k), _run(fix(src, select=["NAN402"]), "f", s, q, k))
