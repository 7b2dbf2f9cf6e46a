"""Helpers shared by the division and training-setup rules (NAN3xx-NAN5xx):
division sites in both spellings, structural equality of expressions, literals."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import libcst as cst

from nanlint.vocabulary import ops as o
from nanlint.rules.context import RuleContext
from nanlint.semantic.resolve import Scope
from nanlint.semantic.literals import normalized, same  # noqa: F401 - the rules import them from here


@dataclass
class Division:
    node: cst.BaseExpression  # the ``a / b`` or the divide call
    num: cst.BaseExpression
    den: cst.BaseExpression
    scope: Scope


def divisions(ctx: RuleContext) -> Iterator[Division]:
    """``a / b`` and framework divide calls (``tf.math.divide(a, b)``, ``a.div(b)``)."""
    for node, scope in ctx.index.binops:
        if type(node.operator) is cst.Divide:  # not isinstance: an ABC's miss is slow (no subclass)
            yield Division(node, node.left, node.right, scope)
    for call in ctx.calls(o.DIVIDE):
        if call.x is not None and call.has("y") and "rounding_mode" not in _keywords(call.node):
            yield Division(call.node, call.x, call.value("y"), call.scope)  # type: ignore[arg-type]


def _keywords(node: cst.Call) -> set[str]:
    return {a.keyword.value for a in node.args if a.keyword is not None}


def keyword_arg(node: cst.Call, keyword: str) -> cst.Arg | None:
    for a in node.args:
        if a.keyword is not None and a.keyword.value == keyword:
            return a
    return None


def is_true(expr: cst.BaseExpression | None) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def int_literal(expr: cst.BaseExpression | None) -> int | None:
    """The value of an integer literal (``1``, ``-1``, ``(0)``), else None."""
    if isinstance(expr, cst.Integer):
        return int(expr.evaluated_value)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = int_literal(expr.expression)
        return -inner if inner is not None else None
    return None


def code(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)
