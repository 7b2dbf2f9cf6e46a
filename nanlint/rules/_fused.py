"""Fused replacements: log(softmax(x)) -> log_softmax(x), log(sigmoid(x)) -> log_sigmoid(x); NAN101/NAN102 and the cross entropies (NAN103/NAN104) build them."""

from __future__ import annotations

import libcst as cst
from nanlint.analysis.guards import casts
from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.semantic.context import OpCall
from nanlint.semantic.reach import SHAPE
from nanlint.semantic.resolve import ASSIGN
from nanlint.rules.context import RuleContext
from nanlint.rules._cross_entropy import bind_logits


CARRIED = ("x", "axis", "dtype")
# layout ops that change the dtype: log(p.double()) and log_softmax(x).double() round differently
MAX_LAYOUT = 8  # layout ops and names followed from the log to its softmax


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


def layout_steps(ctx: RuleContext, expr: cst.BaseExpression, scope, target: cst.CSTNode):
    """How ``expr`` is ``target`` laid out again: the layout ops and indexing between them,
    outermost first, as (node, the operand it lays out), through names assigned once in
    ``scope`` (``q = softmax(x, -1); q = q.view(-1, 3); ... q``); and whether a dtype cast
    is among them.  None when another value can reach ``expr`` on the way, or a step is no
    layout op of one operand."""
    steps: list[tuple[cst.CSTNode, cst.BaseExpression]] = []
    cast = False
    for _ in range(MAX_LAYOUT):
        if expr is target:
            return steps, cast
        if isinstance(expr, cst.Name):
            found = ctx.reaching(expr, scope)
            if not found or len(found[0]) != 1:
                return None
            b = found[0][0]
            if b.kind != ASSIGN or b.value is None or (b.scope or found[1]) is not scope:
                return None
            expr = b.value
            continue
        if isinstance(expr, cst.Subscript):
            steps.append((expr, expr.value))
            expr = expr.value
            continue
        call = ctx.op_call(expr, scope) if isinstance(expr, cst.Call) else None
        if call is None or call.op != o.SHAPE or call.x is None or isinstance(call.x, (cst.List, cst.Tuple)):
            return None
        cast = cast or casts(call)
        steps.append((expr, call.x))
        expr = call.x
    return None


def laid_out(new: cst.BaseExpression, steps) -> cst.BaseExpression:
    """``new`` in place of the innermost operand of ``steps``, every layout op carried."""
    for node, operand in reversed(steps):
        new = node.deep_replace(operand, new)  # type: ignore[assignment]
    return new


def log_softmax_fix(ctx: RuleContext, log: OpCall, softmax: OpCall, resolved) -> fixes.Fix | None:
    message = "Replace with log_softmax"
    if not resolved.fixable_in(log.scope):  # self.attr from another method: names may not exist here
        if resolved.via == frozenset({SHAPE}) and resolved.ctx is None and resolved.scope is log.scope \
                and log.x is not None and resolved.repeatable:
            carried = _layout_fix(ctx, log, softmax, resolved)
            if carried is not None:
                return carried
        return fixes.Fix(fixes.DISPLAY_ONLY, message + " where the softmax is computed")
    built = fused_call(ctx, softmax, o.LOG_SOFTMAX, log.scope, prefer=(log.node.func,))
    if built is None:
        return fixes.Fix(fixes.DISPLAY_ONLY, message)
    new, imports = built
    applicability = fixes.UNSAFE if resolved.crossed_statements else fixes.SAFE
    return fixes.Fix(applicability, message, [(log.node, new)], imports)


def _layout_fix(ctx: RuleContext, log: OpCall, softmax: OpCall, resolved) -> fixes.Fix | None:
    """``log(softmax(x).view(-1, k))`` (also ``q = softmax(x); q = q.view(-1, k); log(q)``)
    -> ``log_softmax(x).view(-1, k)``: log is elementwise, so the layout ops carry over.
    Safe when inline and no cast is among them (the same values); unsafe when the rewrite
    repeats the softmax's arguments in a later statement (a name in them may have been
    rebound between; logits that are a call are bound to a name first, so the network
    runs once) or a cast rounds the two forms differently.  The names on the way keep
    their values: only the log (and a logits binding) is rewritten."""
    found = layout_steps(ctx, log.x, log.scope, softmax.node)  # type: ignore[arg-type]
    if found is None:
        return None
    steps, cast = found
    built = fused_call(ctx, softmax, o.LOG_SOFTMAX, log.scope, prefer=(log.node.func,))
    if built is None:
        return None
    new, imports = built
    unsafe = resolved.crossed_statements or cast
    message = "Replace with log_softmax, the layout ops carried" + (
        " (repeats the softmax's arguments here)" if resolved.crossed_statements else "")
    fix = fixes.Fix(fixes.UNSAFE if unsafe else fixes.SAFE, message, [(log.node, laid_out(new, steps))], imports)
    if resolved.crossed_statements:  # q = softmax(net(x)): the logits bound once, not computed twice
        fix = bind_logits(ctx, fix, softmax, log.node)
    return fix


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
