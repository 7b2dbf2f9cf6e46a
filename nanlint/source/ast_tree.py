"""Plain questions about CPython's tree that the site filter, the large-file reduction and the
syntax check ask: each statement at every nesting level, a dotted chain's parts, the names an
assignment binds to chains, how deep the tree nests."""

from __future__ import annotations

import ast
import contextlib
import gc
import itertools

_BODIES = ("body", "orelse", "finalbody")
_PYCF_ONLY_AST = 0x400


@contextlib.contextmanager
def collector_paused():
    """The cyclic collector off meanwhile (as it was after).  CPython's trees are one new
    container per node and hold no reference cycle: their allocations would trigger
    collections that walk every live object again and again, and reference counting frees
    them anyway."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def compile_tree(source: str | bytes, kept: bool = False) -> ast.Module:
    """CPython's tree of ``source`` (``compile(..., PyCF_ONLY_AST)``: raises what it raises),
    with the collector paused (:func:`collector_paused`: a module of 1 MB parses in 0.45 s
    paused, 1.2 to 3.8 s not, depending on what else is alive).

    ``kept``: a tree the analysis keeps while it runs on it (a whole file's, a large file's
    window's).  Under a frozen heap (:func:`freeze_heap`) the garbage of what came before is
    collected first, then the tree is frozen, so no later collection scans it: neither the
    one before the file's converted module is frozen (``walk.building``) nor any the rules
    trigger.  Scanning it was a third of the time spent collecting (research corpus, one
    process: 0.32 -> 0.23 s)."""
    if kept and FREEZE_TREES:
        gc.collect()
    with collector_paused():
        tree = compile(source, "<nanlint>", "exec", flags=_PYCF_ONLY_AST, dont_inherit=True)
        if kept and FREEZE_TREES:
            # a CPython tree holds no cycle: reference counting frees it. Frozen before the
            # collector is back, whose first collection would otherwise scan the whole new tree
            gc.freeze()
    return tree


# Set by freeze_heap (a worker, a serial run, the server's analysis child): after each
# file's trees are built (this module's ``compile_tree(kept=True)``, ``walk.building``),
# move them to the collector's permanent generation.
FREEZE_TREES = False
# The collector's thresholds under a frozen heap.  CPython's (700, 10, 10) collect the young
# generation every 700 net allocations and the whole heap every 100 of those or so; with the
# heap frozen the "old" generation is small, so a full collection comes about as often as its
# threshold allows.  The analysis of a file makes no reference cycle (its models hold what
# refers back to them weakly: ``tests/test_collector.py``), so nearly all of its objects are
# freed by reference counting and a collection finds next to nothing: these thresholds make
# them rare (the 2 MB module of 34,826 findings: 3.4 s of collections, 0.9 s).  The garbage
# of each file is still collected before its trees are frozen (``compile_tree``).
FROZEN_THRESHOLDS = (50_000, 20, 100)
_THRESHOLDS: list[tuple[int, int, int]] = []  # what freeze_heap replaced, for thaw_heap


def freeze_heap() -> None:
    """Keep the collector off what this process holds now and off each tree built from
    now on (none of it is garbage until the run ends): for a process that lints and exits,
    or a run that ends with :func:`thaw_heap`.  The collector runs less often meanwhile
    (``FROZEN_THRESHOLDS``)."""
    global FREEZE_TREES
    gc.freeze()
    FREEZE_TREES = True
    _THRESHOLDS.append(gc.get_threshold())
    gc.set_threshold(*FROZEN_THRESHOLDS)


def thaw_heap() -> None:
    """Undo :func:`freeze_heap`: what it froze is the collector's again, at its thresholds."""
    global FREEZE_TREES
    FREEZE_TREES = False
    gc.unfreeze()
    if _THRESHOLDS:
        gc.set_threshold(*_THRESHOLDS.pop())


def ast_names(tree: ast.AST, ctx: type | None = None) -> set[str]:
    """The names ``tree`` holds (``ctx``: only those of that context, ``ast.Load``: the names
    read, ``ast.Store``: those bound), by one walk of its fields (``ast.walk``, a generator
    over ``iter_child_nodes``, takes two and a half times as long on a large file's windows)."""
    out: set[str] = set()
    stack = [tree]
    pop, push, extend = stack.pop, stack.append, stack.extend
    name, node = ast.Name, ast.AST
    while stack:
        n = pop()
        if type(n) is name:
            if ctx is None or type(n.ctx) is ctx:  # type: ignore[attr-defined]
                out.add(n.id)  # type: ignore[attr-defined]
            continue
        for field in n._fields:
            value = getattr(n, field, None)
            if type(value) is list:
                extend([v for v in value if isinstance(v, node)])
            elif isinstance(value, node) and field != "ctx":
                push(value)
    return out


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


def ast_depth(tree, limit: int, text: str | None = None) -> int:
    """The nesting depth of a CPython AST, counting a chain ``a and b and c`` as libcst
    nests it (one level per operator); stops counting past ``limit``.

    Given the source ``text``, a statement too short to nest past ``limit`` is not
    walked: below a statement, every level of an expression takes at least one
    character of source (an operator, a bracket, a dot, a keyword) and adds at most two
    levels (a leaf's context node), so a statement of ``n`` characters at statement depth
    ``d`` nests at most ``d + 2n + 2`` deep.  The returned depth is then a bound, exact
    only past ``limit``."""
    if hasattr(tree, "nesting"):  # a large file's chunks.Skeleton: measured chunk by chunk
        return tree.nesting(limit)
    starts = None
    if text is not None and "\r" not in text.replace("\r\n", "\n"):  # CPython's lines are text's \n-lines
        starts = [0, *itertools.accumulate(len(line) + 1 for line in text.split("\n"))]
    deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                break
        if starts is not None and isinstance(node, ast.stmt) and not getattr(node, "handlers", None) \
                and not getattr(node, "cases", None):
            line = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
            end = node.end_lineno or node.lineno
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                end = body[0].lineno  # a compound statement's own part ends where its body starts
            if end < len(starts):
                span = starts[end] - starts[line - 1]  # whole lines: never less than the statement
                if depth + 2 * span + 2 <= limit:
                    deepest = max(deepest, min(depth + 2 * span + 2, limit))
                    for child in _statements_below(node):
                        stack.append((child, depth + 1))
                    continue
        for child in ast.iter_child_nodes(node):
            step = len(child.values) - 1 if isinstance(child, ast.BoolOp) else 1
            stack.append((child, depth + max(step, 1)))
    return deepest


def _statements_below(node: ast.stmt):
    """The statements nested in a compound statement without handlers or cases."""
    for field in ("body", "orelse", "finalbody"):
        for child in getattr(node, field, ()) or ():
            if isinstance(child, ast.stmt):
                yield child
