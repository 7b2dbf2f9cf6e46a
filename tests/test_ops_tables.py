"""The table entries for the value-flow ops (layout, comparisons, logic, max/min,
relu/floor/round, uniform draws) and the model/layer constructors: real sources,
parsed by libcst, resolve through ``FileContext`` to the canonical op with its roles."""

from __future__ import annotations

import ast
import textwrap

import libcst as cst
import pytest

from nanlint.vocabulary import ops as o
from nanlint.semantic import sites
from nanlint.semantic.context import FileContext, OpCall
from nanlint.vocabulary.frameworks import function_table

TF = "import tensorflow as tf\n"
TORCH = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
JAX = "import jax\nimport jax.numpy as jnp\nfrom jax import lax\n"
KERAS = "import keras\nfrom keras import ops, layers\n"
EINOPS = "import einops\nfrom einops import rearrange, reduce\n"


def _ctx(src: str) -> FileContext:
    return FileContext(cst.parse_module(textwrap.dedent(src)))


def _last_value(ctx: FileContext) -> cst.BaseExpression:
    stmt = ctx.module.body[-1]
    assert isinstance(stmt, cst.SimpleStatementLine)
    return stmt.body[0].value  # type: ignore[attr-defined]


def resolve(src: str) -> tuple[FileContext, OpCall | None]:
    """The op call of the module's last statement, ``y = <call>``."""
    ctx = _ctx(src)
    return ctx, ctx.op_call(_last_value(ctx), ctx.index.module_scope)


def roles(ctx: FileContext, call: OpCall) -> dict[str, str]:
    out = {role: ctx.code(a.value) for role, a in call.args.items()}
    if call.receiver is not None:
        out["x"] = ctx.code(call.receiver)
    return out


CASES = [
    # --- SHAPE ---------------------------------------------------------------------------
    (TORCH, "y = q.view(-1, k)", o.SHAPE, {"x": "q"}),
    (TORCH, "y = q.reshape(b, -1)", o.SHAPE, {"x": "q"}),
    (TORCH, "y = torch.reshape(q, (b, -1))", o.SHAPE, {"x": "q"}),
    (TORCH, "y = torch.cat([a, b], 1)", o.SHAPE, {"x": "[a, b]", "axis": "1"}),
    (TORCH, "y = torch.stack((a, b), dim=0)", o.SHAPE, {"x": "(a, b)", "axis": "0"}),
    (TORCH, "y = x.squeeze(-1)", o.SHAPE, {"x": "x", "axis": "-1"}),
    (TORCH, "y = torch.unsqueeze(x, 1)", o.SHAPE, {"x": "x", "axis": "1"}),
    (TORCH, "y = x.permute(0, 2, 1).contiguous()", o.SHAPE, {"x": "x.permute(0, 2, 1)"}),
    (TORCH, "y = x.t()", o.SHAPE, {"x": "x"}),
    (TORCH, "y = x.expand_as(z)", o.SHAPE, {"x": "x"}),
    (TORCH, "y = torch.gather(p, 1, idx)", o.SHAPE, {"x": "p", "axis": "1"}),
    (TORCH, "y = p.gather(1, idx)", o.SHAPE, {"x": "p", "axis": "1"}),
    (TORCH, "y = torch.take_along_dim(p, idx, dim=1)", o.SHAPE, {"x": "p", "axis": "1"}),
    (TORCH, "y = x.float()", o.SHAPE, {"x": "x"}),
    (TORCH, "y = x.to(torch.float16)", o.SHAPE, {"x": "x"}),
    (TORCH, "y = x.type(torch.float16)", o.SHAPE, {"x": "x", "dtype": "torch.float16"}),
    (TORCH, "y = x.clone()", o.SHAPE, {"x": "x"}),
    (TF, "y = tf.reshape(x, [-1])", o.SHAPE, {"x": "x"}),
    (TF, "y = tf.concat([a, b], axis=-1)", o.SHAPE, {"x": "[a, b]", "axis": "-1"}),
    (TF, "y = tf.cast(m, tf.float32)", o.SHAPE, {"x": "m", "dtype": "tf.float32"}),
    (TF, "y = tf.compat.v1.Print(x, [x], 'x=')", o.SHAPE, {"x": "x"}),
    (TF, "y = tf.Print(x, [x])", o.SHAPE, {"x": "x"}),
    (TF, "y = tf.debugging.check_numerics(x, 'bad')", o.SHAPE, {"x": "x"}),
    (TF, "y = tf.check_numerics(x, 'bad')", o.SHAPE, {"x": "x"}),
    (TF, "y = tf.boolean_mask(x, m)", o.SHAPE, {"x": "x"}),
    (TF, "y = tf.gather_nd(p, idx)", o.SHAPE, {"x": "p"}),
    (TF, "y = tf.expand_dims(x, dim=1)", o.SHAPE, {"x": "x", "axis": "1"}),
    (TF, "y = tf.keras.backend.cast(x, 'float32')", o.SHAPE, {"x": "x", "dtype": "'float32'"}),
    (JAX, "y = jnp.concatenate([a, b], axis=0)", o.SHAPE, {"x": "[a, b]", "axis": "0"}),
    (JAX, "y = jnp.take_along_axis(p, idx, axis=1)", o.SHAPE, {"x": "p", "axis": "1"}),
    (JAX, "y = jnp.ravel(x)", o.SHAPE, {"x": "x"}),
    (JAX, "y = x.astype(jnp.float16)", o.SHAPE, {"x": "x", "dtype": "jnp.float16"}),
    (JAX, "y = lax.convert_element_type(x, jnp.float32)", o.SHAPE, {"x": "x", "dtype": "jnp.float32"}),
    (KERAS, "y = ops.reshape(x, (-1,))", o.SHAPE, {"x": "x"}),
    (KERAS, "y = keras.ops.stack([a, b])", o.SHAPE, {"x": "[a, b]"}),
    (KERAS, "y = ops.cast(x, 'float16')", o.SHAPE, {"x": "x", "dtype": "'float16'"}),
    # --- comparisons -------------------------------------------------------------------------
    (TF, "y = tf.not_equal(x, 0.)", o.NOT_EQUAL, {"x": "x", "y": "0."}),
    (TF, "y = tf.math.greater(x, t)", o.GREATER, {"x": "x", "y": "t"}),
    (TF, "y = tf.compat.v1.less_equal(x, t)", o.LESS_EQUAL, {"x": "x", "y": "t"}),
    (TF, "y = tf.keras.backend.equal(x, 0)", o.EQUAL, {"x": "x", "y": "0"}),
    (TORCH, "y = x.ne(0)", o.NOT_EQUAL, {"x": "x", "y": "0"}),
    (TORCH, "y = x.gt(0.5)", o.GREATER, {"x": "x", "y": "0.5"}),
    (TORCH, "y = torch.eq(a, b)", o.EQUAL, {"x": "a", "y": "b"}),
    (TORCH, "y = torch.greater_equal(a, b)", o.GREATER_EQUAL, {"x": "a", "y": "b"}),
    (TORCH, "y = x.less(t)", o.LESS, {"x": "x", "y": "t"}),
    (JAX, "y = jnp.not_equal(m, 0)", o.NOT_EQUAL, {"x": "m", "y": "0"}),
    (JAX, "y = lax.ge(a, b)", o.GREATER_EQUAL, {"x": "a", "y": "b"}),
    (KERAS, "y = ops.less(a, b)", o.LESS, {"x": "a", "y": "b"}),
    # --- logic -------------------------------------------------------------------------------
    (TF, "y = tf.logical_and(a, b)", o.LOGICAL_AND, {"x": "a", "y": "b"}),
    (TF, "y = tf.math.logical_not(a)", o.LOGICAL_NOT, {"x": "a"}),
    (TORCH, "y = a.logical_or(b)", o.LOGICAL_OR, {"x": "a", "y": "b"}),
    (JAX, "y = jnp.logical_or(a, b)", o.LOGICAL_OR, {"x": "a", "y": "b"}),
    (KERAS, "y = ops.logical_not(a)", o.LOGICAL_NOT, {"x": "a"}),
    # --- max / min ---------------------------------------------------------------------------
    (TF, "y = tf.reduce_max(x, axis=1, keepdims=True)", o.REDUCE_MAX, {"x": "x", "axis": "1", "keepdims": "True"}),
    (TF, "y = tf.reduce_min(x, reduction_indices=[1])", o.REDUCE_MIN, {"x": "x", "axis": "[1]"}),
    (TORCH, "y = torch.max(x, 1, keepdim=True)", o.REDUCE_MAX, {"x": "x", "axis": "1", "keepdims": "True"}),
    (TORCH, "y = x.amax(-1)", o.REDUCE_MAX, {"x": "x", "axis": "-1"}),
    (TORCH, "y = x.min(dim=0)", o.REDUCE_MIN, {"x": "x", "axis": "0"}),
    # torch.max(a, b) of a tensor b is the elementwise maximum (a name may be a dimension)
    (TORCH, "y = torch.max(d, torch.tensor(c))", o.MAXIMUM, {"x": "d", "y": "torch.tensor(c)"}),
    (TORCH, "y = torch.min(a, b * 0.5)", o.MINIMUM, {"x": "a", "y": "b * 0.5"}),
    (TORCH, "y = torch.max(a, other=b)", o.MAXIMUM, {"x": "a", "y": "b"}),
    (TORCH, "y = d.max(torch.zeros_like(d))", o.MAXIMUM, {"x": "d", "y": "torch.zeros_like(d)"}),
    (TORCH, "y = torch.max(x, dim)", o.REDUCE_MAX, {"x": "x", "axis": "dim"}),
    (TORCH, "y = x.max(len(s) - 1)", o.REDUCE_MAX, {"x": "x", "axis": "len(s) - 1"}),
    (TORCH, "y = x.max(x.dim() - 1)", o.REDUCE_MAX, {"x": "x", "axis": "x.dim() - 1"}),
    (JAX, "y = jnp.max(x, axis=-1, keepdims=True)", o.REDUCE_MAX, {"x": "x", "axis": "-1", "keepdims": "True"}),
    (JAX, "y = jnp.amin(x)", o.REDUCE_MIN, {"x": "x"}),
    (KERAS, "y = ops.max(x, axis=-1)", o.REDUCE_MAX, {"x": "x", "axis": "-1"}),
    # --- relu / floor / round ----------------------------------------------------------------
    (TF, "y = tf.nn.relu(h)", o.RELU, {"x": "h"}),
    (TF, "y = tf.nn.relu6(h)", o.RELU, {"x": "h"}),
    (TORCH, "y = F.relu(h)", o.RELU, {"x": "h"}),
    (TORCH, "y = torch.relu(h)", o.RELU, {"x": "h"}),
    (TORCH, "y = F.relu6(h, inplace=True)", o.RELU, {"x": "h"}),
    (TORCH, "y = h.relu()", o.RELU, {"x": "h"}),
    (JAX, "y = jax.nn.relu(h)", o.RELU, {"x": "h"}),
    ("import flax.linen as nn\n", "y = nn.relu(h)", o.RELU, {"x": "h"}),
    (KERAS, "y = ops.relu6(h)", o.RELU, {"x": "h"}),
    (TF, "y = tf.floor(x)", o.FLOOR, {"x": "x"}),
    (TF, "y = tf.math.round(x)", o.ROUND, {"x": "x"}),
    (TORCH, "y = x.floor()", o.FLOOR, {"x": "x"}),
    (TORCH, "y = torch.round(x, decimals=2)", o.ROUND, {"x": "x"}),
    (JAX, "y = jnp.floor(x)", o.FLOOR, {"x": "x"}),
    (JAX, "y = jnp.round(x)", o.ROUND, {"x": "x"}),
    (KERAS, "y = ops.round(x)", o.ROUND, {"x": "x"}),
    # --- uniform draws -----------------------------------------------------------------------
    (TORCH, "y = torch.rand(3, 4)", o.RANDOM_UNIFORM, {}),
    (TORCH, "y = torch.rand_like(x)", o.RANDOM_UNIFORM, {}),
    (TF, "y = tf.random.uniform([3], minval=-1., maxval=1.)", o.RANDOM_UNIFORM, {"lo": "-1.", "hi": "1."}),
    (TF, "y = tf.random_uniform([3], 0, 1)", o.RANDOM_UNIFORM, {"lo": "0", "hi": "1"}),
    (JAX, "y = jax.random.uniform(key, (3,), minval=1e-6, maxval=1.)", o.RANDOM_UNIFORM,
     {"lo": "1e-6", "hi": "1."}),
    (KERAS, "y = keras.random.uniform((3,), minval=0.1)", o.RANDOM_UNIFORM, {"lo": "0.1"}),
    # --- dropout: rate (dropped), keep_prob (TF1: kept), training / deterministic ---------------
    (TORCH, "y = F.dropout(h, 0.1, training=self.training)", o.DROPOUT,
     {"x": "h", "rate": "0.1", "training": "self.training"}),
    (TORCH, "y = F.dropout2d(h, p=0.2)", o.DROPOUT, {"x": "h", "rate": "0.2"}),
    (TORCH, "y = torch.dropout(h, p, True)", o.DROPOUT, {"x": "h", "rate": "p", "training": "True"}),
    (TF, "y = tf.nn.dropout(h, rate=0.1)", o.DROPOUT, {"x": "h", "rate": "0.1"}),
    (TF, "y = tf.nn.dropout(h, keep_prob=kp)", o.DROPOUT, {"x": "h", "keep_prob": "kp"}),
    (TF, "y = tf.compat.v1.nn.dropout(h, kp)", o.DROPOUT, {"x": "h", "keep_prob": "kp"}),
    (TF, "y = tf.keras.backend.dropout(h, 0.5)", o.DROPOUT, {"x": "h", "rate": "0.5"}),
    (KERAS, "y = keras.random.dropout(h, 0.5, seed=1)", o.DROPOUT, {"x": "h", "rate": "0.5"}),
    ("import haiku as hk\n", "y = hk.dropout(rng, 0.1, h)", o.DROPOUT, {"x": "h", "rate": "0.1"}),
    (TORCH, "y = nn.Dropout(p=0.1)", o.DROPOUT_LAYER, {"rate": "0.1"}),
    (TORCH, "y = nn.Dropout2d(0.2)", o.DROPOUT_LAYER, {"rate": "0.2"}),
    (KERAS, "y = layers.Dropout(0.1)", o.DROPOUT_LAYER, {"rate": "0.1"}),
    (KERAS, "y = layers.SpatialDropout1D(rate)", o.DROPOUT_LAYER, {"rate": "rate"}),
    (TF, "y = tf.keras.layers.Dropout(rate=0.3, seed=1)", o.DROPOUT_LAYER, {"rate": "0.3"}),
    ("import flax.linen as nn\n", "y = nn.Dropout(0.5, deterministic=not train)", o.DROPOUT_LAYER,
     {"rate": "0.5", "deterministic": "not train"}),
    ("from flax import nnx\n", "y = nnx.Dropout(0.5, rngs=rngs)", o.DROPOUT_LAYER, {"rate": "0.5"}),
    # --- models and layers -------------------------------------------------------------------
    (TORCH, "y = nn.Softmax(dim=-1)", o.SOFTMAX_LAYER, {"axis": "-1"}),
    (TORCH, "y = nn.LogSoftmax(1)", o.LOG_SOFTMAX_LAYER, {"axis": "1"}),
    (TORCH, "y = nn.Sigmoid()", o.SIGMOID_LAYER, {}),
    (KERAS, "y = layers.Dense(k, activation='softmax')", o.DENSE_LAYER, {"activation": "'softmax'"}),
    (KERAS, "y = layers.Dense(1, 'sigmoid')", o.DENSE_LAYER, {"activation": "'sigmoid'"}),
    (TF, "y = tf.keras.layers.Dense(k, activation=tf.nn.softmax, use_bias=False)", o.DENSE_LAYER,
     {"activation": "tf.nn.softmax"}),
    (KERAS, "y = layers.Conv2D(8, 3, activation='relu')", o.DENSE_LAYER, {"activation": "'relu'"}),
    (KERAS, "y = layers.Softmax(axis=1)", o.SOFTMAX_LAYER, {"axis": "1"}),
    # --- einops: layout, and a reduction by the name it is given -----------------------------
    (EINOPS, "y = rearrange(x, 'b i -> b i 1')", o.SHAPE, {"x": "x"}),
    (EINOPS, "y = einops.repeat(x, 'b d -> b n d', n=4)", o.SHAPE, {"x": "x"}),
    (EINOPS, "y = reduce(x ** 2, 'b n d -> b n', 'sum')", o.SUM, {"x": "x ** 2"}),
    (EINOPS, "y = einops.reduce(h, 'b n d -> b d', reduction='mean')", o.MEAN, {"x": "h"}),
    (EINOPS, "y = reduce(h, 'b (n p) -> b n', 'max', p=2)", o.REDUCE_MAX, {"x": "h"}),
    (EINOPS, "y = reduce(h, 'b n -> b', agg)", o.REDUCE, {"x": "h", "reduction": "agg"}),
    (EINOPS, "y = einops.einsum(q, k, 'b i d, b j d -> b i j')", o.EINSUM, {}),
    (KERAS, "y = layers.Activation('sigmoid')", o.ACTIVATION_LAYER, {"activation": "'sigmoid'"}),
    (KERAS, "y = keras.Sequential([layers.Dense(1)])", o.SEQUENTIAL, {"layers": "[layers.Dense(1)]"}),
    (TF, "y = tf.keras.models.Sequential(layers=[d])", o.SEQUENTIAL, {"layers": "[d]"}),
    (TF, "y = tf.keras.Model(inputs=inp, outputs=out)", o.FUNCTIONAL_MODEL, {"inputs": "inp", "outputs": "out"}),
    (KERAS, "y = keras.models.Model(inp, out)", o.FUNCTIONAL_MODEL, {"inputs": "inp", "outputs": "out"}),
    ("import flax.linen as nn\n", "y = nn.Sequential([nn.Dense(4), nn.relu])", o.SEQUENTIAL,
     {"layers": "[nn.Dense(4), nn.relu]"}),
    ("import haiku as hk\n", "y = hk.Sequential([hk.Linear(4), jax.nn.relu])", o.SEQUENTIAL,
     {"layers": "[hk.Linear(4), jax.nn.relu]"}),
]


@pytest.mark.parametrize("header, line, op, expected", CASES, ids=[c[1] for c in CASES])
def test_spelling_resolves_to_op_and_roles(header, line, op, expected):
    ctx, call = resolve(header + line + "\n")
    assert call is not None, line
    assert call.op == op
    assert roles(ctx, call) == expected


def test_torch_sequential_layers_are_its_positional_args():
    ctx, call = resolve(TORCH + "y = nn.Sequential(nn.Linear(d, 1), nn.Sigmoid())\n")
    assert call is not None and call.op == o.SEQUENTIAL
    assert call.args == {}  # varargs: no role, the layers are node.args
    last = ctx.op_call(call.node.args[-1].value, ctx.index.module_scope)
    assert last is not None and last.op == o.SIGMOID_LAYER


@pytest.mark.parametrize("src, op", [
    ("import torch.nn as nn\nclass Net(nn.Module):\n    pass\n", o.MODULE_BASE),
    ("from torch import nn\nclass Net(nn.Module):\n    pass\n", o.MODULE_BASE),
    ("import tensorflow as tf\nclass Net(tf.keras.Model):\n    pass\n", o.FUNCTIONAL_MODEL),
    ("import tensorflow as tf\nclass Block(tf.keras.layers.Layer):\n    pass\n", o.MODULE_BASE),
    ("import tensorflow as tf\nclass Net(tf.Module):\n    pass\n", o.MODULE_BASE),
    ("import keras\nclass Net(keras.Model):\n    pass\n", o.FUNCTIONAL_MODEL),
    ("from keras import layers\nclass Block(layers.Layer):\n    pass\n", o.MODULE_BASE),
    ("import keras\nclass Block(keras.Layer):\n    pass\n", o.MODULE_BASE),
    ("import flax.linen as nn\nclass Net(nn.Module):\n    pass\n", o.MODULE_BASE),
    ("import haiku as hk\nclass Net(hk.Module):\n    pass\n", o.MODULE_BASE),
])
def test_class_bases_resolve_through_the_function_table(src, op):
    ctx = _ctx(src)
    cls = ctx.module.body[-1]
    assert isinstance(cls, cst.ClassDef)
    qual = ctx.index.qualname(cls.bases[0].value, ctx.index.module_scope)
    assert qual is not None
    _, f = function_table()[qual]
    assert f.op == op and f.op in o.MODEL_BASES


@pytest.mark.parametrize("src", [
    TORCH + "y = torch.equal(a, b)\n",         # a Python bool, not elementwise
    "import numpy as np\ny = x.view(-1)\n",    # methods only where torch is imported
    KERAS + "y = keras.activations.relu(h, negative_slope=0.1)\n",  # may be leaky: not RELU
    TF + "y = tf.print(x)\n",                  # tf.print (TF2) returns no tensor, unlike tf.Print
    # alpha dropout's dropped value is not 0, nor is Gaussian dropout's noise a mask
    TORCH + "y = F.alpha_dropout(h, 0.1, training=True)\n",
    TORCH + "y = nn.AlphaDropout(0.1)\n",
    KERAS + "y = layers.AlphaDropout(0.1)\n",
    KERAS + "y = layers.GaussianDropout(0.1)\n",
])
def test_not_the_op(src):
    assert resolve(src)[1] is None


def test_torch_type_without_dtype_is_told_apart_by_its_dtype_role():
    _, call = resolve(TORCH + "y = x.type()\n")  # returns a str such as 'torch.FloatTensor'
    assert call is not None and call.op == o.SHAPE and not call.has("dtype")


@pytest.mark.parametrize("header, line, op, expected", CASES, ids=[c[1] for c in CASES])
def test_site_filter_sees_every_new_spelling(header, line, op, expected):
    """sites.scan over-approximates resolution: a file with the op is never skipped."""
    text = header + line + "\n"
    present = sites.scan(ast.parse(text), text, frozenset({op}), lambda found: op in found)
    assert op in present


def test_new_ops_and_roles_are_in_the_vocabulary():
    for name in ("SHAPE", "EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL",
                 "LOGICAL_AND", "LOGICAL_OR", "LOGICAL_NOT", "REDUCE_MAX", "REDUCE_MIN", "RELU", "FLOOR",
                 "ROUND", "RANDOM_UNIFORM", "SEQUENTIAL", "FUNCTIONAL_MODEL", "SOFTMAX_LAYER", "SIGMOID_LAYER",
                 "LOG_SOFTMAX_LAYER", "DENSE_LAYER", "ACTIVATION_LAYER", "MODULE_BASE", "DROPOUT", "DROPOUT_LAYER"):
        assert getattr(o, name) == name.lower() and name.lower() in o.ALL_OPS
    assert {"activation", "inputs", "outputs", "layers", "rate", "keep_prob", "training", "deterministic"} <= o.ROLES
    assert o.DROPOUT in o.DRAWS and o.DROPOUT_LAYER in o.CONSTRUCTORS


def test_every_torch_method_of_the_table_is_a_tensor_method():
    """The torch table's method names (in-place forms included) exist on torch.Tensor."""
    torch = pytest.importorskip("torch")
    from nanlint.vocabulary.frameworks import torch as torch_table

    missing = sorted(name for name in torch_table.METHODS if not hasattr(torch.Tensor, name))
    assert missing == []
