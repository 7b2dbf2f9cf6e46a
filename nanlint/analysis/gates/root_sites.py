"""NAN202's gate on CPython's tree: a square root, an ``rsqrt`` or a norm whose argument may
be what the check reports on (issue 22).

NAN202's check starts from three sinks and asks of the sink's argument, followed through
names (``follow``: :meth:`nanlint.semantic.context.FileContext.resolve`, assignments and
call-site arguments, no function returns):

* a square root (``sqrt(s)``, ``s.sqrt()``, ``pow(s, 0.5)``, ``s ** 0.5``) of a variance
  (a variance op, a mean of squares), of a sum of squares (a sum op of squares,
  ``dx ** 2 + dy ** 2``) or of the square of a difference;
* an ``rsqrt`` of a variance or of a sum of squares;
* a norm of a difference.

:func:`root_site` over-approximates that: the argument is such a call or operator (a
variance, mean, sum, square or power call; a square, ``b ** 2`` or ``b * b``, or a sum of
such terms, ``dx ** 2 + dy ** 2``, as the check's ``square_base`` and ``sum_of_squares`` read
them (not ``var + eps``, ``2 * k``: no root the check reports on); for a norm a subtraction
or a subtract call, of the norm's input: a method's receiver, ``self.norm(x)`` a layer's
call, not a norm of ``x``), an index of one, or a name any value of the
file may bind to one (:class:`Bindings`, a fixpoint); a project module's name may be
anything; a name bound to one of the sinks' spellings (``from torch import sqrt as s``):
any call may be a sink, so yes.
"""

from __future__ import annotations

import ast
from functools import lru_cache

from nanlint.analysis.gates.sites import last_names
from nanlint.analysis.gates.syntax_sites import Constants, callee, literal, renames
from nanlint.analysis.gates.bindings import Bindings, chain_root, named
from nanlint.source.ast_tree import nodes
from nanlint.vocabulary import frameworks as fw_registry
from nanlint.vocabulary import ops as o


def root_site(tree: ast.Module) -> bool:
    """Whether a sink of NAN202 may have the argument its check reports on (see the module),
    or the file calls a std and imports a framework whose std has a NaN gradient on a
    constant row (any std call of such a file is a sink)."""
    sqrts, pows = last_names(frozenset({o.SQRT})), last_names(frozenset({o.POW}))
    rsqrts, norms = last_names(frozenset({o.RSQRT})), last_names(frozenset({o.NORM}))
    stds = last_names(frozenset({o.STD}))
    sinks = sqrts | pows | rsqrts | norms
    std_call = std_framework = False
    # what the check's variance, sum_of_squares and square_base read a root's argument as (an
    # add or multiply *call* is none of them: those read the operators)
    makers = last_names(frozenset({o.VARIANCE, o.MEAN, o.SUM, o.SQUARE, o.POW}))
    subtracts = last_names(frozenset({o.SUBTRACT}))
    # the names a call ``name.norm(...)`` may reach a module's function through (an import,
    # ``la = torch.linalg``; any name after a star import): any other name's ``.norm(...)``
    # is a method of its value, whose input is the receiver (``self.norm(x)``: a layer)
    modules_like: set[str] = set()
    star = False
    methods: list[tuple[ast.Name, list[ast.expr]]] = []  # norm calls on a name: decided after the loop
    roots: list[ast.expr] = []  # the arguments of square roots and rsqrts
    normed: list[ast.expr] = []  # the arguments of norms
    for n in nodes(tree, ast.Call, ast.BinOp, ast.alias, ast.Assign, ast.ImportFrom):
        kind = type(n)
        if kind is ast.ImportFrom:
            std_framework = std_framework or (n.module or "").split(".")[0] in _std_roots()
        elif kind is ast.Call:
            name = callee(n.func)
            if name in stds:
                std_call = True
            if name not in sinks:
                continue
            operands = _operands(n)
            if name in norms:
                receiver = n.func.value if type(n.func) is ast.Attribute else None
                if type(receiver) is ast.Name:
                    methods.append((receiver, operands))
                else:
                    normed.extend(operands)
            elif name in rsqrts:
                roots.extend(operands)
            else:
                roots.extend(_root_arguments(n, sqrts, pows))
        elif kind is ast.BinOp:
            roots.extend(_root_arguments(n, sqrts, pows))
        elif renames(n, sinks):
            return True
        elif kind is ast.alias:
            std_framework = std_framework or n.name.split(".")[0] in _std_roots()
            star = star or n.name == "*"
            modules_like.add((n.asname or n.name).split(".")[0])
        elif kind is ast.Assign and type(n.value) in (ast.Name, ast.Attribute):
            modules_like.update(t.id for t in n.targets if type(t) is ast.Name)
    for receiver, operands in methods:
        if star or receiver.id in modules_like:
            normed.extend(operands)
        else:
            normed.append(receiver)
    if std_call and std_framework:
        return True
    if not roots and not normed:
        return False
    bindings = Bindings.of(tree)

    def made(e: ast.expr, known: set[str]) -> bool:
        kind = type(e)
        if kind is ast.Call:
            name = callee(e.func)
            return name in makers or name in known or chain_root(e.func) in known
        if kind is ast.BinOp:  # a square (b ** 2, b * b) or a sum of them (dx ** 2 + dy ** 2)
            op = type(e.op)
            if op is ast.Pow:
                return literal(e.right) == 2
            if op is ast.Mult:
                return ast.dump(e.left) == ast.dump(e.right)
            return op is ast.Add and made(e.left, known) and made(e.right, known)
        return named(e, known, made)

    def difference(e: ast.expr, known: set[str]) -> bool:
        kind = type(e)
        if kind is ast.Call:
            name = callee(e.func)
            return name in subtracts or name in known or chain_root(e.func) in known
        if kind is ast.BinOp:
            return type(e.op) is ast.Sub
        return named(e, known, difference)

    if roots:
        known = bindings.closure(made)
        if known is None or any(made(a, known) for a in roots):
            return True
    if normed:
        known = bindings.closure(difference)
        if known is None or any(difference(a, known) for a in normed):
            return True
    return False


@lru_cache(maxsize=None)
def _std_roots() -> frozenset[str]:
    """The top-level modules of the frameworks whose std has a NaN gradient on a constant row."""
    return frozenset(r for fw in fw_registry.frameworks() if o.FACT_STD_GRAD_NAN_AT_CONSTANT in fw.facts
                     for r in fw.roots)


def norm_division_site(tree: ast.Module, text: str) -> bool:
    """Whether some division's denominator may be a norm as NAN203's ``norm_in`` reads one,
    through names: a norm call, a square root (``sqrt``, ``pow(s, 0.5)``, ``s ** 0.5``) of a
    value a sum may make, either plus a constant or floored by one (``maximum(n, eps)``,
    ``clamp(n, min=eps)``).  A name bound to a norm's, a root's or a divide's spelling: yes."""
    norms, sqrts = last_names(frozenset({o.NORM})), last_names(frozenset({o.SQRT}))
    pows, floors = last_names(frozenset({o.POW})), last_names(frozenset({o.MAXIMUM, o.CLIP}))
    divides, sums = last_names(frozenset({o.DIVIDE})), last_names(frozenset({o.SUM}))
    spelled = norms | sqrts | pows | floors | divides
    dens: list[ast.expr] = []
    for n in nodes(tree, ast.BinOp, ast.Call, ast.alias, ast.Assign):
        kind = type(n)
        if kind is ast.BinOp:
            if type(n.op) is ast.Div:
                dens.append(n.right)
        elif kind is ast.Call:
            if callee(n.func) in divides:
                dens.extend([*n.args[1:], *(k.value for k in n.keywords)])
                if type(n.func) is ast.Attribute:
                    dens.extend(n.args[:1])  # x.div(y)
        elif renames(n, spelled):
            return True
    if not dens:
        return False
    consts = Constants(tree, text)

    def summed(e: ast.expr, known: set[str]) -> bool:  # a sum of squares may be it (sum_of_squares)
        kind = type(e)
        if kind is ast.Call:
            name = callee(e.func)
            return name in sums or name in known or chain_root(e.func) in known
        return named(e, known, summed)

    def norm(e: ast.expr, known: set[str], guard_ok: bool = True) -> bool:
        kind = type(e)
        if kind is ast.Call:
            name = callee(e.func)
            operands = [*e.args, *(k.value for k in e.keywords)]
            if type(e.func) is ast.Attribute:
                operands.append(e.func.value)
            if name in norms or name in known or chain_root(e.func) in known:
                return True
            if name in sqrts or name in pows and any(literal(a) == 0.5 for a in operands):
                return any(summed(a, sum_known) for a in operands)
            return guard_ok and name in floors and any(consts.value(a) is not None for a in operands) and \
                any(norm(a, known, False) for a in operands)
        if kind is ast.BinOp:
            op = type(e.op)
            if op is ast.Pow:
                return literal(e.right) == 0.5 and summed(e.left, sum_known)
            return guard_ok and op is ast.Add and any(
                consts.value(side) is not None and norm(other, known, False)
                for side, other in ((e.left, e.right), (e.right, e.left)))
        return named(e, known, norm)

    bindings = Bindings.of(tree)
    sum_known = bindings.closure(summed)
    if sum_known is None:
        return True
    known = bindings.closure(norm)
    return known is None or any(norm(d, known) for d in dens)


def _operands(call: ast.Call) -> list[ast.expr]:
    """A call's arguments and, for a method, its receiver (which one is the input depends on
    whether the name is a module's function or a method: both, over-approximated)."""
    out = [*call.args, *(k.value for k in call.keywords)]
    if type(call.func) is ast.Attribute:
        out.append(call.func.value)
    return out


def _root_arguments(n: ast.Call | ast.BinOp, sqrts: frozenset[str], pows: frozenset[str]) -> list[ast.expr]:
    """What a square root takes: the operands of ``sqrt(v)``/``v.sqrt()``, of a power call with
    a literal 0.5 (``pow(v, 0.5)``), the base of ``v ** 0.5``; nothing for anything else."""
    if type(n) is ast.BinOp:
        return [n.left] if type(n.op) is ast.Pow and literal(n.right) == 0.5 else []
    name = callee(n.func)
    if name not in sqrts and name not in pows:
        return []
    operands = _operands(n)
    return operands if name in sqrts or any(literal(a) == 0.5 for a in operands) else []
