"""Fix spelling: how to write a framework op with the file's own imports, and which
arguments of the call being replaced carry over to it (by role: ``dim`` becomes
``axis``, positional arguments stay positional where the target takes them there)."""

from __future__ import annotations

import libcst as cst

from nanlint.fix import fixes
from nanlint.source.walk import names_in
from nanlint.semantic.context import FileContext, OpCall
from nanlint.semantic.resolve import Scope
from nanlint.vocabulary.ops import Fn, Framework


def spell(ctx: FileContext, framework: Framework, op: str, scope: Scope,
          prefer: tuple[cst.CSTNode, ...] = ()) -> tuple[cst.BaseExpression, Fn, list[fixes.Import]] | None:
    """How to write ``op`` of ``framework`` at ``scope`` with the file's own imports.

    Among the framework's targets for the op, choose a spelling through an
    import visible at ``scope``: the fewest attribute steps, then a name
    used in ``prefer`` (the code being replaced), then the shortest.  When no import can spell a target,
    return the first target with the import to add."""
    targets = framework.targets.get(op)
    if not targets:
        return None
    used = set()
    for node in prefer:
        used |= names_in(node)
    best: tuple[tuple, str, str] | None = None
    visible = ctx.index.visible_imports(scope)
    for qual in targets:
        for local, bound in visible:
            if qual == bound:
                text = local
            elif qual.startswith(bound + "."):
                text = local + qual[len(bound):]
            else:
                continue
            key = (text.count("."), local not in used, len(text), targets.index(qual))
            if best is None or key < best[0]:
                best = (key, text, qual)
    if best is not None:
        return fixes.spelled(best[1]), framework.functions[best[2]], []
    for qual in targets:
        for module, alias in framework.import_aliases.items():
            if qual.startswith(module + "."):
                imp = fixes.Import(module, alias)
                if ctx.index.is_bound(imp.bound_name, scope):
                    continue
                text = imp.bound_name + qual[len(module) if alias is not None else len(module.split(".")[0]):]
                return fixes.spelled(text), framework.functions[qual], [imp]
    return None


def carry_args(source: OpCall, target: Fn, roles: tuple[str, ...],
               x: cst.BaseExpression | None = None) -> list[cst.Arg] | None:
    """Arguments for a call of ``target`` taking ``roles`` from ``source``.

    ``target`` is a function signature, or a method signature (whose
    receiver is not an argument) when ``target`` has no ``x`` parameter.
    Positional arguments stay positional where ``target`` has the role at the
    same position, otherwise they become keywords; the user's formatting of
    each argument is kept.  ``x`` replaces the main input.  A TF ``name=``
    is dropped.  Returns None when an argument has no place in ``target``.
    """
    out: list[cst.Arg] = []
    keyword_only = False

    def place(role: str, a: cst.Arg) -> bool:
        nonlocal keyword_only
        if not keyword_only and a.keyword is None and target.position_of(role) == len(out):
            out.append(a)
            return True
        keyword_only = True
        if a.keyword is not None and target.role_of_keyword(a.keyword.value) == role:
            out.append(a)  # the target takes the user's keyword as it is
            return True
        kw = target.keyword_for(role)
        if kw is None:
            return False
        out.append(a.with_changes(keyword=cst.Name(kw)) if a.keyword is not None
                   else fixes.arg(a.value, kw).with_changes(comma=a.comma))
        return True

    receiver_is_arg = target.position_of("x") is not None or target.keyword_for("x") is not None
    if source.is_method and receiver_is_arg:
        value = x if x is not None else source.receiver
        if not place("x", cst.Arg(value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))):
            return None
    for i, a in enumerate(source.node.args):
        role = role_of(source.fn, a, i)
        if role is False:
            return None
        if role is None:
            if a.keyword is not None and a.keyword.value == "name":
                continue
            return None
        if role not in roles:
            return None
        if role == "x":
            if not receiver_is_arg:
                continue
            if x is not None:
                a = a.with_changes(value=x)
        if not place(role, a):
            return None
    if out:
        last = out[-1]
        had_trailing = bool(source.node.args) and isinstance(source.node.args[-1].comma, cst.Comma)
        if not had_trailing:
            out[-1] = last.with_changes(comma=cst.MaybeSentinel.DEFAULT)
        for k in range(len(out) - 1):
            if not isinstance(out[k].comma, cst.Comma):
                out[k] = out[k].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return out


def role_of(f: Fn, a: cst.Arg, i: int) -> str | None | bool:
    if a.star:
        return False
    if a.keyword is not None:
        return f.role_of_keyword(a.keyword.value)
    if i < len(f.params):
        return f.params[i][1]
    return False


