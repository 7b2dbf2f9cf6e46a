"""Jupyter notebooks: lint the code cells as one module, report ``cell N``, fix in place.

The code cells are joined into one module (imports in cell 1 resolve in cell 5), each
cell preceded by a boundary comment so fixed code can be split back.  IPython syntax is
replaced line for line by a placeholder of the same length (``%matplotlib inline``,
``!pip install x``, ``?obj``, ``obj?``, ``files = !ls``); a line magic that wraps
Python (``%time y = f(x)``, ``%timeit -n 10 f(x)``) is linted as its code, columns
mapped back.  A cell that starts with a cell magic whose body IPython runs as Python in
the kernel (``PYTHON_CELL_MAGICS``: ``%%time``, ``%%timeit -n 10``, ``%%capture out``,
``%%prun``, ``%%debug``) is linted with its magic line masked like a line magic (options and
setup code on that line are not linted); any other cell magic (``%%bash``, ``%%writefile``,
``%%html``, an unknown ``%%foo``) leaves the cell out whole, and :func:`skipped_cells`
says which and why (``--verbose``).  A cell that does not parse on its own is reported as NAN001 in that cell and left
out of the module, so the other cells are still linted.  Placeholders never reach the file: a
fixed cell gets its magic lines back, and only the cells whose code changed are
rewritten, in the JSON layout the notebook had (indent, key order, escaping, final
newline); when that layout cannot be reproduced byte for byte the notebook is left alone.
``--diff`` shows the change per cell (``diff``), as the cell sources are written.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from typing import Protocol

from nanlint.source.ipython import cell_magic, mask_magics, skip_reason
from nanlint.findings import PARSE_ERROR, FileResult, Finding
from nanlint.source.noqa import ALL as NOQA_ALL, file_directive, matches
from nanlint.source.syntax import parse, parse_error_message, precheck
from nanlint.source.lines import split_lines


class Linter(Protocol):
    """What a notebook needs of :class:`nanlint.lint.engine.Linter` (which calls this module)."""

    check_parse: bool

    def lint_source(self, source: bytes, path: str) -> FileResult: ...

    def fix_source(self, source: bytes, path: str, unsafe: bool) -> FileResult: ...

SUFFIX = "::cells"  # the path the combined module is linted under (never shown)
BOUNDARY = "# nanlint-notebook-cell: {}"
_BOUNDARY = re.compile(r"^# nanlint-notebook-cell: (\d+)$")

class NotebookError(Exception):
    pass


@dataclass
class Cell:
    index: int  # position in nb["cells"], 0-based
    text: str  # the source as in the file
    lint_text: str = ""  # magics replaced by placeholders
    magic: dict[int, str] = field(default_factory=dict)  # 0-based line -> original line
    wrapped: dict[int, str] = field(default_factory=dict)  # 0-based line -> the magic prefix cut off (``%time ``)

    @property
    def number(self) -> int:  # what reports call "cell N": 1-based, counting every cell
        return self.index + 1


@dataclass
class Notebook:
    data: dict
    cells: list[Cell]  # the code cells that are linted
    combined: str = ""
    rows: list[tuple[int, int] | None] = field(default_factory=list)  # combined row-1 -> (cell, row)
    shifts: dict[tuple[int, int], int] = field(default_factory=dict)  # (cell, row) -> columns cut (``%time ``)


def cell_text(source) -> str:
    return "".join(source) if isinstance(source, list) else (source or "")


def load(source: bytes, skip: frozenset[int] = frozenset()) -> Notebook:
    """The notebook's code cells and the module they form; cells numbered in ``skip`` (that
    do not parse on their own) are left out of the module."""
    try:
        data = json.loads(source.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise NotebookError(f"not a notebook (invalid JSON: {exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise NotebookError("not a notebook in nbformat 4 (no top-level 'cells' list)")
    nb = Notebook(data, [])
    lines: list[str] = []
    for index, raw in enumerate(data["cells"]):
        if not isinstance(raw, dict) or raw.get("cell_type") != "code":
            continue
        text = cell_text(raw.get("source", ""))
        wrapped: dict[int, str] = {}
        masked = mask_magics(text, wrapped)
        if masked is None or index + 1 in skip:
            continue
        cell = Cell(index, text, masked[0], masked[1], wrapped)
        nb.cells.append(cell)
        nb.shifts.update({(cell.number, row + 1): len(prefix) for row, prefix in wrapped.items()})
        lines.append(BOUNDARY.format(cell.number) + "\n")
        nb.rows.append(None)
        cell_lines = split_lines(cell.lint_text, keepends=True)
        if cell_lines and not cell_lines[-1].endswith("\n"):
            cell_lines[-1] += "\n"
        lines.extend(cell_lines)
        nb.rows.extend((cell.number, r) for r in range(1, len(cell_lines) + 1))
    nb.combined = "".join(lines)
    return nb


def is_python(data: dict) -> bool:
    meta = data.get("metadata") or {}
    lang = ((meta.get("language_info") or {}).get("name") or (meta.get("kernelspec") or {}).get("language")
            or "python")
    return str(lang).lower() in ("python", "python3", "ipython", "ipython3")


# --- positions -------------------------------------------------------------------------------
def _map(nb: Notebook, pos: tuple[int, int]) -> tuple[int | None, tuple[int, int]]:
    row, col = pos
    for r in range(row - 1, len(nb.rows)):  # a boundary row belongs to the cell after it
        if 0 <= r < len(nb.rows) and nb.rows[r] is not None:
            cell, cell_row = nb.rows[r]  # type: ignore[misc]
            if r != row - 1:
                return cell, (cell_row, 1)
            return cell, (cell_row, col + nb.shifts.get((cell, cell_row), 0))
    if nb.rows:
        last = next((x for x in reversed(nb.rows) if x is not None), None)
        if last is not None:
            return last[0], (last[1] + 1, 1)
    return None, pos


def _to_cells(nb: Notebook, finding: Finding, path: str) -> Finding:
    finding.path = path
    cell, finding.start = _map(nb, finding.start)
    end_cell, end = _map(nb, finding.end)
    finding.end = end if end_cell == cell else finding.start
    finding.cell = cell
    for edit in finding.edits:
        _, edit.start = _map(nb, edit.start)
        _, edit.end = _map(nb, edit.end)
    return finding


def broken_cells(nb: Notebook) -> dict[int, Exception]:
    """Cell number -> why, for each code cell that does not parse on its own."""
    out: dict[int, Exception] = {}
    for cell in nb.cells:
        try:
            checked = precheck(cell.lint_text)
        except Exception as exc:  # noqa: BLE001 - any failure to parse is the cell's NAN001
            out[cell.number] = exc
            continue
        if checked.tree is None:
            try:
                parse(cell.lint_text, checked)  # syntax newer than this Python, which libcst reads?
            except Exception:  # noqa: BLE001 - CPython's error: its message and position
                out[cell.number] = checked.rejected  # type: ignore[assignment]
    return out


def _load_parsable(source: bytes) -> tuple[Notebook, dict[int, Exception]]:
    nb = load(source)
    broken = broken_cells(nb) if is_python(nb.data) else {}
    return (load(source, frozenset(broken)) if broken else nb), broken


def _parse_errors(linter: Linter, nb: Notebook, broken: dict[int, Exception], path: str) -> list[Finding]:
    """NAN001 in each broken cell, at CPython's position (unless ``# nanlint: noqa`` turns it off)."""
    directive = file_directive("\n".join(cell_text(raw.get("source", "")) for raw in nb.data["cells"]
                                                  if isinstance(raw, dict) and raw.get("cell_type") == "code"))
    if not linter.check_parse or directive == NOQA_ALL or (directive and matches(directive, *PARSE_ERROR)):
        return []
    out = []
    for number, exc in sorted(broken.items()):
        message, (row, col) = parse_error_message(exc)
        col += nb.shifts.get((number, row), 0)
        out.append(Finding(*PARSE_ERROR, message, path, (row, col), (row, col), cell=number))
    return out


def lint(linter: Linter, source: bytes, path: str) -> FileResult:
    try:
        nb, broken = _load_parsable(source)
    except NotebookError as exc:
        result = FileResult(path)
        if linter.check_parse:
            result.findings.append(Finding(*PARSE_ERROR, str(exc), path, (1, 1), (1, 1)))
        return result
    if not is_python(nb.data) or not (nb.cells or broken):
        return FileResult(path)
    if broken:  # their shifts are needed for positions too
        nb.shifts.update(load(source).shifts)
    inner = linter.lint_source(nb.combined.encode("utf-8"), path + SUFFIX) if nb.cells else FileResult(path)
    inner.path = path
    inner.findings = [_to_cells(nb, f, path) for f in inner.findings] + _parse_errors(linter, nb, broken, path)
    inner.findings.sort(key=Finding.sort_key)
    return inner


# --- fixing ------------------------------------------------------------------------------------
def fix(linter: Linter, source: bytes, path: str, unsafe: bool) -> FileResult:
    try:
        nb, _ = _load_parsable(source)  # broken cells are left as they are
    except NotebookError:
        return lint(linter, source, path)
    if not is_python(nb.data):
        return FileResult(path)
    if not nb.cells:  # nothing to fix; a broken cell is still reported
        return lint(linter, source, path)
    inner = linter.fix_source(nb.combined.encode("utf-8"), path + SUFFIX, unsafe)
    if inner.fixed_source is None or inner.error:
        result = lint(linter, source, path)
        result.error = inner.error.replace(path + SUFFIX, path) if inner.error else None
        return result
    try:
        new_source = rewrite(source, nb, inner.fixed_source.decode("utf-8"))
    except NotebookError as exc:
        result = lint(linter, source, path)
        result.error = f"{path}: {exc}; notebook left unchanged"
        return result
    result = lint(linter, new_source, path)
    result.fixed = inner.fixed
    result.fixed_codes = inner.fixed_codes
    if new_source != source:
        result.fixed_source = new_source
    return result


def split(nb: Notebook, fixed: str) -> dict[int, str]:
    """Fixed module text -> cell number -> new lint text of that cell."""
    out: dict[int, list[str]] = {}
    current: int | None = None
    head: list[str] = []
    order = []
    for line in split_lines(fixed, keepends=True):
        m = _BOUNDARY.match(line.rstrip("\r\n"))
        if m:
            current = int(m.group(1))
            order.append(current)
            out[current] = []
            continue
        (out[current] if current is not None else head).append(line)
    if order != [c.number for c in nb.cells]:
        raise NotebookError("fixed code could not be mapped back to the cells")
    if head:
        out[order[0]] = head + out[order[0]]
    return {k: "".join(v) for k, v in out.items()}


def _restore(cell: Cell, new_lint_text: str) -> str:
    """The fixed cell with its IPython lines back; error if a fix touched one."""
    if not cell.magic and not cell.wrapped:
        return new_lint_text
    old = split_lines(cell.lint_text, keepends=True)
    if old and not old[-1].endswith("\n"):
        old[-1] += "\n"
    new = split_lines(new_lint_text, keepends=True)
    restored = list(new)
    done = set()
    head = (cell_magic(cell.text) or (None,))[0]
    at = None  # where the cell magic's line is restored
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "replace" and i2 - i1 == j2 - j1:  # a fixed ``%time`` line gets its prefix back
            for k in range(i2 - i1):
                prefix = cell.wrapped.get(i1 + k)
                line = new[j1 + k]
                indent = line[: len(line) - len(line.lstrip(" \t"))]
                if prefix is not None and old[i1 + k].startswith(indent):
                    restored[j1 + k] = indent + prefix + line[len(indent):]
                    done.add(("wrapped", i1 + k))
        if tag != "equal":
            continue
        for k in range(i2 - i1):
            if i1 + k in cell.magic:
                original = cell.magic[i1 + k]
                if not original.endswith("\n"):
                    original += "\n"
                restored[j1 + k] = original
                done.add(i1 + k)
                if i1 + k == head:
                    at = j1 + k
            elif i1 + k in cell.wrapped:
                line = restored[j1 + k]
                indent = line[: len(line) - len(line.lstrip(" \t"))]
                restored[j1 + k] = indent + cell.wrapped[i1 + k] + line[len(indent):]
                done.add(("wrapped", i1 + k))
    if done != set(cell.magic) | {("wrapped", i) for i in cell.wrapped}:
        raise NotebookError(f"a fix touched an IPython line in cell {cell.number}")
    if at is not None and any(line.strip() for line in restored[:at]):  # an import a fix put on top
        restored.insert(0, restored.pop(at))  # goes after ``%%time``: IPython reads the magic on line 1
    return "".join(restored)


def rewrite(source: bytes, nb: Notebook, fixed: str) -> bytes:
    texts = split(nb, fixed)
    data = json.loads(source.decode("utf-8-sig"))
    dump = json_layout(source)
    changed = False
    for cell in nb.cells:
        new = _restore(cell, texts[cell.number])
        if not cell.text.endswith("\n") and new.endswith("\n"):
            new = new[:-1]
        if new == cell.text:
            continue
        changed = True
        raw = data["cells"][cell.index]
        raw["source"] = new.splitlines(keepends=True) if isinstance(raw.get("source"), list) else new
    if not changed:
        return source
    return dump(data)


def json_layout(source: bytes):
    """A function writing JSON exactly as ``source`` is written (indent, escaping, separators,
    line endings, final newline, BOM); NotebookError when none reproduces it byte for byte."""
    bom = b"\xef\xbb\xbf" if source.startswith(b"\xef\xbb\xbf") else b""
    text = source[len(bom):].decode("utf-8")
    data = json.loads(text)
    newline = "\r\n" if "\r\n" in text else "\n"
    body = text.rstrip("\r\n \t")
    tail = text[len(body):]
    m = re.match(r"[\[{]\r?\n([ \t]+)", body)
    indents = [m.group(1)] if m else [None]
    for indent in indents:
        seps = [(",", ": ")] if indent is not None else [(", ", ": "), (",", ":")]
        for separators in seps:
            for ensure_ascii in (False, True):
                def dump(obj, indent=indent, separators=separators, ensure_ascii=ensure_ascii) -> bytes:
                    out = json.dumps(obj, indent=indent, separators=separators, ensure_ascii=ensure_ascii)
                    if newline != "\n":
                        out = out.replace("\n", newline)
                    return bom + (out + tail).encode("utf-8")
                if dump(data) == source:
                    return dump
    raise NotebookError("its JSON layout cannot be reproduced exactly")


def skipped_cells(source: bytes) -> list[str]:
    """``cell 3 skipped (%%bash: not Python)`` for each code cell left out of the lint."""
    try:
        nb = load(source)
    except NotebookError:
        return []
    if not is_python(nb.data):
        return []
    return [f"cell {index + 1} skipped ({why})" for index, raw in enumerate(nb.data["cells"])
            if isinstance(raw, dict) and raw.get("cell_type") == "code"
            and (why := skip_reason(cell_text(raw.get("source", ""))))]


# --- showing a fix ----------------------------------------------------------------------------
def code_cells(source: bytes) -> dict[int, str]:
    """Cell number -> source as written in the file, for every code cell (magic lines and
    ``%%`` cells included: this is what a person reads, not what is linted)."""
    nb = load(source)
    return {Cell(index, "").number: cell_text(raw.get("source", ""))
            for index, raw in enumerate(nb.data["cells"])
            if isinstance(raw, dict) and raw.get("cell_type") == "code"}


def _lines(text: str) -> list[str]:
    """Split at ``\\n`` only (a form feed or U+2028 inside a line is not a line break)."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def diff(path: str, before: bytes, after: bytes) -> str:
    """A unified diff of each code cell whose source differs between the two notebook files,
    headed ``--- PATH:cell N`` / ``+++ PATH:cell N``; nothing for unchanged cells."""
    old, new = code_cells(before), code_cells(after)
    out = []
    for number in sorted(old.keys() | new.keys()):
        a, b = old.get(number, ""), new.get(number, "")
        if a == b:
            continue
        a_lines, b_lines = _lines(a), _lines(b)
        # Jupyter stores a cell without its final newline: add it to both sides for display
        # unless the fix changed exactly that, which then shows as git shows it
        if not a.endswith("\n") and not b.endswith("\n"):
            a_lines = [line if line.endswith("\n") else line + "\n" for line in a_lines]
            b_lines = [line if line.endswith("\n") else line + "\n" for line in b_lines]
        name = f"{path}:cell {number}"
        for line in difflib.unified_diff(a_lines, b_lines, fromfile=name, tofile=name):
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of cell\n")
    return "".join(out)
