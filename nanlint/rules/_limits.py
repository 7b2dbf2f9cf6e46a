"""The measured thresholds of ``vocabulary/limits.py`` as the messages print them, for the
framework an op belongs to (Keras runs on TensorFlow's kernels)."""

from __future__ import annotations

from nanlint.vocabulary import limits
from nanlint.vocabulary.ops import Framework

_KEY = {"torch": "torch", "tensorflow": "tensorflow", "keras": "tensorflow", "jax": "jax"}


def key(framework: Framework | str | None) -> str:
    name = framework if isinstance(framework, str) or framework is None else framework.name
    return _KEY.get(name or "", "torch")


def value(table: dict, framework: Framework | str | None, dtype: str = limits.FLOAT32) -> float:
    return table[key(framework)][dtype]


def shown(table: dict, framework: Framework | str | None, dtype: str = limits.FLOAT32, sign: int = 1) -> str:
    """``~88.7`` (``~-88.7`` with ``sign=-1``): the threshold in ``framework``, as measured."""
    return f"~{sign * value(table, framework, dtype):g}"
