"""Shared helpers of the gradient-trap rules (NAN201-NAN205): expression
shapes (sums of squares, norms, dot products, hazardous ops) spoken of in the
canonical op vocabulary, and small builders for their fixes."""

from __future__ import annotations

import libcst as cst

from nanlint.analysis.differentiated import gradient_reaches
from nanlint.analysis.evidence import label_data
from nanlint.analysis.gradients import not_differentiated
from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.semantic.context import OpCall
from nanlint.rules.context import RuleContext
from nanlint.semantic.resolve import Scope
from nanlint.semantic.literals import is_literal, normalized, number

EPS_SQ = "1e-12"  # added under a sqrt: sqrt(1e-12) = 1e-6, invisible next to any real distance


MAY_GRADIENT = "may: nothing in this file shows a gradient reaches it"


def report_in_gradient(ctx: RuleContext, node: cst.CSTNode, message: str, fix: fixes.Fix | None,
                       framework: o.Framework | None, inputs: tuple = (), scope: Scope | None = None) -> bool:
    """Report a hazard that lives only in the gradient, on its evidence: silent when no
    gradient can reach ``node`` (:func:`not_differentiated`), by default when one does
    (:func:`gradient_reaches`: the message says how), in the may tier otherwise, and in
    the may tier too when each singular input (``inputs``, read in ``scope``) is the
    labels or targets: their gradient is NaN, and training does not ask for it.
    True when the site was judged (reported, or put in the may tier)."""
    if not_differentiated(ctx, node, framework):
        return False
    labels = [label_data(ctx, i, scope) for i in inputs] if scope is not None else []
    if labels and all(labels):
        ctx.report(node, f"{message} (may: the singular input is `{labels[0]}`, data whose gradient "
                         "training does not usually take)", fix, may=True)
        return True
    how = gradient_reaches(ctx, node)
    if how is not None:
        ctx.report(node, f"{message}; a gradient reaches it {how}", fix)
    else:
        ctx.report(node, f"{message} ({MAY_GRADIENT})", fix, may=True)
    return True


def bare(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr`` without its own parentheses."""
    if getattr(expr, "lpar", None):
        return expr.with_changes(lpar=[], rpar=[])
    return expr


def key(ctx: RuleContext, expr: cst.BaseExpression | None) -> str | None:
    """A whitespace- and parenthesis-insensitive text of ``expr``, to compare operands."""
    return normalized(expr) if expr is not None else None


def op_kind(ctx: RuleContext, expr: cst.BaseExpression | None, scope: Scope) -> OpCall | None:
    if expr is None:
        return None
    return ctx.op_call(expr, scope)


def is_op(ctx: RuleContext, expr, scope: Scope, *ops: str) -> OpCall | None:
    call = op_kind(ctx, expr, scope)
    return call if call is not None and call.op in ops else None


def follow(ctx: RuleContext, expr: cst.BaseExpression, scope: Scope) -> tuple[cst.BaseExpression, Scope]:
    r = ctx.resolve(expr, scope)
    return r.expr, r.scope


def binop(expr, *operators) -> cst.BinaryOperation | None:
    if type(expr) is cst.BinaryOperation and type(expr.operator) in operators:  # libcst's operators have no subclasses
        return expr
    return None


# --- squares, sums of squares, norms ---------------------------------------------------------
def square_base(ctx: RuleContext, expr, scope: Scope) -> cst.BaseExpression | None:
    """``b`` when ``expr`` is ``square(b)``, ``b ** 2``, ``pow(b, 2)`` or ``b * b``."""
    call = is_op(ctx, expr, scope, o.SQUARE, o.POW)
    if call is not None:
        if call.op == o.SQUARE or number(call.value("y")) == 2.0:
            return call.x
        return None
    b = binop(expr, cst.Power)
    if b is not None and number(b.right) == 2.0:
        return b.left
    b = binop(expr, cst.Multiply)
    if b is not None and key(ctx, b.left) == key(ctx, b.right):
        return b.left
    return None


def sum_of_squares(ctx: RuleContext, expr, scope: Scope, depth: int = 3) -> tuple[OpCall | None, cst.BaseExpression | None] | None:
    """(the sum call, the squared base) when ``expr`` is a sum of squares:
    ``sum(square(b), axis)``, ``(b ** 2).sum(-1)``, or ``dx**2 + dy**2``."""
    expr, scope = follow(ctx, expr, scope)
    call = is_op(ctx, expr, scope, o.SUM)
    if call is not None and call.x is not None:
        inner, inner_scope = follow(ctx, call.x, scope)
        base = square_base(ctx, inner, inner_scope)
        if base is not None:
            return call, base
        return None
    b = binop(expr, cst.Add)
    if b is not None and depth > 0:
        sides = [b.left, b.right]
        if all(square_base(ctx, s, scope) is not None or sum_of_squares(ctx, s, scope, depth - 1) is not None
               for s in sides):
            return None, None
    return None


def is_difference(ctx: RuleContext, expr, scope: Scope) -> bool:
    expr, scope = follow(ctx, expr, scope)
    return binop(expr, cst.Subtract) is not None or is_op(ctx, expr, scope, o.SUBTRACT) is not None


def euclidean_norm(call: OpCall) -> bool:
    """A 2-norm (the default order, or ord 2 / 'euclidean' / 'fro')."""
    ord_ = call.value("ord")
    if ord_ is None or (isinstance(ord_, cst.Name) and ord_.value == "None"):
        return True
    if number(ord_) == 2.0:
        return True
    return isinstance(ord_, cst.SimpleString) and ord_.evaluated_value in ("euclidean", "fro")


def sqrt_argument(ctx: RuleContext, expr, scope: Scope) -> tuple[str, cst.CSTNode, cst.BaseExpression] | None:
    """When ``expr`` is a square root: (how, node, argument): ``sqrt(s)``, ``s.sqrt()``,
    ``pow(s, 0.5)``, ``s ** 0.5``."""
    call = is_op(ctx, expr, scope, o.SQRT, o.POW)
    if call is not None and call.x is not None:
        if call.op == o.SQRT or number(call.value("y")) == 0.5:
            return ("method" if call.is_method else "call"), call.node, call.x
        return None
    b = binop(expr, cst.Power)
    if b is not None and number(b.right) == 0.5:
        return "power", b, b.left
    return None


def add_eps(expr: cst.BaseExpression, eps: str = EPS_SQ) -> cst.BinaryOperation:
    """``expr + eps`` with parentheses where ``expr`` needs them."""
    inner = bare(expr)
    if not (fixes.is_atomic(inner) or (isinstance(inner, cst.BinaryOperation) and isinstance(
            inner.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.Power, cst.FloorDivide,
                             cst.Modulo, cst.MatrixMultiply)))
            or isinstance(inner, cst.UnaryOperation)):
        inner = fixes.parenthesize(inner)
    return cst.BinaryOperation(inner, cst.Add(), cst.Float(eps))


def sqrt_plus_eps(ctx: RuleContext, how: str, node: cst.CSTNode, arg: cst.BaseExpression,
                  eps: str = EPS_SQ) -> cst.CSTNode:
    """The square root ``node`` (as classified by :func:`sqrt_argument`) of ``arg + eps``."""
    guarded = add_eps(arg, eps)
    if how == "method":
        assert isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
        return node.with_changes(func=node.func.with_changes(value=fixes.parenthesize(guarded)))
    if how == "power":
        assert isinstance(node, cst.BinaryOperation)
        return node.with_changes(left=fixes.parenthesize(guarded))
    assert isinstance(node, cst.Call)
    return _replace(node, arg, guarded)


def _replace(tree: cst.CSTNode, old: cst.CSTNode, new: cst.CSTNode) -> cst.CSTNode:
    return fixes.replaced(tree, {id(old): new})


def replace_all(tree: cst.CSTNode, mapping: dict[int, cst.CSTNode]) -> cst.CSTNode:
    return fixes.replaced(tree, mapping)


def spelled_call(ctx: RuleContext, framework: o.Framework, op: str, scope: Scope, args: list[tuple[str, cst.BaseExpression]],
                 prefer=()) -> tuple[cst.Call, list[fixes.Import]] | None:
    """``op(args)`` in ``framework`` with the file's aliases; ``args`` are (role, value):
    positional while the target has the role at that position, keywords after."""
    spelling = ctx.spell(framework, op, scope, prefer=tuple(prefer))
    if spelling is None:
        return None
    func, target, imports = spelling
    out: list[cst.Arg] = []
    positional = True
    for role, value in args:
        if positional and target.position_of(role) == len(out):
            out.append(fixes.arg(value))
            continue
        positional = False
        kw = target.keyword_for(role)
        if kw is None:
            return None
        out.append(fixes.arg(value, kw))
    return fixes.call(func, out), imports


def norm_as_sqrt_sum(ctx: RuleContext, norm: OpCall, scope: Scope, x: cst.BaseExpression | None = None,
                     prefer=(), eps: str = EPS_SQ) -> tuple[cst.Call, list[fixes.Import]] | None:
    """``norm(x, axis, keepdims)`` written ``sqrt(sum(square(x), axis, keepdims) + eps)``."""
    if norm.has("ord") or norm.x is None:
        return None
    fw = norm.framework
    square = spelled_call(ctx, fw, o.SQUARE, scope, [("x", x if x is not None else norm.x)], prefer)
    if square is None:
        return None
    spelling = ctx.spell(fw, o.SUM, scope, prefer=tuple(prefer))
    if spelling is None:
        return None
    func, target, sum_imports = spelling
    args = ctx.carry_args(norm, target, ("x", "axis", "keepdims"), x=square[0])
    if args is None:
        return None
    root = spelled_call(ctx, fw, o.SQRT, scope, [("x", add_eps(fixes.call(func, args), eps))], prefer)
    if root is None:
        return None
    return root[0], square[1] + sum_imports + root[1]


def clip_method(framework: o.Framework) -> str | None:
    """The name of a tensor method computing ``clip`` with both bounds, if the framework has one."""
    for name, f in framework.methods.items():
        if f.op == o.CLIP and f.position_of("lo") == 0 and f.position_of("hi") == 1:
            return name
    return None


# --- hazardous ops (singular somewhere on their domain) ------------------------------------------------
HAZARD_OPS = {o.LOG: "log", o.DIVIDE: "division", o.SQRT: "sqrt", o.RSQRT: "rsqrt", o.RECIPROCAL: "reciprocal",
              o.POW: "pow", o.ACOS: "acos", o.ASIN: "asin"}
ARITHMETIC_OPS = (o.MULTIPLY, o.ADD, o.SUBTRACT, o.NEGATIVE, o.SUM, o.MEAN)


def guarded(ctx: RuleContext, expr, scope: Scope) -> bool:
    """An input kept away from a singularity: clipped, a maximum, ``+ eps``, a where."""
    if expr is None:
        return False
    expr, scope = follow(ctx, expr, scope)
    if is_op(ctx, expr, scope, o.CLIP, o.MAXIMUM, o.WHERE, o.MASKED_FILL, o.SOFTPLUS, o.EXP) is not None:
        return True
    b = binop(expr, cst.Add, cst.Subtract)
    return b is not None and (is_literal(b.left) or is_literal(b.right))


def hazard(ctx: RuleContext, expr, scope: Scope, depth: int = 4) -> str | None:
    """What makes ``expr`` non-finite on some inputs (``log``, ``division``...),
    looking through arithmetic and names; None when nothing does."""
    if expr is None or depth < 0:
        return None
    expr, scope = follow(ctx, expr, scope)
    call = op_kind(ctx, expr, scope)
    if call is not None:
        if call.op in HAZARD_OPS:
            watched = call.value("y") if call.op == o.DIVIDE else call.x
            if call.op == o.POW:
                e = number(call.value("y"))
                if e is None or (e >= 0 and e == int(e)):
                    return None
            if call.op in (o.ACOS, o.ASIN) or not guarded(ctx, watched, scope):
                return HAZARD_OPS[call.op]
            return None
        if call.op in ARITHMETIC_OPS or call.op == o.WHERE:  # a where: either branch's value
            for role in ("x", "y"):
                found = hazard(ctx, call.value(role), scope, depth - 1)
                if found:
                    return found
            return None
        for r in ctx.values(expr, scope, shape=True):  # through layout ops: stack([h, l, s]), cat, view
            if r.expr is not expr:
                found = hazard(ctx, r.expr, r.scope, depth - 1)
                if found:
                    return found
        return None
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.Divide):
            return None if guarded(ctx, expr.right, scope) or is_literal(expr.right) else "division"
        if isinstance(expr.operator, cst.Power):
            e = number(expr.right)
            return "pow" if e is not None and (e < 0 or e != int(e)) and not guarded(ctx, expr.left, scope) else None
        if isinstance(expr.operator, (cst.Multiply, cst.Add, cst.Subtract)):
            return hazard(ctx, expr.left, scope, depth - 1) or hazard(ctx, expr.right, scope, depth - 1)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return hazard(ctx, expr.expression, scope, depth - 1)
    return None
