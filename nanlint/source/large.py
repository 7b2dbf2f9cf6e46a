"""Large files: analyse only the statements that can hold a finding.

A generated module (a weight table, an unrolled model) of megabytes would take
libcst minutes and gigabytes to parse.  The syntax check (:mod:`nanlint.source.chunks`,
a chunk of statements at a time) gives each top-level statement's lines and the
names it binds; the statements that mention an op some rule starts from, the
imports, and the statements binding the names those read (twice over: values
reach a use through names) are kept, with a map from each kept line to its line
in the file, so findings are reported where they are (the kept lines are
unchanged, and so are their columns).  The names a kept statement reads come
from compiling the kept text again (at most ``MAX_KEPT`` characters), not from
a tree of the whole file.  Fixes are not offered on a reduced file: its other
statements are not in the tree.
"""

from __future__ import annotations

import ast
import bisect
import re

LARGE = 1_000_000  # bytes: above this, a file is syntax-checked in chunks and reduced before the libcst parse
MAX_KEPT = 1_000_000  # a reduction that keeps more than this is not worth it
_DIRECTIVE = re.compile(r"^[^\S\r\n]*#[^\r\n]*?(noqa|coding[:=])", re.IGNORECASE | re.MULTILINE)
_NEWLINE = re.compile(r"\r\n|\r|\n")  # CPython's line breaks (str.splitlines also breaks at \f, \x1c, ...)


def reduce(tree: ast.Module, text: str, names: frozenset[str]) -> tuple[str, list[int]] | None:
    """The top-level statements of ``text`` that mention one of ``names`` (the last names
    of the ops the enabled rules start from), import, or bind a name a kept statement
    reads, and for each line of that text its line in ``text``; None when that keeps too much.
    ``tree``: a :class:`nanlint.source.chunks.Skeleton` (or CPython's tree of ``text``)."""
    if not names:
        return None
    firsts, lasts, imports, bound = _statements(tree)
    starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]  # line n starts at starts[n - 1]
    if starts[-1] < len(text):
        starts.append(len(text))
    n_lines = len(starts) - 1

    def offset(line: int) -> int:  # where line ``line`` starts (past the last line: the end)
        return starts[min(line, n_lines + 1) - 1]

    # ``\b`` leading the pattern would stop re from skipping ahead by the names' first letters (10x slower)
    word = re.compile(r"(?:%s)\b" % "|".join(sorted(map(re.escape, names))))
    hits = sorted({bisect.bisect_right(starts, s) for s in (m.start() for m in word.finditer(text))
                   if not s or not (text[s - 1].isalnum() or text[s - 1] == "_")})  # lines mentioning one

    def mentions(a: int, b: int) -> bool:
        i = bisect.bisect_left(hits, a)
        return i < len(hits) and hits[i] <= min(b, n_lines)

    keep = [i in imports or mentions(a, b) for i, (a, b) in enumerate(zip(firsts, lasts))]
    fresh = [i for i, k in enumerate(keep) if k]  # kept, the names they read not yet known
    read: set[str] = set()
    for _ in range(2):  # the statements binding the names the kept ones read
        if sum(offset(lasts[i] + 1) - offset(firsts[i]) for i, k in enumerate(keep) if k) > MAX_KEPT:
            return None
        try:
            read |= _reads(text, [(offset(firsts[i]), offset(lasts[i] + 1)) for i in fresh])
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None  # a statement that shares its first line with the end of another one
        fresh = []
        for i, names_bound in enumerate(bound):
            if not keep[i] and names_bound and (names_bound in read if type(names_bound) is str
                                                else not read.isdisjoint(names_bound)):
                keep[i] = True
                fresh.append(i)
        if not fresh:
            break
    chosen = bytearray(n_lines + 1)  # 1-based
    for i, k in enumerate(keep):
        if k:
            a, b = firsts[i], min(lasts[i], n_lines)
            chosen[a:b + 1] = b"\x01" * (b - a + 1)
    kept = sum(offset(r + 1) - offset(r) for r in range(1, n_lines + 1) if chosen[r])
    if kept > MAX_KEPT:
        return None
    for m in _DIRECTIVE.finditer(text):  # file directives and the encoding cookie stay
        chosen[bisect.bisect_right(starts, m.start())] = 1
    rows = [r for r in range(1, n_lines + 1) if chosen[r]]
    out = []
    for r in rows:
        line = text[offset(r):offset(r + 1)]
        out.append(line if line.endswith(("\n", "\r")) else line + "\n")
    return "".join(out), rows


def _statements(tree: ast.Module):
    """Per top-level statement: first line (decorators included), last line, the
    indices of the imports, the names bound (() / a name / a tuple of names)."""
    if hasattr(tree, "firsts"):  # a chunks.Skeleton
        return tree.firsts, tree.lasts, tree.imports, tree.binds  # type: ignore[attr-defined]
    firsts, lasts, imports, bound = [], [], set(), []
    for i, stmt in enumerate(tree.body):
        firsts.append(min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())]))
        lasts.append(stmt.end_lineno or stmt.lineno)
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            imports.add(i)
        bound.append(tuple(binds(stmt)))
    return firsts, lasts, imports, bound


def _reads(text: str, spans: list[tuple[int, int]]) -> set[str]:
    """The names the statements at ``spans`` (whole lines of ``text``) read, from
    compiling just their lines."""
    if not spans:
        return set()
    parts = []
    for a, b in sorted(set(spans)):
        part = text[a:b]
        parts.append(part if part.endswith(("\n", "\r")) else part + "\n")
    tree = compile("".join(parts), "<nanlint>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def binds(stmt: ast.stmt) -> set[str]:
    """The names a top-level statement binds (as far as the reduction follows them)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    targets: list[ast.expr] = []
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        targets = [stmt.target]
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        targets = [stmt.target]
    out: set[str] = set()
    for t in targets:
        out |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
    if isinstance(stmt, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
        for inner in ast.walk(stmt):
            if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store):
                out.add(inner.id)
    return out
