"""How strong the evidence is that a value reaches 0: a logit (a sigmoid or softmax of
it saturates), a value that takes either sign (a clamp at 0 of it is often 0), a mask
this code selects rather than one passed in (a padding mask keeps an element per row),
an early return on the value being 0."""

from __future__ import annotations

import re

import libcst as cst

from nanlint.vocabulary import ops as o
from nanlint.semantic.context import FileContext
from nanlint.analysis.guards import casts, constant, terms
from nanlint.semantic.reach import CALL, MODEL, MODULE, PARAM
from nanlint.semantic.resolve import Scope
from nanlint.semantic.literals import normalized
from nanlint.semantic.navigation import variable_names_in


# --- how strong the evidence is that a value reaches 0 ------------------------------------------
# The zero rules (NAN107, NAN108, NAN206) report on by default only what the code shows
# reaches 0 on inputs training sees; weaker evidence (a value that is 0 only when a
# precondition the code never writes down fails) is the opt-in NAN110's.
LOGIT_NAME = re.compile(r"logit", re.IGNORECASE)


def logit(ctx: FileContext, expr: cst.BaseExpression | None, scope: Scope, _depth: int = 3) -> bool:
    """The code says ``expr`` is a logit, a log-odds or class score with no bound, whose
    sigmoid or softmax saturates on inputs training sees: a value named like one
    (``logits``, ``self.logits``, ``-logits``, ``logits[..., 0]``, ``logits / temperature``)
    or an affine output (``h @ W``, ``matmul(h, W) + b``).  Not an embedding, a box
    coordinate or a hidden state: their sigmoid stays far from 0 in a trained model."""
    if expr is None or _depth < 0:
        return False
    while True:
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
            expr = expr.expression
        elif isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide) \
                and constant(ctx, expr.left, scope) is None:
            expr = expr.left  # logits / temperature
        else:
            break
    if isinstance(expr, cst.Name) and LOGIT_NAME.search(expr.value):
        return True
    if isinstance(expr, cst.Attribute) and LOGIT_NAME.search(expr.attr.value):
        return True
    if _affine(ctx, expr, scope):
        return True
    if isinstance(expr, (cst.Name, cst.Attribute, cst.Call)):
        for r in ctx.values(expr, scope, shape=True):
            if r.expr is expr:
                continue
            if logit(r.ctx or ctx, r.expr, r.scope, _depth - 1):
                return True
    return False


def _affine(ctx: FileContext, expr: cst.BaseExpression, scope: Scope) -> bool:
    e = ctx.arithmetic(expr, scope)
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Add):
        return _affine(ctx, e.left, scope) or _affine(ctx, e.right, scope)
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.MatrixMultiply):
        return True
    call = ctx.op_call(e, scope)
    return call is not None and call.op == o.MATMUL


def indefinite(ctx: FileContext, expr: cst.BaseExpression | None, scope: Scope) -> bool:
    """The code shows ``expr`` takes either sign, for some value reaching it: a difference
    (``a - b``, ``1 - s ** 2``, ``|a|² + |b|² - 2 a·b``), a matrix product, a negation.
    A clamp at 0 of such a value is active: 0 on a whole region (or wherever the two sides
    coincide and rounding goes negative).  A clamp of a value non-negative by construction
    (a variance, a mean of squares) is defensive and never active."""
    if expr is None:
        return False
    for r in ctx.values(expr, scope, shape=True):
        owner = r.ctx or ctx
        e = owner.arithmetic(r.expr, r.scope)
        if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, cst.Minus):
            return True
        if _affine(owner, e, r.scope):
            return True
        chain = terms(e, owner, r.scope)
        if len(chain) > 1 and any(sign < 0 and constant(owner, t, r.scope) is None for sign, t in chain):
            return True
    return False


def weak_mask(ctx: FileContext, expr: cst.BaseExpression, scope: Scope, _depth: int = 3) -> str | None:
    """Why a count of the 0/1 mask ``expr`` (``sum(mask)``) is weak evidence of an empty
    selection, or None when the program itself selects by a fixed criterion
    (``target != ignore_index``, ``union > 0``, ``isnan(t) | (t == inf)``), which nothing
    keeps from matching nothing.  Weak: a mask passed in (a padding or validity mask:
    every example holds an element by construction), a count of the non-NaN entries (0
    only when every entry is NaN already: the NaN propagates, it is not made here), a
    threshold relative to the values themselves (sparsemax's support
    ``z - (cumsum(z) - 1) / k > 0`` holds the largest element)."""
    if _depth < 0:
        return None
    if _padding(expr):
        return _PADDING_WHY
    for r in ctx.values(expr, scope, shape=True):
        owner = r.ctx or ctx
        if _padding(r.expr):
            return _PADDING_WHY
        if PARAM in r.via:
            return "a mask passed in by the caller (a padding or validity mask holds an element per example)"
        if r.via & _ELSEWHERE:
            return ("a mask made by another function: what it selects (padding, valid tokens) is that "
                    "function's contract, not shown here")
        e = owner.condition(r.expr, r.scope)
        if isinstance(e, (cst.Name, cst.Attribute)):
            return "a mask passed in by the caller (a padding or validity mask holds an element per example)"
        if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, cst.BitInvert):
            inner = e.expression
            found = owner.op_call(owner.resolve(inner, r.scope).expr, r.scope)
            if found is not None and found.op == o.IS_NAN:
                return "a count of the non-NaN entries: 0 only when every entry is NaN already"
            why = weak_mask(owner, inner, r.scope, _depth - 1)
        elif isinstance(e, cst.BinaryOperation) and isinstance(e.operator, (cst.BitAnd, cst.BitOr)):
            why = weak_mask(owner, e.left, r.scope, _depth - 1) or weak_mask(owner, e.right, r.scope, _depth - 1)
        elif isinstance(e, cst.Comparison) and _relative(owner, e, r.scope):
            why = "a threshold relative to the values themselves: the extreme element passes it"
        else:
            why = None
        if why is not None:
            return why
    return None


_ELSEWHERE = frozenset({CALL, MODEL, MODULE})
LABEL_NAME = re.compile(r"label|target|gold|truth|y_true|ground", re.IGNORECASE)
# data a loss is given that training does not differentiate: the labels, and in
# reinforcement learning the rewards, returns and advantages (policy-gradient weights)
_DATA_NAME = re.compile(LABEL_NAME.pattern + r"|reward|returns?(?![a-z])|advantage|adv(?![a-z])", re.IGNORECASE)


def data_mask(ctx: FileContext, expr: cst.BaseExpression, scope: Scope) -> str | None:
    """Why the 0/1 mask ``expr`` marks what the data holds, or None: every comparison that
    builds it tests labels or targets against a constant (``labels != no_event_label``,
    ``targets > 0``).  A batch of real data holds such positions (a melody holds events, as a
    padded batch holds tokens); a selection of the model's outputs (``probs >= 0.5``) can be
    empty at any step."""
    tests = []
    for r in ctx.values(expr, scope, shape=True):
        owner = r.ctx or ctx
        e = owner.condition(r.expr, r.scope)
        if not isinstance(e, cst.Comparison):
            return None
        tests.append((owner, e))
    if not tests:
        return None
    for owner, e in tests:
        names = [n.value for n in _names_in(e)]
        if not names or not all(LABEL_NAME.search(n) for n in names):
            return None
    return "a mask of what the labels hold (labels compared with a constant): a batch of real data holds it"
def label_data(ctx: FileContext, expr: cst.BaseExpression, scope: Scope) -> str | None:
    """The name of ``expr`` when it is the labels or targets a loss is given, or the
    rewards, returns or advantages of a policy gradient (a parameter or a name
    ``targets``, ``labels``, ``y_true``, ``rewards``...: data, which training does not
    differentiate), followed through names; None otherwise."""
    names = set()
    for r in ctx.values(expr, scope, shape=True):
        e = r.expr
        text = e.value if isinstance(e, cst.Name) else e.attr.value if isinstance(e, cst.Attribute) else None
        if text is None or not _DATA_NAME.search(text):
            return None
        names.add(text)
    return sorted(names)[0] if names else None


PADDING_NAME = re.compile(r"pad|length|lens(?![a-z])|token|attention", re.IGNORECASE)
_PADDING_WHY = "a padding or token mask (from lengths, pad ids, attention): each example holds an element"


def padding_mask(expr: cst.BaseExpression) -> bool:
    """The mask says it marks padding or tokens (a name in it: ``key_padding_mask``,
    ``attention_mask``, ``arange(n) < lengths``, ``ids != pad_id``)."""
    return _padding(expr)


def _padding(expr: cst.BaseExpression) -> bool:
    """The mask says it marks padding or tokens: a name in it (``padding_mask``,
    ``token_mask``, ``length_to_mask(lens)``, ``ids != pad_token_id``, ``attention_mask``)."""
    return any(PADDING_NAME.search(n.value) for n in _names_in(expr))


def _relative(ctx: FileContext, test: cst.Comparison, scope: Scope) -> bool:
    """A comparison of values with something computed from those same values: one name
    of the comparison is assigned from another (``s = cumsum(z)``; ``z - (s - 1) / k > 0``)."""
    found = _names_in(test)
    names = {n.value for n in found}
    for n in found:
        r = ctx.resolve(n, scope)
        if r.expr is n or isinstance(r.expr, cst.Name):
            continue
        if names & {m.value for m in _names_in(r.expr)} - {n.value}:
            return True
    return False


def _names_in(node: cst.CSTNode) -> list[cst.Name]:
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Name):
            out.append(n)
        elif isinstance(n, cst.Attribute):
            stack.append(n.value)  # x.shape: x, not shape
        elif isinstance(n, cst.Call):
            stack.extend(a.value for a in n.args)
            stack.append(n.func)
        else:
            stack.extend(n.children)
    return out


def returns_early(ctx: FileContext, node: cst.CSTNode, expr: cst.BaseExpression, scope: Scope) -> bool:
    """A statement of the function before ``node`` returns or raises when ``expr`` is 0:
    ``if torch.sum(safe_n) == 0: return zero_losses()`` before ``/ torch.sum(safe_n)``; or,
    in the body of a loop around ``node``, leaves the iteration: ``if grad_norm == 0:
    continue`` before ``grad.div_(grad_norm)``."""
    fdef = scope.node
    if not isinstance(fdef, cst.FunctionDef) or not isinstance(fdef.body, cst.IndentedBlock):
        return False
    at = _statement_index(ctx, node, fdef.body)  # the order of statements, not their lines:
    if at is None:                                # lines need the positions of the whole module
        return False
    exiting = ctx.memo("evidence.exiting_ifs", dict)
    ifs = exiting.get(id(fdef))
    if ifs is None:  # the function's ``if ...: return/raise`` and their places, once per function
        ifs = exiting[id(fdef)] = [(i, s) for i, s in enumerate(fdef.body.body)
                                   if isinstance(s, cst.If) and _exits(s.body)]
    for index, stmt in ifs:
        if index >= at:
            break
        if _zero_test(ctx, stmt.test, expr, scope):
            return True
    return _skips_iteration(ctx, node, expr, scope, fdef)


def _skips_iteration(ctx: FileContext, node: cst.CSTNode, expr: cst.BaseExpression, scope: Scope,
                     fdef: cst.FunctionDef) -> bool:
    """In the body of a loop of ``fdef`` that holds ``node``, an ``if`` before it that leaves
    the iteration (``continue``, ``break``, ``return``, ``raise``) when ``expr`` is 0."""
    n = ctx.parent(node)
    while n is not None and n is not fdef:
        if isinstance(n, (cst.For, cst.While)) and isinstance(n.body, cst.IndentedBlock):
            at = _statement_index(ctx, node, n.body)
            for stmt in n.body.body[:at]:
                if isinstance(stmt, cst.If) and _exits(stmt.body, loop=True) and _zero_test(ctx, stmt.test, expr, scope):
                    return True
        n = ctx.parent(n)
    return False


def _statement_index(ctx: FileContext, node: cst.CSTNode, block: cst.IndentedBlock) -> int | None:
    """The index in ``block`` of the statement that holds ``node``."""
    n: cst.CSTNode | None = node
    while n is not None:
        parent = ctx.parent(n)
        if parent is block:
            return next(i for i, s in enumerate(block.body) if s is n)
        n = parent
    return None


def excludes_zero(ctx: FileContext, node: cst.CSTNode, expr: cst.BaseExpression, scope: Scope) -> bool:
    """The code keeps ``expr`` away from 0 where ``node`` runs: an early return or raise on it
    being 0 (:func:`returns_early`), or a branch that runs only when it is not:
    ``if std <= 0: ... else: log(std)``, ``if n > 0: s / n``, ``0 if n == 0 else s / n``
    (``expr`` written alike, or the value a name of it is assigned), and the graph's own
    branch, a function given to ``cond``: ``cond(any(m), lambda: s / sum(m), lambda: 0.0)``
    (``tf.cond``, ``keras.ops.cond``, ``torch.cond``; not ``jax.lax.cond``, which ``vmap``
    turns into a select that runs both branches)."""
    return returns_early(ctx, node, expr, scope) or _in_nonzero_branch(ctx, node, expr, scope)


def _in_nonzero_branch(ctx: FileContext, node: cst.CSTNode, expr: cst.BaseExpression, scope: Scope) -> bool:
    child, parent = node, ctx.parent(node)
    while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Module)):
        if isinstance(parent, (cst.If, cst.IfExp)):
            if child is parent.body and _nonzero_test(ctx, parent.test, expr, scope):
                return True
            if child is parent.orelse and _zero_test(ctx, parent.test, expr, scope):
                return True
        if isinstance(parent, cst.Lambda) and _cond_branch(ctx, parent, expr, scope):
            return True
        child, parent = parent, ctx.parent(parent)
    return isinstance(parent, cst.FunctionDef) and _named_branch(ctx, parent, expr, scope)


def _cond_branch(ctx: FileContext, fn: cst.Lambda, expr: cst.BaseExpression, scope: Scope) -> bool:
    """``fn`` is the branch of a ``cond`` that runs only when ``expr`` is not 0: the first
    branch under a test that it is not (``n > 0``, ``any(m)`` of a sum or mean of ``m``), or
    the second under one that it is (``n == 0``)."""
    arg = ctx.parent(fn)
    holder = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
    call = ctx.op_call(holder, scope) if isinstance(holder, cst.Call) else None
    return call is not None and _runs_where_nonzero(ctx, call, lambda branch: branch is fn, expr, scope)


def _named_branch(ctx: FileContext, fdef: cst.FunctionDef, expr: cst.BaseExpression, scope: Scope) -> bool:
    """``fdef`` is a nested function given by name as such a branch, in the scope that defines
    it (``def true_fn(): return s / n`` ... ``tf.cond(n > 0, true_fn, false_fn)``), and given to
    no other call there (then it could run anywhere)."""
    own = scope
    while own is not None and own.node is not fdef:
        own = own.parent
    outer = own.parent if own is not None else None
    if outer is None or outer.kind != "function":
        return False
    name = fdef.name.value

    def named(branch) -> bool:
        return isinstance(branch, cst.Name) and branch.value == name

    conds = [c for c in ctx.calls(o.COND) if c.scope is outer and any(named(c.value(r)) for r in ("then", "orelse"))]
    given = sum(named(c.value(r)) for c in conds for r in ("then", "orelse"))
    uses = variable_names_in(ctx, outer.node.body).get(name, ())  # every read of the name, the defs' excluded
    if not conds or len(outer.bindings.get(name, ())) != 1 or len(uses) != given:
        return False  # rebound, or read elsewhere (called, passed on): it may run where expr is 0
    return all(_runs_where_nonzero(ctx, c, named, expr, scope) for c in conds)


def _runs_where_nonzero(ctx: FileContext, call, is_branch, expr: cst.BaseExpression, scope: Scope) -> bool:
    """``call`` is a ``cond`` whose branch ``is_branch`` picks runs only where ``expr`` is not 0."""
    if call.op != o.COND or call.value("cond") is None or call.framework.name == "jax":
        return False  # jax.lax.cond under vmap is a select: both branches run, the trap is a where's
    test = call.value("cond")
    if is_branch(call.value("then")):
        return _nonzero_test(ctx, test, expr, scope)
    return is_branch(call.value("orelse")) and _zero_test(ctx, test, expr, scope)


def _some_of(ctx: FileContext, test: cst.BaseExpression, expr: cst.BaseExpression, scope: Scope) -> bool:
    """``test`` is ``any(m)`` and ``expr`` a sum or mean of ``m`` (through a cast): not 0 then."""
    found = ctx.op_of(test, scope, o.ANY)
    total = ctx.op_of(expr, scope, o.SUM, o.MEAN)
    if found is None or total is None or found[0].x is None or total[0].x is None:
        return False
    mask, summed = found[0].x, total[0].x
    if _alike(ctx, mask, summed, scope):
        return True
    cast = ctx.op_call(ctx.resolve(summed, scope).expr, scope)  # sum(m), m = cast(scores > 0.5)
    return cast is not None and cast.op == o.SHAPE and casts(cast) and cast.x is not None \
        and _alike(ctx, mask, cast.x, scope)


def _alike(ctx: FileContext, a: cst.BaseExpression, expr: cst.BaseExpression, scope: Scope) -> bool:
    """``a`` is ``expr`` written alike, or the one value assigned to a name of either."""
    texts = {normalized(expr), normalized(ctx.resolve(expr, scope).expr)}
    return normalized(a) in texts or normalized(ctx.resolve(a, scope).expr) in texts


def _nonzero_test(ctx: FileContext, test: cst.BaseExpression, expr: cst.BaseExpression, scope: Scope) -> bool:
    """``expr > 0``, ``expr != 0``, ``expr >= 1``, ``0 < expr``, ``any(m)`` of ``expr = sum(m)``:
    true only when ``expr`` is not 0."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return _some_of(ctx, test, expr, scope)
    left, target = test.left, test.comparisons[0]
    op, right = target.operator, target.comparator
    if constant(ctx, left, scope) is not None and constant(ctx, right, scope) is None:
        left, right = right, left  # 0 < n: as n > 0
        op = {cst.LessThan: cst.GreaterThan(), cst.GreaterThan: cst.LessThan(),
              cst.LessThanEqual: cst.GreaterThanEqual(), cst.GreaterThanEqual: cst.LessThanEqual()}.get(type(op), op)
    bound = constant(ctx, right, scope)
    if bound is None or not _alike(ctx, left, expr, scope):
        return False
    return (isinstance(op, (cst.GreaterThan, cst.NotEqual)) and bound == 0.0) or \
        (isinstance(op, cst.GreaterThanEqual) and bound > 0)


def _zero_test(ctx: FileContext, test: cst.BaseExpression, expr: cst.BaseExpression, scope: Scope) -> bool:
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _alike(ctx, test.expression, expr, scope) or _some_of(ctx, test.expression, expr, scope)
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return False
    target = test.comparisons[0]
    bound = constant(ctx, target.comparator, scope)
    return _alike(ctx, test.left, expr, scope) and (
        (isinstance(target.operator, (cst.Equal, cst.LessThanEqual)) and bound == 0.0)
        or (isinstance(target.operator, cst.LessThan) and bound is not None and 0 < bound <= 1))


def _exits(body: cst.BaseSuite, loop: bool = False) -> bool:
    """The block ends in ``return``/``raise`` (and, in a loop's body, ``continue``/``break``)."""
    stmts = body.body if isinstance(body, cst.IndentedBlock) else [body]
    last = stmts[-1] if stmts else None
    if isinstance(last, cst.SimpleStatementLine):
        last = last.body[-1] if last.body else None
    if isinstance(body, cst.SimpleStatementSuite):
        last = body.body[-1] if body.body else None
    return isinstance(last, (cst.Return, cst.Raise, cst.Continue, cst.Break) if loop else (cst.Return, cst.Raise))


# --- a product of probabilities ---------------------------------------------------------------
# names that say a value is a probability (in [0, 1]): ``probs``, ``p_halt``, ``lam``,
# ``lambdas``, ``halting_prob``; a product of many of them underflows
PROBABILITY_NAME = re.compile(r"(^|_)(p|probs?|probabilit(y|ies)|lam|lambdas?|halt(ing)?|keep|stay|survival)(_|\d|$)",
                              re.IGNORECASE)


def unit_name(expr: cst.BaseExpression | None) -> bool:
    """``expr`` is named like a probability (``lam_j``, ``self.p_halt``, ``probs[:, 0]``)."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    if isinstance(expr, cst.Name):
        return bool(PROBABILITY_NAME.search(expr.value))
    if isinstance(expr, cst.Attribute):
        return bool(PROBABILITY_NAME.search(expr.attr.value))
    return False
