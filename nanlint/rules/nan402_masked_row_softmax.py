"""NAN402 masked-row-softmax: a softmax of scores filled with -inf where a mask says is
NaN on a row the mask empties (exp(-inf - (-inf)) = NaN)."""

from __future__ import annotations

import libcst as cst

from nanlint.fix import fixes
from nanlint.vocabulary import frameworks
from nanlint.vocabulary import ops as o
from nanlint.rules.context import RuleContext
from nanlint.rules.base import Rule
from nanlint.rules._masked_rows import MAY, SILENT, STRONG, Fill, fills, finite_fill, neg_inf, row_mask

_SOFTMAXES = (o.SOFTMAX, o.LOG_SOFTMAX, o.CROSS_ENTROPY, o.SOFTMAX_CROSS_ENTROPY)


class MaskedRowSoftmax(Rule):
    code = "NAN402"
    # on evidence (issue 24): strong when the mask can empty a row (a query-key outer product, a
    # padding mask); a causal mask keeps the diagonal (silent); a mask the code does not show is may
    default = True
    name = "masked-row-softmax"
    summary = "softmax of scores filled with -inf where a mask says is NaN on a fully masked row"
    fix = fixes.UNSAFE
    # a fill, or (may tier) ``s + mask.log()`` / ``log(mask...)``: not every ``log(`` (``math.log(2)``)
    # (``float('-inf')``, ``-np.inf``, ``np.NINF``; not "inf" in "information", "inference")
    needs = ("inf'", 'inf"', ".inf", ".Inf", "NINF", ".log()", "log(mask", "log(attn", "log(attention")
    triggers = (frozenset(_SOFTMAXES),)

    def check(self, ctx: RuleContext) -> None:
        guarded = ctx.memo("nan402.nan_guarded", lambda: {id(c.scope) for c in ctx.calls(o.NAN_TO_NUM, o.IS_NAN)})
        seen: set[int] = set()
        for node, op, scores, scope, framework in self.softmaxes(ctx):
            if scores is None or id(scope) in guarded:
                continue  # a NaN of a fully masked row is handled after the softmax
            for fill in fills(ctx, scores, scope, neg_inf):
                if id(fill.site) in seen:
                    continue
                tier, why = self.judge(ctx, fill)
                if tier == SILENT:
                    continue
                seen.add(id(fill.site))
                fix = self.make_fix(ctx, fill, framework)
                where = f"the {op} on line {ctx.file_line(node)}"
                if fill.additive:
                    ctx.report(fill.site, f"scores plus `{ctx.short(fill.mask)}` * -inf reach {where}: the 0/1 "
                               "mask times -inf is 0 * -inf = NaN at every kept position, and a fully masked row is "
                               "all -inf (NaN too); fill with half the dtype's most negative finite value (a score plus "
                               "the whole of it can overflow to -inf again)", fix)
                    continue
                how = f"plus `{ctx.short(fill.node)}` (-inf where the mask is 0)" if fill.log else \
                    f"filled with -inf where `{ctx.short(fill.mask)}` says"
                head = (f"scores {how} reach {where}, which is NaN on a row the mask empties "
                        "(all -inf: exp(-inf - (-inf)) = NaN); ")
                if tier == MAY:
                    ctx.report(fill.site, head + f"weak evidence: {why}; fill with the dtype's most negative "
                               "finite value if a row can be fully masked", fix, may=True)
                else:
                    ctx.report(fill.site, head + why + "; fill with the dtype's most negative finite value", fix)

    @staticmethod
    def softmaxes(ctx: RuleContext):
        """Each softmax (log_softmax, fused cross entropy) and its scores; also a call of
        ``self.fn`` that a class assigns a softmax function (``self.attn_fn = F.softmax``)."""
        for call in ctx.calls(*_SOFTMAXES):
            scores = call.value("logits") if call.op in (o.CROSS_ENTROPY, o.SOFTMAX_CROSS_ENTROPY) else call.x
            yield call.node, call.op, scores, call.scope, call.framework
        for node, scope in ctx.index.calls:
            func = node.func
            if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"
                    and node.args and node.args[0].keyword is None):
                continue
            cls = scope.enclosing_class()
            for b in cls.attributes.get(func.attr.value, []) if cls is not None else []:
                found = _function_op(ctx, b.value, b.scope or scope)
                if found is not None:
                    yield node, found[0], node.args[0].value, scope, found[1]
                    break

    @staticmethod
    def judge(ctx: RuleContext, fill: Fill) -> tuple[str, str]:
        if fill.additive:
            return STRONG, "0 * -inf"
        words = {n.value for n in _walk_names(fill.scores)} if fill.scores is not None else set()
        return row_mask(ctx, fill.mask, fill.scope, words)

    @staticmethod
    def make_fix(ctx: RuleContext, fill: Fill, default) -> fixes.Fix:
        message = ("Fill with the dtype's most negative finite value (finfo(dtype).min; half of it added "
                   "as a mask): a fully masked row gives a uniform softmax instead of NaN")
        made = None if fill.log else finite_fill(ctx, fill, fill.framework or default)
        if made is None:
            return fixes.Fix(fixes.DISPLAY_ONLY, message)
        return fixes.Fix(fixes.UNSAFE, message, [(fill.node, made[0])], made[1])


def _function_op(ctx: RuleContext, value, scope, depth: int = 2):
    """The softmax op (and framework) a function reference is (``F.softmax``; either branch of
    ``entmax15 if use_entmax else F.softmax``), else None."""
    if value is None or depth < 0:
        return None
    if isinstance(value, cst.IfExp):
        return _function_op(ctx, value.body, scope, depth - 1) or _function_op(ctx, value.orelse, scope, depth - 1)
    if isinstance(value, (cst.Name, cst.Attribute)):
        qual = ctx.index.qualname(value, scope)
        entry = frameworks.function_table().get(qual) if qual else None
        if entry is not None and entry[1].op in (o.SOFTMAX, o.LOG_SOFTMAX):
            return entry[1].op, entry[0]
    return None


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

