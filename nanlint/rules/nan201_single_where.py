"""NAN201 single-where: ``where(c, f(x), other)`` with ``f`` singular where ``c``
is false -> the double where ``where(c, f(where(c, x, 1.0)), other)``."""

from __future__ import annotations

import re

import libcst as cst

from nanlint.fix import fixes
from nanlint.vocabulary import ops as o
from nanlint.semantic.context import OpCall
from nanlint.rules.context import RuleContext
from nanlint.analysis.evidence import excludes_zero
from nanlint.analysis.facts import gradient_free
from nanlint.analysis.guards import constant, guarded, nonnegative
from nanlint.semantic.reach import origin_note
from nanlint.semantic.resolve import Scope
from nanlint.rules.base import Rule
from nanlint.rules._gradient_traps import (bare, binop, follow, is_op, key, replace_all, report_in_gradient,
                                           spelled_call, square_base)
from nanlint.semantic.literals import is_literal, number

SAFE_VALUE = "1.0"  # in the domain of 1/x, log, sqrt, rsqrt, x ** p


# where each kind of site is singular: 1/x and log only at 0 (log's NaN at x < 0 has a
# finite gradient, 0 under the where); roots and fractional powers also below 0
AT_ZERO = (0.0,)
AT_ZERO_AND_BELOW = (0.0, -1.0)


def singular_points(what: str) -> tuple[float, ...]:
    if what in ("1/x", "division", "log", "reciprocal"):
        return AT_ZERO
    exponent = re.search(r"(-?[0-9.e+-]+)\)?$", what)
    if exponent is not None and float(exponent.group(1)).is_integer():  # x ** -2: only 0
        return AT_ZERO
    return AT_ZERO_AND_BELOW


def singular_sites(ctx: RuleContext, expr: cst.BaseExpression, scope: Scope,
                   nodes: dict | None = None) -> list[tuple[str, cst.BaseExpression]]:
    """(what, input) for each sub-expression of ``expr`` whose gradient is non-finite
    at some input (``1/x`` at 0, ``log`` at 0, ``x ** 0.5`` at 0 and below, and
    ``sqrt``/``rsqrt``/``reciprocal`` where the framework's kernel gives NaN under a
    zero upstream gradient).  Does not look inside a nested where (already guarded).
    ``nodes``: filled with each input's sub-expression (by the input's id), for messages."""
    out: list[tuple[str, cst.BaseExpression]] = []
    nodes = {} if nodes is None else nodes

    stack: list[cst.CSTNode] = [expr]  # depth first, in the order of the code (a stack, not a
    while stack:  # recursive closure: that would be a cycle, keeping the file's model for the collector)
        node = stack.pop()
        if isinstance(node, (cst.Lambda, cst.FunctionDef)):
            continue
        if isinstance(node, cst.Call):
            call = ctx.op_call(node, scope)
            if call is not None:
                if call.op in (o.WHERE, o.MASKED_FILL):
                    continue
                site = _singular_call(call)
                if site is not None:
                    out.append(site)
                    nodes[id(site[1])] = node
        elif isinstance(node, cst.BinaryOperation):
            if isinstance(node.operator, cst.Divide) and not is_literal(node.right):
                out.append(("1/x", node.right))
                nodes[id(node.right)] = node
            elif isinstance(node.operator, cst.Power) and _singular_exponent(node.right):
                out.append((f"x ** {number(node.right):g}", node.left))
                nodes[id(node.left)] = node
        stack.extend(reversed(node.children))
    return out


def _singular_exponent(expr) -> bool:
    e = number(expr)
    return e is not None and (e < 0 or e != int(e))


def _singular_call(call: OpCall) -> tuple[str, cst.BaseExpression] | None:
    if call.op == o.LOG and call.x is not None:
        return "log", call.x
    if call.op == o.DIVIDE and call.has("y") and not is_literal(call.value("y")):
        return "division", call.value("y")  # type: ignore[return-value]
    if call.op == o.POW and call.x is not None and _singular_exponent(call.value("y")):
        return f"pow(x, {number(call.value('y')):g})", call.x
    if call.op in (o.SQRT, o.RSQRT, o.RECIPROCAL) and call.x is not None \
            and o.FACT_ZERO_UPSTREAM_SQRT_NAN in call.framework.facts:
        return call.op, call.x
    return None


class Step:
    """``expr`` is 0 exactly where ``base`` is 0, and grows with ``|base|``: ``sqrt(base)``,
    ``abs(base)``, ``base ** 2``, ``square(base)``, ``base ** 0.5``, a norm of ``base``
    (``expr`` the value a name holds; ``node`` the step's own code, ``resolved`` how it was reached)."""

    def __init__(self, kind: str, node, base, scope: Scope, resolved, singular: bool) -> None:
        self.kind, self.node, self.base, self.scope, self.resolved = kind, node, base, scope, resolved
        self.singular = singular  # its own gradient is non-finite at 0 (sqrt, x ** 0.5)

    def at(self, v: float) -> float | None:
        """The step's value where ``base`` is ``v``; None when unknown or NaN."""
        if self.kind == "abs":
            return abs(v)
        if self.kind == "norm":
            return 0.0 if v == 0 else None
        p = 2.0 if self.kind == "square" else float(self.kind)
        return v ** p if v >= 0 or p.is_integer() else None


def zero_step(ctx: RuleContext, expr, scope: Scope) -> Step | None:
    """The :class:`Step` ``expr`` is (through names), or None."""
    r = ctx.resolve(expr, scope)
    e, s = r.expr, r.scope
    if r.ctx is not None:
        return None
    call = is_op(ctx, e, s, o.SQRT, o.ABS, o.NORM, o.POW)
    if call is not None and call.x is not None and call.op != o.POW:
        kind = {o.SQRT: "0.5", o.ABS: "abs", o.NORM: "norm"}[call.op]
        return Step(kind, e, call.x, s, r, call.op == o.SQRT and o.FACT_ZERO_UPSTREAM_SQRT_NAN in call.framework.facts)
    base = square_base(ctx, e, s)
    if base is not None:
        return Step("square", e, base, s, r, False)
    power = binop(e, cst.Power)
    exponent = number(power.right) if power is not None else (number(call.value("y")) if call is not None else None)
    if exponent is not None and exponent > 0:
        base = power.left if power is not None else call.x  # type: ignore[union-attr]
        return Step(f"{exponent:g}", e, base, s, r, not float(exponent).is_integer() and exponent < 1)
    return None


def zero_sources(ctx: RuleContext, expr, scope: Scope, depth: int = 3) -> list[tuple[str, list[Step]]]:
    """(key, steps) for ``expr`` and each value it is computed from by :class:`Step` s: all
    are 0 where ``expr`` is (``theta = sqrt(theta_squared)``: ``theta``, ``theta_squared``)."""
    out = [(key(ctx, expr), [])]
    steps: list[Step] = []
    while depth > 0:
        step = zero_step(ctx, expr, scope)
        if step is None:
            break
        steps = steps + [step]
        expr, scope, depth = step.base, step.scope, depth - 1
        out.append((key(ctx, expr), steps))
    return out  # type: ignore[return-value]


def compared(ctx: RuleContext, cond: cst.BaseExpression, scope: Scope, depth: int = 4) -> set[str]:
    """The keys of the non-constant operands compared in a condition
    (``x != 0``, ``(x > 0) & m``, ``~(x == 0)``, ``abs(x) > eps``, a name assigned one)."""
    out: set[str] = set()
    if depth < 0:
        return out
    cond, scope = follow(ctx, cond, scope)
    cond = bare(ctx.condition(bare(cond), scope))
    if isinstance(cond, cst.Comparison):
        for operand in [cond.left] + [c.comparator for c in cond.comparisons]:
            if is_literal(operand):
                continue
            out |= {k for k, _ in zero_sources(ctx, operand, scope)}  # abs(x), x2 = x ** 2: x too
    elif isinstance(cond, cst.BinaryOperation) and isinstance(cond.operator, (cst.BitAnd, cst.BitOr)):
        out |= compared(ctx, cond.left, scope, depth - 1) | compared(ctx, cond.right, scope, depth - 1)
    elif isinstance(cond, cst.BooleanOperation):
        out |= compared(ctx, cond.left, scope, depth - 1) | compared(ctx, cond.right, scope, depth - 1)
    elif isinstance(cond, cst.UnaryOperation) and isinstance(cond.operator, (cst.BitInvert, cst.Not)):
        out |= compared(ctx, cond.expression, scope, depth - 1)
    return out


_COMPARE = {"Equal": lambda a, b: a == b, "NotEqual": lambda a, b: a != b,  # by libcst's class name
            "LessThan": lambda a, b: a < b, "LessThanEqual": lambda a, b: a <= b,
            "GreaterThan": lambda a, b: a > b, "GreaterThanEqual": lambda a, b: a >= b}


def condition_at(ctx: RuleContext, cond: cst.BaseExpression, scope: Scope, target: str, value: float,
                 depth: int = 4) -> bool | None:
    """The condition's truth when the operand ``target`` (a key) is ``value``; None when unknown."""
    if depth < 0:
        return None
    cond, scope = follow(ctx, cond, scope)
    cond = bare(ctx.condition(bare(cond), scope))
    if isinstance(cond, cst.Comparison) and len(cond.comparisons) == 1:
        op = _COMPARE.get(type(cond.comparisons[0].operator).__name__)
        left, right = cond.left, cond.comparisons[0].comparator
        lv, rv = _operand_at(ctx, left, scope, target, value), _operand_at(ctx, right, scope, target, value)
        if op is None or lv is None or rv is None:
            return None
        return op(lv, rv)
    if isinstance(cond, (cst.BinaryOperation, cst.BooleanOperation)) and isinstance(
            cond.operator, (cst.BitAnd, cst.BitOr, cst.And, cst.Or)):
        a = condition_at(ctx, cond.left, scope, target, value, depth - 1)
        b = condition_at(ctx, cond.right, scope, target, value, depth - 1)
        if isinstance(cond.operator, (cst.BitAnd, cst.And)):
            return False if a is False or b is False else (True if a and b else None)
        return True if a is True or b is True else (False if a is False and b is False else None)
    if isinstance(cond, cst.UnaryOperation) and isinstance(cond.operator, (cst.BitInvert, cst.Not)):
        inner = condition_at(ctx, cond.expression, scope, target, value, depth - 1)
        return None if inner is None else not inner
    return None


def small_value_test(ctx: RuleContext, cond: cst.BaseExpression, scope: Scope, inp) -> bool | None:
    """The truth at ``inp == 0`` of ``inp < t`` (``<=``, ``t > inp``...) where ``inp`` is
    never negative (a norm, a sqrt, a square) and ``t`` is not a constant: only a positive
    ``t`` makes such a test anything but constant (``norm < 0`` is never true, ``norm >= 0``
    always), so at 0 the "small" side holds -- ``where(norm < max_norm, g, g * max_norm / norm)``."""
    cond, scope = follow(ctx, cond, scope)
    cond = bare(ctx.condition(bare(cond), scope))
    if not (isinstance(cond, cst.Comparison) and len(cond.comparisons) == 1):
        return None
    operator = type(cond.comparisons[0].operator)
    left, right = cond.left, cond.comparisons[0].comparator
    target = key(ctx, inp)
    if key(ctx, left) == target and key(ctx, right) != target:
        small = {cst.LessThan: True, cst.LessThanEqual: True, cst.GreaterThan: False, cst.GreaterThanEqual: False}
    elif key(ctx, right) == target and key(ctx, left) != target:
        small = {cst.GreaterThan: True, cst.GreaterThanEqual: True, cst.LessThan: False, cst.LessThanEqual: False}
    else:
        return None
    if operator not in small or not never_negative(ctx, inp, scope):
        return None
    return small[operator]


def kept_off_zero(ctx: RuleContext, inp: cst.BaseExpression, scope: Scope) -> bool:
    """Every value reaching the singular input is guarded already: clipped or bounded by a
    positive constant, or an inner where that puts a nonzero constant where the input would
    be singular (``first_denom = where(df > 2, df - 2, 1.)``: the double where, by a name)."""
    reached = ctx.values(inp, scope, shape=True)
    if len(reached) == 1 and reached[0].expr is inp:
        return False
    for r in reached:
        if r.ctx is not None:
            return False
        call = ctx.op_call(r.expr, r.scope)
        if call is not None and call.op == o.WHERE:
            fills = [constant(ctx, call.value(role), r.scope) for role in ("x", "y")]
            if any(f is not None and f != 0 for f in fills):
                continue
        if not guarded(ctx, r.expr, r.scope):
            return False
    return True


def never_negative(ctx: RuleContext, expr: cst.BaseExpression, scope: Scope) -> bool:
    """``expr >= 0`` for every value reaching it (a norm, a square, a sqrt...)."""
    return all(r.ctx is None and nonnegative(ctx, r.expr, r.scope) for r in ctx.values(expr, scope))


def _operand_at(ctx: RuleContext, operand, scope: Scope, target: str, value: float,
                depth: int = 3) -> float | None:
    if key(ctx, operand) == target:
        return value
    n = constant(ctx, operand, scope)
    if n is not None or depth == 0:
        return n
    step = zero_step(ctx, operand, scope)  # abs(x) > eps, x2 = x ** 2; x2 > 0
    if step is None:
        return None
    inner = _operand_at(ctx, step.base, step.scope, target, value, depth - 1)
    return None if inner is None else step.at(inner)


def pure(ctx: RuleContext, expr: cst.CSTNode, scope: Scope) -> bool:
    """Can be evaluated twice with the same result and no side effect."""
    if isinstance(expr, (cst.Name, cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(expr, cst.Attribute):
        return pure(ctx, expr.value, scope)
    if isinstance(expr, cst.Comparison):
        return pure(ctx, expr.left, scope) and all(pure(ctx, c.comparator, scope) for c in expr.comparisons)
    if isinstance(expr, (cst.BinaryOperation, cst.BooleanOperation)):
        return pure(ctx, expr.left, scope) and pure(ctx, expr.right, scope)
    if isinstance(expr, cst.UnaryOperation):
        return pure(ctx, expr.expression, scope)
    if isinstance(expr, cst.Subscript):
        return pure(ctx, expr.value, scope) and all(
            pure(ctx, part, scope) for el in expr.slice for part in _slice_parts(el.slice))
    if isinstance(expr, (cst.Tuple, cst.List)):
        return all(pure(ctx, el.value, scope) for el in expr.elements)
    if isinstance(expr, cst.Call):  # a framework op (pure functions) of pure arguments
        call = ctx.op_call(expr, scope)  # not a draw or a new model: a second one differs
        return call is not None and call.op not in o.CONSTRUCTORS and call.op not in o.DRAWS and all(
            a.star == "" and pure(ctx, a.value, scope) for a in expr.args) and pure(ctx, expr.func, scope)
    return False


def _within(inner: cst.CSTNode, outer: cst.CSTNode) -> bool:
    """``inner`` is a proper sub-expression of ``outer``."""
    return inner is not outer and any(c is inner or _within(inner, c) for c in outer.children)


def _slice_parts(s) -> list[cst.CSTNode]:
    if isinstance(s, cst.Index):
        return [s.value]
    return [p for p in (s.lower, s.upper, s.step) if p is not None]


class SingleWhere(Rule):
    code = "NAN201"
    # on by default since issue 21: a gradient-only hazard reports when a gradient reaches it
    # (analysis/differentiated.py), in the may tier when nothing shows one does
    default = True
    name = "single-where"
    summary = "where(c, f(x), ...) with f singular where c is false: NaN gradient; use a double where"
    fix = fixes.SAFE
    needs = ("where", "switch", "masked_fill")
    triggers = (frozenset({o.WHERE, o.MASKED_FILL}),)

    def check(self, ctx: RuleContext) -> None:
        for call in ctx.calls(o.WHERE, o.MASKED_FILL):
            cond = call.value("cond")
            if cond is None:
                continue
            if call.op == o.WHERE:
                branches = [("x", call.value("x")), ("y", call.value("y"))]
            else:
                branches = [("masked", call.x)]
            keys = compared(ctx, cond, call.scope)
            if not keys:
                continue
            for role, branch in branches:
                if branch is None:
                    continue
                resolved = ctx.resolve(branch, call.scope)
                nodes: dict = {}
                sites = [(what, inp, steps) for what, inp in singular_sites(ctx, resolved.expr, resolved.scope, nodes)
                         for steps in [self.masking_source(ctx, call, cond, role, what, inp, keys, resolved.scope)]
                         if steps is not None and not kept_off_zero(ctx, inp, resolved.scope)
                         and not excludes_zero(ctx, call.node, inp, resolved.scope)]  # if beta == 0: ... else
                if not sites or gradient_free(ctx, resolved.expr, resolved.scope):
                    continue  # guarded already, or a branch of counts and constants: no gradient
                sites = [site for site in sites if not any(  # 1 / sqrt(x): guarding the sqrt's x is enough
                    other is not site and _within(other[1], site[1]) for other in sites)]
                message = (f"`{ctx.short(nodes[id(sites[0][1])])}`{origin_note(ctx, resolved)} is singular where "
                           "the condition selects the other branch: its "
                           "gradient there is inf, and 0 * inf = NaN flows back through the where; "
                           "guard the input too (double where)")
                report_in_gradient(ctx, call.node, message,
                                   self.make_fix(ctx, call, cond, role, branch, resolved, sites), call.framework,
                                   tuple(inp for _, inp, _ in sites), resolved.scope)
                break  # the hazard is in the gradient only: judged on its evidence

    @staticmethod
    def masking_source(ctx: RuleContext, call: OpCall, cond, role: str, what: str, inp, keys: set[str],
                       scope: Scope) -> list[Step] | None:
        """The steps from the singular input to the value the condition tests and masks at
        the input's singular point: ``[]`` for the input itself (``where(x != 0, 1 / x, 0)``),
        ``[sqrt]`` for ``theta = sqrt(theta_squared)``; ``where(theta_squared > 0, 1 / theta, 0)``
        (0 where the input is 0: only that point is asked of a source).  None: no such value."""
        for target, steps in zero_sources(ctx, inp, scope):
            points = singular_points(what) if not steps else AT_ZERO
            if target in keys and SingleWhere.masked_somewhere(ctx, call, cond, role, target, points,
                                                              inp if not steps else None):
                return steps
        return None

    @staticmethod
    def masked_somewhere(ctx: RuleContext, call: OpCall, cond, role: str, target: str,
                         points: tuple[float, ...], inp) -> bool:
        """Does the where discard the branch where ``target`` (a key) is at one of ``points``?
        Decided only when the condition compares it with constants (``x != 0``,
        ``x > eps``, ``abs(x) < 1e-6``): a comparison with another tensor (``loss < beta``)
        says nothing about 0 (unless ``inp`` is never negative: :func:`small_value_test`).
        A branch *selected* at its singular point is non-finite in value, not a where trap."""
        selected_when = role == "x"  # where(c, x, y) selects x when c holds; masked_fill keeps it when not
        for point in points:
            truth = condition_at(ctx, cond, call.scope, target, point)
            if truth is None and point == 0.0 and inp is not None:
                truth = small_value_test(ctx, cond, call.scope, inp)
            if truth is not None and truth != selected_when:
                return True
        return False

    @staticmethod
    def make_fix(ctx: RuleContext, call: OpCall, cond, role: str, branch, resolved, sites) -> fixes.Fix:
        message = "Guard the input with the same condition: where(c, f(where(c, x, 1.0)), other)"
        if not pure(ctx, cond, call.scope) or not resolved.fixable_in(call.scope):
            return fixes.Fix(fixes.DISPLAY_ONLY, message)
        mapping: dict[int, cst.CSTNode] = {}
        imports: list[fixes.Import] = []
        steps: dict[int, tuple] = {}
        for _, inp, through in sites:
            guard = SingleWhere.guard(ctx, call, cond, role, inp)
            if guard is None:
                return fixes.Fix(fixes.DISPLAY_ONLY, message)
            mapping[id(inp)], new_imports = guard
            imports += [i for i in new_imports if i not in imports]
            for step in through:
                if not step.singular or not step.resolved.crossed_statements:
                    continue  # inline, the step is a site of its own
                guarded_step = SingleWhere.guard_step(ctx, call, step)
                if guarded_step is None:
                    return fixes.Fix(fixes.DISPLAY_ONLY, message)
                steps[id(step.node)] = (step.node, guarded_step[0])
                imports += [i for i in guarded_step[1] if i not in imports]
        edits = list(steps.values())  # theta = sqrt(theta_squared): its gradient under a zero upstream too
        if resolved.crossed_statements:  # the branch is a name: write its value, guarded, in the where
            new_branch = replace_all(resolved.expr, mapping)
            return fixes.Fix(fixes.UNSAFE, message, [(branch, new_branch)] + edits, imports)
        return fixes.Fix(fixes.UNSAFE if edits else fixes.SAFE, message,
                         [(inp, mapping[id(inp)]) for _, inp, _ in sites] + edits, imports)

    @staticmethod
    def guard_step(ctx: RuleContext, call: OpCall, step: Step) -> tuple[cst.BaseExpression, list] | None:
        """``where(t > 0, sqrt(where(t > 0, t, 1.0)), 0.0)`` for the step ``sqrt(t)`` where it is
        computed: its value for every ``t >= 0``, and a zero gradient at 0 whatever the upstream."""
        r = step.resolved
        if r.via or not pure(ctx, step.base, step.scope):
            return None
        def where(x: cst.BaseExpression, y: cst.BaseExpression):
            positive = cst.Comparison(fixes.parenthesize(bare(step.base).deep_clone()),
                                      [cst.ComparisonTarget(cst.GreaterThan(), cst.Integer("0"))])
            return spelled_call(ctx, call.framework, o.WHERE, step.scope,  # type: ignore[arg-type]
                                [("cond", positive), ("x", x), ("y", y)], prefer=(call.node.func,))
        inner = where(bare(step.base).deep_clone(), cst.Float(SAFE_VALUE))
        if inner is None:
            return None
        outer = where(replace_all(step.node, {id(step.base): inner[0]}), cst.Float("0.0"))  # type: ignore[arg-type]
        return outer if outer is None else (outer[0], inner[1])

    @staticmethod
    def guard(ctx: RuleContext, call: OpCall, cond, role: str, inp) -> tuple[cst.BaseExpression, list] | None:
        safe = cst.Float(SAFE_VALUE)
        if call.op == o.MASKED_FILL:  # masked where the mask is true
            masked = fixes.parenthesize(bare(inp))
            return fixes.call(cst.Attribute(masked, cst.Name("masked_fill")),
                              [fixes.arg(cond.deep_clone()), fixes.arg(safe)]), []
        spelling = ctx.spell(call.framework, o.WHERE, call.scope, prefer=(call.node.func,))
        if spelling is None:
            return None
        func, target, imports = spelling
        if target.position_of("cond") != 0 or target.position_of("x") != 1 or target.position_of("y") != 2:
            return None
        values = [cond.deep_clone(), bare(inp), safe] if role == "x" else [cond.deep_clone(), safe, bare(inp)]
        return fixes.call(func, [fixes.arg(v) for v in values]), imports
