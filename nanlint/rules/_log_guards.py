"""Which logs other rules report (covered) and which arguments underflow: asked by NAN109 and NAN107."""

from __future__ import annotations

import libcst as cst
from nanlint.vocabulary import ops as o
from nanlint.rules.context import RuleContext
from nanlint.analysis.guards import absorbed_epsilon, terms
from nanlint.rules._log1m_softmax import complement_of
from nanlint.semantic.literals import is_one


# arguments the dedicated rules already report (one finding per site)
_COVERED = (o.SOFTMAX, o.SIGMOID)


def underflows(ctx: RuleContext, expr: cst.BaseExpression, scope) -> bool:
    resolved = ctx.resolve(expr, scope, functions=True)
    call = ctx.op_call(resolved.expr, resolved.scope)
    return call is not None and call.op in (o.EXP, o.SOFTPLUS)


def covered(ctx: RuleContext, expr: cst.BaseExpression, scope) -> bool:
    """Reported by another rule: softmax/sigmoid (NAN101-104), 1 - sigmoid (NAN102),
    1 - softmax (NAN101), an absorbed epsilon (NAN105), 1 + exp, exp + exp, sum(exp) (NAN106)."""
    if complement_of(ctx, expr, scope) is not None:
        return True
    resolved = ctx.resolve(expr, scope, functions=True)
    e, s = resolved.expr, resolved.scope
    if ctx.op_of(e, s, *_COVERED) is not None:
        return True
    if absorbed_epsilon(ctx, e, s) is not None:
        return True
    chain = terms(e)
    if len(chain) == 2 and isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Subtract) \
            and is_one(e.left) and ctx.op_of(e.right, s, o.SIGMOID) is not None:
        return True
    if len(chain) == 2 and all(sign > 0 for sign, _ in chain):
        kinds = [ctx.op_call(t, s) for _, t in chain]
        if any(k is not None and k.op == o.EXP for k in kinds):
            return True
    call = ctx.op_call(e, s)
    if call is not None and call.op == o.SUM and call.x is not None:
        inner = ctx.op_call(call.x, s)
        if inner is not None and inner.op == o.EXP:
            return True
    return False
