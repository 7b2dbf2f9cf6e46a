"""NAN401 masked-mean: ``sum(x * m) / sum(m)`` is 0/0 = NaN when the mask is empty."""

from __future__ import annotations

import libcst as cst

from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.rules.context import RuleContext
from nanlint.rules.base import Rule
from nanlint.rules._shapes import Division, code, divisions
from nanlint.semantic.sites import SLASH
from nanlint.rules._masked import _text, mean_mask
from nanlint.rules._zero_divisions import in_where
from nanlint.analysis import zeros
from nanlint.analysis.evidence import data_mask, excludes_zero, weak_mask
from nanlint.analysis.guards import guarded
from nanlint.semantic.reach import origin_note


class MaskedMean(Rule):
    code = "NAN401"
    # on evidence (issue 21): strong when this code selects the mask (a comparison: nothing keeps
    # it from matching nothing); a mask or weight passed in is the may tier (a padding mask holds
    # a token); silent where the sum is kept from 0 (a guard, a branch, a sum of max-shifted exps)
    default = True
    name = "masked-mean"
    summary = "sum(x * mask) / sum(mask) is NaN for an empty mask: guard the division"
    fix = fixes.UNSAFE
    needs = ("sum",)
    triggers = (frozenset({o.SUM}), frozenset({o.DIVIDE, SLASH}))

    def check(self, ctx: RuleContext) -> None:
        for div in divisions(ctx):
            mask = mean_mask(ctx, div)
            if mask is None or guarded(ctx, div.den, div.scope):
                continue  # sum(exp(w - max(w))) >= 1
            if excludes_zero(ctx, div.node, div.den, div.scope) or in_where(ctx, div.node, div.scope):
                continue  # `0 if n == 0 else s / n`, an early return, a where/divide_no_nan around it
            total = ctx.op_of(div.den, div.scope, o.SUM)[0]  # type: ignore[index]
            head = ("sum(x * mask) / sum(mask) is 0/0 = NaN (value and gradient) when the mask is "
                    "empty; ")
            zero = zeros.reaches_zero(ctx, div.den, div.scope, kinds=(zeros.COUNT,))
            fix = self.make_fix(ctx, div, total)
            if zero is not None and zero.strong and data_mask(ctx, mask, div.scope) is None:
                where = origin_note(zero.value.ctx or ctx, zero.value)
                built = ctx.resolve(mask, div.scope).expr
                named = f"`{ctx.short(mask)}`" + (f" = `{ctx.short(built)}`" if built is not mask else "")
                ctx.report(div.node, head + f"the mask {named}{where} is selected here by a comparison, "
                           "which nothing keeps from matching nothing in a batch; guard the division", fix)
                continue
            why = zero.weak if zero is not None else None
            why = why if zero is None or not zero.strong else data_mask(ctx, mask, div.scope)
            why = why or weak_mask(ctx, mask, div.scope) or \
                "a weight or mask the code does not show can be all 0 (a given mask keeps an element per example)"
            ctx.report(div.node, head + f"weak evidence: {why}; guard the division if it can", fix, may=True)

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
