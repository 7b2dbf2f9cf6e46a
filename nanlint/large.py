"""Large files: analyse only the statements that can hold a finding.

A generated module (a weight table, an unrolled model) of megabytes would take
libcst minutes and gigabytes to parse.  CPython's tree, already built for the
syntax check, says which top-level statements mention an op some rule starts
from; those, the imports, and the statements binding the names they read
(twice over: values reach a use through names) are kept, with a map from each
kept line to its line in the file, so findings are reported where they are (the
kept lines are unchanged, and so are their columns).  Fixes are not offered on a
reduced file: its other statements are not in the tree.
"""

from __future__ import annotations

import ast
import bisect
import re

LARGE = 1_000_000  # bytes: above this, a file is reduced before the libcst parse
MAX_KEPT = 1_000_000  # a reduction that keeps more than this is not worth it
_DIRECTIVE = re.compile(r"^\s*#.*(noqa|coding[:=])", re.IGNORECASE)


def reduce(tree: ast.Module, text: str, names: frozenset[str]) -> tuple[str, list[int]] | None:
    """The top-level statements of ``text`` that mention one of ``names`` (the last names
    of the ops the enabled rules start from), import, or bind a name a kept statement
    reads, and for each line of that text its line in ``text``; None when that keeps too much."""
    lines = text.splitlines(keepends=True)
    if not names:
        return None
    word = re.compile(r"\b(?:%s)\b" % "|".join(sorted(map(re.escape, names))))
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    hit = [False] * (len(lines) + 1)  # 1-based: a line mentioning one of the names
    for m in word.finditer(text):
        hit[bisect.bisect_right(starts, m.start())] = True
    spans = []
    for stmt in tree.body:
        first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])
        spans.append((stmt, first, stmt.end_lineno or stmt.lineno))
    keep = [isinstance(s, (ast.Import, ast.ImportFrom)) or any(hit[a:min(b, len(lines)) + 1])
            for s, a, b in spans]
    for _ in range(2):  # the statements binding the names the kept ones read
        read = {n.id for (s, _, _), k in zip(spans, keep) if k for n in ast.walk(s)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        grew = False
        for i, (s, _, _) in enumerate(spans):
            if not keep[i] and _binds(s) & read:
                keep[i] = grew = True
        if not grew:
            break
    chosen = [False] * len(lines)
    kept = 0
    for (s, a, b), k in zip(spans, keep):
        if k:
            for i in range(a - 1, min(b, len(lines))):
                chosen[i] = True
                kept += len(lines[i])
    if kept > MAX_KEPT:
        return None
    for i, line in enumerate(lines):  # file directives and the encoding cookie stay
        if not chosen[i] and line.lstrip().startswith("#") and _DIRECTIVE.match(line):
            chosen[i] = True
    rows = [i + 1 for i, c in enumerate(chosen) if c]
    out = [lines[r - 1] if lines[r - 1].endswith(("\n", "\r")) else lines[r - 1] + "\n" for r in rows]
    return "".join(out), rows


def _binds(stmt: ast.stmt) -> set[str]:
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
