"""The exact form of ``log(1 - softmax(z))`` (NAN101's complement fix), built from parts
the rule found: the probability ``p`` as written at the log, the logits ``z``' fused
``log_softmax(z, axis)`` call, and the softmax axis.

``1 - p_i`` is the sum of the other classes' probabilities, so
``log(1 - p_i) = logsumexp_{j != i} log_softmax(z)_j``: exact, but it needs the other
classes of each class.  Only a class with ``p_i > 1/2`` (then the row's unique argmax) can
be near 1; for every other class ``1 - p_i >= 1/2`` and ``log1p(-p_i)`` is accurate.  So,
along the softmax axis::

    where(p > 0.5,
          logsumexp(where(p > 0.5, -inf, log_softmax(z)), axis, keepdims=True),
          log1p(-where(p > 0.5, 0.0, p)))

The inner ``where(p > 0.5, 0.0, p)`` keeps ``log1p(-1)`` out of the branch the outer where
drops (its gradient ``-inf`` times the zero upstream gradient would be NaN: the
double-where rule); the ``-inf`` fill removes the class itself from its own logsumexp and
zeroes that class's gradient there.  ``docs/log1m-softmax.md`` has the measurement
(``scripts/log1m_softmax.py``) and why this form and not ``logsumexp(others of z) -
logsumexp(z)`` or ``log1mexp(log_softmax(z))``.
"""

from __future__ import annotations

import libcst as cst

from nanlint.source.walk import node_types
from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.semantic.context import OpCall
from nanlint.rules.context import RuleContext
from nanlint.semantic.reach import Resolved
from nanlint.semantic.resolve import Scope
from nanlint.semantic.literals import one_minus
from nanlint.source.lines import split_lines

THRESHOLD = "0.5"
NEG_INF = 'float("-inf")'

_ARITHMETIC = ('Add', 'Subtract', 'Multiply', 'Divide', 'Power', 'FloorDivide', 'Modulo')  # libcst class names (node_types)


def complement_of(ctx: RuleContext, expr: cst.BaseExpression | None,
                  scope: Scope) -> tuple[Resolved, cst.BaseExpression, OpCall, Resolved] | None:
    """When ``expr`` (a log's argument) is ``1 - p`` of a softmax ``p``, inline or through
    names: (``1 - p`` as reached, ``p`` as written there, the softmax call, how it was
    reached).  NAN101 reports these logs; NAN107 and NAN109 leave them to it."""
    if expr is None:
        return None
    arg = ctx.resolve(expr, scope, functions=True)
    p = one_minus(arg.expr)
    if p is None:
        return None
    found = (arg.ctx or ctx).op_of(p, arg.scope, o.SOFTMAX)
    if found is None:
        return None
    return arg, p, found[0], found[1]


def repeatable(expr: cst.BaseExpression | None) -> bool:
    """An expression the fix may write several times: names, attributes, numbers, strings,
    and arithmetic, indexing and tuples of those -- no call (a model call would run again,
    a random draw would differ)."""
    if expr is None:
        return False
    if isinstance(expr, (cst.Name, cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(expr, cst.Attribute):
        return repeatable(expr.value)
    if isinstance(expr, cst.UnaryOperation):
        return isinstance(expr.operator, (cst.Minus, cst.Plus)) and repeatable(expr.expression)
    if isinstance(expr, cst.BinaryOperation):
        return isinstance(expr.operator, node_types(*_ARITHMETIC)) and repeatable(expr.left) and repeatable(expr.right)
    if isinstance(expr, cst.Tuple):
        return all(isinstance(el, cst.Element) and repeatable(el.value) for el in expr.elements)
    if isinstance(expr, cst.Subscript):
        return repeatable(expr.value) and all(_index_repeatable(el.slice) for el in expr.slice)
    return False


def _index_repeatable(index: cst.BaseSlice) -> bool:
    if isinstance(index, cst.Index):
        return index.star is None and repeatable(index.value)
    parts = (index.lower, index.upper, index.step)  # type: ignore[attr-defined]
    return all(part is None or repeatable(part) for part in parts)


def default_axis(framework: o.Framework, axis: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """The softmax axis to reduce over: the call's own, or the framework's default (-1 in
    TensorFlow, JAX and Keras; torch has none: its implicit dim is deprecated and depends on
    the rank).  None when it is not known."""
    none = isinstance(axis, cst.Name) and axis.value == "None"
    if axis is not None and not none:
        return axis if repeatable(axis) else None
    if framework.name == "torch" or (none and framework.name != "tensorflow"):
        return None  # JAX/Keras axis=None is every axis (or backend-dependent): keep it out
    return cst.UnaryOperation(cst.Minus(), cst.Integer("1"))


def indent_of(ctx: RuleContext, node: cst.CSTNode) -> str | None:
    """The leading whitespace of the line ``node`` starts on; None inside an f-string
    (where a line break may not parse)."""
    parent = ctx.parent(node)
    while parent is not None:
        if isinstance(parent, cst.FormattedString):
            return None
        parent = ctx.parent(parent)
    lines = ctx.memo("log1m_softmax.lines", lambda: split_lines(ctx.text))
    line = lines[ctx.line_of(node) - 1]
    return line[:len(line) - len(line.lstrip(" \t"))]


def _spelled(ctx: RuleContext, framework: o.Framework, op: str, scope: Scope, prefer,
             positional: list[tuple[str, cst.BaseExpression]],
             keywords: list[tuple[str, cst.BaseExpression]] = ()) -> tuple[cst.Call, list[fixes.Import]] | None:
    """``op(positional..., keyword=...)`` spelled with the file's aliases; None when the
    target does not take a role at its position or by keyword."""
    spelling = ctx.spell(framework, op, scope, prefer=tuple(prefer))
    if spelling is None:
        return None
    func, target, imports = spelling
    args = []
    for i, (role, value) in enumerate(positional):
        if target.position_of(role) != i:
            return None
        args.append(fixes.arg(value))
    for role, value in keywords:
        kw = target.keyword_for(role)
        if kw is None:
            return None
        args.append(fixes.arg(value, kw))
    return fixes.call(func, args), imports


def exact(ctx: RuleContext, framework: o.Framework, scope: Scope, p: cst.BaseExpression,
          log_softmax: cst.BaseExpression, axis: cst.BaseExpression, prefer=(),
          indent: str | None = None) -> tuple[cst.Call, list[fixes.Import]] | None:
    """The exact ``log(1 - p)`` for ``p = softmax(z, axis)`` (``log_softmax`` is
    ``log_softmax(z, axis)`` already spelled), in ``framework`` with the file's aliases.
    ``indent``: the indentation of the line the log starts on; the outer ``where`` then
    puts its three arguments on lines of their own (a one-line form is 150-250 columns)."""

    def mask() -> cst.Comparison:
        return cst.Comparison(p.deep_clone(), [cst.ComparisonTarget(
            cst.GreaterThan(), cst.Float(THRESHOLD))])

    neg_inf = cst.parse_expression(NEG_INF)
    others = _spelled(ctx, framework, o.WHERE, scope, prefer, [("cond", mask()), ("x", neg_inf), ("y", log_softmax)])
    if others is None:
        return None
    lse = _spelled(ctx, framework, o.LOGSUMEXP, scope, prefer, [("x", others[0])],
                   [("axis", axis.deep_clone()), ("keepdims", cst.Name("True"))])
    kept = _spelled(ctx, framework, o.WHERE, scope, prefer, [("cond", mask()), ("x", cst.Float("0.0")),
                                                             ("y", p.deep_clone())])
    if lse is None or kept is None:
        return None
    rest = _spelled(ctx, framework, o.LOG1P, scope, prefer, [("x", fixes.negate(kept[0]))])
    if rest is None:
        return None
    outer = _spelled(ctx, framework, o.WHERE, scope, prefer, [("cond", mask()), ("x", lse[0]), ("y", rest[0])])
    if outer is None:
        return None
    imports: list[fixes.Import] = []
    for part in (others, lse, kept, rest, outer):
        imports.extend(i for i in part[1] if i not in imports)
    call = outer[0] if indent is None else _laid_out(ctx, outer[0], indent)
    return call, imports


def _laid_out(ctx: RuleContext, call: cst.Call, indent: str) -> cst.Call:
    """``call`` with each argument on a line of its own, one indentation step in from
    ``indent``, a trailing comma, and ``)`` back at ``indent`` (explicit whitespace, no
    block indentation: the fix's text is the same in the file and in a JSON edit)."""
    step = ctx.module.default_indent

    def line_break(width: str) -> cst.ParenthesizedWhitespace:
        return cst.ParenthesizedWhitespace(first_line=cst.TrailingWhitespace(), empty_lines=[], indent=False,
                                           last_line=cst.SimpleWhitespace(width))

    args = [a.with_changes(comma=cst.Comma(whitespace_after=line_break(indent + step if i < len(call.args) - 1
                                                                        else indent)))
            for i, a in enumerate(call.args)]
    return call.with_changes(args=args, whitespace_before_args=line_break(indent + step))
