"""Large files: analyse only the statements that can hold a finding.

A generated module (a weight table, an unrolled model) of megabytes would take
libcst minutes and gigabytes to parse.  CPython's tree, already built for the
syntax check, says which top-level statements mention an op some rule starts
from; those, the imports, and the statements binding the names they read
(twice over: values reach a use through names) are kept, every other line is
blanked.  Line numbers and the kept lines are unchanged, so findings are
reported where they are; fixes are not applied to a reduced file (its other
statements are not in the tree).
"""

from __future__ import annotations

import ast
import re

LARGE = 1_000_000  # bytes: above this, a file is reduced before the libcst parse
MAX_KEPT = 1_000_000  # a reduction that keeps more than this is not worth it
_DIRECTIVE = re.compile(r"^\s*#.*(noqa|coding[:=])", re.IGNORECASE)


def reduce(tree: ast.Module, text: str, names: frozenset[str]) -> str | None:
    """``text`` with every top-level statement blanked that neither mentions one of
    ``names`` (the last names of the ops the enabled rules start from), nor imports,
    nor binds a name a kept statement reads; None when that keeps too much."""
    lines = text.splitlines(keepends=True)
    if not names:
        return None
    word = re.compile(r"\b(?:%s)\b" % "|".join(sorted(map(re.escape, names))))
    spans = []
    for stmt in tree.body:
        first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])
        spans.append((stmt, first, stmt.end_lineno or stmt.lineno))
    keep = [isinstance(s, (ast.Import, ast.ImportFrom)) or
            any(word.search(lines[i]) for i in range(a - 1, min(b, len(lines))))
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
    out = ["\n" if line.endswith(("\n", "\r")) else "" for line in lines]
    kept = 0
    for (s, a, b), k in zip(spans, keep):
        if k:
            for i in range(a - 1, min(b, len(lines))):
                out[i] = lines[i]
                kept += len(lines[i])
    if kept > MAX_KEPT:
        return None
    for i, line in enumerate(lines):  # file directives and the encoding cookie stay
        if _DIRECTIVE.match(line):
            out[i] = line
    return "".join(out)


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
