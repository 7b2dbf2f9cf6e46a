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

A long function is not a statement-sized unit (:class:`Outline`): a top-level ``def`` or
``class`` of more than ``LONG`` characters is cut into its header and its body's statements
(recursively, a long method of a class), and a window holds a group of them with the header
above them, the statements of the body binding what they read, and, for a class, its
statements that are not functions and its ``__init__`` (what its attributes are).

The sizes bound memory: libcst's tree of dense code takes about 1.3 KB a character, so no
text over ``MAX_KEPT`` (500 KB, about 650 MB of tree) is parsed whole: a file over ``LARGE``
(the same) is reduced or analysed in windows, and a def over ``LONG`` (the same: only a file
over ``LARGE`` holds one) is cut (a 20,000-line def of 933 KB took 1.15 GB parsed whole, a
module of 18,000 small functions of 997 KB 1.37 GB).
"""

from __future__ import annotations

import ast
import bisect
import re

from nanlint.source.ast_tree import ast_names, compile_tree
from nanlint.source.lines import BREAK

LARGE = 500_000  # bytes: above this, a file is syntax-checked in chunks and reduced before the libcst parse
MAX_KEPT = 500_000  # characters: a reduction that keeps more is analysed in windows instead
WINDOW = 250_000  # characters of statements per window (with what they read: at most twice this)
LONG = 500_000  # characters: a top-level def or class longer than this is cut into its body's statements
LONG_LINES = 1_000  # a large file's syntax check outlines a def or class of this many lines (chunks)
_DIRECTIVE = re.compile(r"^[^\S\r\n]*#[^\r\n]*?(noqa|coding[:=])", re.IGNORECASE | re.MULTILINE)
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")  # a whole identifier, or its tail after a non-ASCII letter


def pieces(tree: ast.Module, text: str, names: frozenset[str]) -> tuple[str, list[int]] | list:
    """What of a large file is parsed with libcst: its reduction (:func:`reduce`), or, when
    that keeps more than ``MAX_KEPT`` characters, its windows (:func:`windows`)."""
    return reduce(tree, text, names) or windows(tree, text, names, WINDOW)


def reduce(tree: ast.Module, text: str, names: frozenset[str],
           limit: int | None = None) -> tuple[str, list[int]] | None:
    """The top-level statements of ``text`` (a long def's or class's body statements apart)
    that mention one of ``names`` (the last names of the ops the enabled rules start from),
    import, or bind a name a kept statement reads, and for each line of that text its line in
    ``text``; None when that keeps more than ``limit`` (``MAX_KEPT``) characters.
    ``tree``: a :class:`nanlint.source.chunks.Skeleton` (or CPython's tree of ``text``)."""
    if not names:
        return None
    plan = _Plan(tree, text, names)
    return plan.closure([i for i in range(len(plan.firsts)) if i in plan.imports or plan.mentions(i)],
                        MAX_KEPT if limit is None else limit)


def windows(tree: ast.Module, text: str, names: frozenset[str],
            size: int = WINDOW) -> list[tuple[str, list[int], frozenset[int]]]:
    """A large file that :func:`reduce` cannot shrink below ``MAX_KEPT`` (every statement
    holds an op): consecutive groups of the statements that mention ``names``, about
    ``size`` characters each, each reduced on its own with the imports and the statements
    binding what it reads (or, when that takes more than twice ``size``, with the imports
    alone).  Each is parsed and analysed apart, so memory is bounded by a window, not by
    the file; value flow between statements of different windows is lost.  Each window is
    ``(text, its lines' rows in the file, the rows of its own statements)``: a statement a
    window holds only for what it binds is analysed without what lies between it and its
    own values, so its findings' fixes are taken from the window it belongs to."""
    if not names:
        return []
    plan = _Plan(tree, text, names)
    imports = sorted(plan.imports)
    groups: list[list[int]] = [[]]
    span = 0
    for i in range(len(plan.firsts)):
        if i in plan.imports or i in plan.heads or not plan.mentions(i):
            continue
        length = plan.offset(plan.lasts[i] + 1) - plan.offset(plan.firsts[i])
        if groups[-1] and span + length > size:
            groups.append([])
            span = 0
        groups[-1].append(i)
        span += length
    out: list = []
    for group in groups:
        if group:
            text_rows = plan.closure(imports + group, 2 * size) or \
                plan.closure(imports + group, 2 * size, (group[0], group[-1])) or \
                plan.render(plan.complete(set(imports + group)))
            own = frozenset(r for i in group for r in range(plan.firsts[i], plan.lasts[i] + 1))
            out.append((*text_rows, own))  # type: ignore[misc]
    return out


def piece(tree, text: str, spans: list[tuple[int, int]]) -> tuple[str, list[int]] | None:
    """What to analyse for the statements that start on the lines of ``spans`` (``(lo, hi)``
    each) of ``text`` (an edited run of them and the statements reading what it binds,
    :mod:`nanlint.lint.incremental`): they, the imports and the statements binding what they
    read, as for a window (:func:`windows`); None when no statement starts there.  ``tree``:
    what :func:`statement_lines` reads of ``text``'s tree (a Skeleton will do)."""
    plan = _Plan(tree, text, frozenset())
    group = [i for i in range(len(plan.firsts)) if i not in plan.heads
             and any(lo <= plan.firsts[i] <= hi for lo, hi in spans)]
    if not group:
        return None
    seeds = sorted(plan.imports) + group
    return plan.closure(seeds, 2 * WINDOW) or plan.closure(seeds, 2 * WINDOW, (group[0], group[-1])) or \
        plan.render(plan.complete(set(seeds)))


class _Plan:
    """The units of a large text (its top-level statements; a long def's or class's header and
    body statements instead of it, :class:`Outline`), the lines that mention ``names``, and the
    reduction to a chosen set of units."""

    def __init__(self, tree: ast.Module, text: str, names: frozenset[str]) -> None:
        self.text = text
        firsts, lasts, imports, bound = statement_lines(tree)
        starts = [0] + [m.end() for m in BREAK.finditer(text)]  # line n starts at starts[n - 1]
        if starts[-1] < len(text):
            starts.append(len(text))
        self.starts, self.n_lines = starts, len(starts) - 1
        self.firsts, self.lasts, self.imports, self.bound = firsts, lasts, imports, bound
        self.parents: list[int] = []  # per unit: its header's unit, or -1 (a top-level statement)
        self.heads: dict[int, frozenset[str]] = {}  # header unit -> the names its header reads
        self.children: dict[int, list[int]] = {}  # header unit -> its body's units
        self.always: dict[int, list[int]] = {}  # header unit -> the body's units kept with it
        self._read: tuple = ((), set())  # the spans last read, and the names they read
        self._outline(tree)
        self.hits: list[int] = []
        if names:
            # every identifier of the text, looked up among the names (an alternation of the
            # names tried at each position was 3-10x slower); an operator (``/``, ``**``: a
            # rule starts from a binop) is matched as it is
            words = frozenset(n for n in names if n.isidentifier())
            at = [m.start() for m in _IDENTIFIER.finditer(text) if m.group() in words]
            tokens = sorted(map(re.escape, (n for n in names if not n.isidentifier())))
            if tokens:
                at += [m.start() for m in re.finditer("|".join(tokens), text)]
            self.hits = sorted({bisect.bisect_right(starts, s) for s in at
                                if not s or not (text[s - 1].isalnum() or text[s - 1] == "_")})  # lines mentioning one

    def _outline(self, tree: ast.Module) -> None:
        """Replace each top-level def or class over ``LONG`` characters by its header and body
        statements (a Skeleton's ``outlines``; CPython's tree outlined here)."""
        firsts, lasts = self.firsts, self.lasts
        known = getattr(tree, "outlines", None)
        long = [i for i in range(len(firsts)) if self.offset(lasts[i] + 1) - self.offset(firsts[i]) > LONG]
        outlines = {i: (known.get(i) if known is not None else outline(tree.body[i])) for i in long}
        outlines = {i: o for i, o in outlines.items() if o is not None and self._cuttable(o)}
        if not outlines:
            self.parents = [-1] * len(firsts)
            return
        old = (firsts, lasts, self.imports, self.bound)
        self.firsts, self.lasts, self.imports, self.bound = [], [], set(), []
        for i in range(len(old[0])):
            if i in outlines:
                self._add_outline(outlines[i], -1)
            else:
                self._add(old[0][i], old[1][i], old[3][i], -1, i in old[2])

    def _cuttable(self, o: Outline) -> bool:
        """The body starts on a line of its own, below the header (``def f(\n  x): y`` does not)."""
        line = self.text[self.offset(o.head_last + 1):self.offset(o.head_last + 2)]
        return o.indent > 0 and len(line) > o.indent and (line[:o.indent].isspace()) and not line[o.indent].isspace()

    def _add(self, first: int, last: int, names, parent: int, imports: bool = False) -> int:
        i = len(self.firsts)
        self.firsts.append(first)
        self.lasts.append(last)
        self.bound.append(names)
        self.parents.append(parent)
        if imports:
            self.imports.add(i)
        if parent >= 0:
            self.children[parent].append(i)
        return i

    def _add_outline(self, o: Outline, parent: int) -> None:
        head = self._add(o.first, o.head_last, o.name, parent)
        self.heads[head], self.children[head], self.always[head] = o.reads, [], []
        for part in o.parts:
            if isinstance(part, Outline):
                if self.offset(part.last + 1) - self.offset(part.first) > LONG and self._cuttable(part):
                    if part.kept:  # a cut __init__: its header (and so its first statement) with the class's
                        self.always[head].append(len(self.firsts))
                    self._add_outline(part, head)
                    continue
                part = (part.first, part.last, part.name, part.kept)
            unit = self._add(part[0], part[1], part[2], head)
            if part[3]:
                self.always[head].append(unit)

    def offset(self, line: int) -> int:  # where line ``line`` starts (past the last line: the end)
        return self.starts[min(line, self.n_lines + 1) - 1]

    def mentions(self, i: int) -> bool:
        a, b = self.firsts[i], self.lasts[i]
        k = bisect.bisect_left(self.hits, a)
        return k < len(self.hits) and self.hits[k] <= min(b, self.n_lines)

    def complete(self, keep: set[int]) -> set[int]:
        """``keep`` with the header of each kept unit (and its header's), the units kept with
        a kept header (imports, ``global``, a class's own statements and ``__init__``), and
        a header kept alone given its body's first statement, so that the text parses."""
        if not self.heads:
            return keep
        stack = list(keep)
        while stack:
            i = stack.pop()
            more = [self.parents[i]] if self.parents[i] >= 0 else []
            if i in self.heads:
                more += self.always[i]
                if not any(c in keep for c in self.children[i]):
                    more.append(self.children[i][0])
            for j in more:
                if j not in keep:
                    keep.add(j)
                    stack.append(j)
        return keep

    def closure(self, seeds: list[int], limit: int,
                near: tuple[int, int] | None = None) -> tuple[str, list[int]] | None:
        """``seeds`` and the statements binding the names they read (twice over), rendered;
        None past ``limit`` characters.  ``near``: the units ``(lo, hi)`` of a window, whose
        names are taken only from the statements between them that bind them and the last
        one above them (a name rebound on every line, ``x = f(x)``, is not its whole file)."""
        keep = self.complete(set(seeds))
        fresh = list(keep)  # kept, the names they read not yet known
        read: set[str] = set()
        offset, firsts, lasts = self.offset, self.firsts, self.lasts
        for _ in range(2):
            if sum(offset(lasts[i] + 1) - offset(firsts[i]) for i in keep) > limit:
                return None
            spans = [(offset(firsts[i]), offset(lasts[i] + 1)) for i in fresh if i not in self.heads]
            key = tuple(spans)
            if key != self._read[0]:  # a window's seeds are read once for both closures
                try:
                    self._read = (key, _reads(self.text, spans))
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    return None  # a statement that shares its first line with the end of another one
            new = set(self._read[1])
            for i in fresh:
                new |= self.heads.get(i, frozenset())
            new -= read
            read |= new
            before = set(keep)
            if near is None:
                for i, names_bound in enumerate(self.bound):
                    if i not in keep and names_bound and (names_bound in new if type(names_bound) is str
                                                          else not new.isdisjoint(names_bound)):
                        keep.add(i)
            else:
                binders = self.binders()
                for name in new:
                    units = binders.get(name)
                    if units:
                        k = bisect.bisect_left(units, near[0])
                        keep.update(units[max(k - 1, 0):bisect.bisect_right(units, near[1])])
            fresh = list(self.complete(keep) - before)
            if not fresh:
                break
        return self.render(keep, limit)

    def binders(self) -> dict[str, list[int]]:
        """Each name, and the units binding it, in order."""
        if not hasattr(self, "_binders"):
            out: dict[str, list[int]] = {}
            for i, names_bound in enumerate(self.bound):
                for name in (names_bound,) if type(names_bound) is str else names_bound:
                    out.setdefault(name, []).append(i)
            self._binders = out
        return self._binders

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


def statement_lines(tree: ast.Module):
    """Per top-level statement: first line (decorators included), last line, the
    indices of the imports, the names bound (() / a name / a tuple of names)."""
    if hasattr(tree, "firsts"):  # a chunks.Skeleton
        return tree.firsts, tree.lasts, tree.imports, tree.binds  # type: ignore[attr-defined]
    firsts, lasts, imports, bound = [], [], set(), []
    for i, stmt in enumerate(tree.body):
        firsts.append(first_line(stmt))
        lasts.append(stmt.end_lineno or stmt.lineno)
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            imports.add(i)
        bound.append(bound_names(stmt))
    return firsts, lasts, imports, bound


def _reads(text: str, spans: list[tuple[int, int]]) -> set[str]:
    """The names the statements at ``spans`` (whole lines of ``text``) read, from
    compiling just their lines (those of a body, indented, under ``if 1:``, a group for each
    indentation)."""
    if not spans:
        return set()
    groups: dict[str, list[str]] = {}
    for a, b in sorted(set(spans)):
        part = text[a:b]
        indent = part[:len(part) - len(part.lstrip(" \t"))]
        groups.setdefault(indent, []).append(part if part.endswith(("\n", "\r")) else part + "\n")
    out: set[str] = set()
    for indent, parts in groups.items():
        source = ("if 1:\n" if indent else "") + "".join(parts)
        tree = compile_tree(source)
        out |= ast_names(tree, ast.Load)
    return out


class Outline:
    """A def or class that can be cut: its first line (decorators included), its header's last
    line, its last line, the name it binds, the names its header reads (decorators, defaults,
    annotations, bases), its body's indentation and, per body statement, ``(first, last, names
    bound, kept with the header)`` or the :class:`Outline` of a def or class of ``LONG_LINES``."""

    __slots__ = ("first", "head_last", "last", "name", "reads", "indent", "parts", "kept", "is_class")

    def __init__(self, first, head_last, last, name, reads, indent, parts, kept: bool = False,
                 is_class: bool = False) -> None:
        self.first, self.head_last, self.last, self.name = first, head_last, last, name
        self.reads, self.indent, self.parts = reads, indent, parts
        self.kept = kept  # kept with its parent's header (a class's ``__init__``)
        self.is_class = is_class  # a class's body: its statements other than methods are kept with it


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def outline(stmt: ast.stmt, offset: int = 0) -> Outline | None:
    """The :class:`Outline` of a def or class (its lines ``offset`` below the file's); None
    for another statement or one whose body starts on its header's line."""
    if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or not stmt.body:
        return None
    head = stmt.body[0]
    decorators = getattr(head, "decorator_list", ())
    body_first = min([head.lineno] + [d.lineno for d in decorators])
    if body_first <= stmt.lineno:
        return None
    indent = min([head.col_offset] + [d.col_offset - 1 for d in decorators])
    is_class = isinstance(stmt, ast.ClassDef)
    parts = [part(s, offset, is_class) for s in stmt.body]
    return Outline(first_line(stmt) + offset, body_first - 1 + offset, (stmt.end_lineno or stmt.lineno) + offset,
                   stmt.name, _header_reads(stmt), indent, parts, is_class=is_class)


def part(s: ast.stmt, offset: int, in_class: bool):
    """A body statement's entry in its def's or class's :class:`Outline` (its lines ``offset``
    below the file's): ``(first, last, names bound, kept with the header)``, or the Outline of
    a def or class of ``LONG_LINES`` lines or more."""
    first, last = first_line(s) + offset, (s.end_lineno or s.lineno) + offset
    always = isinstance(s, (ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal)) or in_class and (
        not isinstance(s, (ast.ClassDef,) + _DEFS) or isinstance(s, _DEFS) and s.name == "__init__")
    if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and last - first >= LONG_LINES:
        o = outline(s, offset)
        if o is not None:
            o.kept = always
            return o
    return first, last, bound_names(s), always


def bound_names(stmt: ast.stmt):
    """The names a statement binds (:func:`binds`) as a unit keeps them: (), a name, or a
    sorted tuple of names."""
    names = binds(stmt)
    return () if not names else next(iter(names)) if len(names) == 1 else tuple(sorted(names))


def _header_reads(stmt) -> frozenset[str]:
    nodes = list(stmt.decorator_list)
    if isinstance(stmt, ast.ClassDef):
        nodes += stmt.bases + [k.value for k in stmt.keywords]
    else:
        a = stmt.args
        nodes += a.defaults + [d for d in a.kw_defaults if d is not None] + \
            [x.annotation for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]
             if x is not None and x.annotation is not None] + ([stmt.returns] if stmt.returns else [])
    return frozenset(name for node in nodes for name in ast_names(node))


def first_line(stmt: ast.stmt) -> int:
    return min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])


def module_binds(tree: ast.Module) -> frozenset[str]:
    """The names the file's top-level statements other than imports bind (:func:`binds`),
    and those a ``global`` statement names anywhere in it (``tree``: a Skeleton or CPython's
    tree of the file's text)."""
    out: set[str] = set()
    for names in statement_lines(tree)[3]:
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
        out |= ast_names(t)
    if isinstance(stmt, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
        out |= ast_names(stmt, ast.Store)
    return out
