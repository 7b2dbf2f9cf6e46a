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
a tree of the whole file.  A fix's edits in the kept lines are the same edits in the file
(:mod:`nanlint.lint.large_fix` moves them to the file's lines and applies them to its text).

A file no reduction shrinks below ``MAX_KEPT`` (a generated module whose every statement
holds an op) is analysed in windows (:func:`windows`): consecutive groups of its
statements of about ``WINDOW`` characters, each reduced on its own, parsed, analysed and
dropped before the next, so memory is a window's whatever the file holds (the 10 MB
module of issue 22: 8.8 GB and no result in 400 s before, 0.4 GB after).  A value that
flows between statements of different windows through more than two names is lost.
"""

from __future__ import annotations

import ast
import bisect
import re

LARGE = 1_000_000  # bytes: above this, a file is syntax-checked in chunks and reduced before the libcst parse
MAX_KEPT = 1_000_000  # a reduction that keeps more than this is not worth it
WINDOW = 250_000  # characters of statements per window of a file no reduction shrinks
_DIRECTIVE = re.compile(r"^[^\S\r\n]*#[^\r\n]*?(noqa|coding[:=])", re.IGNORECASE | re.MULTILINE)
_NEWLINE = re.compile(r"\r\n|\r|\n")  # CPython's line breaks (str.splitlines also breaks at \f, \x1c, ...)
LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")  # a text's lines as CPython numbers them, each with its break


def reduce(tree: ast.Module, text: str, names: frozenset[str]) -> tuple[str, list[int]] | None:
    """The top-level statements of ``text`` that mention one of ``names`` (the last names
    of the ops the enabled rules start from), import, or bind a name a kept statement
    reads, and for each line of that text its line in ``text``; None when that keeps too much.
    ``tree``: a :class:`nanlint.source.chunks.Skeleton` (or CPython's tree of ``text``)."""
    if not names:
        return None
    plan = _Plan(tree, text, names)
    return plan.closure([i for i in range(len(plan.firsts)) if i in plan.imports or plan.mentions(i)])


def windows(tree: ast.Module, text: str, names: frozenset[str], size: int = WINDOW) -> list[tuple[str, list[int]]]:
    """A large file that :func:`reduce` cannot shrink below ``MAX_KEPT`` (every statement
    holds an op): consecutive groups of the statements that mention ``names``, about
    ``size`` characters each, each reduced on its own with the imports and the statements
    binding what it reads (or, when that is too much, with the imports alone).  Each is
    parsed and analysed apart, so memory is bounded by a window, not by the file; value
    flow between statements of different windows is lost."""
    if not names:
        return []
    plan = _Plan(tree, text, names)
    imports = sorted(plan.imports)
    groups: list[list[int]] = [[]]
    span = 0
    for i in range(len(plan.firsts)):
        if i in plan.imports or not plan.mentions(i):
            continue
        length = plan.offset(plan.lasts[i] + 1) - plan.offset(plan.firsts[i])
        if groups[-1] and span + length > size:
            groups.append([])
            span = 0
        groups[-1].append(i)
        span += length
    out = []
    for group in groups:
        if group:
            out.append(plan.closure(imports + group) or plan.render(set(imports + group)))
    return out


class _Plan:
    """The top-level statements of a large text, the lines that mention ``names``, and
    the reduction to a chosen set of statements."""

    def __init__(self, tree: ast.Module, text: str, names: frozenset[str]) -> None:
        self.text = text
        self.firsts, self.lasts, self.imports, self.bound = _statements(tree)
        starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]  # line n starts at starts[n - 1]
        if starts[-1] < len(text):
            starts.append(len(text))
        self.starts, self.n_lines = starts, len(starts) - 1
        # ``\b`` leading the pattern would stop re from skipping ahead by the names' first letters
        # (10x slower); an operator (``/``, ``**``: a rule starts from a binop) is matched as it is
        words = sorted(map(re.escape, (n for n in names if n.isidentifier())))
        tokens = sorted(map(re.escape, (n for n in names if not n.isidentifier())))
        word = re.compile("|".join(([r"(?:%s)\b" % "|".join(words)] if words else []) + tokens))
        self.hits = sorted({bisect.bisect_right(starts, s) for s in (m.start() for m in word.finditer(text))
                            if not s or not (text[s - 1].isalnum() or text[s - 1] == "_")})  # lines mentioning one

    def offset(self, line: int) -> int:  # where line ``line`` starts (past the last line: the end)
        return self.starts[min(line, self.n_lines + 1) - 1]

    def mentions(self, i: int) -> bool:
        a, b = self.firsts[i], self.lasts[i]
        k = bisect.bisect_left(self.hits, a)
        return k < len(self.hits) and self.hits[k] <= min(b, self.n_lines)

    def closure(self, seeds: list[int]) -> tuple[str, list[int]] | None:
        """``seeds`` and the statements binding the names they read (twice over), rendered;
        None past ``MAX_KEPT``."""
        keep = set(seeds)
        fresh = list(seeds)  # kept, the names they read not yet known
        read: set[str] = set()
        offset, firsts, lasts = self.offset, self.firsts, self.lasts
        for _ in range(2):
            if sum(offset(lasts[i] + 1) - offset(firsts[i]) for i in keep) > MAX_KEPT:
                return None
            try:
                read |= _reads(self.text, [(offset(firsts[i]), offset(lasts[i] + 1)) for i in fresh])
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return None  # a statement that shares its first line with the end of another one
            fresh = []
            for i, names_bound in enumerate(self.bound):
                if i not in keep and names_bound and (names_bound in read if type(names_bound) is str
                                                      else not read.isdisjoint(names_bound)):
                    keep.add(i)
                    fresh.append(i)
            if not fresh:
                break
        return self.render(keep, MAX_KEPT)

    def render(self, keep: set[int], limit: int | None = None) -> tuple[str, list[int]] | None:
        """The kept statements' lines (and the file's directives), and each one's line in
        the file; None past ``limit`` characters."""
        offset, n_lines = self.offset, self.n_lines
        chosen = bytearray(n_lines + 1)  # 1-based
        for i in keep:
            a, b = self.firsts[i], min(self.lasts[i], n_lines)
            chosen[a:b + 1] = b"\x01" * (b - a + 1)
        if limit is not None and sum(offset(r + 1) - offset(r) for r in range(1, n_lines + 1) if chosen[r]) > limit:
            return None
        for m in _DIRECTIVE.finditer(self.text):  # file directives and the encoding cookie stay
            chosen[bisect.bisect_right(self.starts, m.start())] = 1
        rows = [r for r in range(1, n_lines + 1) if chosen[r]]
        out = []
        for r in rows:
            line = self.text[offset(r):offset(r + 1)]
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


def module_binds(tree: ast.Module) -> frozenset[str]:
    """The names the file's top-level statements other than imports bind (:func:`binds`),
    and those a ``global`` statement names anywhere in it (``tree``: a Skeleton or CPython's
    tree of the file's text)."""
    out: set[str] = set()
    for names in _statements(tree)[3]:
        out.update((names,) if isinstance(names, str) else names)
    text = getattr(tree, "text", None)
    if text is not None:
        out.update(n for m in _GLOBAL.finditer(text) for n in re.findall(r"\w+", m.group(1)))
    return frozenset(out)


_GLOBAL = re.compile(r"^[ \t]*global[ \t]+([\w, \t]+)", re.MULTILINE)


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
