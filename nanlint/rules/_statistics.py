"""Statistics that reach 0 as a denominator (NAN111 divide-by-statistic): a std or a variance
(0 when every value is equal), the square root of one, a hand-written
``sqrt(mean((x - mean(x)) ** 2))``, and ``n - 1`` of a count (0 for one element)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from nanlint.vocabulary import ops as o
from nanlint.analysis.guards import constant
from nanlint.rules.context import RuleContext
from nanlint.semantic.reach import Resolved
from nanlint.semantic.resolve import Scope
from nanlint.semantic.literals import normalized

# ``n`` of ``n - 1``: a name like a count, a length, a shape. _count reads it in any case;
# may_hold's text check in lower case, as the gate it came from did
_COUNT_NAMES = r"n|k|num|count|length|size|total|(?:num|n|len)_\w+|\w+_(?:num|count|len|length|size|steps|samples)"
_COUNT = re.compile(rf"^(?:{_COUNT_NAMES})$", re.IGNORECASE)
_COUNT_WORD = re.compile(_COUNT_NAMES)
_SHAPE_METHODS = frozenset({"size", "numel", "nelement", "dim"})
# a statistic's name as a whole word: ``\b`` leading the pattern would stop re from skipping
# ahead by the names' first letters (3x slower); the character before is checked instead
_STAT_WORD = re.compile(r"(?:std|var|reduce_std|reduce_variance|variance)\b")
_MINUS_ONE = re.compile(r"-\s*1(?![\d.\w])")


_HELD: list = [None, False]  # the last text asked about, and the answer


def may_hold(text: str) -> bool:
    """Whether a file's text may hold NAN111's denominator: a statistic's name, or ``- 1``
    after a count (``len(x) - 1``, ``x.shape[0] - 1``, ``n - 1``, ``num_steps - 1``), not
    every ``- 1`` (an index, an offset).  The word before each ``- 1`` is read backwards
    from it (a regex trying a count's name at every position of the text cost more than
    the rest of the check).  Remembered for the last text: the prefilter, the site filter
    and the engine ask it of the same one (0.6 ms a scan of a typical file)."""
    if _HELD[0] is not text:
        _HELD[:] = [text, _may_hold(text)]
    return _HELD[1]


def _may_hold(text: str) -> bool:
    for m in _STAT_WORD.finditer(text):
        s = m.start()
        if not s or not (text[s - 1].isalnum() or text[s - 1] == "_"):
            return True  # (a match after a word character is inside a longer word, and so is any in it)
    for m in _MINUS_ONE.finditer(text):
        j = m.start()
        while j and text[j - 1].isspace():
            j -= 1
        if j and text[j - 1] in ")]":
            return True
        k = j
        while k and (text[k - 1].isalnum() or text[k - 1] == "_"):
            k -= 1
        if k < j and _COUNT_WORD.fullmatch(text, k, j):
            return True
    return False


# the values a standardization divides: rewards, returns, advantages, features (issue 24's fixes)
_DATA = re.compile(r"(reward|return|advantage|(^|_)adv(s|_|$)|(^|_)rets?($|_)|(^|_)R$|(^|_)G$|feature|target|signal"
                   r"|audio|wav|(^|_)mel|spec|score|value|obs|state)", re.IGNORECASE)
_PARAMETER = re.compile(r"(^|_)(weight|weights|bias|biases|param|params|parameter|parameters|kernel|embedding|W)$")
_RANDOM = re.compile(r"^(randn|rand|randn_like|rand_like|normal|uniform|truncated_normal|standard_normal"
                     r"|random_normal|random_uniform|randint)$")
_STD_WHY = ("it is 0 when every value of `{x}` is equal (an episode of equal rewards, a constant feature, padding)")
_TORCH_ONE = ", and NaN for a single element in torch (correction 1)"


@dataclass
class Statistic:
    kind: str  # "std", "variance", "count"
    what: str  # for the message: "the std `R.std()`"
    value: Resolved  # the reaching value that is the statistic
    why: str
    advice: str
    weak: bool = False  # the may tier
    silent: bool = False  # a parameter's or a random draw's statistic: not reported
    count: cst.BaseExpression | None = None  # ``n`` of ``n - 1``
    framework: o.Framework | None = None  # a tensor count's framework (its maximum); None: a Python int


def _last(func: cst.BaseExpression) -> str:
    return func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""


# --- a std or a variance ------------------------------------------------------------------
def statistic_of(ctx: RuleContext, den: cst.BaseExpression, scope: Scope,
                 num: cst.BaseExpression | None) -> Statistic | None:
    """The std or variance every value reaching ``den`` is (unguarded), with its evidence."""
    reached = ctx.values(den, scope, shape=True)
    first = None
    for r in reached:
        owner = r.ctx or ctx
        found = _stat(owner, r.expr, r.scope)
        if found is None:
            return None  # another value reaches too: a guard's branch (`if std == 0: std = 1`)
        first = first or (r, owner, found)
    if first is None:
        return None
    r, owner, (node, kind, x, framework, correction) = first
    shown = f"`{owner.short(node)}`"
    what = f"the {kind} {shown}"
    data = owner.short(x, 30) if x is not None else "the values"
    why = _STD_WHY.format(x=data)
    if framework == "torch" and correction:
        why += _TORCH_ONE
    why += ": the quotient is inf (0/0 = NaN)"
    advice = f"add an epsilon (`{kind} + eps`) or clamp it from below"
    stat = Statistic(kind, what, r, why, advice)
    if x is None:
        stat.weak = True
        return stat
    if _drawn_or_parameter(owner, x, r.scope):
        stat.silent = True
    elif _named_data(owner, x, r.scope):
        pass
    elif not _scales_itself(ctx, num, scope, owner, x, r.scope) or _ratio(ctx, num, scope) \
            or _whole_sample(owner, node, r.scope):
        stat.weak = True
    return stat


def _ratio(ctx: RuleContext, num: cst.BaseExpression | None, scope: Scope) -> bool:
    """The numerator is a statistic too: a ratio of spreads (``std_text / std_cfg``, an SNR of
    variances) rescales one tensor to another's spread, of tensors rarely constant."""
    return num is not None and any(_stat(r.ctx or ctx, r.expr, r.scope) is not None
                                   for r in ctx.values(num, scope, shape=True))


def _whole_sample(ctx: RuleContext, node: cst.CSTNode, s: Scope) -> bool:
    """A statistic over several axes at once (``dim=(1, 2, 3)``: a whole image or latent): 0 only
    for a constant sample, unlike a batch or time axis."""
    call = ctx.op_call(node, s)
    axis = call.value("axis") if call is not None else None
    return isinstance(axis, (cst.Tuple, cst.List)) and len(axis.elements) >= 2


def _stat(ctx: RuleContext, e: cst.BaseExpression, s: Scope, depth: int = 2):
    """(node, kind, the values it is over, framework name, whether torch's default correction)"""
    e = ctx.arithmetic(e, s)
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Power) and constant(ctx, e.right, s) == 0.5:
        return _root_of_variance(ctx, e, e.left, s, depth)
    call = ctx.op_call(e, s)
    if call is None:
        return None
    if call.op in (o.STD, o.VARIANCE):
        keywords = {a.keyword.value for a in call.node.args if a.keyword is not None}
        correction = call.framework.name == "torch" and not keywords & {"correction", "unbiased"}
        return call.node, "std" if call.op == o.STD else "variance", call.x, call.framework.name, correction
    if call.op == o.SQRT and call.x is not None:
        return _root_of_variance(ctx, call.node, call.x, s, depth)
    return None


def _root_of_variance(ctx: RuleContext, node: cst.CSTNode, x: cst.BaseExpression, s: Scope, depth: int):
    """``sqrt(v)`` with every value of ``v`` a variance, or a hand-written mean of squared deviations."""
    if depth <= 0:
        return None
    reached = ctx.values(x, s, shape=True)
    inner = None
    for r in reached:
        if r.ctx is not None:
            return None
        found = _stat(ctx, r.expr, r.scope, depth - 1) or _hand_variance(ctx, r.expr, r.scope)
        if found is None or found[1] != "variance":
            return None
        inner = inner or found
    if inner is None:
        return None
    return node, "std", inner[2], inner[3], inner[4]


def _hand_variance(ctx: RuleContext, e: cst.BaseExpression, s: Scope):
    """``mean((x - mean(x)) ** 2)``, ``mean(square(x - mu))`` with ``mu`` a mean of ``x``."""
    call = ctx.op_call(e, s)
    if call is None or call.op != o.MEAN or call.x is None:
        return None
    sq = ctx.resolve(call.x, s).expr
    base = None
    if isinstance(sq, cst.BinaryOperation) and isinstance(sq.operator, cst.Power) and constant(ctx, sq.right, s) == 2:
        base = sq.left
    else:
        inner = ctx.op_call(sq, s)
        if inner is not None and inner.op == o.SQUARE:
            base = inner.x
    if base is None:
        return None
    d = ctx.arithmetic(ctx.resolve(base, s).expr, s)
    if not (isinstance(d, cst.BinaryOperation) and isinstance(d.operator, cst.Subtract)):
        return None
    mu = ctx.op_call(ctx.resolve(d.right, s).expr, s)
    if mu is None or mu.op != o.MEAN or mu.x is None or normalized(mu.x) != normalized(d.left):
        return None
    return call.node, "variance", d.left, call.framework.name, False


def _drawn_or_parameter(ctx: RuleContext, x: cst.BaseExpression, s: Scope) -> bool:
    """A statistic of a parameter (``self.weight``, ``p`` of ``model.parameters()``, ``.data``)
    or of a random draw (``torch.randn(...)``): not data the program is trained on."""
    for r in ctx.values(x, s, shape=True):
        e = r.expr
        if isinstance(e, cst.Attribute) and e.attr.value in ("data", "grad"):
            e = e.value
        if isinstance(e, (cst.Name, cst.Attribute)) and _PARAMETER.search(_last(e)):
            return True
        if isinstance(e, cst.Call) and _RANDOM.match(_last(e.func)):
            return True
        if isinstance(e, cst.Name) and _loop_over_parameters(ctx, e, r.scope):
            return True
    return False


def _loop_over_parameters(ctx: RuleContext, name: cst.Name, s: Scope) -> bool:
    parent = ctx.parent(name)
    while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Module)):
        if isinstance(parent, cst.For) and "parameters" in ctx.code(parent.iter) \
                and name.value in ctx.code(parent.target):
            return True
        parent = ctx.parent(parent)
    return False


def _mentions(text: str, x: str) -> bool:
    return bool(re.search(rf"(?<![\w.]){re.escape(x)}(?![\w])", text))


def _scales_itself(ctx: RuleContext, num: cst.BaseExpression | None, scope: Scope, owner: RuleContext,
                   x: cst.BaseExpression, xs: Scope) -> bool:
    """The numerator holds the values the statistic is over: ``(R - R.mean()) / R.std()``,
    ``adv / adv.std()``, ``(x - mean) / std`` with ``std = x.std(0)`` (a standardization)."""
    if num is None or owner is not ctx:
        return False
    names = {normalized(x), normalized(ctx.resolve(x, xs).expr)}
    if isinstance(x, cst.BinaryOperation) and isinstance(x.operator, (cst.Add, cst.Subtract)):
        for a, b in ((x.left, x.right), (x.right, x.left)):  # std(1e-5 + fitness): an epsilon
            if constant(owner, b, xs) is not None:          # inside the std keeps nothing from 0
                names.add(normalized(a))
    texts = [normalized(num)] + [normalized(r.expr) for r in ctx.values(num, scope) if r.ctx is None]
    return any(_mentions(t, n) for t in texts for n in names if n)


def _named_data(ctx: RuleContext, x: cst.BaseExpression, s: Scope) -> bool:
    return bool(_DATA.search(normalized(x)))


# --- n - 1 ----------------------------------------------------------------------------------
def count_of(ctx: RuleContext, den: cst.BaseExpression, scope: Scope,
             num: cst.BaseExpression | None) -> Statistic | None:
    """``n - 1`` of a count (a length, a shape, a value named as a count) every value reaching
    ``den`` is, where the division is of tensors (a Python ``1 / 0`` raises instead)."""
    reached = ctx.values(den, scope)
    first = None
    for r in reached:
        if r.ctx is not None:
            return None
        e = ctx.arithmetic(r.expr, r.scope)
        if not (isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Subtract)
                and constant(ctx, e.right, r.scope) == 1.0 and constant(ctx, e.left, r.scope) is None):
            return None
        first = first or (r, e)
    if first is None:
        return None
    r, e = first
    # what is counted, out of its casts (``tf.to_float(num_timescales) - 1``: ``num_timescales``,
    # which a guard tests and the message names); a cast makes the count a tensor of its framework
    count, cast_framework = e.left, None
    for _ in range(4):
        cast = ctx.op_call(count, r.scope) if isinstance(count, cst.Call) else None
        if cast is None or cast.op != o.SHAPE or cast.x is None:
            break
        count, cast_framework = cast.x, cast.framework
    found = _count(ctx, count, r.scope)
    if found is None:
        return None
    how, framework = found[0], found[1] or cast_framework
    if framework is None and num is not None and not _tensor(ctx, num, scope):
        return None  # Python numbers: 1 / 0 raises ZeroDivisionError, no NaN
    shown = f"`{ctx.short(e)}`"
    why = f"it is 0 when {how} `{ctx.short(count, 30)}` is 1 (a window of one element): x / 0 is inf (0/0 = NaN)"
    return Statistic("count", shown, r, why, "divide by max(n - 1, 1)", weak=how in ("the count", "the dimension"),
                     count=count, framework=framework)


def _count(ctx: RuleContext, n: cst.BaseExpression, s: Scope) -> tuple[str, o.Framework | None] | None:
    """How ``n`` is a count (a length, a shape, a name) and the framework of a tensor count."""
    for r in ctx.values(n, s):
        if r.ctx is not None:
            continue
        e = r.expr
        if isinstance(e, cst.Call) and isinstance(e.func, cst.Name) and e.func.value == "len":
            return "the length", None
        if isinstance(e, cst.Subscript) and len(e.slice) == 1 and isinstance(e.slice[0].slice, cst.Index):
            v, axis = e.value, _axis(e.slice[0].slice.value)
            if isinstance(v, cst.Attribute) and v.attr.value == "shape":
                return _size(axis), None
            call = ctx.op_call(v, r.scope) if isinstance(v, cst.Call) else None
            if isinstance(v, cst.Call) and _last(v.func) == "shape":
                return _size(axis), call.framework if call is not None else None
        if isinstance(e, cst.Call) and isinstance(e.func, cst.Attribute) and e.func.attr.value in _SHAPE_METHODS:
            return _size(_axis(e.args[0].value) if e.args else 0), None
    if isinstance(n, (cst.Name, cst.Attribute)) and _COUNT.match(_last(n)):
        return "the count", None
    return None


def _axis(expr: cst.BaseExpression) -> int | None:
    return int(expr.value) if isinstance(expr, cst.Integer) else None


def _size(axis: int | None) -> str:
    """The batch (or window) size, axis 0, is one element often; another axis is a model's width:
    a configuration (the may tier)."""
    return "the size" if axis == 0 else "the dimension"


def _tensor(ctx: RuleContext, expr: cst.BaseExpression, scope: Scope, depth: int = 2) -> bool:
    """Some value reaching ``expr`` is computed by a framework op (a tensor, not a Python number)."""
    for r in ctx.values(expr, scope, shape=True):
        if r.ctx is not None:
            return True
        stack = [r.expr]
        while stack:
            e = stack.pop()
            if isinstance(e, cst.Call):
                if ctx.op_call(e, r.scope) is not None:
                    return True
                stack.extend(a.value for a in e.args)
                if isinstance(e.func, cst.Attribute):
                    stack.append(e.func.value)
            elif isinstance(e, cst.BinaryOperation):
                stack.extend((e.left, e.right))
            elif isinstance(e, cst.UnaryOperation):
                stack.append(e.expression)
            elif isinstance(e, cst.Subscript):
                stack.append(e.value)
            elif isinstance(e, (cst.Name, cst.Attribute)) and e is not r.expr and depth > 0:
                if _tensor(ctx, e, r.scope, depth - 1):
                    return True
    return False


def count_checked(ctx: RuleContext, node: cst.CSTNode, stat: Statistic, scope: Scope) -> bool:
    """The code keeps ``n`` above 1 where the division runs: ``if n > 1:``, ``... if n > 1 else``,
    an earlier ``if n < 2: return``, ``assert n > 1``."""
    n = normalized(stat.count)
    child, parent = node, ctx.parent(node)
    while parent is not None and not isinstance(parent, (cst.ClassDef, cst.Module)):
        if isinstance(parent, (cst.If, cst.IfExp, cst.While)):
            if child is parent.body and _above_one(ctx, parent.test, n, scope):
                return True
            if child is getattr(parent, "orelse", None) and _at_most_one(ctx, parent.test, n, scope):
                return True
        if isinstance(parent, cst.FunctionDef):
            break
        child, parent = parent, ctx.parent(parent)
    fdef = scope.node
    if isinstance(fdef, cst.FunctionDef):
        for stmt in fdef.body.body:
            if isinstance(stmt, cst.If) and _at_most_one(ctx, stmt.test, n, scope) \
                    and any(word in ctx.code(stmt.body) for word in ("return", "raise", "continue")):
                return True
            if isinstance(stmt, cst.SimpleStatementLine) and any(
                    isinstance(b, cst.Assert) and _above_one(ctx, b.test, n, scope) for b in stmt.body):
                return True
    return False


def _compare(ctx: RuleContext, test: cst.BaseExpression, n: str, scope: Scope):
    if isinstance(test, cst.BooleanOperation):
        return _compare(ctx, test.left, n, scope) or _compare(ctx, test.right, n, scope)
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    left, target = test.left, test.comparisons[0]
    bound = constant(ctx, target.comparator, scope)
    if bound is None or normalized(left) not in (n, f"{n}-1"):
        return None
    if normalized(left) != n:
        bound += 1  # n - 1 > 0: as n > 1
    return type(target.operator), bound


def _above_one(ctx, test, n, scope) -> bool:
    found = _compare(ctx, test, n, scope)
    if found is None:
        return False
    op, bound = found
    return (op is cst.GreaterThan and bound >= 1) or (op is cst.GreaterThanEqual and bound >= 2) \
        or (op is cst.NotEqual and bound == 1)


def _at_most_one(ctx, test, n, scope) -> bool:
    found = _compare(ctx, test, n, scope)
    if found is None:
        return False
    op, bound = found
    return (op is cst.LessThanEqual and bound >= 1) or (op is cst.LessThan and bound >= 2) \
        or (op is cst.Equal and bound == 1)


def mutated(ctx: RuleContext, scope: Scope) -> frozenset[str]:
    """The names changed in place in ``scope`` (:attr:`Scope.mutations`: ``std[std == 0] = 1``,
    ``std.clamp_(min=eps)``) or by an augmented assignment (``std += eps``): the author's handling."""
    memo = ctx.memo("statistics.mutated", dict)
    key = id(scope)
    if key not in memo:
        augmented = {n for n, bs in scope.bindings.items() if any(isinstance(b.node, cst.AugAssign) for b in bs)}
        memo[key] = frozenset(scope.mutations) | frozenset(augmented)
    return memo[key]
