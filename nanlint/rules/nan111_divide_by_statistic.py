"""NAN111 divide-by-statistic: a division, ``reciprocal``, ``rsqrt`` or negative power whose
denominator is a statistic that reaches 0 on data a program sees: a standard deviation or a
variance (``(R - R.mean()) / R.std()``: 0 when every value is equal, an episode of equal
rewards, a constant feature; NaN in torch for one element), the square root of one, or
``n - 1`` of a count (Bessel's correction, ``i / (num_steps - 1)``: 0 for one element).

Evidence (issue 24): a statistic of the values the division scales (a standardization, the
tensor named like rewards, returns, advantages) and ``n - 1`` of a length or a shape are
strong; another tensor's statistic and ``n - 1`` of a count only named so are the may tier.
A statistic of a parameter or of a random draw, or one only printed, is not reported."""

from __future__ import annotations

import libcst as cst

from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.analysis.evidence import excludes_zero
from nanlint.analysis.guards import guarded
from nanlint.rules.base import Rule
from nanlint.rules.context import RuleContext
from nanlint.rules._gradient_traps import bare, spelled_call
from nanlint.rules._statistics import Statistic, count_checked, may_hold, mutated, statistic_of, count_of
from nanlint.rules._zero_divisions import division_sites, in_where
from nanlint.rules._zero_fixes import epsilon, far
from nanlint.semantic.sites import NEG_POW, SLASH
from nanlint.semantic.reach import origin_note
from nanlint.semantic.resolve import Scope
from nanlint.semantic.literals import normalized

_LOGGING = frozenset({"print", "info", "debug", "warning", "warn", "log", "add_scalar", "add_scalars", "set_postfix",
                      "set_description", "write", "format", "log_metrics", "log_dict", "append"})


class DivideByStatistic(Rule):
    code = "NAN111"
    name = "divide-by-statistic"
    summary = "division by a std or variance (0 when all values are equal) or by n - 1 of a count (0 for one element)"
    fix = fixes.UNSAFE  # `std + eps`, `max(n - 1, 1)`: the value changes where the statistic is small
    default = True
    # rsqrt(var) and x / sqrt(var): the value is inf, NAN202's gradient-only finding on the
    # root of the same variance says less
    supersedes = ("NAN202",)
    needs = ("/", "div", "reciprocal", "rsqrt", "**", "pow")
    triggers = (frozenset({o.DIVIDE, SLASH, NEG_POW, o.RECIPROCAL, o.RSQRT, o.POW}),)

    def wanted(self, text: str) -> bool:
        """Its ``needs`` (a division's spelling), and a statistic's name or ``count - 1`` in the
        text (:func:`nanlint.rules._statistics.may_hold`): the engine and the site filter skip
        the rule in any other file."""
        return super().wanted(text) and may_hold(text)

    def check(self, ctx: RuleContext) -> None:
        for node, num, den, scope, how in division_sites(ctx):
            if guarded(ctx, den, scope):
                continue
            num = num if num is not None else _factor(ctx, node)
            stat = statistic_of(ctx, den, scope, num) or count_of(ctx, den, scope, num)
            if stat is None or stat.silent:
                continue
            if in_where(ctx, node, scope) or excludes_zero(ctx, node, den, scope) or _logged(ctx, node) \
                    or _mutated(ctx, den, scope, stat) or (stat.count is not None and count_checked(ctx, node, stat, scope)):
                continue
            where = origin_note(stat.value.ctx or ctx, stat.value)
            message = f"{how} {stat.what}{where}: {stat.why}; {stat.advice}"
            ctx.report(node, message, _fix(ctx, den, scope, stat), may=stat.weak)


def _factor(ctx: RuleContext, node: cst.CSTNode) -> cst.BaseExpression | None:
    """What ``rsqrt(v)`` or ``v ** -1`` multiplies: ``(x - mean) * rsqrt(var)``."""
    parent = ctx.parent(node)
    if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Multiply):
        return parent.right if parent.left is node else parent.left
    return None


def _logged(ctx: RuleContext, node: cst.CSTNode) -> bool:
    """The division is an argument of a print or a logging call, or inside an f-string."""
    parent = ctx.parent(node)
    while parent is not None and not isinstance(parent, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
        if isinstance(parent, cst.FormattedString):
            return True
        if isinstance(parent, cst.Call):
            func = parent.func
            name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
            if name in _LOGGING:
                return True
        parent = ctx.parent(parent)
    return False


def _mutated(ctx: RuleContext, den: cst.BaseExpression, scope: Scope, stat: Statistic) -> bool:
    """The statistic's name is floored in place before the division: ``std[std == 0] = 1``,
    ``std += eps``, ``std.clamp_(min=eps)``, ``std.masked_fill_(std == 0, 1)``."""
    names = {normalized(bare(den))} | {origin.name for origin in stat.value.origins}
    return bool(names & mutated(ctx, scope))


def _fix(ctx: RuleContext, den: cst.BaseExpression, scope: Scope, stat: Statistic) -> fixes.Fix:
    inner = bare(den)
    if stat.count is not None:
        message = "Divide by max(n - 1, 1) (no change while there are two or more)"
        if far(stat.value):
            return fixes.Fix(fixes.DISPLAY_ONLY, message)
        if stat.framework is None:
            built = cst.Call(cst.Name("max"), [cst.Arg(inner), cst.Arg(cst.Integer("1"))])
            return fixes.Fix(fixes.UNSAFE, message, [(den, built)])
        made = spelled_call(ctx, stat.framework, o.MAXIMUM, scope, [("x", inner), ("y", cst.Integer("1"))])
        if made is None:
            return fixes.Fix(fixes.DISPLAY_ONLY, message)
        return fixes.Fix(fixes.UNSAFE, message, [(den, made[0])], made[1])
    eps = epsilon(ctx)
    message = f"Add an epsilon to the {stat.kind} ({eps})"
    if far(stat.value):
        return fixes.Fix(fixes.DISPLAY_ONLY, message)
    built = cst.BinaryOperation(inner, cst.Add(), cst.Float(eps), lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return fixes.Fix(fixes.UNSAFE, message, [(den, built)])
