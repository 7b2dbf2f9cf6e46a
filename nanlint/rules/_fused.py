"""Fused replacements: log(softmax(x)) -> log_softmax(x), log(sigmoid(x)) -> log_sigmoid(x); NAN101/NAN102 and the cross entropies (NAN103/NAN104) build them."""

from __future__ import annotations

import libcst as cst
from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.semantic.context import OpCall
from nanlint.rules.context import RuleContext


CARRIED = ("x", "axis", "dtype")


def fused_call(ctx: RuleContext, inner: OpCall, target_op: str, scope, prefer=()) -> tuple[cst.Call, list[fixes.Import]] | None:
    """``inner``'s arguments applied to ``target_op`` of the same framework: a
    method call when ``inner`` was a method and the framework has that method,
    else a function spelled with the file's imports."""
    method = inner.framework.methods.get(target_op) if inner.is_method else None
    if method is not None and method.op == target_op:
        args = ctx.carry_args(inner, method, CARRIED)
        if args is None:
            return None
        func = cst.Attribute(inner.receiver, cst.Name(target_op))  # type: ignore[arg-type]
        return fixes.call(func, args), []
    spelling = ctx.spell(inner.framework, target_op, scope, prefer=(inner.node.func,) + tuple(prefer))
    if spelling is None:
        return None
    func, target, imports = spelling
    args = ctx.carry_args(inner, target, CARRIED)
    if args is None:
        return None
    return fixes.call(func, args), imports


def log_softmax_fix(ctx: RuleContext, log: OpCall, softmax: OpCall, resolved) -> fixes.Fix | None:
    message = "Replace with log_softmax"
    if not resolved.fixable_in(log.scope):  # self.attr from another method: names may not exist here
        return fixes.Fix(fixes.DISPLAY_ONLY, message + " where the softmax is computed")
    built = fused_call(ctx, softmax, o.LOG_SOFTMAX, log.scope, prefer=(log.node.func,))
    if built is None:
        return fixes.Fix(fixes.DISPLAY_ONLY, message)
    new, imports = built
    applicability = fixes.UNSAFE if resolved.crossed_statements else fixes.SAFE
    return fixes.Fix(applicability, message, [(log.node, new)], imports)


def log_sigmoid_fix(ctx: RuleContext, log: OpCall, sigmoid: OpCall, negated: bool, crossed: bool,
             other_scope: bool) -> fixes.Fix:
    message = "Replace with log_sigmoid(-x)" if negated else "Replace with log_sigmoid"
    if other_scope:
        return fixes.Fix(fixes.DISPLAY_ONLY, message)
    spelling = ctx.spell(sigmoid.framework, o.LOG_SIGMOID, log.scope,
                         prefer=(getattr(sigmoid.node, "func", log.node.func), log.node.func))
    if spelling is None or sigmoid.x is None:
        return fixes.Fix(fixes.DISPLAY_ONLY, message)
    func, target, imports = spelling
    x = fixes.negate(sigmoid.x) if negated else sigmoid.x
    if sigmoid.is_method or not isinstance(sigmoid.node, cst.Call):  # a method, or 1 / (1 + exp(-z))
        args = [fixes.arg(x)]
    else:
        args = ctx.carry_args(sigmoid, target, ("x",), x=x)
        if args is None:
            return fixes.Fix(fixes.DISPLAY_ONLY, message)
    applicability = fixes.UNSAFE if crossed else fixes.SAFE
    return fixes.Fix(applicability, message, [(log.node, fixes.call(func, args))], imports)
