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
from nanlint.source.ast_tree import statements
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
_READ = frozenset({ast.BinOp, ast.Call, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.NamedExpr, ast.For, ast.AsyncFor,
                   ast.comprehension, ast.withitem, ast.ImportFrom, ast.Import, ast.ClassDef, ast.FunctionDef,
                   ast.AsyncFunctionDef, ast.Lambda})
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


_STAT_WORD = re.compile(r"\b(?:std|var|reduce_std|reduce_variance|variance)\b")
_MINUS_ONE = re.compile(r"-\s*1(?![\d.\w])")
_COUNT_WORD = re.compile(r"n|k|num|count|length|size|total|(?:num|n|len)_\w+|\w+_(?:num|count|len|length|size|steps|samples)")


def text_site(text: str) -> bool:
    """NAN111's text check (its gate's and its check's first step): a statistic's name, or
    ``- 1`` after a count (``len(x) - 1``, ``x.shape[0] - 1``, ``n - 1``, ``num_steps - 1``):
    not every ``- 1`` (an index, an offset), which made most files reach libcst.  The word
    before each ``- 1`` is read backwards from it (a regex trying a count's name at every
    position of the text cost more than the tree's gate)."""
    if _STAT_WORD.search(text):
        return True
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

    for node in ast.walk(tree):
        kind = type(node)
        if kind not in _READ:
            continue
        if kind is ast.BinOp:
            op = type(node.op)
            if op is ast.Div and literal(node.right) is None:
                dens.append(node.right)
            elif op is ast.Pow and (literal(node.right) or 0) < 0:
                dens.append(node.left)
        elif kind is ast.Call:
            name = callee(node.func)
            if name is not None:
                args = [*node.args, *(k.value for k in node.keywords)]
                calls.append((name, args))
                if name in divides and (name not in _POWERS or any((literal(a) or 0) < 0 for a in args)):
                    dens.extend(args + ([node.func.value] if type(node.func) is ast.Attribute else []))
        elif kind is ast.Assign:
            flows.append(([node.value], set().union(*map(_names_in, node.targets))))
            last = callee(node.value)
            if last is not None and type(node.value) is not ast.Call:  # ``sd = torch.std``
                aliases.extend((t.id, last) for t in node.targets if type(t) is ast.Name)
        elif kind is ast.AugAssign:
            flows.append(([node.value], _names_in(node.target)))
            if type(node.op) is ast.Div:
                dens.append(node.value)
        elif kind is ast.AnnAssign or kind is ast.NamedExpr:
            if node.value is not None:
                flows.append(([node.value], _names_in(node.target)))
        elif kind is ast.For or kind is ast.AsyncFor or kind is ast.comprehension:
            flows.append(([node.iter], _names_in(node.target)))
        elif kind is ast.withitem:
            if node.optional_vars is not None:
                flows.append(([node.context_expr], _names_in(node.optional_vars)))
        elif kind is ast.ImportFrom:
            if node.level or (node.module or "").split(".")[0] not in _LIBRARIES:
                bound.update(a.asname or a.name for a in node.names)  # a project module's value
            aliases.extend((a.asname, a.name) for a in node.names if a.asname)
        elif kind is ast.Import:
            for a in node.names:
                if a.name.split(".")[0] not in _LIBRARIES:
                    bound.add(a.asname or a.name.split(".")[0])
        elif kind is ast.ClassDef:
            for stmt in node.body:  # ``Norm(x.std())`` binds its __init__'s parameters
                if type(stmt) in (ast.FunctionDef, ast.AsyncFunctionDef) and stmt.name == "__init__":
                    params.setdefault(node.name, []).extend(_params(stmt.args))
        else:  # a function or a lambda
            names = _params(node.args)
            defaults = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
            if defaults:
                flows.append((defaults, set(names)))
            if kind is not ast.Lambda:
                params.setdefault(node.name, []).extend(names)
                # its returns (a nested function's too: more, never fewer)
                returns.setdefault(node.name, []).extend(
                    r.value for r in statements(node.body) if type(r) is ast.Return and r.value is not None)
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
        if kind is ast.Lambda:  # ``sd = lambda r: r.std()``
            return may(e.body, root, depth + 1)
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
        return kind is ast.Lambda and counts(e.body)

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
