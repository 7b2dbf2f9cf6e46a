"""Where a file shows float16: parameters made float16 (``model.half()``, ``dtype=tf.float16``
variables, ``set_floatx('float16')``, a float16 policy) for NAN504, and float16 compute (any of
those, a ``mixed_float16`` policy, a tensor made or cast float16, ``autocast(dtype=float16)``) for
NAN506; one implementation for both rules."""

from __future__ import annotations

import libcst as cst

from nanlint.semantic.context import OpCall
from nanlint.rules.context import RuleContext
from nanlint.semantic.resolve import Scope
from nanlint.rules._shapes import keyword_arg, normalized

_ROOTS = ("tensorflow", "torch", "jax", "numpy", "keras", "ml_dtypes")
_SET_FLOATX = frozenset({"tensorflow.keras.backend.set_floatx", "keras.backend.set_floatx",
                         "keras.config.set_floatx", "tensorflow.compat.v1.keras.backend.set_floatx"})
_TF_VARIABLES = frozenset({"tensorflow.Variable", "tensorflow.compat.v1.Variable", "tensorflow.compat.v2.Variable",
                           "tensorflow.compat.v1.get_variable"})
_TREE_MAPS = frozenset({"jax.tree_util.tree_map", "jax.tree.map", "jax.tree_map"})
# TF1 placeholders: layers built on a float16 input create float16 variables
_PLACEHOLDERS = frozenset({"tensorflow.placeholder", "tensorflow.compat.v1.placeholder"})
# a global dtype policy: "float16" makes variables float16; "mixed_float16" keeps them float32
# (only the compute is float16, and compile() wraps the optimizer in a LossScaleOptimizer)
_POLICIES = frozenset({"keras.mixed_precision.set_global_policy", "tensorflow.keras.mixed_precision.set_global_policy",
                       "keras.mixed_precision.set_dtype_policy", "keras.config.set_dtype_policy",
                       "tensorflow.keras.mixed_precision.experimental.set_policy"})
# keras layers given dtype="float16": their variables are float16 (an Input's dtype is not:
# the layers after it cast their inputs to their own dtype)
_KERAS_ROOTS = ("keras.layers.", "tensorflow.keras.layers.")


class Float16Evidence:
    """Where the file makes parameters float16."""

    def __init__(self, ctx: RuleContext) -> None:
        self.ctx = ctx
        self.tf_global: str | None = None  # set_floatx / float16 variables
        self.jax_global: str | None = None  # a params pytree cast to float16
        self.torch_global: str | None = None  # torch.set_default_dtype(torch.float16)
        self.torch_models: dict[str, str] = {}  # normalized receiver -> the call that casts it
        for node, scope in ctx.index.calls:
            func = node.func
            qual = ctx.index.qualname(func, scope)
            if qual in _SET_FLOATX and node.args and self.is_float16(node.args[0].value, scope):
                self.tf_global = self.tf_global or f"{ctx.code(node)} on line {ctx.file_line(node)}"
            elif qual in _TF_VARIABLES:
                dtype = keyword_arg(node, "dtype")
                if dtype is not None and self.is_float16(dtype.value, scope):
                    self.tf_global = self.tf_global or f"a float16 variable on line {ctx.file_line(node)}"
            elif qual in _PLACEHOLDERS and self.float16_dtype(node, scope, positional=0):
                self.tf_global = self.tf_global or \
                    f"a float16 placeholder on line {ctx.file_line(node)}: the layers on it make float16 variables"
            elif qual in _POLICIES and node.args and self.is_float16(node.args[0].value, scope):
                self.tf_global = self.tf_global or \
                    (f"{ctx.code(node)} on line {ctx.file_line(node)} makes the variables float16 (unlike "
                     "'mixed_float16', which keeps them float32 and scales the loss in compile())")
            elif qual is not None and qual.startswith(_KERAS_ROOTS) and self.float16_dtype(node, scope):
                self.tf_global = self.tf_global or f"a float16 layer on line {ctx.file_line(node)}"
            elif qual == "torch.set_default_dtype" and node.args and self.is_float16(node.args[0].value, scope):
                self.torch_global = f"{ctx.code(node)} on line {ctx.file_line(node)}"
            elif qual in _TREE_MAPS and any(self.mentions_float16(a.value, scope) for a in node.args):
                self.jax_global = self.jax_global or f"a pytree cast to float16 on line {ctx.file_line(node)}"
            elif isinstance(func, cst.Attribute) and self.casts_to_float16(node, scope):
                self.torch_models.setdefault(normalized(func.value), f"`{ctx.code(node)}` on line {ctx.file_line(node)}")

    def float16_dtype(self, node: cst.Call, scope: Scope, positional: int | None = None) -> bool:
        """``dtype=float16`` (or the dtype at position ``positional``)."""
        dtype = keyword_arg(node, "dtype")
        if dtype is None and positional is not None and len(node.args) > positional \
                and node.args[positional].keyword is None:
            dtype = node.args[positional]
        return dtype is not None and self.is_float16(dtype.value, scope)

    def casts_to_float16(self, node: cst.Call, scope: Scope) -> bool:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return False
        if func.attr.value == "half" and not node.args:
            return True
        if func.attr.value in ("to", "type"):
            return any(self.is_float16(a.value, scope) for a in node.args
                       if a.keyword is None or a.keyword.value in ("dtype", "dst_type"))
        return False

    def is_float16(self, expr: cst.BaseExpression, scope: Scope) -> bool:
        if isinstance(expr, cst.SimpleString):
            return expr.evaluated_value in ("float16", "half")
        qual = self.ctx.index.qualname(expr, scope)
        return qual is not None and qual.split(".")[0] in _ROOTS and qual.rsplit(".", 1)[-1] in ("float16", "half")

    def mentions_float16(self, expr: cst.BaseExpression, scope: Scope) -> bool:
        """Whether an attribute or a string under ``expr`` names float16 (a plain walk: a visitor
        class made per call would be a cycle holding this file's model)."""
        stack: list[cst.CSTNode] = [expr]
        while stack:
            node = stack.pop()
            if isinstance(node, (cst.Attribute, cst.SimpleString)) and self.is_float16(node, scope):
                return True
            stack.extend(node.children)
        return False

    def float16_params(self, call: OpCall) -> str | None:
        name = call.framework.name
        if name in ("tensorflow", "keras"):
            return self.tf_global
        if name == "jax":
            return self.jax_global
        if name != "torch":
            return None
        params = call.node.args[0].value if call.node.args and call.node.args[0].keyword is None else None
        if params is None:
            kw = keyword_arg(call.node, "params")
            params = kw.value if kw is not None else None
        if isinstance(params, cst.Call) and isinstance(params.func, cst.Attribute) \
                and params.func.attr.value in ("parameters", "named_parameters"):
            model = params.func.value
            why = self.torch_models.get(normalized(model))
            if why is not None:
                return why
            value = self.ctx.resolve(model, call.scope).expr  # model = Net().half()
            if isinstance(value, cst.Call) and self.casts_to_float16(value, call.scope):
                return f"`{self.ctx.code(value)}`"
        return self.torch_global

    def compute(self, scope: Scope) -> tuple[str | None, bool]:
        """Whether the code at ``scope`` shows float16 compute (NAN506), and whether that evidence
        is weak (the may tier): a file-wide setting (``set_floatx``, a float16 or mixed_float16
        policy, float16 variables, ``set_default_dtype``, a float16 pytree, ``autocast(dtype=float16)``)
        or a float16 cast in the same function or at module level is strong; a cast in another
        function of the file, or ``autocast``/``GradScaler`` without a dtype, is weak."""
        file_wide, local, aware = self.ctx.memo("float16.compute", self._compute)
        if file_wide is not None:
            return file_wide, False
        here = _function(scope)
        for where, why in local:
            if where is here or where.kind == "module":
                return why, False
        if local:
            return f"{local[0][1]}, in another function", True
        return aware, aware is not None

    def _compute(self):
        ctx = self.ctx
        file_wide = self.tf_global or self.jax_global or self.torch_global
        local: list[tuple[Scope, str]] = []
        aware = None
        for node, scope in ctx.index.calls:
            qual = ctx.index.qualname(node.func, scope) or ""
            last = qual.rsplit(".", 1)[-1]
            if qual in _POLICIES and node.args and isinstance(node.args[0].value, cst.SimpleString) \
                    and node.args[0].value.evaluated_value == "mixed_float16":
                file_wide = file_wide or f"{ctx.code(node)} on line {ctx.file_line(node)} (float16 compute)"
            elif last in ("autocast", "GradScaler") and qual.split(".")[0] == "torch":
                dtype = keyword_arg(node, "dtype")
                enabled = keyword_arg(node, "enabled")
                off = enabled is not None and isinstance(enabled.value, cst.Name) and enabled.value.value == "False"
                if dtype is not None and self.is_float16(dtype.value, scope):
                    file_wide = file_wide or f"`{ctx.code(node)}` on line {ctx.file_line(node)}"
                elif dtype is None and not off:  # ``autocast(enabled=False)`` is a float32 region
                    aware = aware or f"`{ctx.code(node)}` on line {ctx.file_line(node)}"
            elif self.float16_dtype(node, scope) or self.casts_to_float16(node, scope) or \
                    (isinstance(node.func, cst.Attribute) and node.func.attr.value == "astype"
                     and any(self.is_float16(a.value, scope) for a in node.args)):
                local.append((_function(scope), f"a float16 cast on line {ctx.file_line(node)}"))
        return file_wide, local, aware


def _function(scope: Scope) -> Scope:
    """The function (or the module) whose code ``scope`` runs in."""
    s = scope
    while s.parent is not None and s.kind != "function":
        s = s.parent
    return s
