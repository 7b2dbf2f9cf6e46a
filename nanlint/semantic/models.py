"""Model objects: what calling one returns.

* ``nn.Sequential(..., nn.Sigmoid())`` / ``keras.Sequential([..., Dense(k, activation="softmax")])``:
  the output of its last layer;
* a layer object called on a tensor (``layers.Dense(k, activation="softmax")(h)``,
  ``nn.Softmax(dim=1)(z)``): its activation; a dropout layer (``self.drop(h)``): its
  dropout, or ``h`` itself where the call turns it off (``training=False``,
  ``deterministic=True``);
* keras' functional ``Model(inputs, outputs)``: ``outputs``;
* an instance of a model class of this module (``Net()``, ``self.head = Head()``):
  what its ``forward`` (torch), ``call`` (keras) or ``__call__`` (flax, haiku)
  returns; also through ``model.apply(params, x)`` and ``model.predict(x)``.

A layer stands for its own output: the value reached is the layer's constructor
call, which :func:`activation` names (``nn.Sigmoid()`` -> ``sigmoid``).
"""

from __future__ import annotations


import libcst as cst

from nanlint.vocabulary import frameworks as fw_registry
from nanlint.semantic import definitions
from nanlint.vocabulary import ops as o
from nanlint.semantic.resolve import Scope

from nanlint.semantic.model import Model, OpCall

LAYER_ACTIVATION = {o.SOFTMAX_LAYER: o.SOFTMAX, o.SIGMOID_LAYER: o.SIGMOID, o.LOG_SOFTMAX_LAYER: o.LOG_SOFTMAX,
                    o.DROPOUT_LAYER: o.DROPOUT}
NAMED_ACTIVATION = {"softmax": o.SOFTMAX, "sigmoid": o.SIGMOID, "log_softmax": o.LOG_SOFTMAX}
CALL_METHODS = ("forward", "call", "__call__")
APPLY_METHODS = frozenset({"apply", "predict", "predict_on_batch", "__call__", "forward"})
LAYERS = frozenset(LAYER_ACTIVATION) | {o.DENSE_LAYER, o.ACTIVATION_LAYER}

Output = list[tuple["Model", "cst.BaseExpression", Scope, str]]


def activation(ctx: "Model", layer: "OpCall") -> str | None:
    """The op a layer's output is: ``nn.Sigmoid()`` -> sigmoid, ``Dense(k, activation="softmax")``
    -> softmax (a string or a framework function); None for none of these."""
    if layer.op in LAYER_ACTIVATION:
        return LAYER_ACTIVATION[layer.op]
    if layer.op not in (o.DENSE_LAYER, o.ACTIVATION_LAYER):
        return None
    value = layer.value("activation")
    if isinstance(value, cst.SimpleString):
        return NAMED_ACTIVATION.get(str(value.evaluated_value))
    if isinstance(value, (cst.Name, cst.Attribute)):
        qual = ctx.index.qualname(value, layer.scope)
        entry = fw_registry.function_table().get(qual or "")
        if entry is not None and entry[1].op in NAMED_ACTIVATION.values():
            return entry[1].op
    return None


def output(ctx: "Model", call: cst.Call, scope: Scope) -> Output | None:
    """The values calling a model object gives, or None when ``call`` is not a model call."""
    func = call.func
    obj: cst.BaseExpression = func
    if isinstance(func, cst.Attribute) and func.attr.value in APPLY_METHODS:
        obj = func.value
    out: Output = []
    off = _not_training(call)
    for r in ctx.values(obj, scope, calls=False):
        rctx = r.ctx or ctx
        got = _apply(rctx, r.expr, r.scope, 3)
        if got is None:
            return None
        if off and any(_dropout(octx, e, s) for octx, e, s, _ in got):
            # a dropout layer called with training=False passes its input through; one
            # inside a model so called passes what its previous layer gives: not followed
            if len(got) != 1 or got[0][1] is not r.expr or not call.args or call.args[0].keyword is not None:
                return None
            got = [(ctx, call.args[0].value, scope, "passes it through (not training) on")]
        out += got
    return out or None


def _not_training(call: cst.Call) -> bool:
    """A layer or model call that turns dropout off: ``training=False`` (Keras),
    ``deterministic=True`` (flax), as literals."""
    for a in call.args:
        if a.keyword is not None and isinstance(a.value, cst.Name) and \
                (a.keyword.value, a.value.value) in (("training", "False"), ("deterministic", "True")):
            return True
    return False


def _dropout(ctx: "Model", expr: cst.BaseExpression, scope: Scope) -> bool:
    call = ctx.op_call(expr, scope)
    return call is not None and call.op == o.DROPOUT_LAYER


def _apply(ctx: "Model", model: cst.BaseExpression, scope: Scope, depth: int) -> Output | None:
    """What calling the object built by ``model`` (a constructor call) returns."""
    if depth <= 0 or not isinstance(model, cst.Call):
        return None
    op = ctx.op_call(model, scope)
    if op is not None:
        if op.op in LAYERS:
            return [(ctx, model, scope, "ends in the layer on")] if activation(ctx, op) else None
        if op.op == o.SEQUENTIAL:
            last = _last_layer(op)
            if last is None:
                return None
            out: Output = []
            for r in ctx.values(last, scope, calls=False):
                got = _apply(r.ctx or ctx, r.expr, r.scope, depth - 1)
                if got is None:
                    return None
                out += got
            return out
        if op.op == o.FUNCTIONAL_MODEL and op.has("outputs"):
            return [(ctx, op.value("outputs"), scope, "returns the model's outputs on")]  # type: ignore[list-item]
        return None
    return _instance(ctx, model, scope)


def _last_layer(op: "OpCall") -> cst.BaseExpression | None:
    layers = op.value("layers")
    if layers is None:  # torch: nn.Sequential(a, b, c)
        positional = [a for a in op.node.args if a.keyword is None and not a.star]
        return positional[-1].value if positional and len(positional) == len(op.node.args) else None
    if isinstance(layers, (cst.List, cst.Tuple)) and layers.elements \
            and not isinstance(layers.elements[-1], cst.StarredElement):
        return layers.elements[-1].value
    return None


def _instance(ctx: "Model", model: cst.Call, scope: Scope) -> Output | None:
    """``Net(...)`` of a model class defined in this module (or in a project module:
    ``Net`` imported, ``nets.Net``): its forward/call/__call__ returns."""
    if isinstance(model.func, cst.Attribute):  # nets.Net(): a module of the project imported whole
        node = None
    elif not isinstance(model.func, cst.Name):
        return None
    else:
        found = ctx.index.lookup(model.func.value, scope)
        if found is None or len(found[0]) != 1:
            return None
        node = found[0][0].node
    if not isinstance(node, cst.ClassDef):  # a model class of another module of the project
        elsewhere = definitions.definition(ctx, model.func, scope)
        if elsewhere is None or not isinstance(elsewhere[1], cst.ClassDef):
            return None
        ctx, node = elsewhere
    cls = ctx.index.scopes.get(id(node))
    if cls is None or not _model_class(ctx, cls):
        return None
    for name in CALL_METHODS:
        bindings = cls.bindings.get(name)
        if not bindings:
            continue
        if len(bindings) != 1 or not isinstance(bindings[0].node, cst.FunctionDef):
            return None
        fscope = ctx.index.scopes.get(id(bindings[0].node))
        if fscope is None or fscope.generator or not fscope.returns or any(r.value is None for r in fscope.returns):
            return None
        return [(ctx, r.value, fscope, f"returns it from `{name}` on") for r in fscope.returns]  # type: ignore[misc]
    return None


def _model_class(ctx: "Model", cls: Scope) -> bool:
    """A class deriving from a framework's module/model base (``nn.Module``, ``keras.Model``...)."""
    node = cls.node
    if not isinstance(node, cst.ClassDef) or cls.parent is None:
        return False
    for base in node.bases:
        qual = ctx.index.qualname(base.value, cls.parent)
        entry = fw_registry.function_table().get(qual or "")
        if entry is not None and entry[1].op in o.MODEL_BASES:
            return True
    return False
