"""Suppression comments: ``# noqa`` on a line, ``# nanlint: noqa`` for a file.

* ``# noqa`` on a finding's first line silences every finding there; ``# noqa: NAN101``
  or ``# noqa: log-softmax`` silences that rule (codes are shared with flake8/ruff: codes
  that are not nanlint's are left alone).
* ``# nanlint: noqa`` on a line of its own anywhere in a file skips the whole file;
  ``# nanlint: noqa: NAN101, NAN102`` turns those rules off for the file.
* ``--add-noqa`` (:func:`add_noqa`) writes ``# noqa: CODE`` on each finding's line.
* ``NAN002 unused-noqa`` (opt-in) reports nanlint codes in a ``# noqa`` that suppress
  nothing; :func:`apply` collects what each directive suppressed for it.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Sequence

from nanlint.rules.base import Rule
from nanlint.rules.context import RawFinding, RuleContext
from nanlint.source.noqa import ALL, NOQA, directives, file_directive, line_directive, matches
from nanlint.lint.writer import read, write_atomic
from nanlint.lint import notebook
from nanlint.source.lines import split_lines


def apply(ctx: RuleContext, raw: Sequence[RawFinding], rules: Sequence[Rule], text: str) -> list[RawFinding]:
    """The findings that no directive silences; rules with a ``check_noqa(ctx, directives)``
    hook (NAN002) are then run with what each directive suppressed."""
    file_codes = file_directive(text)
    if file_codes == ALL:
        return []
    hooks = [r for r in rules if r.judges_noqa]
    if file_codes:
        raw = [f for f in raw if not matches(file_codes, f.code, f.name)]
        hooks = [r for r in hooks if not matches(file_codes, r.code, r.name)]
    if "noqa" not in text.lower() or (not raw and not hooks):
        return list(raw)
    found = _directives(ctx, raw) if not hooks else \
        ctx.positions.directives() if ctx.converted else directives(ctx.module, ctx.positions)  # type: ignore[union-attr]
    kept = []
    for f in raw:
        d = found.get(ctx.positions[f.node].start.line)
        written = d.suppresses(f.code, f.name) if d is not None else None
        if written is None:
            kept.append(f)
        else:
            d.used.add(written.upper())  # type: ignore[union-attr]
    for rule in hooks:
        before = len(ctx.findings)
        ctx.rule = rule
        rule.check_noqa(ctx, list(found.values()))
        ctx.rule = None
        for f in ctx.findings[before:]:
            d = found.get(ctx.positions[f.node].start.line)
            if d is None or d.suppresses(f.code, f.name) is None:
                kept.append(f)
    return kept


def _directives(ctx: RuleContext, raw: Sequence[RawFinding]) -> dict:
    """The directives on the lines the findings start on: libcst's comments, or on a module
    made from CPython's tree (which holds none), the comments its tokens give
    (:meth:`nanlint.source.from_ast.Spans.comment_on`); raises :class:`Unknown` where they
    cannot be read (inside an f-string)."""
    if not ctx.converted:
        return directives(ctx.module, ctx.positions)
    comment_on = ctx.positions.comment_on  # type: ignore[union-attr]
    out = {}
    for f in raw:
        row = ctx.positions[f.node].start.line
        if row in out:
            continue
        known, text = comment_on(f.node)
        if not known:
            raise Unknown(row)
        out[row] = line_directive(row, text) if text else None
    return {row: d for row, d in out.items() if d is not None}


class Unknown(Exception):
    """A line whose comment tokens cannot give: libcst's tree decides."""


# --- --add-noqa ----------------------------------------------------------------------------
@dataclass
class AddResult:
    source: str
    added: int = 0  # lines that got a new or extended directive
    skipped: list[tuple[int, str]] = field(default_factory=list)  # (row, why)


def _unsafe_rows(text: str) -> dict[int, str]:
    """Rows where a comment cannot go at the end of the line: the line ends inside a
    multi-line string (or f-string), or with a backslash continuation."""
    out: dict[int, str] = {}
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return {0: "does not tokenize"}
    for tok in tokens:
        if tok.type in (tokenize.NL, tokenize.NEWLINE):
            continue
        for row in range(tok.start[0], tok.end[0]):
            out.setdefault(row, "inside a multi-line string")
    lines = split_lines(text)
    for row, line in enumerate(lines, 1):
        if line.endswith("\\") and row not in out:
            out[row] = "ends with a backslash continuation"
    return out


def add_noqa(text: str, rows: dict[int, list[str]], scan: str | None = None) -> AddResult:
    """``text`` with ``# noqa: CODES`` on each row of ``rows`` (row -> codes), merged into an
    existing ``# noqa: ...`` without duplicates; the rest of each line is kept byte for byte.
    ``scan`` is the text to tokenize when ``text`` is not plain Python (a notebook cell
    with its IPython lines masked, line for line)."""
    scan = text if scan is None else scan
    unsafe = _unsafe_rows(scan)
    if 0 in unsafe:
        return AddResult(text, 0, [(row, unsafe[0]) for row in sorted(rows)])
    comment_at = _comment_columns(scan)
    lines = split_lines(text, keepends=True)
    result = AddResult(text)
    for row in sorted(rows):
        if not 0 < row <= len(lines):
            result.skipped.append((row, "no such line"))
            continue
        if row in unsafe:
            result.skipped.append((row, unsafe[row]))
            continue
        line = lines[row - 1]
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        col = comment_at.get(row)
        wanted = list(dict.fromkeys(rows[row]))
        if col is not None:
            comment = body[col:]
            m = NOQA.search(comment)
            if m is not None:
                if not m.group("codes"):
                    continue  # a blanket noqa already silences everything
                have = {c.upper() for c in re.split(r"[\s,]+", m.group("codes")) if c}
                missing = [c for c in wanted if c.upper() not in have]
                if not missing:
                    continue
                end = col + m.end("codes")
                body = body[:end] + ", " + ", ".join(missing) + body[end:]
                lines[row - 1] = body + ending
                result.added += 1
                continue
        if not body.strip() or body.endswith(("  ", "\t")):
            sep = ""
        else:
            sep = " " if body.endswith(" ") else "  "
        lines[row - 1] = body + sep + "# noqa: " + ", ".join(wanted) + ending
        result.added += 1
    result.source = "".join(lines)
    return result


def _comment_columns(text: str) -> dict[int, int]:
    out: dict[int, int] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                out[tok.start[0]] = tok.start[1]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return out


# --- --add-noqa over files -------------------------------------------------------------------
@dataclass
class FilesResult:
    added: int = 0
    files: int = 0
    skipped: list[str] = field(default_factory=list)  # "path:row: why"
    errors: list[str] = field(default_factory=list)


def add_noqa_files(findings) -> FilesResult:
    """Write ``# noqa: CODE`` on the line of every finding (not parse errors)."""
    from pathlib import Path


    by_file: dict[str, dict] = {}
    for f in findings:
        if f.code == "NAN001":
            continue
        by_file.setdefault(f.path, {}).setdefault(f.cell, {}).setdefault(f.noqa_row, []).append(f.code)
    out = FilesResult()
    for path, by_cell in sorted(by_file.items()):
        try:
            original = read(Path(path))
        except OSError as exc:
            out.errors.append(f"{path}: cannot read: {exc.strerror or exc}")
            continue
        if path.endswith(".ipynb"):
            data, added, skipped = _add_to_notebook(original, by_cell)
            skipped = [f"{path}:cell {c}:line {r}: {why}" for c, r, why in skipped]
        else:
            data, added, skipped = _add_to_python(original, by_cell.get(None, {}))
            skipped = [f"{path}:{r}: {why}" for r, why in skipped]
        out.skipped += skipped
        if data is None:
            continue
        if data != original:
            error = write_atomic(Path(path), data, original)
            if error:
                out.errors.append(error)
                continue
            out.added += added
            out.files += 1
    return out


def _add_to_python(original: bytes, rows):
    encoding, _ = tokenize.detect_encoding(io.BytesIO(original).readline)
    try:
        text = original.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return None, 0, [(r, "cannot decode the file") for r in sorted(rows)]
    result = add_noqa(text, rows)
    return result.source.encode(encoding), result.added, result.skipped


def _add_to_notebook(original: bytes, by_cell):
    import json


    try:
        layout = notebook.json_layout(original)
        nb = notebook.load(original)
    except (notebook.NotebookError, ValueError) as exc:
        return None, 0, [(c, r, f"notebook not written: {exc}") for c in by_cell for r in by_cell[c]]
    data = json.loads(original.decode("utf-8-sig"))
    cells = {c.number: c for c in nb.cells}
    added, skipped = 0, []
    for number, rows in sorted(by_cell.items(), key=lambda kv: kv[0] or 0):
        cell = cells.get(number)
        if cell is None:
            skipped += [(number, r, "no such code cell") for r in rows]
            continue
        result = add_noqa(cell.text, rows, scan=cell.lint_text)
        skipped += [(number, r, why) for r, why in result.skipped]
        if result.source != cell.text:
            raw = data["cells"][cell.index]
            raw["source"] = result.source.splitlines(keepends=True) if isinstance(raw.get("source"), list) \
                else result.source
            added += result.added
    return (layout(data) if added else original), added, skipped
