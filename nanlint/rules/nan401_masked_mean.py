"""NAN401 masked-mean: ``sum(x * m) / sum(m)`` is 0/0 = NaN when the mask is empty."""

from __future__ import annotations

import libcst as cst

from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.rules.context import RuleContext
from nanlint.rules.base import Rule
from nanlint.rules._shapes import Division, code, divisions
from nanlint.analysis.gates.sites import SLASH
from nanlint.rules._masked import _text, masked_mean


class MaskedMean(Rule):
    code = "NAN401"
    # opt-in (docs/precision.md): masked-mean: 5 of 33 true over both corpora (0.15); masks of real data hold a token
    default = False
    name = "masked-mean"
    summary = "sum(x * mask) / sum(mask) is NaN for an empty mask: guard the division"
    fix = fixes.UNSAFE
    needs = ("sum",)
    triggers = (frozenset({o.SUM}), frozenset({o.DIVIDE, SLASH}))

    def check(self, ctx: RuleContext) -> None:
        for div in divisions(ctx):
            if not masked_mean(ctx, div):
                continue
            total = ctx.op_of(div.den, div.scope, o.SUM)[0]  # type: ignore[index]
            message = ("sum(x * mask) / sum(mask) is 0/0 = NaN (value and gradient) when the mask is "
                       "empty (a batch of padding, a class absent from the batch); guard the division")
            ctx.report(div.node, message, self.make_fix(ctx, div, total))

    @staticmethod
    def make_fix(ctx: RuleContext, div: Division, total) -> fixes.Fix:
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
