"""Where NAN401 (masked mean, ``sum(x * m) / sum(m)``) can report, read from CPython's tree:
a division both of whose sides may be a sum, as ``FileContext.op_of`` follows one (every
value reaching it: through names, the returns of the file's functions, call-site
arguments, layout ops, a model's call, a project module's value).

Its triggers alone (a sum and a division anywhere) passed 62 of the research corpus's 104
parsed files, 24 of them for NAN401 alone (issue 22): TF1 code calls ``reduce_sum`` and
divides in nearly every file, but rarely divides one sum by another.
"""

from __future__ import annotations

import ast

from nanlint.analysis.gates.bindings import Bindings, chain_root, named
from nanlint.analysis.gates.syntax_sites import callee, renames
from nanlint.source.ast_tree import nodes, skeletal
from nanlint.analysis.gates.sites import last_names
from nanlint.vocabulary import ops as o

_DEPTH = 8  # nested calls an argument is looked into (a layout op of a sum: ``cast(sum(m))``)


def masked_mean_site(tree: ast.Module) -> bool:
    """Whether some division (``a / b``, ``a /= b``, a divide call or method) may divide a
    sum by a sum: what :func:`nanlint.rules._masked.mean_mask` needs before it looks for the
    mask.  A name bound to a sum's or a divide's spelling: yes."""
    if skeletal(tree):
        return True
    sums, divides = last_names(frozenset({o.SUM})), last_names(frozenset({o.DIVIDE}))
    pairs: list[tuple[list[ast.expr], list[ast.expr]]] = []  # (what may be the numerator, the denominator)
    for n in nodes(tree, ast.BinOp, ast.AugAssign, ast.Call, ast.alias, ast.Assign):
        kind = type(n)
        if kind is ast.BinOp or kind is ast.AugAssign:
            if type(n.op) is ast.Div:
                pairs.append(([n.left if kind is ast.BinOp else n.target], [n.right if kind is ast.BinOp else n.value]))
        elif kind is ast.Call:
            if callee(n.func) in divides:  # divide(a, b), a.div(b), a.div_(b): which is which, over-approximated
                operands = [*n.args, *(k.value for k in n.keywords)]
                receiver = [n.func.value] if type(n.func) is ast.Attribute else []
                pairs.append((receiver + operands, operands))
        elif renames(n, sums | divides):
            return True
    if not pairs:
        return False

    def summed(e: ast.expr, known: set[str], depth: int = 0) -> bool:
        if type(e) is ast.Call:  # a sum, a function returning one, or a call of one (a layout op)
            name = callee(e.func)
            return name in sums or name in known or chain_root(e.func) in known or depth < _DEPTH and any(
                summed(a, known, depth + 1) for a in [*e.args, *(k.value for k in e.keywords),
                                                       *([e.func.value] if type(e.func) is ast.Attribute else [])])
        return named(e, known, summed)

    known = Bindings.of(tree).closure(summed, returns=True)
    if known is None:
        return True
    model = Bindings.model_gives(known)

    def may(e: ast.expr) -> bool:
        return summed(e, known) or model and type(e) is ast.Call

    return any(any(map(may, nums)) and any(map(may, dens)) for nums, dens in pairs)
