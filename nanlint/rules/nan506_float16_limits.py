"""NAN506 float16-limits: in code that shows float16 compute, an epsilon that is 0 in
float16 (``log(p + 1e-8)``, ``clamp(min=1e-20)`` before a division, ``normalize(eps=1e-12)``)
and a mask fill beyond float16's range (``where(m, s, -1e9)``, ``s + (1 - m) * -1e9``),
which is -inf there; and float16's own lowest value added as a mask (``s + (1 - m) *
tf.float16.min``), which overflows to -inf with any score of -16 or below."""

from __future__ import annotations

import libcst as cst

from nanlint.fix import fixes
from nanlint.semantic.sites import SLASH
from nanlint.vocabulary import ops as o
from nanlint.vocabulary.limits import FLOAT16_MAX, FLOAT16_OVERFLOW, FLOAT16_ZERO
from nanlint.rules.context import RuleContext
from nanlint.semantic.literals import number
from nanlint.semantic.resolve import Scope
from nanlint.rules.base import Rule
from nanlint.rules._float16 import Float16Evidence
from nanlint.rules._masked_rows import Fill, fills, finite_fill, halved
from nanlint.rules._zero_divisions import division_sites

# the epsilon a fix writes: float16's smallest normal number is 6.1e-5, so 1e-4 is a normal
# float16 (1.0001e-4, full precision) in every framework and needs no dtype at hand
FIXED_EPSILON = "1e-4"
_RESULT = {o.LOG: "at 0 the log is -inf", o.SQRT: "at 0 the sqrt's gradient is inf",
           o.DIVIDE: "at 0 the division is inf (0 / 0 NaN)", o.L2_NORMALIZE: "a zero vector is 0 / 0 = NaN"}
_SOFTMAXES = (o.SOFTMAX, o.LOG_SOFTMAX, o.CROSS_ENTROPY, o.SOFTMAX_CROSS_ENTROPY)


def _literal(ctx: RuleContext, expr: cst.BaseExpression | None, scope: Scope) -> tuple[cst.BaseExpression, float] | None:
    """The numeric literal ``expr`` is (through a name bound in this file), and its value."""
    if expr is None:
        return None
    value = number(expr)
    if value is not None:
        return expr, value
    if isinstance(expr, cst.Name):
        r = ctx.resolve(expr, scope)
        if r.expr is not expr and (r.ctx is None or r.ctx is ctx):
            value = number(r.expr)
            if value is not None:
                return r.expr, value
    return None


def _tiny(ctx: RuleContext, expr: cst.BaseExpression | None, scope: Scope) -> cst.BaseExpression | None:
    found = _literal(ctx, expr, scope)
    return found[0] if found is not None and 0 < found[1] <= FLOAT16_ZERO else None


def _guard(ctx: RuleContext, expr: cst.BaseExpression, scope: Scope) -> tuple[cst.BaseExpression, str] | None:
    """The epsilon keeping ``expr`` from 0 that is 0 in float16: ``x + 1e-8``, ``clamp(x, min=1e-20)``,
    ``maximum(x, 1e-10)``; and how the message names it."""
    for r in ctx.values(expr, scope)[:4]:
        if r.ctx is not None and r.ctx is not ctx:
            continue
        e = ctx.arithmetic(r.expr, r.scope)
        if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Add):
            for side in (e.right, e.left):
                eps = _tiny(ctx, side, r.scope)
                if eps is not None:
                    return eps, "the added epsilon"
        call = ctx.op_call(e, r.scope) if isinstance(e, cst.Call) else None
        if call is not None and call.op == o.CLIP:
            eps = _tiny(ctx, call.value("lo"), r.scope)
            if eps is not None:
                return eps, "the clamp's lower bound"
        elif call is not None and call.op == o.MAXIMUM:
            for side in (call.value("x"), call.value("y")):
                eps = _tiny(ctx, side, r.scope)
                if eps is not None:
                    return eps, "the maximum's floor"
    return None


def _big_negative(ctx: RuleContext, expr: cst.BaseExpression | None, scope: Scope) -> bool:
    found = _literal(ctx, expr, scope)
    return found is not None and found[1] <= -FLOAT16_OVERFLOW


def _lowest_here(ctx: RuleContext, evidence: Float16Evidence, expr: cst.BaseExpression, scope: Scope) -> bool:
    """``expr`` is float16's most negative finite value as written: ``tf.float16.min``,
    ``finfo(float16).min`` (torch, JAX, NumPy), ``-finfo(float16).max``, ``-65504``."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = expr.expression
        if isinstance(inner, cst.Attribute) and inner.attr.value == "max" and _finfo16(evidence, inner.value, scope):
            return True
    if isinstance(expr, cst.Attribute) and expr.attr.value == "min":
        return evidence.is_float16(expr.value, scope) or _finfo16(evidence, expr.value, scope)
    return number(expr) == -FLOAT16_MAX


def _finfo16(evidence: Float16Evidence, expr: cst.BaseExpression, scope: Scope) -> bool:
    """``finfo(float16)`` (any framework's, NumPy's: the call's last name and its dtype)."""
    if not (isinstance(expr, cst.Call) and len(expr.args) == 1):
        return False
    func = expr.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
    return name == "finfo" and evidence.is_float16(expr.args[0].value, scope)


def _lowest(ctx: RuleContext, evidence: Float16Evidence, expr: cst.BaseExpression | None,
            scope: Scope) -> cst.BaseExpression | None:
    """Where ``expr`` is float16's lowest value (through names and this module's functions'
    returns, ``return tf.float16.min`` in a helper): that expression, which a fix halves."""
    if expr is None:
        return None
    for r in ctx.values(expr, scope)[:4]:
        if (r.ctx is None or r.ctx is ctx) and _lowest_here(ctx, evidence, r.expr, r.scope):
            return r.expr
    return None


class Float16Limits(Rule):
    code = "NAN506"
    name = "float16-limits"
    summary = "a constant float16 cannot hold: an epsilon that is 0, a mask fill that is -inf"
    fix = fixes.UNSAFE
    needs = ("float16", ".half", "autocast", "GradScaler", "65504")  # ``.half()``, ``torch.half``; not "half" in prose

    triggers = (frozenset({o.LOG, o.SQRT, o.RSQRT, o.DIVIDE, SLASH, o.RECIPROCAL, o.POW, o.L2_NORMALIZE,
                           *_SOFTMAXES}),)

    def check(self, ctx: RuleContext) -> None:
        evidence = Float16Evidence(ctx)
        seen: set[int] = set()
        # (guarded value, scope, what the message calls the sink, its node, result): a line is
        # asked only of a finding's sink (positions cost a codegen of the whole module)
        sinks = [(c.x, c.scope, c.op, c.node, _RESULT[c.op]) for c in ctx.calls(o.LOG, o.SQRT)]
        sinks += [(den, scope, how.split()[0], node, _RESULT[o.DIVIDE])
                  for node, _, den, scope, how in division_sites(ctx)]
        for expr, scope, what, node, result in sinks:
            found = _guard(ctx, expr, scope) if expr is not None else None
            why, may = evidence.compute(scope) if found is not None else (None, False)
            if found is None or why is None or id(found[0]) in seen:
                continue
            seen.add(id(found[0]))
            where = f"the {what} on line {ctx.file_line(node)}"
            self.epsilon(ctx, found[0], f"{found[1]} `{ctx.code(found[0])}` of {where}", result, why, may)
        for call in ctx.calls(o.L2_NORMALIZE):
            eps = _tiny(ctx, call.value("eps"), call.scope)
            why, may = evidence.compute(call.scope) if eps is not None else (None, False)
            if eps is not None and why is not None and id(eps) not in seen:
                seen.add(id(eps))
                self.epsilon(ctx, eps, f"the normalization's eps `{ctx.code(eps)}` (line {ctx.file_line(call.node)})",
                             _RESULT[o.L2_NORMALIZE], why, may)
        lowest_of: dict[int, cst.BaseExpression] = {}  # a fill's id -> the float16 lowest value it is

        def is_fill(c: RuleContext, e: cst.BaseExpression | None, s: Scope) -> bool:
            if _big_negative(c, e, s):
                return True
            lowest = _lowest(c, evidence, e, s)
            if lowest is not None:
                lowest_of[id(e)] = lowest
            return lowest is not None

        for call in ctx.calls(*_SOFTMAXES):
            scores = call.value("logits") if call.op in (o.CROSS_ENTROPY, o.SOFTMAX_CROSS_ENTROPY) else call.x
            for fill in fills(ctx, scores, call.scope, is_fill):  # one walk of the scores for both kinds
                lowest = lowest_of.get(id(fill.node))
                if lowest is None:
                    why, may = evidence.compute(fill.scope)
                    if why is not None and id(fill.site) not in seen:
                        seen.add(id(fill.site))
                        self.fill(ctx, fill, f"the {call.op} on line {ctx.file_line(call.node)}", call.framework,
                                  why, may)
                elif fill.additive and id(lowest) not in seen:
                    seen.add(id(lowest))
                    self.lowest(ctx, fill, lowest, f"the {call.op} on line {ctx.file_line(call.node)}")

    @staticmethod
    def epsilon(ctx: RuleContext, eps: cst.BaseExpression, what: str, result: str, why: str, may: bool) -> None:
        message = (f"{what} is 0 in float16 (every |v| <= 2**-25 = 2.98e-8 rounds to 0), and this file computes in "
                   f"float16 ({why}): the guard is gone, and {result}; "
                   f"use an epsilon float16 holds ({FIXED_EPSILON})")
        fix = fixes.Fix(fixes.UNSAFE, f"Use {FIXED_EPSILON}, a normal float16 number", [(eps, cst.Float(FIXED_EPSILON))])
        ctx.report(eps, message if not may else message.replace("this file computes in float16",
                                                                 "weak evidence: this file may compute in float16"),
                   fix, may=may)

    @staticmethod
    def fill(ctx: RuleContext, fill: Fill, where: str, framework, why: str, may: bool) -> None:
        how = f"`{ctx.code(fill.node)}` times the mask" if fill.additive else f"the fill `{ctx.code(fill.node)}`"
        message = (f"{how} reaches {where} and is beyond float16's range (|v| >= 65520 rounds to inf; the largest "
                   f"float16 is 65504), and this file computes in float16 ({why}): it is -inf there, a fully masked "
                   "row is NaN (torch's masked_fill raises instead); fill with the dtype's most negative finite value "
                   f"({'half of it, as it is added: the sum of a score and the whole of it overflows' if fill.additive else 'finfo(dtype).min'})")
        message = message if not may else message.replace("this file computes in float16",
                                                          "weak evidence: this file may compute in float16")
        made = finite_fill(ctx, fill, fill.framework or framework)
        text = ("Fill with half the dtype's most negative finite value (finfo(dtype).min / 2), added without overflow"
                if fill.additive else "Fill with the dtype's most negative finite value (finfo(dtype).min), which float16 holds")
        fix = fixes.Fix(fixes.DISPLAY_ONLY, text) if made is None else \
            fixes.Fix(fixes.UNSAFE, text, [(fill.node, made[0])], made[1])
        ctx.report(fill.site, message, fix, may=may)


    @staticmethod
    def lowest(ctx: RuleContext, fill: Fill, lowest: cst.BaseExpression, where: str) -> None:
        """``s + (1 - m) * tf.float16.min``: the sum overflows past -65520 (float16 rounds it to
        -inf) at every masked score of -16 or below, and a fully masked row of those is all -inf."""
        shown = ctx.code(lowest)
        via = "" if lowest is fill.node else f" (returned to line {ctx.file_line(fill.node)})"
        message = (f"`{shown}` is float16's lowest value, and it is added to the scores as a mask{via} that reach "
                   f"{where}: a masked score of -16 or below makes the sum overflow to -inf (-65504 - 16 = -65520, which "
                   "float16 rounds to -inf), so a fully masked row of such scores is all -inf and its softmax NaN; add half of it, "
                   f"`{shown} / 2`, as Keras does, or replace the masked scores (where) instead of adding")
        fix = fixes.Fix(fixes.UNSAFE, f"Add half of float16's lowest value ({shown} / 2)",
                        [(lowest, halved(ctx, lowest, lowest))])
        ctx.report(lowest, message, fix)
