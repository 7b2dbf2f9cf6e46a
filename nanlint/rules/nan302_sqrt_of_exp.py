"""NAN302 sqrt-of-exp: ``sqrt(exp(v))`` (the VAE sigma) -> ``exp(0.5 * v)``."""

from __future__ import annotations

import libcst as cst

from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.semantic.context import OpCall
from nanlint.semantic.reach import Resolved, origin_note
from nanlint.rules.context import RuleContext
from nanlint.analysis.facts import bounded_exponent
from nanlint.rules.base import Rule
from nanlint.rules import _limits
from nanlint.vocabulary import limits
from nanlint.semantic.sites import POW_HALF
from nanlint.semantic.literals import number


def _half_times(v: cst.BaseExpression) -> cst.BaseExpression:
    if getattr(v, "lpar", None):
        v = v.with_changes(lpar=[], rpar=[])
    if not isinstance(v, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float)):
        v = v.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.BinaryOperation(cst.Float("0.5"), cst.Multiply(), v)


class SqrtOfExp(Rule):
    code = "NAN302"
    name = "sqrt-of-exp"
    summary = "sqrt(exp(v)) overflows at v > ~88.7: use exp(0.5 * v)"
    fix = fixes.SAFE
    needs = ("exp",)
    triggers = (frozenset({o.EXP}), frozenset({o.SQRT, POW_HALF}))

    def check(self, ctx: RuleContext) -> None:
        sites: list[tuple[cst.BaseExpression, cst.BaseExpression, object]] = []
        for sqrt in ctx.calls(o.SQRT):
            if sqrt.x is not None:
                sites.append((sqrt.node, sqrt.x, sqrt.scope))
        for pow_ in ctx.calls(o.POW):
            if pow_.x is not None and number(pow_.value("y")) == 0.5:
                sites.append((pow_.node, pow_.x, pow_.scope))
        for node, scope in ctx.index.binops:
            if isinstance(node.operator, cst.Power) and number(node.right) == 0.5:
                sites.append((node, node.left, scope))
        for node, arg, scope in sites:
            found = ctx.op_of(arg, scope, o.EXP)
            if found is None:
                continue
            exp, resolved = found
            if bounded_exponent(ctx, exp.x, resolved.scope if resolved.ctx is None else scope):
                continue  # v is clipped (or otherwise kept) below 88: exp(v) is finite
            top = _limits.value(limits.EXP_OVERFLOW, exp.framework)
            message = (f"sqrt(exp(v)) is inf once exp(v) overflows (v > ~{top:g} in float32) and its gradient "
                       f"is inf/inf = NaN; exp(0.5 * v) is the same value and finite up to v ~ {2 * top:.0f}"
                       + origin_note(ctx, resolved))
            ctx.report(node, message, self.make_fix(node, scope, exp, resolved))

    @staticmethod
    def make_fix(node: cst.BaseExpression, scope, exp: OpCall, resolved: Resolved) -> fixes.Fix:
        message = "Replace with exp(0.5 * v)"
        if exp.x is None or not resolved.fixable_in(scope):
            return fixes.Fix(fixes.DISPLAY_ONLY, message)
        half = _half_times(exp.x)
        if exp.is_method:
            func = exp.node.func
            assert isinstance(func, cst.Attribute)
            new = exp.node.with_changes(func=func.with_changes(value=half.with_changes(
                lpar=[cst.LeftParen()], rpar=[cst.RightParen()])))
        else:
            args = list(exp.node.args)
            for i, a in enumerate(args):
                if a.value is exp.x:
                    args[i] = a.with_changes(value=half)
                    break
            else:
                return fixes.Fix(fixes.DISPLAY_ONLY, message)
            new = exp.node.with_changes(args=args)
        applicability = fixes.UNSAFE if resolved.crossed_statements else fixes.SAFE
        return fixes.Fix(applicability, message, [(node, new)])
