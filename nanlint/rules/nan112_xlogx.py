"""NAN112 x-log-x: ``x * log(x)`` (an entropy or KL term) of a value that holds 0, where it is
``0 * -inf = NaN`` although the convention it implements takes 0 -> ``xlogy(x, x)``."""

from __future__ import annotations

import libcst as cst

from nanlint.analysis.evidence import excludes_zero, label_data
from nanlint.analysis.facts import tested_as_number
from nanlint.analysis.guards import constant, guarded
from nanlint.fix import fixes
from nanlint.rules._gradient_traps import key, spelled_call
from nanlint.rules._log_guards import covered, underflows
from nanlint.rules.base import Rule
from nanlint.rules.context import RuleContext
from nanlint.semantic.literals import terms
from nanlint.semantic.model import OpCall
from nanlint.semantic.resolve import Scope
from nanlint.vocabulary import ops as o

MESSAGE = ("{x} * log({arg}) of {why}: where {arg} is 0 it is 0 * -inf = NaN, not the 0 that the entropy "
           "convention (0 log 0 = 0) means; use xlogy({arg}, {arg}), which is 0 there")
# the derivative log(x) + 1 is -inf at 0 in any form; what xlogy's gradient gives there is a table fact
GRADIENT = {"nan": " (its gradient at 0 stays NaN in {fw}, xlogy's too: if {x} is differentiated, keep it from 0)",
            "zero": " (if {x} is differentiated, its derivative log({x}) + 1 is -inf at 0; {fw}'s xlogy gives 0 there)",
            "none": " ({fw} has no xlogy: where({x} > 0, {x} * log(where({x} > 0, {x}, 1)), 0) keeps the value and "
                    "the gradient finite)"}


class XLogX(Rule):
    code = "NAN112"
    name = "x-log-x"
    summary = "x * log(x) of a value that holds 0 (an entropy or KL term): 0 * -inf = NaN; use xlogy"
    fix = fixes.SAFE  # the bare product; distributed over a sum it is unsafe (the rounding moves)
    default = True  # strong evidence only: the factor is a parameter or the targets (the may tier otherwise)
    supersedes = ("NAN109", "NAN110")
    needs = ("log",)
    triggers = (frozenset({o.LOG}),)

    def check(self, ctx: RuleContext) -> None:
        for log in ctx.calls(o.LOG):
            x = log.x
            if x is None:
                continue
            found = _product(ctx, log, x)
            if found is None:
                continue
            product, side = found
            scope = log.scope
            if constant(ctx, x, scope) is not None or guarded(ctx, x, scope) or covered(ctx, x, scope) \
                    or underflows(ctx, x, scope) or excludes_zero(ctx, product, x, scope) \
                    or _where_handled(ctx, product, x, scope):
                continue  # a literal, an epsilon, a softmax (NAN101's), a guard or a where around it
            why, strong = _evidence(ctx, x, scope)
            text = ctx.code(x).strip()
            factor = text if isinstance(x, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)) or x.lpar \
                else f"({text})"
            grad = "none" if o.XLOGY not in log.framework.targets else \
                "nan" if o.FACT_XLOGY_GRAD_NAN_AT_ZERO in log.framework.facts else "zero"
            message = (MESSAGE.format(x=factor, arg=text, why=why)
                       + GRADIENT[grad].format(x=text, fw=log.framework.display))
            ctx.report(product, message, _fix(ctx, log, x, product, side), may=not strong)


def _product(ctx: RuleContext, log: OpCall, x: cst.BaseExpression) -> tuple[cst.BinaryOperation, cst.BaseExpression] | None:
    """The ``*`` whose other factor is ``x``, reached from the log through ``+`` and ``-``, and
    the factor the log sits in."""
    child: cst.CSTNode = log.node
    parent = ctx.parent(child)
    while isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, (cst.Add, cst.Subtract)):
        child, parent = parent, ctx.parent(parent)
    if not (isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Multiply)):
        return None
    other = parent.right if child is parent.left else parent.left
    if key(ctx, other) != key(ctx, x):
        return None
    return parent, child  # type: ignore[return-value]


def _evidence(ctx: RuleContext, x: cst.BaseExpression, scope: Scope) -> tuple[str, bool]:
    """Why ``x`` holds 0, and whether that is strong: the targets, or a parameter (probabilities
    passed in, whose zeros are in the caller's data); anything else computed is the may tier."""
    label = label_data(ctx, x, scope)
    if label is not None:
        return f"`{label}`, data that holds exact zeros (one-hot, sparse)", True
    base = x
    while isinstance(base, (cst.Attribute, cst.Subscript)):
        base = base.value
    if isinstance(base, cst.Name) and base.value not in ("self", "cls"):
        where = _parameter_of(ctx, base, scope)
        if where is not None and base is x and tested_as_number(ctx, base.value, where):
            return (f"`{base.value}`, a parameter the function compares with a number (a scalar: its zero is a "
                    "configuration, not data; may)"), False
        if where is not None:  # whatever its callers here pass: the contract admits 0
            return f"`{ctx.code(x).strip()}`, a parameter (a distribution passed in, whose zeros are the caller's)", True
    return "a value not shown to be positive (may: nothing here shows it holds 0)", False


def _parameter_of(ctx: RuleContext, name: cst.Name, scope: Scope) -> Scope | None:
    """The scope of the function ``name`` is a parameter of, or None."""
    found = ctx.index.lookup(name.value, scope)
    if found is None:
        return None
    bindings, where = found
    return where if bindings and all(isinstance(b.node, cst.Param) for b in bindings) else None


def _where_handled(ctx: RuleContext, product: cst.CSTNode, x: cst.BaseExpression, scope: Scope) -> bool:
    """A where or masked fill that tests ``x`` replaces the product, or the name the expression
    holding it is assigned to (``s = x * log(x) - x; s.masked_fill(x <= 1, 0)``): the value is
    right (a NaN gradient there is NAN201's)."""
    names = {key(ctx, product)}
    parent = ctx.parent(product)
    while isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation, cst.Call, cst.Arg, cst.Attribute)):
        if isinstance(parent, cst.Call) and ctx.op_of(parent, scope, o.WHERE, o.MASKED_FILL) is not None:
            return _tests(ctx, parent, x, scope)
        parent = ctx.parent(parent)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
        names.add(key(ctx, parent.targets[0].target))
    for call in ctx.calls(o.WHERE, o.MASKED_FILL, o.MASKED_FILL_INPLACE):
        if call.scope is scope and _tests(ctx, call.node, x, scope) \
                and any(key(ctx, call.value(r)) in names for r in ("x", "y") if call.value(r) is not None):
            return True
    return False


def _tests(ctx: RuleContext, where: cst.Call, x: cst.BaseExpression, scope: Scope) -> bool:
    """Whether the where's condition reads ``x`` itself: one of its sub-expressions is ``x``
    (``p > 0``, ``p == 0``, ``isclose(p, 0)``), compared as expressions, not as text (``step > 0``
    does not test ``p``)."""
    call = ctx.op_call(where, scope)
    cond = call.value("cond") if call is not None else None
    wanted = key(ctx, x)
    if cond is None or wanted is None:
        return False
    stack: list[cst.CSTNode] = [cond]  # a plain walk: a visitor class made per call would be a cycle
    while stack:
        node = stack.pop()
        if isinstance(node, cst.BaseExpression) and key(ctx, node) == wanted:
            return True
        stack.extend(node.children)
    return False


def _fix(ctx: RuleContext, log: OpCall, x: cst.BaseExpression, product: cst.BinaryOperation,
         side: cst.BaseExpression) -> fixes.Fix:
    title = "Use xlogy(x, x), 0 where x is 0"
    built = spelled_call(ctx, log.framework, o.XLOGY, log.scope, [("x", x), ("y", x)])
    if built is None:
        return fixes.Fix(fixes.DISPLAY_ONLY, title + " (this framework has none: where(x > 0, x * log(x), 0))")
    xlogy, imports = built
    if side is log.node:
        return fixes.Fix(fixes.SAFE, title, [(product, xlogy.with_changes(lpar=product.lpar, rpar=product.rpar))],
                         imports)
    new: cst.BaseExpression | None = None
    for sign, term in terms(side):  # type: ignore[arg-type]
        piece = xlogy if term is log.node else cst.BinaryOperation(
            x, cst.Multiply(), term if not isinstance(term, cst.BinaryOperation) else term.with_changes(
                lpar=[cst.LeftParen()], rpar=[cst.RightParen()]))
        if new is None:
            new = piece if sign > 0 else cst.UnaryOperation(cst.Minus(), piece)
        else:
            new = cst.BinaryOperation(new, cst.Add() if sign > 0 else cst.Subtract(), piece)
    assert new is not None
    if product.lpar or isinstance(ctx.parent(product), (cst.BinaryOperation, cst.UnaryOperation, cst.Attribute,
                                                        cst.Subscript, cst.Comparison, cst.BooleanOperation)):
        new = new.with_changes(lpar=product.lpar or [cst.LeftParen()], rpar=product.rpar or [cst.RightParen()])
    return fixes.Fix(fixes.UNSAFE, title + ", the product distributed over the sum", [(product, new)], imports)
