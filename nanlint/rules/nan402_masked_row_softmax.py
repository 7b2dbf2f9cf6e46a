"""NAN402 masked-row-softmax: a softmax of scores filled with -inf where a mask says is
NaN on a row the mask empties (exp(-inf - (-inf)) = NaN)."""

from __future__ import annotations

import libcst as cst

from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.rules.context import RuleContext
from nanlint.rules.base import Rule
from nanlint.rules._masked_rows import MAY, SILENT, Fill, fills, neg_inf, row_mask
from nanlint.rules._shapes import code

_SOFTMAXES = (o.SOFTMAX, o.LOG_SOFTMAX, o.CROSS_ENTROPY, o.SOFTMAX_CROSS_ENTROPY)


def _short(ctx: RuleContext, expr: cst.BaseExpression) -> str:
    text = " ".join(ctx.code(expr).split())
    return text if len(text) <= 40 else text[:37] + "..."


class MaskedRowSoftmax(Rule):
    code = "NAN402"
    # on evidence (issue 24): strong when the mask can empty a row (a query-key outer product, a
    # padding mask); a causal mask keeps the diagonal (silent); a mask the code does not show is may
    default = True
    name = "masked-row-softmax"
    summary = "softmax of scores filled with -inf where a mask says is NaN on a fully masked row"
    fix = fixes.UNSAFE
    needs = ("inf", "INF", "Inf")
    triggers = (frozenset(_SOFTMAXES),)

    def check(self, ctx: RuleContext) -> None:
        guarded = ctx.memo("nan402.nan_guarded", lambda: {id(c.scope) for c in ctx.calls(o.NAN_TO_NUM, o.IS_NAN)})
        seen: set[int] = set()
        for call in ctx.calls(*_SOFTMAXES):
            scores = call.value("logits") if call.op in (o.CROSS_ENTROPY, o.SOFTMAX_CROSS_ENTROPY) else call.x
            if scores is None or id(call.scope) in guarded:
                continue  # a NaN of a fully masked row is handled after the softmax
            for fill in fills(ctx, scores, call.scope, neg_inf):
                if id(fill.node) in seen:
                    continue
                seen.add(id(fill.node))
                self.judge(ctx, call.node, call.op, fill)

    def judge(self, ctx: RuleContext, node: cst.CSTNode, op: str, fill: Fill) -> None:
        line = ctx.file_line(fill.node)
        fix = self.make_fix(ctx, fill, fill.framework or ctx.op_call(node, fill.scope).framework)  # type: ignore[union-attr]
        if fill.additive:
            ctx.report(node, f"{op} of scores plus `{_short(ctx, fill.mask)}` * -inf (line {line}): the "
                       "0/1 mask times -inf is 0 * -inf = NaN at every kept position, and a fully masked row "
                       "is all -inf (NaN too); fill with the dtype's most negative finite value", fix)
            return
        words = {n.value for n in _walk_names(fill.scores)} if fill.scores is not None else set()
        tier, why = row_mask(ctx, fill.mask, fill.scope, words)
        if tier == SILENT:
            return
        head = (f"{op} of scores filled with -inf where `{_short(ctx, fill.mask)}` says (line {line}) is NaN "
                "on a row the mask empties (all -inf: exp(-inf - (-inf)) = NaN); ")
        if tier == MAY:
            ctx.report(node, head + f"weak evidence: {why}; fill with the dtype's most negative finite value "
                       "if a row can be fully masked", fix, may=True)
            return
        ctx.report(node, head + why + "; fill with the dtype's most negative finite value", fix)

    @staticmethod
    def make_fix(ctx: RuleContext, fill: Fill, framework) -> fixes.Fix:
        message = ("Fill with the dtype's most negative finite value (finfo(dtype).min): a fully masked "
                   "row gives a uniform softmax instead of NaN")
        src = fill.scores
        if framework is None or src is None or not isinstance(src, (cst.Name, cst.Attribute, cst.Subscript)):
            return fixes.Fix(fixes.DISPLAY_ONLY, message)
        text = ctx.code(src)
        imports: list = []
        if framework.name == "tensorflow":
            new = f"{text}.dtype.min"
        elif framework.name in ("torch", "jax"):
            spelling = ctx.spell(framework, o.FINFO, fill.scope)
            if spelling is None:
                return fixes.Fix(fixes.DISPLAY_ONLY, message)
            func, _, imports = spelling
            new = f"-{ctx.code(func)}({text}.dtype).max" if framework.name == "torch" else \
                f"{ctx.code(func)}({text}.dtype).min"
        else:
            return fixes.Fix(fixes.DISPLAY_ONLY, message)
        try:
            replacement = code(new)
        except cst.ParserSyntaxError:  # pragma: no cover - the parts come from parsed code
            return fixes.Fix(fixes.DISPLAY_ONLY, message)
        return fixes.Fix(fixes.UNSAFE, message, [(fill.node, replacement)], imports)


def _walk_names(node: cst.CSTNode):
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Name):
            yield n
        elif isinstance(n, cst.Attribute):
            stack.append(n.value)
        else:
            stack.extend(n.children)

