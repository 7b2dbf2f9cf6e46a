"""Helpers for the training-setup rules (NAN5xx): which optimizer constructors are
Keras ones, and literal hyperparameters."""

from __future__ import annotations

from nanlint.vocabulary import ops as o
from nanlint.semantic.context import OpCall
from nanlint.rules.context import RuleContext

OPTIMIZER_OPS = (o.OPTIMIZER, o.ADAM_OPTIMIZER)
_KERAS_NAMESPACES = ("keras.optimizers.", "tensorflow.keras.optimizers.", "tensorflow.optimizers.",
                     "tensorflow.compat.v2.keras.optimizers.", "tensorflow.compat.v2.optimizers.",
                     "tensorflow.compat.v1.keras.optimizers.")


def keras_optimizer(call: OpCall) -> bool:
    """A Keras optimizer (``keras.optimizers.Adam``, ``tf.keras.optimizers.SGD``,
    ``tf.optimizers.Adam``), not a TF1 ``tf.train`` one, torch or optax."""
    return call.qualname is not None and call.qualname.startswith(_KERAS_NAMESPACES)


def keras_optimizers(ctx: RuleContext):
    for call in ctx.calls(*OPTIMIZER_OPS):
        if keras_optimizer(call):
            yield call
