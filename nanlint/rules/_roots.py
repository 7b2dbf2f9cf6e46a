"""Shared detection of issue 24's roots and variances: a variance under a root (NAN202), a
clamp at 0 of a sum of squared differences under a root (NAN206, and so not NAN110's), and
the two cancellations of NAN207: the variance ``mean(x * x) - mean(x) ** 2`` and the squared
distance by expansion ``|x|^2 + |y|^2 - 2 x.y``."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from nanlint.analysis.guards import constant, default_value, terms
from nanlint.semantic.context import OpCall
from nanlint.vocabulary import ops as o
from nanlint.rules.context import RuleContext
from nanlint.semantic.navigation import enclosing, stored, variable_names_in
from nanlint.semantic.reach import via_call
from nanlint.semantic.resolve import Scope
from nanlint.source.walk import node_types
from nanlint.rules._gradient_traps import binop, euclidean_norm, follow, is_difference, is_op, key, square_base, sum_of_squares


def variance(ctx: RuleContext, expr: cst.BaseExpression, scope: Scope) -> str | None:
    """What ``expr`` is when it is a variance over an axis (exactly 0 on a constant row): the
    framework's variance op (``x.var()``, ``tf.math.reduce_variance``, ``jnp.var``), or a
    hand-written mean of squared deviations from the mean, ``((x - x.mean()) ** 2).mean()``,
    ``mean(square(x - mu))`` with ``mu = mean(x)``; None otherwise."""
    expr, scope = follow(ctx, expr, scope)
    call = ctx.op_call(expr, scope)
    if call is None or call.x is None:
        return None
    if call.op == o.VARIANCE:
        return "a variance"
    if call.op != o.MEAN:
        return None
    inner, s = follow(ctx, call.x, scope)
    base = square_base(ctx, inner, s)
    if base is None:
        return None
    if not deviation(ctx, base, s):
        return None  # a mean squared error: the two sides are not a value and its mean
    return "a mean of squared deviations (a variance)"


def deviation(ctx: RuleContext, expr: cst.BaseExpression, scope: Scope) -> bool:
    """``x - mean(x)`` (through names): a deviation from the mean, 0 on a constant row."""
    expr, scope = follow(ctx, expr, scope)
    d = binop(ctx.arithmetic(expr, scope), cst.Subtract)
    if d is None:
        return False
    mu, mu_scope = follow(ctx, d.right, scope)
    mean = is_op(ctx, mu, mu_scope, o.MEAN)
    return mean is not None and key(ctx, mean.x) == key(ctx, d.left)


def zero_upstream(ctx: RuleContext, root: cst.BaseExpression, scope: Scope) -> bool:
    """Whether the gradient reaching ``root`` (a std, a root of a variance) is 0 on a
    constant row: its value (plus an epsilon or not), or the local name it is assigned to
    at every read, is only the denominator of a deviation from the mean, ``(x - mean(x)) /
    (root + eps)``, whose derivative in the denominator is 0 there (a LayerNorm). Where a
    framework's sqrt gradient of a 0 upstream gradient is 0 (TensorFlow), that is finite."""
    if _denominator_of_deviation(ctx, root, scope):
        return True
    reads = _local_reads(ctx, _plus_eps(ctx, root, scope))
    return bool(reads) and all(_denominator_of_deviation(ctx, n, scope) for n in reads)


def _local_reads(ctx: RuleContext, value: cst.BaseExpression) -> list[cst.Name] | None:
    """When ``value`` is the whole right side of ``name = value`` in a function: the reads of
    ``name`` in that function's body (:func:`variable_names_in`: attribute, keyword and
    definition names are not reads); None when it is not, or at module or class level (an
    attribute can be read from anywhere)."""
    parent = ctx.parent(value)
    if not (isinstance(parent, cst.Assign) and parent.value is value and len(parent.targets) == 1
            and isinstance(parent.targets[0].target, cst.Name)):
        return None
    fdef = enclosing(ctx, parent, (cst.FunctionDef, cst.ClassDef, cst.Lambda))
    if not isinstance(fdef, cst.FunctionDef):
        return None
    name = parent.targets[0].target.value
    return [n for n in variable_names_in(ctx, fdef.body).get(name, ()) if not stored(ctx, n)]


def _plus_eps(ctx: RuleContext, node: cst.BaseExpression, scope: Scope) -> cst.BaseExpression:
    """``node + eps`` (a positive constant) when that is what ``node`` is part of, else ``node``."""
    parent = ctx.parent(node)
    if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Add):
        other = parent.right if parent.left is node else parent.left
        if (constant(ctx, other, scope) or 0.0) > 0.0:
            return parent
    return node


def _denominator_of_deviation(ctx: RuleContext, node: cst.BaseExpression, scope: Scope) -> bool:
    value = _plus_eps(ctx, node, scope)
    parent = ctx.parent(value)
    return isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Divide) \
        and parent.right is value and deviation(ctx, parent.left, scope)


def epsilon_after_root(ctx: RuleContext, root: cst.BaseExpression, scope: Scope) -> cst.BaseExpression | None:
    """The positive constant the code adds to a root's result, or floors it with, where it
    uses it (``sqrt(s) + eps``, ``maximum(sqrt(s), eps)``, ``clamp(norm, min=eps)``; directly or
    at a read of the local name it is assigned to): the author's own word that the root
    reaches 0, where its gradient is inf whatever is added after it. None when there is none."""
    found = _floor_of(ctx, root, scope)
    if found is not None:
        return found
    for n in _local_reads(ctx, root) or ():
        found = _floor_of(ctx, n, scope)
        if found is not None:
            return found
    return None


def _positive(ctx: RuleContext, expr: cst.BaseExpression | None, scope: Scope) -> bool:
    """An epsilon: a constant (or a parameter's default) in (0, 1); ``1 + sqrt(s)`` is an offset
    for a log, not a guard against 0 (as :func:`nanlint.analysis.guards.guarded` reads one)."""
    value = constant(ctx, expr, scope)
    if value is None:
        value = default_value(ctx, expr, scope)
    return value is not None and 0.0 < value < 1.0


def _floor_of(ctx: RuleContext, node: cst.BaseExpression, scope: Scope) -> cst.BaseExpression | None:
    """The positive constant in ``node + eps`` or ``maximum(node, eps)`` / ``clamp(node, min=eps)``."""
    parent = ctx.parent(node)
    if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Add):
        other = parent.right if parent.left is node else parent.left
        return other if _positive(ctx, other, scope) else None
    if isinstance(parent, cst.Attribute) and parent.value is node:  # n.clamp(min=eps): the receiver
        holder = ctx.parent(parent)
        call = ctx.op_call(holder, scope) if isinstance(holder, cst.Call) and holder.func is parent else None
    else:
        arg = parent if isinstance(parent, cst.Arg) else None
        holder = ctx.parent(arg) if arg is not None else None
        call = ctx.op_call(holder, scope) if isinstance(holder, cst.Call) else None
    if call is not None and call.op == o.CLIP and call.x is node and _positive(ctx, call.value("lo"), scope):
        return call.value("lo")
    if call is not None and call.op == o.MAXIMUM:
        for mine, floor in (("x", "y"), ("y", "x")):
            if call.value(mine) is node and _positive(ctx, call.value(floor), scope):
                return call.value(floor)
    return None


def clamped_distance(ctx: RuleContext, expr: cst.BaseExpression, scope: Scope) -> str | None:
    """When ``expr`` is a clamp at 0 (``clamp(min=0)``, ``maximum(d2, 0)``) of a sum of
    squared differences, which is exactly 0 for coinciding points whatever the clamp does:
    what it clamps; None otherwise."""
    expr, scope = follow(ctx, expr, scope)
    call = is_op(ctx, expr, scope, o.CLIP, o.MAXIMUM)
    if call is None:
        return None
    clamped = None
    if call.op == o.CLIP and constant(ctx, call.value("lo"), scope) == 0.0:
        clamped = call.x
    elif call.op == o.MAXIMUM:
        for zero, other in (("x", "y"), ("y", "x")):
            if constant(ctx, call.value(zero), scope) == 0.0:
                clamped = call.value(other)
    if clamped is None:
        return None
    inner, s = follow(ctx, clamped, scope)
    squares = sum_of_squares(ctx, inner, s)
    if squares is not None and squares[1] is not None and is_difference(ctx, squares[1], s):
        return "a sum of squared differences"
    return None


@dataclass
class Cancellation:
    """``mean(x * x) - mean(x) ** 2``: the difference, ``x``, and the two means; or the two sums
    of ``sum(x * x) / n - (sum(x) / n) ** 2``, with their common count ``n``."""

    node: cst.BaseExpression
    scope: Scope
    x: cst.BaseExpression
    second: OpCall  # mean(x * x), or sum(x * x)
    first: OpCall  # mean(x), or sum(x)
    count: cst.BaseExpression | None = None  # n of sum(..) / n; None for the mean ops


def _summed(ctx: RuleContext, expr: cst.BaseExpression, scope: Scope):
    """``expr`` followed through names and sums across replicas (``lax.psum(s, 'batch')``,
    ``ctx.all_reduce(SUM, s)``): a sum over devices of a sum is a sum of the same values."""
    expr, scope = follow(ctx, expr, scope)
    for _ in range(3):
        call = is_op(ctx, expr, scope, o.ALL_REDUCE)
        if call is None or call.value("value") is None:
            break
        expr, scope = follow(ctx, call.value("value"), call.scope)
    return expr, scope


def _a_mean(ctx: RuleContext, expr: cst.BaseExpression, scope: Scope):
    """(x, the reduction, the count or None) of ``mean(x)`` or of a sum over a count,
    ``sum(x) / n`` (the sum possibly summed across replicas first); None otherwise."""
    call = is_op(ctx, expr, scope, o.MEAN)
    if call is not None:
        return (call.x, call, None) if call.x is not None else None
    d = binop(ctx.arithmetic(expr, scope), cst.Divide)
    if d is None:
        return None
    total, s = _summed(ctx, d.left, scope)
    call = is_op(ctx, total, s, o.SUM)
    return (call.x, call, d.right) if call is not None and call.x is not None else None


def means_of(ctx: RuleContext, expr: cst.BaseExpression, scope: Scope, x: cst.BaseExpression) -> bool:
    """Whether a value reaching ``expr`` is a mean of ``x`` (``mean(x)``, ``sum(x) / n``)."""
    return any((m := _a_mean(ctx, r.expr, r.scope)) is not None and key(ctx, m[0]) == key(ctx, x)
               for r in ctx.values(expr, scope))


def _mean_of(ctx: RuleContext, expr: cst.BaseExpression, scope: Scope, squared_inside: bool):
    """(base, reduction, count) of ``mean(b * b)`` or ``sum(b * b) / n`` (``squared_inside``),
    or of ``mean(b) ** 2``, ``(sum(b) / n) ** 2``."""
    expr, scope = follow(ctx, expr, scope)
    if squared_inside:
        found = _a_mean(ctx, expr, scope)
        if found is None:
            return None
        inner, s = follow(ctx, found[0], found[1].scope)
        base = square_base(ctx, inner, s)
        return (base, found[1], found[2]) if base is not None else None
    base = square_base(ctx, expr, scope)
    if base is None:
        return None
    inner, s = follow(ctx, base, scope)
    return _a_mean(ctx, inner, s)


def cancellation(ctx: RuleContext, expr: cst.BaseExpression, scope: Scope) -> Cancellation | None:
    """``E[x^2] - E[x]^2`` written as such: ``mean(x * x) - mean(x) ** 2``,
    ``mean(square(x)) - square(mean(x))``, ``x.pow(2).mean() - x.mean().pow(2)``, or with sums
    over one count, ``sum(x * x) / n - (sum(x) / n) ** 2`` (a cross-replica batch norm's), through names."""
    d = binop(ctx.arithmetic(expr, scope), cst.Subtract)
    if d is None:
        return None
    second = _mean_of(ctx, d.left, scope, True)
    first = _mean_of(ctx, d.right, scope, False) if second is not None else None
    if first is None or key(ctx, second[0]) != key(ctx, first[0]) or key(ctx, second[2]) != key(ctx, first[2]):
        return None
    return Cancellation(expr, scope, first[0], second[1], first[1], first[2])


# --- the squared distance by expansion ----------------------------------------------------------
PRODUCTS = frozenset({o.MATMUL, o.DOT, o.TENSORDOT, o.EINSUM})  # the cross term x.y
_TRANSPOSES = ("T", "mT", "H", "mH")  # attributes: the same values, transposed


@dataclass
class Expansion:
    """``|x|^2 + |y|^2 - 2 x.y``: the sum, the two squared norms and the cross term (as
    written), and the framework of the ops that compute them."""

    node: cst.BaseExpression
    scope: Scope
    norms: tuple[cst.BaseExpression, cst.BaseExpression]
    cross: cst.BaseExpression
    framework: o.Framework


def _flat(ctx: RuleContext, expr: cst.BaseExpression, scope: Scope, depth: int = 2):
    """The signed terms of a sum, a term that is a name bound to a sum expanded (``d = a + b;
    d - c``): (sign, term, scope)."""
    out = []
    for sign, t in terms(expr, ctx, scope):
        f, s = follow(ctx, t, scope)
        if depth > 0 and f is not t and binop(ctx.arithmetic(f, s), cst.Add, cst.Subtract) is not None:
            out += [(sign * g, tt, ss) for g, tt, ss in _flat(ctx, f, s, depth - 1)]
        else:
            out.append((sign, t, scope))
    return out


def _scaled(ctx: RuleContext, expr: cst.BaseExpression, scope: Scope, depth: int = 4):
    """(constant factor, the rest, its scope) of ``c * e``, ``e * c``, ``-e`` (through names)."""
    expr, scope = follow(ctx, expr, scope)
    expr = ctx.arithmetic(expr, scope)
    if depth > 0 and isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        k, rest, s = _scaled(ctx, expr.expression, scope, depth - 1)
        return -k, rest, s
    b = binop(expr, cst.Multiply)
    if depth > 0 and b is not None:
        for c, other in ((b.left, b.right), (b.right, b.left)):
            k = constant(ctx, c, scope)
            if k is not None:
                k2, rest, s = _scaled(ctx, other, scope, depth - 1)
                return k * k2, rest, s
    return 1.0, expr, scope


def _product(ctx: RuleContext, expr: cst.BaseExpression, scope: Scope):
    """(factor, [a, b], scope, the op call or None) when ``expr`` is ``c * (a @ b)``, ``(c * a) @ b``,
    ``c * matmul(a, b)``, ``einsum('..', a, b) * c``, ``dot``/``tensordot``."""
    k, core, scope = _scaled(ctx, expr, scope)
    b = binop(core, cst.MatrixMultiply)
    if b is not None:
        ka, a, _ = _scaled(ctx, b.left, scope, 1)
        kb, bb, _ = _scaled(ctx, b.right, scope, 1)
        return k * ka * kb, [a, bb], scope, None
    call = is_op(ctx, core, scope, *PRODUCTS)
    if call is None:
        return None
    if call.op == o.EINSUM:
        operands = _einsum_operands(call)
    else:
        operands = [call.x, call.value("y")]
    if len(operands) != 2 or None in operands:
        return None
    return k, operands, scope, call


def _einsum_operands(call: OpCall) -> list[cst.BaseExpression]:
    """The tensors an einsum multiplies: after its equation (``torch.einsum('bd,nd->bn', x, y)``),
    or before it when the call spells its pattern last, as einops does (``einsum(x, y, 'b d, n d
    -> b n')``)."""
    positional = [a.value for a in call.node.args if a.keyword is None and not a.star]
    strings = node_types("SimpleString", "ConcatenatedString")  # not at import: a warm run loads no libcst
    if len(positional) > 1 and isinstance(positional[-1], strings) and not isinstance(positional[0], strings):
        return positional[:-1]
    return positional[1:]


def _squared_norm(ctx: RuleContext, expr: cst.BaseExpression, scope: Scope):
    """(base, the sum or norm call) when ``expr`` is, through names, layout ops and indexing
    (``x2[:, None]``, ``.unsqueeze(1)``, ``.T``), ``sum(square(x), axis)`` or ``norm(x) ** 2``."""
    expr = _untransposed(expr)
    for r in ctx.values(expr, scope, shape=True):
        found = sum_of_squares(ctx, _untransposed(r.expr), r.scope)
        if found is not None and found[0] is not None and found[1] is not None:
            return found[1], found[0]
        inner = square_base(ctx, r.expr, r.scope)
        norm = is_op(ctx, inner, r.scope, o.NORM) if inner is not None else None
        if norm is not None and norm.x is not None and euclidean_norm(norm):
            return norm.x, norm
    return None


def _untransposed(expr: cst.BaseExpression) -> cst.BaseExpression:
    while isinstance(expr, cst.Attribute) and expr.attr.value in _TRANSPOSES:
        expr = expr.value
    return expr


def _keys(ctx: RuleContext, expr: cst.BaseExpression, scope: Scope) -> set[str]:
    """The texts of what ``expr`` is, through names, transposes and layout ops (not through a
    call or a call site: two parameters bound to alike arguments are not one value)."""
    expr = _laid_out(ctx, expr, scope)
    return {key(ctx, expr)} | {key(ctx, _untransposed(r.expr)) for r in ctx.values(expr, scope, shape=True)
                               if not via_call(r)}


def _laid_out(ctx: RuleContext, expr: cst.BaseExpression, scope: Scope) -> cst.BaseExpression:
    """``expr`` without its transposes and layout calls (``ops.transpose(b)`` -> ``b``): the
    value they lay out, whatever reaches it (a parameter's call sites are not followed)."""
    for _ in range(8):
        expr = _untransposed(expr)
        call = ctx.op_call(expr, scope)
        if call is None or call.op != o.SHAPE or call.x is None:
            break
        expr = call.x
    return expr


def expansion(ctx: RuleContext, expr: cst.BaseExpression, scope: Scope) -> Expansion | None:
    """``|x|^2 + |y|^2 - 2 x.y`` written as such, in any order and through names: two squared
    norms (``(x ** 2).sum(-1, keepdim=True)``, ``tf.reduce_sum(tf.square(a), 1)``, ``norm(x) ** 2``)
    and minus twice the product of the same two values (``x @ y.T``, ``matmul(a, b,
    transpose_b=True)``, ``einsum('bd,nd->bn', x, y)``)."""
    parts = [(g, t, s) for g, t, s in _flat(ctx, expr, scope)
             if not (g > 0 and (constant(ctx, t, s) or 0.0) > 0.0)]  # + eps: still cancels
    if len(parts) != 3:
        return None
    for i, (sign, t, s) in enumerate(parts):
        p = _product(ctx, t, s)
        if p is None or sign * p[0] != -2.0:
            continue
        rest = [q for j, q in enumerate(parts) if j != i]
        if any(g < 0 for g, _, _ in rest):
            return None
        norms = [_squared_norm(ctx, tt, ss) for _, tt, ss in rest]
        if None in norms:
            return None
        bases = [_keys(ctx, b, ss) for (b, _), (_, _, ss) in zip(norms, rest)]  # type: ignore[misc]
        operands = [_keys(ctx, a, p[2]) for a in p[1]]
        if not ((bases[0] & operands[0] and bases[1] & operands[1])
                or (bases[0] & operands[1] and bases[1] & operands[0])):
            return None
        calls = [c for c in (p[3], norms[0][1], norms[1][1]) if c is not None]  # type: ignore[index]
        call = next((c for c in calls if not c.is_method), calls[0])
        return Expansion(expr, scope, (rest[0][1], rest[1][1]), t, call.framework)
    return None
