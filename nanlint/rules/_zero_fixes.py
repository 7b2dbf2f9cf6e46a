"""Fixes shared by the rules on values that reach 0 (NAN107 log-of-zero, NAN108
divide-by-zero, NAN206 root-at-zero): a guard at the sink, ``clamp(x, eps)`` in torch
and ``maximum(x, eps)`` elsewhere, with an epsilon that survives the file's dtype."""

from __future__ import annotations

import libcst as cst

from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.semantic.context import OpCall
from nanlint.rules.context import RuleContext
from nanlint.semantic.reach import MODEL, MODULE, Resolved
from nanlint.semantic.resolve import Scope
from nanlint.rules._gradient_traps import spelled_call

EPS32 = "1e-7"  # log(1e-7) = -16.1; survives float32 (normal down to 1.2e-38)
EPS16 = "1e-4"  # float16's smallest normal is 6.1e-5: 1e-7 would be a subnormal, 1e-8 is 0
_HALF = ("float16", "bfloat16", ".half()", "'half'", '"half"', "mixed_float16", "mixed_bfloat16")


def epsilon(ctx: RuleContext) -> str:
    """The guard's epsilon: larger when the file shows float16/bfloat16 evidence."""
    return ctx.memo("zero_fixes.epsilon", lambda: _epsilon(ctx.text))  # not a text search per fix


def _epsilon(text: str) -> str:
    return EPS16 if any(h in text for h in _HALF) else EPS32


def far(value: Resolved) -> bool:
    """The source is in another module, a model, or reached through a call: the fix
    cannot see it (display-only, pointing to returning logits)."""
    return bool(value.via & {MODEL, MODULE})


def guard(ctx: RuleContext, framework: o.Framework, x: cst.BaseExpression, scope: Scope,
          prefer: tuple[cst.CSTNode, ...] = ()) -> tuple[cst.Call, list[fixes.Import]] | None:
    """``clamp(x, eps)`` (torch) or ``maximum(x, eps)`` spelled with the file's aliases."""
    eps = cst.Float(epsilon(ctx))
    if framework.name == "torch":
        return spelled_call(ctx, framework, o.CLIP, scope, [("x", x), ("lo", eps)], prefer)
    return spelled_call(ctx, framework, o.MAXIMUM, scope, [("x", x), ("y", eps)], prefer)


def guard_fix(ctx: RuleContext, call: OpCall, x: cst.BaseExpression, message: str) -> fixes.Fix:
    built = guard(ctx, call.framework, x, call.scope, prefer=(call.node.func,))
    if built is None:
        return fixes.Fix(fixes.DISPLAY_ONLY, message)
    return fixes.Fix(fixes.UNSAFE, message, [(x, built[0])], built[1])
