"""Where a rule can start, read from CPython's tree: over-approximations of a rule's
``check`` on the syntax alone, for the site filter (:mod:`nanlint.sites`).

Some rules start from ops nearly every file of model code has (a clip, a log) and
report only on one shape of their arguments: NAN105 an epsilon added to a constant
before a value is subtracted (``1e-10 + 1 - p``) or an upper bound ``1 - 1e-10``
that float32 rounds to 1; NAN503 a clip whose lower bound is the literal 0.  A
file whose tree has no such shape anywhere cannot have their finding, so it need
not be parsed with libcst for them (``Rule.site``).

Every answer here must be True wherever the rule could report: a name counts as a
constant when it is assigned a constant-looking value anywhere in the file, an
attribute when it could be a named constant (``math.pi``), whatever the scope; a
call counts as a clip when its name is a clip's spelling, and every call does when
a clip's name is bound to another name (``from torch import clamp as c``).
``tests/test_speed.py`` compares runs with and without the site filter.
"""

from __future__ import annotations

import ast
import bisect
import re
import struct

F32_ABSORBED_ADD = 2.0 ** -24  # 1 + eps == 1 in float32 for eps <= this (as nanlint.guards)
_NAMED = frozenset({"pi", "e", "tau"})  # the named constants nanlint.guards.constant knows
_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)
UNKNOWN = object()  # a constant whose value the syntax does not tell (a name bound to one)


def _float32(value: float) -> float:
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return float("inf")


class _Constants:
    """Constant values as :func:`nanlint.guards.constant` finds them, on CPython's tree."""

    def __init__(self, tree: ast.Module, text: str) -> None:
        self.names = set(_NAMED)
        nodes = ast.walk(tree) if ":=" in text else _statements(tree)  # walrus: anywhere in an expression
        for node in nodes:
            kind = type(node)
            if kind is ast.Assign:
                for target in node.targets:
                    self._bind(target, node.value)
            elif kind is ast.AnnAssign and node.value is not None:
                self._bind(node.target, node.value)
            elif kind is ast.NamedExpr:
                self._bind(node.target, node.value)
            elif kind is ast.ImportFrom:
                for alias in node.names:
                    if alias.name in _NAMED and alias.asname:
                        self.names.add(alias.asname)

    def _bind(self, target: ast.expr, value: ast.expr) -> None:
        if type(target) is ast.Name:
            if self.value(value, free=True) is not None:
                self.names.add(target.id)
        elif type(target) in (ast.Tuple, ast.List):
            pairs = value.elts if type(value) in (ast.Tuple, ast.List) and \
                len(value.elts) == len(target.elts) else [value] * len(target.elts)
            for t, v in zip(target.elts, pairs):
                self._bind(t, v)

    def value(self, node: ast.expr, free: bool = False):
        """The float value of a literal or literal arithmetic; UNKNOWN when a name or
        attribute in it may be bound to a constant (any name, given ``free``); None
        when it is not a constant."""
        kind = type(node)
        if kind is ast.Constant:
            v = node.value
            return float(v) if type(v) in (int, float) else None
        if kind is ast.Name:
            return UNKNOWN if free or node.id in self.names else None
        if kind is ast.Attribute:
            return UNKNOWN if free or node.attr in _NAMED else None
        if kind is ast.UnaryOp:
            if type(node.op) not in (ast.USub, ast.UAdd):
                return None
            inner = self.value(node.operand, free)
            if inner is None or inner is UNKNOWN:
                return inner
            return -inner if type(node.op) is ast.USub else inner
        if kind is ast.BinOp and type(node.op) in _ARITH:
            a = self.value(node.left, free)
            b = self.value(node.right, free) if a is not None else None
            if a is None or b is None:
                return None
            if a is UNKNOWN or b is UNKNOWN:
                return UNKNOWN
            try:
                op = type(node.op)
                if op is ast.Add:
                    return a + b
                if op is ast.Sub:
                    return a - b
                if op is ast.Mult:
                    return a * b
                if op is ast.Div:
                    return a / b
                return float(a ** b)
            except (ZeroDivisionError, OverflowError, TypeError):
                return None
        return None


def _statements(tree: ast.Module):
    stack = list(tree.body)
    while stack:
        s = stack.pop()
        yield s
        for field in ("body", "orelse", "finalbody"):
            stack.extend(getattr(s, field, None) or ())
        for group in ("handlers", "cases"):
            for h in getattr(s, group, None) or ():
                stack.extend(h.body)


def _terms(node: ast.expr) -> list[tuple[int, ast.expr]]:
    """``a + b - (c - d)`` as ``[(+1, a), (+1, b), (-1, c), (+1, d)]`` (as nanlint.values.terms)."""
    out: list[tuple[int, ast.expr]] = []
    stack = [(1, node)]
    while stack:
        sign, n = stack.pop()
        if type(n) is ast.BinOp and type(n.op) in (ast.Add, ast.Sub):
            stack.append((sign if type(n.op) is ast.Add else -sign, n.right))
            stack.append((sign, n.left))
        else:
            out.append((sign, n))
    return out


def absorbed_epsilon(tree: ast.Module, text: str, log_names: frozenset[str], clip_names: frozenset[str]) -> bool:
    """Whether some log (a call or method spelled with ``log_names``) takes an additive
    chain that starts with constants, one of which float32 loses in their sum, before a
    subtracted term (``log(1e-10 + 1 - p)``), or some clip (``clip_names``) takes constant
    arithmetic float32 rounds to exactly 1 (``clip(p, eps, 1 - 1e-10)``): where NAN105
    can report."""
    consts: _Constants | None = None
    for call, name in _calls(tree, text, log_names | clip_names):
        if name is None:
            return True  # a log or clip bound to another name: any call may be one
        if name in log_names:
            operands = [*call.args, *(k.value for k in call.keywords)]
            if type(call.func) is ast.Attribute:
                operands.append(call.func.value)  # (1e-10 + 1 - p).log()
            for arg in operands:
                if type(arg) is ast.BinOp and type(arg.op) in (ast.Add, ast.Sub):
                    consts = consts or _Constants(tree, text)
                    if _absorbs(consts, arg):
                        return True
        if name in clip_names:
            for arg in [*call.args, *(k.value for k in call.keywords)]:
                if type(arg) is ast.BinOp:
                    consts = consts or _Constants(tree, text)
                    v = consts.value(arg)
                    if v is UNKNOWN or (v is not None and v != 1.0 and _float32(v) == 1.0):
                        return True
    return False


def _absorbs(consts: _Constants, node: ast.BinOp) -> bool:
    chain = _terms(node)
    run = []
    for sign, term in chain:
        v = consts.value(term)
        if v is None:
            break
        run.append(v if v is UNKNOWN else sign * v)
    if len(run) < 2 or not any(sign < 0 for sign, _ in chain[len(run):]):
        return False
    if any(v is UNKNOWN for v in run):
        return True
    big = abs(sum(run))
    return any(0 < v <= big * F32_ABSORBED_ADD for v in run)


def literal(node: ast.expr) -> float | None:
    """The value of a numeric literal (``2``, ``-0.5``), as nanlint.values.number reads one."""
    sign = 1.0
    if type(node) is ast.UnaryOp and type(node.op) in (ast.USub, ast.UAdd):
        sign = -1.0 if type(node.op) is ast.USub else 1.0
        node = node.operand
    if type(node) is ast.Constant and type(node.value) in (int, float):
        return sign * node.value
    return None


def _zero_literal(node: ast.expr) -> bool:
    """A constant at most 0, a list or tuple literal holding one, a tensor made of one."""
    if type(node) is ast.Call and node.args:
        node = node.args[0]
    if type(node) in (ast.List, ast.Tuple):
        return any(_zero_literal(e) for e in node.elts if type(e) is not ast.Starred)
    value = literal(node)
    return value is not None and value <= 0


def _is_zero(node: ast.expr) -> bool:
    if type(node) is ast.UnaryOp and type(node.op) in (ast.USub, ast.UAdd):
        node = node.operand
    return type(node) is ast.Constant and type(node.value) in (int, float) and node.value == 0


def zero_clip(tree: ast.Module, text: str, clip_names: frozenset[str]) -> bool:
    """Whether some call spelled with one of ``clip_names`` has a literal 0 argument
    (``clamp(min=0)``, ``clip_by_value(g, 0., c)``), or a clip's name is bound to another
    name (then any call may be a clip): where NAN503 can report."""
    for call, name in _calls(tree, text, clip_names):
        if name is None or any(_is_zero(a) for a in [*call.args, *(k.value for k in call.keywords)]):
            return True
    return False


_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def _calls(tree: ast.Module, text: str, names: frozenset[str]):
    """(call, its name) for the calls whose name (``f(...)``, ``x.f(...)``) is one of
    ``names``, and (node, None) for a node that binds or passes one of them otherwise
    (``from torch import clamp as c``, ``f = tf.math.log``, ``map(torch.log, xs)``).
    Only the statements on lines where one of the names is written are walked."""
    if not names:
        return
    word = re.compile(r"\b(?:%s)\b" % "|".join(map(re.escape, sorted(names))))
    if "\r" in text:  # CPython's lines end at \r too
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines: list[int] = []
    line, pos = 1, 0
    for m in word.finditer(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        if not lines or lines[-1] != line:
            lines.append(line)
    if not lines:
        return
    for node in _on_lines(tree, lines):
        funcs = set()
        for n in ast.walk(node):
            kind = type(n)
            if kind is ast.Call:
                func = n.func
                funcs.add(id(func))
                name = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None
                if name in names:
                    yield n, name
            elif kind is ast.Name or kind is ast.Attribute:
                name = n.attr if kind is ast.Attribute else n.id
                if name in names and id(n) not in funcs:
                    yield n, None
            elif kind is ast.alias:
                if n.asname and n.name.rsplit(".", 1)[-1] in names:
                    yield n, None


def _on_lines(tree: ast.Module, lines: list[int]):
    """The parts of the statements written on one of ``lines`` (sorted): simple
    statements whole, a compound statement's header without its bodies."""
    stack = list(tree.body)
    while stack:
        s = stack.pop()
        first = min([s.lineno] + [d.lineno for d in getattr(s, "decorator_list", ())])
        i = bisect.bisect_left(lines, first)
        if i == len(lines) or lines[i] > (s.end_lineno or s.lineno):
            continue
        if not any(hasattr(s, f) for f in _BODIES):
            yield s
            continue
        for field, value in ast.iter_fields(s):
            if field in ("body", "orelse", "finalbody"):
                stack.extend(value)
            elif field == "handlers":
                for h in value:
                    if h.type is not None:
                        yield h.type
                    stack.extend(h.body)
            elif field == "cases":
                for c in value:
                    yield c.pattern
                    if c.guard is not None:
                        yield c.guard
                    stack.extend(c.body)
            elif isinstance(value, ast.AST):
                yield value
            elif isinstance(value, list):
                yield from (v for v in value if isinstance(v, ast.AST))


class _Uses:
    """What an expression reads: names, attribute names, called names, and whether it
    holds a source itself (a source op's call, a comparison, a matmul, a zero literal)."""

    __slots__ = ("names", "attrs", "calls", "root", "zero")

    def __init__(self, nodes, sources: frozenset[str]) -> None:
        self.names: set[str] = set()
        self.attrs: set[str] = set()
        self.calls: set[str] = set()
        self.root = False
        self.zero = False  # the value itself is a zero literal (an accumulator's start, a literal list)
        for node in nodes:
            if node is None:
                continue
            for n in ast.walk(node):
                kind = type(n)
                if kind is ast.Name:
                    self.names.add(n.id)
                elif kind is ast.Attribute:
                    self.attrs.add(n.attr)
                elif kind is ast.Call:
                    func = n.func
                    name = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None
                    if name is not None:
                        if name in sources:
                            self.root = True
                        self.calls.add(name)
                elif (kind is ast.Compare or (kind is ast.BinOp and type(n.op) in (ast.MatMult, ast.BitAnd, ast.BitOr))
                        or (kind is ast.UnaryOp and type(n.op) is ast.Invert)):
                    self.root = True  # a mask (its count), an affine output
                elif kind is ast.Constant and type(n.value) is str and n.value in sources:
                    self.root = True  # activation="softmax"
            if _zero_literal(node):
                self.zero = True  # the value itself is 0 (or below), or a literal holding 0

    def tainted(self, names: set[str], attrs: set[str], defs: set[str], zero: bool = True) -> bool:
        return self.root or (zero and self.zero) or not (self.names.isdisjoint(names) and self.attrs.isdisjoint(attrs)
                                 and self.calls.isdisjoint(defs))


def zero_sinks(tree: ast.Module, text: str, sinks: frozenset[str], sources: frozenset[str],
               divide: bool = False, power=None) -> bool:
    """Whether an operand of a sink (a call spelled with one of ``sinks``, a ``/`` when
    ``divide``, ``x ** p`` when ``power(p)``) may hold a value computed from a source: a
    call spelled with one of ``sources``, a comparison (a mask to count), a matmul, a
    literal 0, through the names, attributes, returns and parameters of the file (in any
    scope: a taint over names, not a flow): where the zero rules (NAN107/NAN108/NAN206)
    can report on values the file shows."""
    every = sinks | sources
    flows: list[tuple[list[tuple[str, str]], _Uses]] = []  # (targets (kind, name), value)
    returns: dict[str, list[_Uses]] = {}  # def or class name -> its returns' values
    params: dict[str, list[ast.arguments]] = {}  # def name -> the parameters of each def of it
    arguments: list[tuple[str, int | str, _Uses]] = []  # (callee name, position or keyword (-1: any), argument)
    operands: list[_Uses] = []
    for call, name in _calls(tree, text, every):
        if name is None:
            return True  # a sink or source bound to another name: anything may be one
        if name in sinks:
            operands.append(_Uses([*call.args, *(k.value for k in call.keywords),
                                   call.func.value if type(call.func) is ast.Attribute else None], sources))
    free: set[str] = set()  # a lambda's parameters: whatever it is applied to
    # a name imported from a module (``from .features import activations``): its value may be
    # a source there, so calling it (or constructing it: a model) is one
    imported = {a.asname or a.name for n in _statements(tree) if type(n) is ast.ImportFrom
                for a in n.names if a.name != "*"}
    owners: list[tuple[str, ast.AST]] = [("", tree)]
    while owners:
        owner, scope = owners.pop()
        for n in _pruned(scope):
            k = type(n)
            if k in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                owners.append((n.name, n))
                if k is not ast.ClassDef:
                    params.setdefault(n.name, []).append(n.args)
                continue
            if k is ast.Assign:
                flows.append(([t for target in n.targets for t in _targets(target)], _Uses([n.value], sources)))
            elif k in (ast.AugAssign, ast.AnnAssign, ast.NamedExpr) and n.value is not None:
                flows.append((_targets(n.target), _Uses([n.value], sources)))
                if k is ast.AugAssign and divide and type(n.op) is ast.Div:
                    operands.append(_Uses([n.value], sources))  # x /= n
            elif k in (ast.For, ast.AsyncFor, ast.comprehension):
                flows.append((_targets(n.target), _Uses([n.iter], sources)))
            elif k is ast.withitem and n.optional_vars is not None:
                flows.append((_targets(n.optional_vars), _Uses([n.context_expr], sources)))
            elif k in (ast.Return, ast.Yield) and n.value is not None and owner:
                returns.setdefault(owner, []).append(_Uses([n.value], sources))
            elif k is ast.Lambda:
                a = n.args
                free.update(p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if p)
            elif k is ast.Call:
                func = n.func
                callee = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None
                if callee is not None:
                    shift = 1 if type(func) is ast.Attribute else 0  # a method's self
                    for i, arg in enumerate(n.args):
                        where = -1 if type(arg) is ast.Starred else i + shift
                        arguments.append((callee, where, _Uses([arg], sources)))
                    for kw in n.keywords:
                        arguments.append((callee, -1 if kw.arg is None else kw.arg, _Uses([kw.value], sources)))
            elif k is ast.BinOp and ((divide and type(n.op) is ast.Div) or
                                     (power is not None and type(n.op) is ast.Pow and power(n.right))):
                operands.append(_Uses([n.right if type(n.op) is ast.Div else n.left], sources))
    if not operands:
        return False
    for owner, scope in ((n.name, n) for n in ast.walk(tree) if type(n) is ast.ClassDef):
        for item in scope.body:  # a class returns what its methods return (forward, call, __call__)
            if type(item) in (ast.FunctionDef, ast.AsyncFunctionDef):
                returns.setdefault(owner, []).extend(returns.get(item.name, ()))
    names: set[str] = set(free)
    attrs: set[str] = set()
    defs: set[str] = set(imported)
    # a name bound to a literal 0 is a source only when that is its one binding in the file
    # (the rules count a constant only as the one value reaching a sink: an accumulator
    # ``n = 0`` that a loop increments is not)
    bindings: dict[tuple[str, str], int] = {}
    for targets, _ in flows:
        for t in targets:
            bindings[t] = bindings.get(t, 0) + 1
    for _ in range(8):
        before = (len(names), len(attrs), len(defs))
        for targets, value in flows:
            if value.tainted(names, attrs, defs, zero=all(bindings[t] == 1 for t in targets)):
                for kind, name in targets:
                    (names if kind == "name" else attrs).add(name)
        for owner, values in returns.items():
            if owner not in defs and any(v.tainted(names, attrs, defs) for v in values):
                defs.add(owner)
        for callee, where, arg in arguments:
            if callee in params and arg.tainted(names, attrs, defs):
                names.update(_parameters(params[callee], where) - {"self", "cls"})  # objects: their attributes flow
        if (len(names), len(attrs), len(defs)) == before:
            break
    return any(u.tainted(names, attrs, defs) for u in operands)


def _parameters(defs: list[ast.arguments], where: int | str) -> set[str]:
    """The parameters an argument at position ``where`` (an index counting a method's
    self, a keyword, or -1: any) can bind, in any of the defs of that name."""
    out: set[str] = set()
    for a in defs:
        positional = [*a.posonlyargs, *a.args]
        every = [p.arg for p in [*positional, *a.kwonlyargs, a.vararg, a.kwarg] if p]
        if where == -1:
            out.update(every)
        elif isinstance(where, int):
            for i in (where, where - 1):  # a method called through its class, or a function
                if 0 <= i < len(positional):
                    out.add(positional[i].arg)
            if a.vararg is not None:
                out.add(a.vararg.arg)
        else:
            out.add(where if where in every else a.kwarg.arg if a.kwarg else where)
    return out


def _pruned(scope: ast.AST):
    """The nodes under ``scope``, not descending into the functions and classes defined
    there (they are yielded, to be walked as scopes of their own)."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        n = stack.pop()
        yield n
        if type(n) not in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            stack.extend(ast.iter_child_nodes(n))


def _targets(node: ast.expr) -> list[tuple[str, str]]:
    out = []
    for n in ast.walk(node):
        if type(n) is ast.Name:
            out.append(("name", n.id))
        elif type(n) is ast.Attribute:
            out.append(("attr", n.attr))
    return out
