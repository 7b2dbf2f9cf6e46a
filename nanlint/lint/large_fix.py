"""Fixes on a large file (issue 22).

A file over :data:`nanlint.source.large.LARGE` is analysed in a reduced text, or in windows
of it (:mod:`nanlint.source.large`): its kept statements are the file's own lines, unchanged,
with a map from each line of the piece to its line in the file.  A fix's edits inside them
are therefore the same edits in the file, moved to the file's lines (:func:`to_file`), and
the file is fixed by applying them to its text, pass after pass until no fix applies, the
result checked by CPython's parser (:func:`fix_text`).

An edit is carried over only when that is sure to mean in the file what it means in the
piece: it lies on lines consecutive in the file, and every name it writes is one the piece
already writes (the piece holds the statements binding the names its statements read, so the
analysis that built the fix saw what the name is bound to), or one the fix imports that no
statement of the file binds at module level (one left out of the piece could) and no star
import may bind.  A new name (a variable a fix introduces) is not carried: a statement left
out could use it.  Otherwise the finding keeps no edit, as before.
"""

from __future__ import annotations

import ast
import builtins
import keyword
import re
from functools import cached_property
from typing import Callable

import libcst as cst

from nanlint.findings import Edit, FileResult, Finding
from nanlint.fix import fixes
from nanlint.source.codegen import code_of
from nanlint.source.lines import split_lines

WORD = re.compile(r"[A-Za-z_]\w*")
_KNOWN = frozenset(keyword.kwlist) | frozenset(dir(builtins))


class Piece:
    """One analysed piece of a large file: its text, the file line of each of its lines, the
    names its module-level imports bind, and (asked once, when a fix adds an import) the names
    the whole file's top-level statements bind (:func:`nanlint.source.large.module_binds`)."""

    def __init__(self, text: str, rows: list[int], file_binds: Callable[[], frozenset[str]]) -> None:
        self.text, self.rows, self._file_binds = text, rows, file_binds

    @cached_property  # read only for a finding with edits: a window without one pays nothing
    def imported(self) -> frozenset[str]:
        return _imported(self.text)

    @cached_property
    def words(self) -> frozenset[str]:
        return frozenset(WORD.findall(self.text))

    def to_file(self, edits: list[Edit]) -> list[Edit] | None:
        """``edits`` (one finding's, in the piece's lines) in the file's lines; None when one
        of them cannot be carried over (see the module)."""
        imports = [_bound_by_imports(e.content) if e.start == e.end else None for e in edits]
        added: set[str] = set()
        for bound in imports:
            if bound is not None:
                if "*" in self.imported or not bound.isdisjoint(self._file_binds() | self.imported):
                    return None  # the file may bind that name where the piece does not show
                added |= bound
        out = []
        for e, bound in zip(edits, imports):
            if bound is None:
                written = set(_code_only(e.content).split()) - _KNOWN
                if not written <= self.words | added:
                    return None
            start, end = self._position(e.start, e.start == e.end), self._position(e.end, e.start == e.end)
            if start is None or end is None or not self._consecutive(e.start[0], e.end[0]):
                return None
            out.append(Edit(e.content, start, end))
        return out

    def _position(self, pos: tuple[int, int], insertion: bool) -> tuple[int, int] | None:
        line, col = pos
        rows = self.rows
        if line > len(rows):
            return (rows[-1] + 1, 1) if rows and col == 1 else None  # the end of the text
        if insertion and col == 1 and line > 1 and rows[line - 1] != rows[line - 2] + 1:
            return rows[line - 2] + 1, 1  # between two kept statements: right after the first
        return rows[line - 1], col

    def _consecutive(self, first: int, last: int) -> bool:
        rows = self.rows
        last = min(last, len(rows))
        return all(rows[k] == rows[k - 1] + 1 for k in range(first, last))


def sketched(fix: fixes.Fix) -> bool:
    """Whether :func:`sketch` decides ``fix``'s carrying over as its edits would: not for a
    statement replaced by several (its lines take the indentation and comments of libcst's
    tree, whose words :func:`_code_only` may read)."""
    return not any(type(new) is cst.FlattenSentinel for _, new in fix.replacements)


def sketch(ctx, fix: fixes.Fix) -> list[Edit]:
    """``fix``'s edits as :func:`nanlint.lint.edits.to_finding` builds them on libcst's parse
    of a piece, read instead on the module the rules ran on (made of CPython's tree, ``ctx``,
    a rule context): the same spans, the same names, in that module's default layout.  What
    :meth:`Piece.to_file` reads of an edit is its lines and the names it writes, so in a run
    that shows no edit it decides which fixes carry over into the file without libcst's parse
    of the piece (``sketched(fix)``)."""
    module, out = ctx.module, []
    for old, new in fix.replacements:
        (r1, c1), (r2, c2) = ctx.positions.chars(old)
        out.append(Edit(code_of(module, new), (r1, c1 + 1), (r2, c2 + 1)))
    if fix.imports:
        index = fixes.import_insert_index(module)
        row = ctx.positions.chars(module.body[index])[0][0] if index < len(module.body) \
            else len(split_lines(ctx.text)) + 1
        content = "".join(code_of(module, i.statement()) for i in fix.imports)
        out.append(Edit(content, (row, 1), (row, 1)))
    return out


def _imported(text: str) -> frozenset[str]:
    """The names the module-level imports of ``text`` bind."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return frozenset()
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                out.add(alias.asname or alias.name.split(".")[0])  # "*" for a star import
    return frozenset(out)


def _bound_by_imports(content: str) -> frozenset[str] | None:
    """The names an edit's text binds when it is only import statements; None otherwise."""
    try:
        tree = ast.parse(content)
    except (SyntaxError, ValueError):
        return None
    if not tree.body or not all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in tree.body):
        return None
    return frozenset(a.asname or a.name.split(".")[0] for s in tree.body for a in s.names)  # type: ignore[attr-defined]


def _code_only(content: str) -> str:
    """The names ``content`` reads or binds (not its attributes, strings or comments), space
    separated; a fragment no parser takes: all its words (more names, fewer edits carried)."""
    try:
        tree = ast.parse(content.strip() or "0", mode="eval")
    except SyntaxError:
        try:
            tree = ast.parse(content)
        except (SyntaxError, ValueError):
            return " ".join(WORD.findall(content))
    return " ".join(n.id for n in ast.walk(tree) if isinstance(n, ast.Name))


def chosen(findings: list[Finding], unsafe: bool) -> list[Finding]:
    """The fixable findings whose edits overlap none taken before them, in order."""
    out: list[Finding] = []
    taken: list[tuple[tuple[int, int], tuple[int, int]]] = []
    inserted: set[tuple] = set()
    for f in findings:
        if not f.fixable(unsafe):
            continue
        spans = [(e.start, e.end) for e in f.edits if e.start != e.end]
        if any(a[0] < b[1] and b[0] < a[1] for a in spans for b in taken):
            continue
        taken.extend(spans)
        f.edits = [e for e in f.edits if e.start != e.end or (e.content, e.start) not in inserted]
        inserted.update((e.content, e.start) for e in f.edits if e.start == e.end)  # one import, not two
        out.append(f)
    return out


def fix_text(source: bytes, checked, path: str, lint: Callable, unsafe: bool, passes: int,
             precheck: Callable) -> FileResult:
    """Fix a large file by its findings' edits, pass after pass (``lint(text, checked)`` gives a
    text's result, ``precheck(text)`` CPython's check of it, ``checked`` the source's); the last
    pass's findings are the result."""
    current = source
    applied: dict[str, int] = {}
    for _ in range(passes):
        result = lint(current, checked)
        if result.error is not None or not result.findings:
            break
        picked = chosen(result.findings, unsafe)
        if not picked:
            break
        bom = b"\xef\xbb\xbf" if current.startswith(b"\xef\xbb\xbf") else b""  # columns count without it
        try:
            text = current[len(bom):].decode("utf-8")
        except UnicodeDecodeError:
            break  # another encoding: its columns are not this text's
        new = bom + fixes.apply_text(text, [e for f in picked for e in f.edits]).encode("utf-8")
        if new == current:
            break
        checked = precheck(new)
        if checked.rejected is not None:
            codes = ", ".join(sorted({f.code for f in picked}))
            out = lint(source, None)
            out.error = f"{path}: fix for {codes} produced code that does not parse; file left unchanged, " \
                "please report it"
            return out
        for f in picked:
            applied[f.code] = applied.get(f.code, 0) + 1
        current = new
    else:
        out = lint(source, None)
        out.error = f"{path}: fixes did not reach a fixpoint after {passes} passes; file left unchanged, " \
            "please report it"
        return out
    if applied:
        result.fixed = sum(applied.values())
        result.fixed_codes = applied
        result.fixed_source = current if current != source else None
    return result
