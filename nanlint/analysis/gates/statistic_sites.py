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
  a project module (its value is made there), to a fixpoint; a model class's ``forward``
  (``call``, ``__call__``; a class deriving from a framework's model base, as
  :mod:`nanlint.semantic.models` reads one) returning one makes every call count;
* only some value reaching it need be one (the check wants all of them).

One pass over the tree collects the denominators and the bindings; the fixpoint then
reads only those (the gate it replaced re-walked each denominator's whole subtree every
round: quadratic on nested divisions, and blind to returns, parameters and ``** -0.5``).
"""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path

from nanlint.analysis.gates.sites import last_names
from nanlint.analysis.gates.syntax_sites import UNKNOWN, Constants, callee, literal
from nanlint.source.ast_tree import nodes
from nanlint.analysis.gates.bindings import MODEL_ENTRIES, bound_by, chain_root, project_module, returned, signature, targets
from nanlint.semantic import modules
from nanlint.vocabulary import ops as o

# the statistics and roots a denominator's value may be (statistic_of; ``moments`` returns a
# variance; ``nanstd``/``nanvar``: NumPy's); ops spelled by the frameworks' tables
_STATISTICS = frozenset({"moments", "nanstd", "nanvar", "variance"})
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
_BUILTINS = frozenset(dir(builtins))


def _params(args: ast.arguments) -> list[str]:
    """The parameters a call's arguments bind (not ``self``/``cls``: the object, not an argument)."""
    return [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs,
                            *([args.vararg] if args.vararg else []), *([args.kwarg] if args.kwarg else []))
            if a.arg not in ("self", "cls")]


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


def _minus_one(call: ast.Call, receiver: list, maybe, counts) -> bool:
    """``x.sub(1)`` or ``sub(x, 1)`` (``other=1``) with ``x`` a count: ``ctx.arithmetic``'s ``x - 1``."""
    args, keywords = call.args, [k.value for k in call.keywords]
    if receiver and counts(receiver[0]) and any(maybe(a, 1.0) for a in args[:1] + keywords):
        return True
    return bool(args) and counts(args[0]) and any(maybe(a, 1.0) for a in args[1:2] + keywords)


_GIVES = re.compile(r"\b(?:std|var|reduce_std|reduce_variance|variance|nanstd|nanvar|moments|sqrt)\b"
                    r"|\*\*\s*[(+\s]*(?!2(?![\d.eE_]))[\w.]")
_GIVING: dict[tuple, bool] = {}  # (module path, mtime, size) -> whether its text may make a statistic


def _imports_may_give(path: Path | None, text: str, extra: tuple[str, ...]) -> bool:
    """Whether a project module the file imports (:func:`nanlint.semantic.modules.dependencies`:
    transitively, a superset of what reach reads) may make a statistic: a std or variance
    named, a square root, a power but ``** 2`` (``** 0.5``, ``** half``).  A count never comes
    from another module (count_of takes only this file's values)."""
    if path is None:
        return True
    deps = modules.dependencies(path, text, extra)
    if len(deps) >= modules.MAX_DEPENDENCIES:
        return True  # the list may be cut short
    for dep in deps:
        try:
            st = dep.stat()
        except OSError:
            continue  # reach cannot read it either
        key = (str(dep), st.st_mtime_ns, st.st_size)
        if key not in _GIVING:
            try:
                _GIVING[key] = _GIVES.search(dep.read_bytes().decode("utf-8", "replace")) is not None
            except OSError:
                _GIVING[key] = False
        if _GIVING[key]:
            return True
    return False


def statistic_denominator(tree: ast.Module, text: str, path: Path | None = None, extra: tuple[str, ...] = ()) -> bool:
    """Whether some denominator of the file may be a statistic or ``n - 1`` (see the module);
    ``path`` and ``extra`` locate the project modules it imports (None: any may give one)."""
    stats = set(last_names(frozenset({o.STD, o.VARIANCE})) | _STATISTICS)
    roots = set(last_names(frozenset({o.SQRT})))
    variances = set(last_names(frozenset({o.VARIANCE}))) | {"moments", "nanvar", "variance"}
    means = set(last_names(frozenset({o.MEAN})))
    squares = set(last_names(frozenset({o.SQUARE})))
    subtracts = set(last_names(frozenset({o.SUBTRACT})))
    layouts = set(last_names(frozenset({o.SHAPE})))
    divides = set(last_names(frozenset({o.DIVIDE, o.RECIPROCAL, o.RSQRT, o.POW})) | _DIVIDES)
    spellings = (stats, roots, variances, means, squares, subtracts, layouts, divides)
    consts = Constants(tree, text)

    flows: list[tuple[list[ast.expr], set[str]]] = []  # values -> the names they bind
    dens: list[ast.expr] = []
    returns: dict[str, list[ast.expr]] = {}  # function name -> its returned values
    params: dict[str, list] = {}  # function (or class: its __init__) name -> its signatures
    calls: list[tuple[str, ast.Call]] = []  # callee name, call
    lambdas: list[ast.expr] = []  # their bodies: a model may apply one (a Keras Lambda layer)
    local: set[str] = set()  # names the file binds (a builtin not among them is never a model)
    project: set[str] = set()  # names imported from the project's modules: their values are made there
    bound: set[str] = set()  # names that may hold a statistic
    vbound: set[str] = set()  # names that may hold a variance (or a mean: a hand-written one)
    cbound: set[str] = set()  # names that may hold a count (a length, a size)
    aliases: list[tuple[str, str]] = []  # (new name, the op name it spells)
    classes: list[ast.ClassDef] = []

    for node in nodes(tree, *_READ):
        kind = type(node)
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
                calls.append((name, node))
                if name in divides and (name not in _POWERS or any((literal(a) or 0) < 0 for a in args)):
                    dens.extend(args + ([node.func.value] if type(node.func) is ast.Attribute else []))
        elif kind is ast.Assign:
            flows.append(([node.value], set().union(*map(targets, node.targets))))
            local.update(flows[-1][1])
            last = callee(node.value)
            if last is not None and type(node.value) is not ast.Call:  # ``sd = torch.std``
                aliases.extend((t.id, last) for t in node.targets if type(t) is ast.Name)
        elif kind is ast.AugAssign:
            flows.append(([node.value], targets(node.target)))
            if type(node.op) is ast.Div:
                dens.append(node.value)
        elif kind is ast.AnnAssign or kind is ast.NamedExpr:
            if node.value is not None:
                flows.append(([node.value], targets(node.target)))
        elif kind is ast.For or kind is ast.AsyncFor or kind is ast.comprehension:
            flows.append(([node.iter], targets(node.target)))
        elif kind is ast.withitem:
            if node.optional_vars is not None:
                flows.append(([node.context_expr], targets(node.optional_vars)))
        elif kind is ast.ImportFrom:
            if project_module(node):
                project.update(a.asname or a.name for a in node.names)  # a project module's value
            aliases.extend((a.asname, a.name) for a in node.names if a.asname)
            local.update(a.asname or a.name for a in node.names)
        elif kind is ast.Import:
            for a in node.names:
                if project_module(a):
                    project.add(a.asname or a.name.split(".")[0])
                local.add(a.asname or a.name.split(".")[0])
        elif kind is ast.ClassDef:
            local.add(node.name)
            classes.append(node)
            for stmt in node.body:  # ``Norm(x.std())`` binds its __init__'s parameters
                if type(stmt) in (ast.FunctionDef, ast.AsyncFunctionDef) and stmt.name == "__init__":
                    params.setdefault(node.name, []).append(signature(stmt.args))
        else:  # a function or a lambda
            names = _params(node.args)
            local.update(names)
            defaults = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
            if defaults:
                flows.append((defaults, set(names)))
            if kind is ast.Lambda:
                lambdas.append(node.body)
            else:
                local.add(node.name)
                params.setdefault(node.name, []).append(signature(node.args))
                returns.setdefault(node.name, []).extend(returned(node))
    if not dens:
        return False
    if project and not _imports_may_give(path, text, extra):
        project = set()  # no module it imports can make a statistic: their values are not one
    for new, old in aliases:  # ``from torch import std as sd``: every spelling's set takes the alias
        for names in spellings:
            if old in names:
                names.add(new)
    # what a model object's call returns (models.output): the forward/call/__call__ of a class
    # deriving from a framework's model base (by its last name, or a name bound to one), not of
    # any class (a diffusers pipeline's __call__ returning its output dataclass made every call
    # of the file a possible statistic)
    bases = set(last_names(o.MODEL_BASES))
    bases |= {new for new, old in aliases if old in bases}
    entry_returns = [v for c in classes if any(callee(b) in bases for b in c.bases) for f in c.body
                     if type(f) in (ast.FunctionDef, ast.AsyncFunctionDef) and f.name in MODEL_ENTRIES
                     for v in returned(f)]
    models = [False, False, False]  # a model may give a statistic, a variance, a count: a call may
    bound |= project  # a project module's value may be a statistic or a variance (not a count)
    vbound |= project
    stat_known, var_known, count_known = bound, vbound, cbound

    def maybe(node: ast.expr, want: float) -> bool:
        v = consts.value(node)
        return v is UNKNOWN or v == want

    def model(func: ast.expr, k: int) -> bool:
        """A call of ``func`` may be a model's (not a builtin's the file does not rebind)."""
        return models[k] and not (type(func) is ast.Name and func.id in _BUILTINS and func.id not in local)

    def square_of_deviation(e: ast.expr) -> bool:
        """What a hand-written variance averages (``(x - m) ** 2``, ``square(d)``), or a name."""
        kind = type(e)
        if kind is ast.BinOp and type(e.op) is ast.Pow:
            base = e.left
        elif kind is ast.Call and callee(e.func) in squares:
            base = e.args[0] if e.args else e.func.value if type(e.func) is ast.Attribute else None
        else:
            return kind in (ast.Name, ast.Attribute, ast.Subscript, ast.Call)
        return base is None or type(base) in (ast.Name, ast.Attribute, ast.Subscript) or \
            type(base) is ast.BinOp and type(base.op) is ast.Sub or type(base) is ast.Call and callee(base.func) in subtracts

    def may(e: ast.expr, root: bool = False, depth: int = 0) -> bool:
        """``e`` may be a statistic (``root``: a variance, under a square root)."""
        if depth > 16:
            return True
        kind = type(e)
        known = var_known if root else stat_known
        if kind is ast.Call:
            name = callee(e.func)
            args = [*e.args, *(k.value for k in e.keywords)]
            receiver = [e.func.value] if type(e.func) is ast.Attribute else []
            if name in layouts and any(may(a, root, depth + 1) for a in args + receiver):
                return True
            if root:
                if name in variances or name in means and any(square_of_deviation(a) for a in args[:1] + receiver):
                    return True
            elif name in stats or name in subtracts and _minus_one(e, receiver, maybe, counts) or \
                    name in roots and any(may(a, True, depth + 1) for a in args + receiver):
                return True
            return model(e.func, root) or name in known or chain_root(e.func) in known
        if kind is ast.BinOp:
            op = type(e.op)
            if op is ast.Sub:
                return not root and maybe(e.right, 1.0) and counts(e.left)
            return op is ast.Pow and not root and maybe(e.right, 0.5) and may(e.left, True, depth + 1)
        if kind is ast.Subscript:
            return may(e.value, root, depth + 1)
        if kind is ast.Name:
            return e.id in known
        if kind is ast.Attribute:
            return e.attr in known or chain_root(e) in known
        if kind in (ast.List, ast.Tuple):
            return any(may(x, root, depth + 1) for x in e.elts)
        if kind is ast.Lambda:  # ``sd = lambda r: r.std()``
            return may(e.body, root, depth + 1)
        return False

    def counts(e: ast.expr, depth: int = 0) -> bool:
        """``e`` may be a count (``len(x)``, ``x.shape[0]``, ``x.size(0)``, ``num_steps``)."""
        kind = type(e)
        known = count_known  # a count is this file's value (count_of takes no other module's)
        if kind is ast.Name:
            return bool(COUNT.match(e.id)) or e.id in known
        if kind is ast.Attribute:
            return bool(COUNT.match(e.attr)) or e.attr in known or chain_root(e) in known
        if kind is ast.Call:
            name = callee(e.func)
            cast = e.args[:1] + ([e.func.value] if type(e.func) is ast.Attribute else [])
            if name in layouts and depth < 16 and any(counts(a, depth + 1) for a in cast):
                return True  # a cast of a count: tf.to_float(num_timescales), num_steps.float()
            return model(e.func, 2) or type(e.func) is ast.Name and name == "len" or \
                type(e.func) is ast.Attribute and name in SHAPE_METHODS or name in known or chain_root(e.func) in known
        if kind is ast.Subscript:
            v = e.value
            return type(v) is ast.Attribute and v.attr == "shape" or type(v) is ast.Call and \
                (callee(v.func) == "shape" or counts(v, depth + 1))
        return kind is ast.Lambda and depth < 16 and counts(e.body, depth + 1)

    tests = ((bound, lambda v: may(v)), (vbound, lambda v: may(v, True)), (cbound, counts))
    for _ in range(_ROUNDS):
        if any(may(d) for d in dens):
            return True
        before = len(bound), len(vbound), len(cbound), *models
        for k, (known, test) in enumerate(tests):
            for values, names in flows:
                if not names <= known and any(test(v) for v in values):
                    known |= names
            for name, values in returns.items():
                if name not in known and any(test(v) for v in values):
                    known.add(name)
            models[k] = models[k] or any(test(body) for body in lambdas) or any(test(v) for v in entry_returns)
            for name, call in calls:
                for sig in params.get(name, ()):
                    known |= bound_by(call, sig, test)
        if (len(bound), len(vbound), len(cbound), *models) == before:
            return False
    return True
