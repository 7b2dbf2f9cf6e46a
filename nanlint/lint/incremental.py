"""An edited text's findings from the statements the edit touched (issue 22: the editor
answers an edit of a large document in well under a second, whatever the document holds).

A document's last analysis leaves a :class:`Snapshot`: its text, its findings and its
top-level statements' lines (:class:`Units`, what :mod:`nanlint.source.large` reads of a
tree).  An edit changes a run of lines (the two texts share the lines before and after
it).  The *region* is the statements around it: the one the change starts in (or follows:
a line added at the end of a def), through the last one it reaches.  The region's new text
is compiled alone; text that compiles alone between unchanged top-level statements is a
whole run of statements, so the document's other statements are what they were, moved by
the lines the edit added, and the new text needs no parse of its own.  The region is
linted again with its *readers*, the statements that name what it binds before or after the
edit (a function's callers, a constant's uses, and theirs; in a long def's body, the
statements below it up to one binding the name again), as a large file's window is
(:func:`nanlint.source.large.piece`: with the imports and the statements binding what they
read); their findings replace the old ones there, and the others move with their lines.

That is the large-file reduction's approximation: a value that reaches the region through
more than two names, or a finding further away that the edit changes (a caller's caller
under a GradientTape), is not seen.  The server publishes it at once and the whole text's
analysis after a quiet spell (:mod:`nanlint.server.lsp`).  :func:`relint` says None
(analyse the whole text) when the region does not compile alone (the edit opened a bracket
or a string, indented a statement, wrote ``else:``), when it edits an import (how every
call resolves), when it and its readers are longer than ``MAX_REGION`` characters, or when
a rule judges directives (NAN002 reads the whole file).  Seeded edits of the shipped
examples and fixtures are checked against the whole analysis in the suite; 576 random edits
of the three bench corpora that it answered gave the whole analysis's findings exactly.
"""

from __future__ import annotations

import ast
import bisect
import copy
import itertools
import re
from dataclasses import dataclass, field
from typing import Sequence

from nanlint.findings import Edit, FileResult, Finding
from nanlint.lint.engine import Linter
from nanlint.source import chunks, large
from nanlint.source.ast_tree import compile_tree
from nanlint.source.lines import split_lines

MAX_REGION = 200_000  # characters: an edited region longer than this is analysed with the whole text


@dataclass
class Units:
    """A text's top-level statements as :mod:`nanlint.source.large` reads a tree: per
    statement its first line (decorators included), its last line, the names it binds;
    the indices of the imports; the outlines of long defs (a Skeleton's)."""

    firsts: list[int]
    lasts: list[int]
    imports: set[int]
    binds: list
    outlines: dict = field(default_factory=dict)
    # the text, while a reduction of it is linted (``large.module_binds`` reads its ``global``
    # statements); never kept with a snapshot
    text: str | None = None


@dataclass
class Snapshot:
    """What the last analysis of a document leaves for the next edit."""

    text: str
    units: Units
    findings: list[Finding]


def units_of(tree: ast.Module) -> Units:
    """The :class:`Units` of CPython's tree of a text, or of a large file's Skeleton."""
    if isinstance(tree, chunks.Skeleton):
        return Units(list(tree.firsts), list(tree.lasts), set(tree.imports), list(tree.binds), dict(tree.outlines))
    firsts, lasts, imports, binds = large.statement_lines(tree)
    return Units(firsts, lasts, set(imports), list(binds))


@dataclass
class Region:
    """The statements an edit touched: their old lines ``old_first``..``old_last``, the
    same run's lines ``old_first``..``new_last`` in the new text, and the units they were,
    ``lo``..``hi``: top-level statements, or, ``inside`` a long def (the path of indices to
    its :class:`large.Outline`: a unit's, then its parts'), the parts of its body."""

    old_first: int
    old_last: int
    new_last: int
    lo: int
    hi: int
    inside: tuple[int, ...] = ()
    indent: str = ""  # the indentation of that body's statements
    changed: int = 0  # the last old line the edit changed: those below it moved by ``delta``
    first_changed: int = 0  # the first (``changed`` below it: lines inserted above it)

    @property
    def delta(self) -> int:
        return self.new_last - self.old_last


def _first(entry) -> int:
    return entry.first if isinstance(entry, large.Outline) else entry[0]


def _last(entry) -> int:
    return entry.last if isinstance(entry, large.Outline) else entry[1]


def region(units: Units, old: list[str], new: list[str]) -> Region | None:
    """Where the lines ``new`` differ from ``old``, widened to whole statements (those of a
    def's body, when the change lies in the body of a def longer than ``MAX_REGION``); None
    when they do not differ."""
    n_old, n_new = len(old), len(new)
    p = 0
    while p < n_old and p < n_new and old[p] == new[p]:
        p += 1
    if p == n_old == n_new:
        return None
    s = 0
    while s < n_old - p and s < n_new - p and old[n_old - 1 - s] == new[n_new - 1 - s]:
        s += 1
    where = widened(units, old, p + 1, n_old - s)  # the old lines changed (none, last < first: lines inserted)
    where.new_last = where.old_last + n_new - n_old
    return where


def widened(units: Units, lines: Sequence[str], first: int, last: int) -> Region:
    """Lines ``first``..``last`` of the text whose ``lines`` and ``units`` these are (none,
    ``last < first``: a place between lines), widened to the statements they fall in, the one
    before a place between statements with them."""
    reach = max(first, last)
    firsts, lasts = units.firsts, units.lasts
    lo = bisect.bisect_right(firsts, first) - 1  # the statement the lines start in, or follow
    hi = bisect.bisect_right(firsts, reach) - 1
    start, end = (firsts[lo] if lo >= 0 else 1), (lasts[hi] if hi >= 0 else 0)
    inside: list[int] = []
    indent = ""
    entry = units.outlines.get(lo) if lo == hi else None
    while entry is not None and entry.head_last < first and reach <= entry.last and \
            sum(map(len, lines[entry.first - 1:entry.last])) > MAX_REGION:
        inside.append(lo)
        indent = _indent(lines[entry.head_last]) if entry.head_last < len(lines) else ""
        heads = [_first(e) for e in entry.parts]
        lo, hi = bisect.bisect_right(heads, first) - 1, bisect.bisect_right(heads, reach) - 1
        start = heads[lo] if lo >= 0 else entry.head_last + 1
        end = _last(entry.parts[hi]) if hi >= 0 else 0
        entry = entry.parts[lo] if lo == hi and lo >= 0 and isinstance(entry.parts[lo], large.Outline) else None
    old_last = max(last, first - 1, end)
    return Region(start, old_last, old_last, max(lo, 0), hi, tuple(inside), indent, last, first)


def statement_rows(snapshot: Snapshot, lines: Sequence[str], row: int) -> tuple[int, int]:
    """The first and last line of the statement line ``row`` of the snapshot's text is in (a
    body statement of a def longer than ``MAX_REGION``): what ``# noqa`` on that line needs
    tokenized, not the whole text (0.5 s for 300 KB)."""
    where = widened(snapshot.units, lines, row, row)
    return where.old_first, where.old_last


def around(linter: Linter, path: str, snapshot: Snapshot, first: int, last: int) -> list[Finding] | None:
    """The findings of the statements on lines ``first``..``last`` of the snapshot's text,
    linted as a window of them (:func:`nanlint.source.large.piece`), with their fixes' edits
    when ``linter`` builds them: a quick fix in a large document, without its whole analysis.
    None when no statement starts there or the window's analysis cannot say."""
    lines = split_lines(snapshot.text, keepends=True)
    where = widened(snapshot.units, lines, first, last)
    if sum(map(len, lines[where.old_first - 1:where.old_last])) > MAX_REGION:
        return None
    return _linted(linter, path, snapshot.text, snapshot.units, [(where.old_first, where.old_last)])


def _linted(linter: Linter, path: str, text: str, units: Units,
            spans: list[tuple[int, int]]) -> list[Finding] | None:
    """The findings on the lines of ``spans`` of ``text`` (``units``: its statements), from
    linting the statements there as a window; None when that cannot be done."""
    units.text = text
    try:
        piece = large.piece(units, text, spans)
        if piece is None:
            return None  # no unit of the reduction starts there (a def it does not cut)
        result = FileResult(path)
        own = frozenset(r for first, last in spans for r in range(first, last + 1))
        if linter.lint_pieces([(*piece, own)], path, result, units):
            return None  # a rule crashed: the whole text's analysis says so
        return [f for f in result.findings if f.start[0] in own]
    except Exception:  # noqa: BLE001 - whatever this path cannot do, the whole analysis does
        return None
    finally:
        units.text = None


@dataclass
class Change:
    """What an edit changed: the region, its findings (in the new text's lines), and the new
    text's statements.  Computed where the analysis runs; :meth:`applied` to the snapshot of
    the text before, where that is kept (the server: only the region's findings cross)."""

    where: Region | None  # None: the text did not change
    found: list[Finding]
    units: Units
    # the new text's lines of the statements that read what the region binds, linted again with it
    readers: list[tuple[int, int]] = field(default_factory=list)

    def applied(self, old: Snapshot, text: str) -> Snapshot:
        """The snapshot of ``text``: ``old``'s findings outside the region and its readers
        (those below it moved), and the ones found there."""
        where = self.where
        if where is None:
            return Snapshot(text, old.units, old.findings)
        readers = self.readers
        kept = [g for f in old.findings if f.start[0] < where.old_first or f.start[0] > where.old_last
                for g in (_moved(f, 0 if f.start[0] < where.old_first else where.delta, where),)
                if not any(lo <= g.start[0] <= hi for lo, hi in readers)]
        return Snapshot(text, self.units, sorted(kept + self.found, key=Finding.sort_key))


def relint(linter: Linter, path: str, old: Snapshot, text: str) -> Snapshot | None:
    """The findings and statements of ``text``, an edit of ``old.text``, from the region the
    edit touched; None where the whole text must be analysed (see the module docstring)."""
    change = changed(linter, path, old, text)
    return change.applied(old, text) if change is not None else None


def changed(linter: Linter, path: str, old: Snapshot, text: str) -> Change | None:
    """The :class:`Change` an edit of ``old.text`` into ``text`` made; None where the whole text
    must be analysed."""
    if linter.judges_noqa:
        return None
    new_lines = split_lines(text, keepends=True)
    where = region(old.units, split_lines(old.text, keepends=True), new_lines)
    if where is None:
        return Change(None, [], old.units)
    source = "".join(new_lines[where.old_first - 1:where.new_last])
    if len(source) > MAX_REGION:
        return None
    statements = _compiled(source, where, new_lines)
    if statements is None:
        return None  # the edit is not a run of whole statements (yet)
    if _imports_edited(old.units, where, statements):
        return None  # how every statement's calls resolve may have changed
    units = _spliced(old.units, where, statements)
    names = _bound(old.units, where) | {n for s, _ in statements for n in _names(large.bound_names(s))}
    readers = _readers(units, text, new_lines, names, where, len(statements)) if names else []
    if readers is None:
        return None  # what the edit binds is read all over: the whole text's analysis
    found: list[Finding] | None = []
    if statements or readers:
        found = _linted(linter, path, text, units, [(where.old_first, where.new_last)] + readers)
        if found is None:
            return None
    return Change(where, found, units, readers)


def _imports_edited(units: Units, where: Region, statements: list) -> bool:
    """Whether the edit changed a top-level import's lines (the region also holds the
    statement above the edit, unchanged)."""
    if where.inside:
        return False
    a, b = where.first_changed, where.changed  # the old lines changed
    c, d = a, b + where.delta  # the new ones
    old = any(units.firsts[i] <= b and a <= units.lasts[i] for i in units.imports if where.lo <= i <= where.hi)
    return old or any(isinstance(s, (ast.Import, ast.ImportFrom)) and large.first_line(s) + k <= d and
                      c <= (s.end_lineno or s.lineno) + k for s, k in statements)


def _names(bound) -> tuple:
    return (bound,) if isinstance(bound, str) else bound


def _entry(part) -> tuple[int, int, tuple]:
    """A long def's body statement (an outline's part) as ``(first, last, names bound)``."""
    return (part.first, part.last, (part.name,)) if type(part) is large.Outline else \
        (part[0], part[1], _names(part[2]))


def _bound(units: Units, where: Region) -> set[str]:
    """The names the region's statements bound before the edit."""
    if not where.inside:
        return {n for b in units.binds[where.lo:where.hi + 1] for n in _names(b)}
    parts = _outline_at(units, where.inside).parts[where.lo:where.hi + 1]
    return {n for p in parts for n in _entry(p)[2]}


def _outline_at(units: Units, path: tuple[int, ...]) -> large.Outline:
    entry = units.outlines[path[0]]
    for j in path[1:]:
        entry = entry.parts[j]
    return entry


def _readers(units: Units, text: str, lines: list[str], names: set[str], where: Region,
             count: int) -> list[tuple[int, int]] | None:
    """The lines of the statements outside the region (``count`` statements now) that read a
    name it binds, before or after the edit (a function's callers, a constant's uses, and
    the statements reading what those bind; in a long def's body, the statements below the
    region up to one binding the name again), as ``(first, last)`` each; None past
    ``MAX_REGION`` characters in all.  A name is found by its identifier in the text."""
    starts = list(itertools.accumulate(map(len, lines), initial=0))  # line k starts at starts[k - 1]
    own = range(where.lo, where.lo + count)  # the region's statements now
    if where.inside:
        outline = _outline_at(units, where.inside)
        entries = [_entry(p) for p in outline.parts]
        after = where.lo + count
        cut: dict[str, int] = {}  # a name -> the first statement below binding it again
        for i in range(after, len(entries)):
            cut.update((n, i) for n in entries[i][2] if n in names and n not in cut)
            if len(cut) == len(names):
                break
        # no name read past the last of those (``x = f(x)`` on every other line of a long def)
        end = entries[max(cut.values())][1] if len(cut) == len(names) else outline.last
        bounds = (entries[after][0] if after < len(entries) else outline.last + 1, end)
        levels = 1
    else:
        entries = [(a, b, _names(n)) for a, b, n in zip(units.firsts, units.lasts, units.binds)]
        bounds, cut, levels = (1, len(lines)), {}, 2
    heads = [e[0] for e in entries]
    out: list[tuple[int, int]] = []
    taken: set[int] = set(own)
    size = 0
    for _ in range(levels):  # the readers, and theirs
        if not names:
            break
        pattern = re.compile(r"(?<![\w.])(?:" + "|".join(map(re.escape, sorted(names))) + r")\b")
        found: set[str] = set()
        for m in pattern.finditer(text, starts[bounds[0] - 1], starts[min(bounds[1], len(lines))]):
            row = bisect.bisect_right(starts, m.start())
            i = bisect.bisect_right(heads, row) - 1
            if i < 0 or i in taken or row > entries[i][1] or i > cut.get(m.group(), len(entries)):
                continue
            taken.add(i)
            out.append(entries[i][:2])
            size += starts[entries[i][1]] - starts[entries[i][0] - 1]
            if size > MAX_REGION:
                return None
            found.update(n for n in entries[i][2] if n not in names)
        names = found
    return out


def _compiled(source: str, where: Region, lines: list[str]) -> list | None:
    """The region's statements (top-level ones, or a long def's body statements, each with
    its lines in the new text), from compiling its text alone; None when it does not compile
    so (a body's text compiles under ``if 1:``, each statement at the body's indentation)."""
    try:
        if not where.inside:
            tree = compile_tree(source)
            return [(s, where.old_first - 1) for s in tree.body]
        indent = where.indent
        if not indent:
            return None
        body = source if source.endswith(("\n", "\r")) or not source else source + "\n"
        tree = compile_tree("if 1:\n" + body + indent + "pass\n")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.If):
        return None
    offset = where.old_first - 2
    out = tree.body[0].body[:-1]  # the pass that lets a region of comments compile
    for stmt in out:
        row = large.first_line(stmt) + offset
        if _indent(lines[row - 1]) != indent:
            return None
    return [(s, offset) for s in out]


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip(" \t"))]


def _spliced(units: Units, where: Region, statements: list) -> Units:
    """``units`` with the region's statements replaced by ``statements`` (with the offset of
    their lines) and those after it moved by the lines the edit added."""
    lo, hi, delta = where.lo, where.hi, where.delta
    if where.inside:
        top = where.inside[0]
        moved = _spliced_outline(units.outlines[top], where.inside[1:], where, statements)
        lo = hi = top
        firsts, lasts, binds = units.firsts[:top + 1], units.lasts[:top] + [moved.last], units.binds[:top + 1]
        imports = {i for i in units.imports if i <= top}
        outlines = {i: o for i, o in units.outlines.items() if i < top}
        outlines[top] = moved
    else:
        firsts, lasts, binds = units.firsts[:lo], units.lasts[:lo], units.binds[:lo]
        imports = {i for i in units.imports if i < lo}
        outlines = {i: o for i, o in units.outlines.items() if i < lo}
        for stmt, offset in statements:
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                imports.add(len(firsts))
            firsts.append(large.first_line(stmt) + offset)
            lasts.append((stmt.end_lineno or stmt.lineno) + offset)
            binds.append(large.bound_names(stmt))
    shift = len(firsts) - (hi + 1)  # old index -> new index, after the region
    firsts += [r + delta for r in units.firsts[hi + 1:]]
    lasts += [r + delta for r in units.lasts[hi + 1:]]
    binds += units.binds[hi + 1:]
    imports.update(i + shift for i in units.imports if i > hi)
    outlines.update((i + shift, _moved_outline(o, delta)) for i, o in units.outlines.items() if i > hi)
    return Units(firsts, lasts, imports, binds, outlines)


def _spliced_outline(o: large.Outline, path: tuple[int, ...], where: Region, statements: list) -> large.Outline:
    """``o`` with the region's body statements replaced (``path``: the parts down to the
    outline whose body holds them), its last line and the parts after them moved."""
    delta = where.delta
    if path:
        j = path[0]
        parts = o.parts[:j] + [_spliced_outline(o.parts[j], path[1:], where, statements)] + \
            [_moved_part(p, delta) for p in o.parts[j + 1:]]
    else:
        in_class = o.is_class
        parts = o.parts[:where.lo] + [large.part(s, offset, in_class) for s, offset in statements] + \
            [_moved_part(p, delta) for p in o.parts[where.hi + 1:]]
    return large.Outline(o.first, o.head_last, o.last + delta, o.name, o.reads, o.indent, parts, o.kept,
                         o.is_class)


def _moved_part(p, delta: int):
    return _moved_outline(p, delta) if isinstance(p, large.Outline) else (p[0] + delta, p[1] + delta, *p[2:])


def _moved_outline(o: large.Outline, delta: int) -> large.Outline:
    parts = [_moved_part(p, delta) for p in o.parts]
    return large.Outline(o.first + delta, o.head_last + delta, o.last + delta, o.name, o.reads, o.indent, parts,
                         o.kept)


def _moved(f: Finding, delta: int, where: Region) -> Finding:
    """``f`` on its line ``delta`` lines down (its fix's edits with it), and the lines its
    message names below the edit (``the GradientTape on line 9``) moved with theirs."""
    message = f.message
    if where.delta and "line " in message:
        message = _LINE.sub(lambda m: f"{m.group(1)}{int(m.group(2)) + where.delta}"
                            if int(m.group(2)) > where.changed else m.group(0), message)
    if not delta and message is f.message:
        return f
    g = copy.copy(f)
    g.message = message
    if delta:
        g.start, g.end = (f.start[0] + delta, f.start[1]), (f.end[0] + delta, f.end[1])
        g.edits = [Edit(e.content, (e.start[0] + delta, e.start[1]), (e.end[0] + delta, e.end[1])) for e in f.edits]
    return g


_LINE = re.compile(r"(\bline )(\d+)\b")  # a line a message names: "assigned on line 12", "(line 40)"
