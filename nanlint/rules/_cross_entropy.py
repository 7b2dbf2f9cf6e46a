"""The shapes of a hand-written cross entropy, -sum(y * log(p)): read by NAN103 (softmax) and NAN104 (sigmoid)."""

from __future__ import annotations

from dataclasses import dataclass
import libcst as cst
from nanlint.fix import fixes
from nanlint.source.walk import names_in
from nanlint.vocabulary import ops as o
from nanlint.semantic.context import OpCall
from nanlint.rules.context import RuleContext
from nanlint.analysis.guards import constant
from nanlint.semantic.resolve import Scope


REDUCTIONS = (o.SUM, o.MEAN)


@dataclass
class Product:
    """``y * log(q)`` (either order); ``label`` is ``y`` without a leading minus."""

    label: cst.BaseExpression
    negated: bool
    log: OpCall


def product_with_log(ctx: RuleContext, expr: cst.BaseExpression | None, scope: Scope) -> Product | None:
    if not (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply)):
        return None
    for factor, other in ((expr.right, expr.left), (expr.left, expr.right)):
        log = ctx.op_call(factor, scope)
        if log is None or log.op != o.LOG or log.x is None:
            continue
        negated = False
        if isinstance(other, cst.UnaryOperation) and isinstance(other.operator, cst.Minus):
            other, negated = other.expression, True
        return Product(other, negated, log)
    return None


def outer_negation(ctx: RuleContext, node: cst.CSTNode, scope: Scope) -> cst.UnaryOperation | None:
    """The unary minus applied to ``node``, directly or through sum/mean reductions
    (``-tf.reduce_mean(tf.reduce_sum(...))``, ``-(...).sum(1).mean()``)."""
    cur = node
    for _ in range(8):
        parent = ctx.parent(cur)
        if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Minus):
            return parent
        call = None
        if isinstance(parent, cst.Arg):
            call = ctx.parent(parent)
        elif isinstance(parent, cst.Attribute) and parent.value is cur:
            call = ctx.parent(parent)
            if not (isinstance(call, cst.Call) and call.func is parent):
                return None
        if not isinstance(call, cst.Call):
            return None
        reduction = ctx.op_call(call, scope)
        if reduction is None or reduction.op not in REDUCTIONS or reduction.x is not cur:
            return None
        cur = call
    return None


def signed_replacement(site: cst.BaseExpression, positive: cst.BaseExpression,
                       negation: cst.UnaryOperation | None, flipped: bool) -> tuple[cst.CSTNode, cst.CSTNode]:
    """Replace ``site``, whose value is ``-positive`` (``+positive`` when ``flipped``),
    removing the user's minus sign where there is one."""
    if flipped:
        return site, positive
    if negation is not None:
        return negation, negation.expression.deep_replace(site, positive)  # type: ignore[arg-type]
    return site, fixes.negate(positive)


def axis_constant(ctx: RuleContext, expr: cst.BaseExpression | None, scope: Scope) -> int | None:
    if expr is None:
        return None
    if isinstance(expr, (cst.List, cst.Tuple)) and len(expr.elements) == 1:
        expr = expr.elements[0].value
    value = constant(ctx, expr, scope)
    return int(value) if value is not None and value == int(value) else None


def replace_x(call: OpCall, new_x: cst.BaseExpression) -> cst.Call:
    arg = call.args["x"]
    return call.node.with_changes(args=[a.with_changes(value=new_x) if a is arg else a for a in call.node.args])


def string(text: str) -> cst.SimpleString:
    return cst.SimpleString(f'"{text}"')


def _contains(tree: cst.CSTNode, node: cst.CSTNode) -> bool:
    return tree is node or any(_contains(child, node) for child in tree.children)


def _names(ctx: RuleContext) -> frozenset[str]:
    """Every name written in the file: a new name must shadow none (not even a global a
    function reads before the line the binding goes on, which would make it local there)."""
    return frozenset(names_in(ctx.module))


def bind_logits(ctx: RuleContext, fix: fixes.Fix | None, softmax: OpCall, site: cst.CSTNode) -> fixes.Fix | None:
    """``fix`` (a rewrite of the loss at ``site`` that repeats the logits of a softmax
    assigned in an earlier statement, ``p = softmax(matmul(h, W) + b)``) with the logits
    computed once: ``p_logits = matmul(h, W) + b`` goes right before the softmax's
    statement, which becomes ``p = softmax(p_logits)``, and the loss reads ``p_logits``.
    ``fix`` as it is when the logits are a name already, or the softmax's statement is not
    a line of its own (``if c: p = softmax(z)``) or also holds the loss."""
    logits = softmax.x
    if fix is None or not fix.replacements or logits is None or isinstance(logits, (cst.Name, cst.Attribute)):
        return fix
    statement: cst.CSTNode | None = softmax.node
    while statement is not None and not isinstance(statement, (cst.SimpleStatementLine, cst.BaseCompoundStatement,
                                                               cst.SimpleStatementSuite)):
        statement = ctx.parent(statement)
    if not isinstance(statement, cst.SimpleStatementLine) or _contains(statement, site):
        return fix
    if len(statement.body) != 1:
        return fix
    assign = statement.body[0]
    target = (assign.targets[0].target if isinstance(assign, cst.Assign) and len(assign.targets) == 1
              else getattr(assign, "target", None))
    base = f"{target.value}_logits" if isinstance(target, cst.Name) else "logits"
    taken = ctx.memo("cross_entropy.names", lambda: _names(ctx))
    name = next(n for n in (base if i == 0 else f"{base}_{i + 1}" for i in range(len(taken) + 1)) if n not in taken)
    value = fixes.parenthesize(logits) if "\n" in ctx.code(logits) else logits
    binding = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], value)],
                                      leading_lines=statement.leading_lines)
    replacements = []
    for old, new in fix.replacements:
        if not _contains(new, logits):
            return fix
        replacements.append((old, new.deep_replace(logits, cst.Name(name))))
    rebound = statement.deep_replace(logits, cst.Name(name)).with_changes(leading_lines=())
    replacements.insert(0, (statement, cst.FlattenSentinel([binding, rebound])))  # type: ignore[arg-type]
    return fixes.Fix(fix.applicability, fix.message + f" (the logits bound once to `{name}`)", replacements,
                     fix.imports)
