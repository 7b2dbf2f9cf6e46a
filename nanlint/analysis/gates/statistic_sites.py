"""NAN111's gate on CPython's tree: some denominator may be a std, a variance, the root of
one, or ``n - 1`` (issue 22).

What NAN111's check starts from (``division_sites``): the right side of ``a / b`` and of
``a /= b``, the arguments of a divide call, the argument of ``reciprocal``/``rsqrt``, the
base of a power with a negative literal exponent.  What it asks of such a denominator
(``statistic_of``, ``count_of``): every value reaching it (:mod:`nanlint.semantic.reach`:
through names, ``self`` attributes, layout ops and indexing, the returns of the file's
functions, the arguments at their call sites, model calls, the project's modules) is a
std or variance call, the root of a variance (``sqrt(v)``, ``v ** 0.5``) or ``x - 1``
(``sub(x, 1)``).  :func:`statistic_denominator` over-approximates that on the syntax:

* a value *may be a statistic* when it is such a call or operator (the constant possibly
  1 or 0.5: a name bound to a constant counts), a layout op of, an index of, or a list of
  one, or a *bound* name, attribute, or call of one;
* a name is bound when anything in the file may give it such a value: an assignment (any
  target, ``for``, ``with``, ``:=``, a default), a ``return`` of the function of that name,
  an argument at a call of the function (or class) whose parameter it is, an import from
  a project module (its value is made there), to a fixpoint; a model's ``forward`` (or
  ``call``) returning one makes every call count;
* only some value reaching it need be one (the check wants all of them).

One pass over the tree collects the denominators and the bindings; the fixpoint then
reads only those (the gate it replaced re-walked each denominator's whole subtree every
round: quadratic on nested divisions, and blind to returns, parameters and ``** -0.5``).
"""

from __future__ import annotations

import ast
import re

from nanlint.analysis.gates.sites import last_names
from nanlint.analysis.gates.syntax_sites import UNKNOWN, Constants, callee, literal
from nanlint.vocabulary import ops as o

# the statistics and roots a denominator's value may be (statistic_of; ``moments`` returns a
# variance; ``nanstd``/``nanvar``: NumPy's); ops spelled by the frameworks' tables
_STATISTICS = frozenset({"moments", "nanstd", "nanvar", "variance"})
_LIBRARIES = frozenset({"torch", "tensorflow", "jax", "numpy", "keras", "flax", "optax", "haiku", "math", "typing",
                        "collections", "functools", "itertools", "dataclasses", "os", "sys", "__future__", "abc"})
_DIVIDES = frozenset({"divide", "div", "true_divide", "reciprocal", "rsqrt", "pow", "power", "truediv"})
_POWERS = frozenset({"pow", "power", "float_power"})
# ``n`` of ``n - 1`` as _statistics._count reads it: a name like a count, a length, a shape
COUNT = re.compile(r"^(n|k|num|count|length|size|total|(num|n|len)_\w+|\w+_(num|count|len|length|size|steps|samples))$",
                   re.IGNORECASE)
SHAPE_METHODS = frozenset({"size", "numel", "nelement", "dim"})
_ROUNDS = 12  # fixpoint rounds before the answer is yes anyway
_MODEL_ENTRIES = frozenset({"forward", "call", "__call__"})  # what a model object's call runs


def _params(args: ast.arguments) -> list[str]:
    """The parameters a call's arguments bind (not ``self``/``cls``: the object, not an argument)."""
    return [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs,
                            *([args.vararg] if args.vararg else []), *([args.kwarg] if args.kwarg else []))
            if a.arg not in ("self", "cls")]


def _names_in(node: ast.AST) -> set[str]:
    """The names and attribute names a target binds (``a``, ``self.s``, ``(m, v)``)."""
    out = set()
    for n in ast.walk(node):
        if type(n) is ast.Name:
            out.add(n.id)
        elif type(n) is ast.Attribute:
            out.add(n.attr)
    return out


def _chain_root(node: ast.expr) -> str | None:
    while type(node) is ast.Attribute:
        node = node.value
    return node.id if type(node) is ast.Name else None


def statistic_denominator(tree: ast.Module, text: str) -> bool:
    """Whether some denominator of the file may be a statistic or ``n - 1`` (see the module)."""
    stats = set(last_names(frozenset({o.STD, o.VARIANCE})) | _STATISTICS)
    roots = set(last_names(frozenset({o.SQRT})))
    variances = set(last_names(frozenset({o.VARIANCE, o.MEAN}))) | {"moments", "nanvar", "variance"}
    subtracts = set(last_names(frozenset({o.SUBTRACT})))
    layouts = set(last_names(frozenset({o.SHAPE})))
    divides = set(last_names(frozenset({o.DIVIDE, o.RECIPROCAL, o.RSQRT, o.POW})) | _DIVIDES)
    spellings = (stats, roots, variances, subtracts, layouts, divides)
    consts = Constants(tree, text)

    flows: list[tuple[list[ast.expr], set[str]]] = []  # values -> the names they bind
    dens: list[ast.expr] = []
    returns: dict[str, list[ast.expr]] = {}  # function name -> its returned values
    params: dict[str, list[str]] = {}  # function (or class: its __init__) name -> parameters
    calls: list[tuple[str, list[ast.expr]]] = []  # callee -> arguments
    bound: set[str] = set()  # names that may hold a statistic
    vbound: set[str] = set()  # names that may hold a variance (or a mean: a hand-written one)
    cbound: set[str] = set()  # names that may hold a count (a length, a size)
    aliases: list[tuple[str, str]] = []  # (new name, the op name it spells)

    stack: list[tuple[ast.AST, str | None]] = [(tree, None)]  # a node, the function it is in
    while stack:
        node, owner = stack.pop()
        kind = type(node)
        inner = owner
        if kind is ast.BinOp:
            op = type(node.op)
            if op is ast.Div and literal(node.right) is None:
                dens.append(node.right)
            elif op is ast.Pow and (literal(node.right) or 0) < 0:
                dens.append(node.left)
        elif kind is ast.Call:
            name = callee(node.func)
            args = [*node.args, *(k.value for k in node.keywords)]
            if name is not None:
                calls.append((name, args))
                if name in divides and (name not in _POWERS or any((literal(a) or 0) < 0 for a in args)):
                    dens.extend(args + ([node.func.value] if type(node.func) is ast.Attribute else []))
        elif kind is ast.AugAssign:
            flows.append(([node.value], _names_in(node.target)))
            if type(node.op) is ast.Div:
                dens.append(node.value)
        elif kind is ast.Assign:
            flows.append(([node.value], set().union(*map(_names_in, node.targets))))
            last = callee(node.value)
            if last is not None and type(node.value) is not ast.Call:  # ``sd = torch.std``
                aliases.extend((t.id, last) for t in node.targets if type(t) is ast.Name)
        elif kind in (ast.AnnAssign, ast.NamedExpr) and node.value is not None:
            flows.append(([node.value], _names_in(node.target)))
        elif kind in (ast.For, ast.AsyncFor, ast.comprehension):
            flows.append(([node.iter], _names_in(node.target)))
        elif kind is ast.withitem and node.optional_vars is not None:
            flows.append(([node.context_expr], _names_in(node.optional_vars)))
        elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
            names = _params(node.args)
            defaults = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
            if defaults:
                flows.append((defaults, set(names)))
            if kind is not ast.Lambda:
                params.setdefault(node.name, []).extend(names)
                if node.name == "__init__" and owner is not None and owner.startswith("class "):
                    params.setdefault(owner[6:], []).extend(names)
                inner = node.name
        elif kind is ast.ClassDef:
            inner = "class " + node.name
        elif kind is ast.Return and node.value is not None and owner is not None:
            returns.setdefault(owner, []).append(node.value)
        elif kind is ast.ImportFrom:
            if node.level or (node.module or "").split(".")[0] not in _LIBRARIES:
                bound.update(a.asname or a.name for a in node.names)  # a project module's value
            aliases.extend((a.asname, a.name) for a in node.names if a.asname)
        elif kind is ast.Import:
            for a in node.names:
                if a.name.split(".")[0] not in _LIBRARIES:
                    bound.add(a.asname or a.name.split(".")[0])
        stack.extend((c, inner) for c in ast.iter_child_nodes(node))
    if not dens:
        return False
    for new, old in aliases:  # ``from torch import std as sd``: every spelling's set takes the alias
        for names in spellings:
            if old in names:
                names.add(new)
    models = [False, False, False]  # a model's forward returns a statistic, a variance, a count: any call may

    def maybe(node: ast.expr, want: float) -> bool:
        v = consts.value(node)
        return v is UNKNOWN or v == want

    def may(e: ast.expr, root: bool = False, depth: int = 0) -> bool:
        """``e`` may be a statistic (``root``: a variance, under a square root)."""
        if depth > 16:
            return True
        kind = type(e)
        if kind is ast.Call:
            name = callee(e.func)
            args = [*e.args, *(k.value for k in e.keywords)]
            receiver = [e.func.value] if type(e.func) is ast.Attribute else []
            if name in layouts and any(may(a, root, depth + 1) for a in args + receiver):
                return True
            if root and name in variances:
                return True
            if not root and (name in stats or name in subtracts and any(maybe(a, 1.0) for a in args + receiver)
                             and any(counts(a) for a in args + receiver)):
                return True
            if not root and name in roots and any(may(a, True, depth + 1) for a in args + receiver):
                return True
            known = bound | vbound if root else bound
            return models[root] or name in known or _chain_root(e.func) in known
        if kind is ast.BinOp:
            op = type(e.op)
            if op is ast.Sub:
                return not root and maybe(e.right, 1.0) and counts(e.left)
            return op is ast.Pow and not root and maybe(e.right, 0.5) and may(e.left, True, depth + 1)
        if kind is ast.Subscript:
            return may(e.value, root, depth + 1)
        known = bound | vbound if root else bound
        if kind is ast.Name:
            return e.id in known
        if kind is ast.Attribute:
            return e.attr in known or _chain_root(e) in known
        if kind in (ast.List, ast.Tuple):
            return any(may(x, root, depth + 1) for x in e.elts)
        return False

    def counts(e: ast.expr) -> bool:
        """``e`` may be a count (``len(x)``, ``x.shape[0]``, ``x.size(0)``, ``num_steps``)."""
        kind = type(e)
        known = bound | cbound
        if kind is ast.Name:
            return bool(COUNT.match(e.id)) or e.id in known
        if kind is ast.Attribute:
            return bool(COUNT.match(e.attr)) or e.attr in known or _chain_root(e) in known
        if kind is ast.Call:
            name = callee(e.func)
            return models[2] or type(e.func) is ast.Name and name == "len" or \
                type(e.func) is ast.Attribute and name in SHAPE_METHODS or name in known or _chain_root(e.func) in known
        if kind is ast.Subscript:
            v = e.value
            return type(v) is ast.Attribute and v.attr == "shape" or type(v) is ast.Call and \
                (callee(v.func) == "shape" or counts(v))
        return False

    tests = ((bound, lambda v: may(v)), (vbound, lambda v: may(v, True)), (cbound, counts))
    for _ in range(_ROUNDS):
        if any(may(d) for d in dens):
            return True
        before = len(bound), len(vbound), len(cbound), *models
        for k, (known, test) in enumerate(tests):
            for values, targets in flows:
                if not targets <= known and any(test(v) for v in values):
                    known |= targets
            for name, values in returns.items():
                if name not in known and any(test(v) for v in values):
                    known.add(name)
                    models[k] = models[k] or name in _MODEL_ENTRIES
            for name, args in calls:
                if name in params and not set(params[name]) <= known and any(test(a) for a in args):
                    known.update(params[name])
        if (len(bound), len(vbound), len(cbound), *models) == before:
            return False
    return True
