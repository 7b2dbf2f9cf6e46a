"""Plain questions about CPython's tree that every file gate asks: each statement at
every nesting level, a dotted chain's parts, the names an assignment binds to chains."""

from __future__ import annotations

import ast

_BODIES = ("body", "orelse", "finalbody")


def statements(body: list[ast.stmt]):
    """Every statement under ``body``, nested ones included (bodies, handlers, match cases)."""
    stack = list(body)
    while stack:
        s = stack.pop()
        yield s
        for field in _BODIES:
            sub = getattr(s, field, None)
            if sub:
                stack.extend(sub)
        for group in ("handlers", "cases"):
            for h in getattr(s, group, None) or ():
                stack.extend(h.body)


def chain(node: ast.expr) -> list[str] | None:
    """``a.b.c`` -> ["a", "b", "c"]; None when it is not rooted in a name."""
    parts = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is not ast.Name:
        return None
    parts.append(node.id)
    parts.reverse()
    return parts


def chain_pairs(target: ast.expr, value: ast.expr, out: list[tuple[str, list[str]]]) -> None:
    """Name targets and the chains assigned to them (``a, b = tf.log, tf.exp`` pairwise)."""
    if type(target) is ast.Name:
        parts = chain(value)
        if parts is not None:
            out.append((target.id, parts))
    elif type(target) in (ast.Tuple, ast.List) and type(value) in (ast.Tuple, ast.List) \
            and len(target.elts) == len(value.elts):
        for t, v in zip(target.elts, value.elts):
            chain_pairs(t, v, out)
