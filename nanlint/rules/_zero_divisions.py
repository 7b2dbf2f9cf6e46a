"""The division sinks of NAN108 (strong evidence) and NAN110 (weak): a denominator that reaches 0."""

from __future__ import annotations

import libcst as cst

from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.analysis import zeros
from nanlint.rules.context import RuleContext
from nanlint.analysis.evidence import excludes_zero
from nanlint.semantic.reach import origin_note
from nanlint.semantic.resolve import Scope
from nanlint.rules.base import Rule
from nanlint.rules._gradient_traps import bare, spelled_call
from nanlint.rules._shapes import divisions
from nanlint.rules._zero_fixes import epsilon, far, guard
from nanlint.rules._masked import masked_mean
from nanlint.semantic.sites import NEG_POW, SLASH
from nanlint.semantic.literals import number

KINDS = (zeros.COUNT, zeros.PROBABILITY, zeros.COMPLEMENT, zeros.RECTIFIED, zeros.CONSTANT)
_WHERE_DEPTH = 6  # parents looked through for an enclosing where (NAN201's territory)


class DivisionSinks(Rule):
    """The sinks and their findings, strong or weak: DivideByZero reports the strong ones, NAN110 the weak."""

    needs = ("/", "div", "reciprocal", "rsqrt", "**", "pow")
    # a sink op, and an op of a strong source or a reduction (a count).  ``x ** -1`` has no site
    # key of its own: in a file without a "/" anywhere it is left to NAN110
    triggers = (frozenset({o.DIVIDE, SLASH, NEG_POW, o.RECIPROCAL, o.RSQRT, o.POW}),
                zeros.STRONG_OPS | {o.SUM, o.MEAN, o.REDUCE_MAX, o.REDUCE_MIN})

    def check(self, ctx: RuleContext) -> None:
        for node, message, fix, zero in self.findings(ctx):
            if zero.strong:
                ctx.report(node, message, fix)

    def findings(self, ctx: RuleContext):
        """Every division by a value reaching 0, strong evidence or weak (NAN110 reports those)."""
        for node, _num, den, scope, how in division_sites(ctx):
            # the value first: the parent map a where needs costs more than most files' values
            zero = zeros.reaches_zero(ctx, den, scope, kinds=KINDS)
            if zero is None or "product" in zero.what:
                continue  # a product of rectified widths (a box area) is a precondition of the input
            if in_where(ctx, node, scope):
                continue
            if excludes_zero(ctx, node, den, scope):
                continue  # `if sum(n) == 0: return` before `/ sum(n)`, `s / n if n > 0 else 0`
            where = origin_note(zero.value.ctx or ctx, zero.value)
            message = (f"{how} {zero.what}{where}: {zero.why}, where the result is inf (0/0 = NaN) and "
                       f"so is the gradient; {self.advice(zero)}")
            yield node, message, self.make_fix(ctx, den, scope, zero, node), zero

    @staticmethod
    def advice(zero: zeros.Zero) -> str:
        if zero.kind == zeros.COUNT:
            return "divide by maximum(count, 1)"
        if far(zero.value):
            return "return logits from there and divide in log space"
        return "guard the denominator with an epsilon that survives float32 (1e-7)"

    @staticmethod
    def make_fix(ctx: RuleContext, den: cst.BaseExpression, scope: Scope, zero: zeros.Zero,
                 node: cst.CSTNode) -> fixes.Fix:
        framework = _framework(ctx, den, scope, node, zero)
        inner = bare(den)
        if far(zero.value) or framework is None:
            return fixes.Fix(fixes.DISPLAY_ONLY, "Guard the denominator (maximum(d, eps)), or return logits")
        if zero.kind == zeros.COUNT:
            one = cst.Float("1.0")
            if framework.name == "torch":
                built = spelled_call(ctx, framework, o.CLIP, scope, [("x", inner), ("lo", cst.Integer("1"))])
            else:
                built = spelled_call(ctx, framework, o.MAXIMUM, scope, [("x", inner), ("y", one)])
            message = "Divide by the count clamped at 1 (no change while it is at least 1)"
        else:
            built = guard(ctx, framework, inner, scope)
            message = f"Guard the denominator with an epsilon ({epsilon(ctx)})"
        if built is None:
            return fixes.Fix(fixes.DISPLAY_ONLY, message)
        return fixes.Fix(fixes.UNSAFE, message, [(den, built[0])], built[1])


def division_sites(ctx: RuleContext) -> list[tuple[cst.CSTNode, cst.BaseExpression | None, cst.BaseExpression, Scope, str]]:
    """Every division sink of the file: (node, numerator or None, denominator, scope, how the
    message names it): ``a / b`` and divide calls (not a masked mean: NAN401's), ``reciprocal``,
    ``rsqrt``, a negative power.  Shared by NAN108/NAN110 and NAN111 (divide-by-statistic)."""
    sites: list[tuple[cst.CSTNode, cst.BaseExpression | None, cst.BaseExpression, Scope, str]] = []
    for div in divisions(ctx):
        if number(div.den) is not None or masked_mean(ctx, div):  # the literal first: no flow
            continue
        sites.append((div.node, div.num, div.den, div.scope, "division by"))
    for call in ctx.calls(o.RECIPROCAL, o.RSQRT, o.POW):
        if call.x is None:
            continue
        if call.op == o.POW:
            p = number(call.value("y"))
            if p is None or p >= 0:
                continue
        sites.append((call.node, None, call.x, call.scope, f"{call.op} of" if call.op != o.POW else "a negative power of"))
    for node, scope in ctx.index.binops:
        if isinstance(node.operator, cst.Power):
            p = number(node.right)
            if p is not None and p < 0:
                sites.append((node, None, node.left, scope, "a negative power of"))
    return sites


def in_where(ctx: RuleContext, node: cst.CSTNode, scope: Scope) -> bool:
    """``node`` is inside a ``where``, ``divide_no_nan`` or ``nan_to_num`` (NAN201's territory)."""
    parent = ctx.parent(node)
    for _ in range(_WHERE_DEPTH):
        if parent is None or isinstance(parent, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            return False
        if isinstance(parent, cst.Call):
            call = ctx.op_call(parent, scope)
            if call is not None and call.op in (o.WHERE, o.DIVIDE_NO_NAN, o.NAN_TO_NUM):
                return True
        parent = ctx.parent(parent)
    return False


def _framework(ctx: RuleContext, den, scope: Scope, node: cst.CSTNode, zero: zeros.Zero):
    """The framework to spell the guard in: the division's own op, else the source's."""
    call = ctx.op_call(node, scope)
    if call is not None:
        return call.framework
    for r in [zero.value] + ctx.values(den, scope, shape=True):
        owner = r.ctx or ctx
        found = _first_op(owner, r.expr, r.scope)
        if found is not None:
            return found
    return None


def _first_op(ctx: RuleContext, expr: cst.CSTNode, scope: Scope, depth: int = 4):
    if depth < 0:
        return None
    if isinstance(expr, cst.Call):
        call = ctx.op_call(expr, scope)
        if call is not None:
            return call.framework
        return None
    if isinstance(expr, cst.BinaryOperation):
        return _first_op(ctx, expr.left, scope, depth - 1) or _first_op(ctx, expr.right, scope, depth - 1)
    if isinstance(expr, cst.UnaryOperation):
        return _first_op(ctx, expr.expression, scope, depth - 1)
    if isinstance(expr, (cst.Name, cst.Attribute)):
        r = ctx.resolve(expr, scope)
        if r.expr is not expr:
            return _first_op(ctx, r.expr, r.scope, depth - 1)
    return None
