"""NAN401 masked-mean: ``sum(x * m) / sum(m)`` is 0/0 = NaN when the mask is empty."""

from __future__ import annotations

import libcst as cst

from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.semantic.context import FileContext
from nanlint.rules.base import Rule
from nanlint.rules._shapes import Division, code, divisions, same
from nanlint.analysis.gates.sites import SLASH
from nanlint.semantic.literals import number


def _factors(ctx: FileContext, expr: cst.BaseExpression, scope) -> tuple[cst.BaseExpression, ...]:
    """The operands of a product ``a * b`` / ``multiply(a, b)`` (through a name), else ()."""
    value = ctx.resolve(expr, scope)
    e = value.expr
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Multiply):
        return (e.left, e.right)
    call = ctx.op_call(e, value.scope)
    if call is not None and call.op == o.MULTIPLY and call.x is not None and call.has("y"):
        return (call.x, call.value("y"))  # type: ignore[return-value]
    return ()


def _text(ctx: FileContext, expr: cst.BaseExpression, tight: bool) -> str:
    text = ctx.code(expr)
    atomic = fixes.is_atomic(expr)
    if tight and not atomic:
        return f"({text})"
    return text


def _where_mask(ctx: FileContext, expr: cst.BaseExpression, scope) -> tuple[cst.BaseExpression, ...]:
    """``where(m, x, 0)`` (through a name): the mask ``m`` (and ``t`` of ``t > 0``, ``t != 0``)."""
    value = ctx.resolve(expr, scope)
    call = ctx.op_call(value.expr, value.scope)
    if call is None or call.op != o.WHERE or not call.has("cond") or number(call.value("y")) != 0.0:
        return ()
    cond = call.value("cond")
    assert cond is not None
    out = [cond]
    test = ctx.condition(ctx.resolve(cond, value.scope).expr, value.scope)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and \
            isinstance(test.comparisons[0].operator, (cst.GreaterThan, cst.NotEqual)) and \
            number(test.comparisons[0].comparator) == 0.0:
        out.append(test.left)
    return tuple(out)


def _same_mask(ctx: FileContext, a: cst.BaseExpression, b: cst.BaseExpression, scope) -> bool:
    """The same mask, written alike or reaching both places through names and layout ops
    (``m = mask.float()`` then ``sum(x * m) / mask.sum()``)."""
    if same(a, b):
        return True
    left = ctx.values(a, scope, shape=True)
    right = ctx.values(b, scope, shape=True)
    return any(x.expr is y.expr or (x.scope is y.scope and same(x.expr, y.expr)) for x in left for y in right)


def masked_mean(ctx: FileContext, div: Division) -> bool:
    """``sum(x * m) / sum(m)``, ``sum(where(m, x, 0)) / sum(m)``: the division NAN401
    reports (NAN108 leaves it to it)."""
    den = ctx.op_of(div.den, div.scope, o.SUM)
    if den is None:
        return False
    total, _ = den
    mask = total.x
    num = ctx.op_of(div.num, div.scope, o.SUM)
    if mask is None or num is None:
        return False
    weighted, r_num = num
    if weighted.x is None:
        return False
    candidates = _factors(ctx, weighted.x, r_num.scope) + _where_mask(ctx, weighted.x, r_num.scope)
    return any(_same_mask(ctx, f, mask, div.scope) for f in candidates)


class MaskedMean(Rule):
    code = "NAN401"
    # opt-in (docs/precision.md): masked-mean: 5 of 33 true over both corpora (0.15); masks of real data hold a token
    default = False
    name = "masked-mean"
    summary = "sum(x * mask) / sum(mask) is NaN for an empty mask: guard the division"
    fix = fixes.UNSAFE
    needs = ("sum",)
    triggers = (frozenset({o.SUM}), frozenset({o.DIVIDE, SLASH}))

    def check(self, ctx: FileContext) -> None:
        for div in divisions(ctx):
            if not masked_mean(ctx, div):
                continue
            total = ctx.op_of(div.den, div.scope, o.SUM)[0]  # type: ignore[index]
            message = ("sum(x * mask) / sum(mask) is 0/0 = NaN (value and gradient) when the mask is "
                       "empty (a batch of padding, a class absent from the batch); guard the division")
            ctx.report(div.node, message, self.make_fix(ctx, div, total))

    @staticmethod
    def make_fix(ctx: FileContext, div: Division, total) -> fixes.Fix:
        framework = total.framework
        if framework.name in ("tensorflow", "keras"):
            spelling = ctx.spell(framework, o.DIVIDE_NO_NAN, div.scope, prefer=(total.node.func,))
            if spelling is None:
                return fixes.Fix(fixes.DISPLAY_ONLY, "Use divide_no_nan")
            func, _, imports = spelling
            new = fixes.call(func, [fixes.arg(div.num).with_changes(
                comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))), fixes.arg(div.den)])
            return fixes.Fix(fixes.UNSAFE, "Use divide_no_nan (0 for an empty mask)", [(div.node, new)], imports)
        spelling = ctx.spell(framework, o.WHERE, div.scope, prefer=(total.node.func,))
        message = "Guard with where(d != 0, n / where(d != 0, d, 1), 0)"
        if spelling is None:
            return fixes.Fix(fixes.DISPLAY_ONLY, message)
        func, _, imports = spelling
        where = ctx.code(func)
        n, d = _text(ctx, div.num, True), _text(ctx, div.den, True)
        try:
            new = code(f"{where}({d} != 0, {n} / {where}({d} != 0, {ctx.code(div.den)}, 1), 0)")
        except cst.ParserSyntaxError:  # pragma: no cover - the parts come from parsed code
            return fixes.Fix(fixes.DISPLAY_ONLY, message)
        return fixes.Fix(fixes.UNSAFE, message, [(div.node, new)], imports)
