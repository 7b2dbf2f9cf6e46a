"""IPython's syntax in a notebook cell, masked so the cell parses as Python: line magics,
shell escapes and help queries become a placeholder of the same length; a line magic
that wraps Python (``%time y = f(x)``) keeps its code; a cell magic whose body is Python
(``%%time``, ``%%timeit``, ``%%capture``, ``%%prun``, ``%%debug``) keeps its body, any
other cell magic is skipped and :func:`skip_reason` says why."""

from __future__ import annotations

import re

from nanlint.source.lines import split_lines

_LINE_MAGIC = re.compile(r"^\s*(%|!|\?)")
_HELP = re.compile(r"^\s*[A-Za-z_][\w.]*(\(\))?\?{1,2}\s*$")
_ASSIGN_MAGIC = re.compile(r"^\s*[A-Za-z_][\w.]*(\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*(%|!)")
_CELL_MAGIC = re.compile(r"^\s*%%(?P<name>!|[^ \t\r\n]*)")
# cell magics whose body IPython runs as Python in the kernel (transform_cell / run_cell)
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
# IPython's other built-in cell magics: the body is another language or a file's text ...
_NOT_PYTHON = frozenset({"!", "bash", "sh", "script", "system", "sx", "perl", "ruby", "html", "HTML", "svg", "SVG",
                         "javascript", "js", "latex", "markdown", "writefile", "file"})
_SUBPROCESS = frozenset({"python", "python2", "python3", "pypy"})  # ... or Python run in another process
# line magics whose argument is a Python statement: ``%time``/``%timeit`` [options] code
_WRAPPING_MAGIC = re.compile(r"^(?P<indent>[ \t]*)(?P<magic>%(?:time|timeit)(?:[ \t]+-[A-Za-z](?:[ \t]*\d+)?)*[ \t]+)"
                             r"(?=\S)")


def _placeholder(line: str) -> str:
    body = line.rstrip("\r\n")
    indent = body[: len(body) - len(body.lstrip())]
    stub = "pass" if len(body) - len(indent) >= 4 else "0"  # same length as the line it replaces
    return (indent + stub).ljust(len(body)) + line[len(body):]


def cell_magic(text: str) -> tuple[int, str] | None:
    """(row, name) of the cell magic a cell starts with (``%%timeit -n 10`` -> ``timeit``),
    0-based row of its first non-blank line; None for a cell without one."""
    lines = split_lines(text)
    row = next((i for i, line in enumerate(lines) if line.strip()), None)
    m = _CELL_MAGIC.match(lines[row]) if row is not None else None
    return (row, m.group("name")) if m else None  # type: ignore[index]


def skip_reason(text: str) -> str | None:
    """Why a cell is left out of the lint (``%%bash: not Python``), None when it is linted."""
    found = cell_magic(text)
    if found is None or found[1] in PYTHON_CELL_MAGICS:
        return None
    name = found[1]
    why = ("not Python" if name in _NOT_PYTHON else "Python in another process" if name in _SUBPROCESS
           else "unknown cell magic")
    return f"%%{name}: {why}"


def mask_magics(text: str, wrapped: dict[int, str] | None = None) -> tuple[str, dict[int, str]] | None:
    """``text`` with IPython lines replaced by same-length placeholders, and the originals;
    None for a cell whose cell magic's body is not Python (left out whole).  A line magic
    wrapping a statement (``%time y = f(x)``) keeps the statement, its prefix cut off and
    recorded in ``wrapped``; a Python cell magic's line (``%%time``) is masked."""
    lines = split_lines(text, keepends=True)
    if skip_reason(text) is not None:
        return None
    head = (cell_magic(text) or (None,))[0]
    out, magic = [], {}
    continued = False  # the previous line was a magic ending in a backslash
    depth, quote, joined = 0, None, False  # Python state at the start of the line
    for i, line in enumerate(lines):
        body = line.rstrip("\r\n")
        if i == head:  # ``%%time``: IPython takes the whole line, options and all
            magic[i] = line
            out.append(_placeholder(line))
            continue
        at_statement = depth == 0 and quote is None and not joined
        m = _WRAPPING_MAGIC.match(body) if at_statement and not continued and wrapped is not None else None
        if m is not None and not body.endswith("\\"):
            wrapped[i] = m.group("magic")  # type: ignore[index]
            line = m.group("indent") + line[m.end():]
            body = line.rstrip("\r\n")
        elif continued or (at_statement and (_LINE_MAGIC.match(body) or _HELP.match(body)
                                           or _ASSIGN_MAGIC.match(body))):
            magic[i] = line
            out.append(_placeholder(line) if not continued else " " * len(body) + line[len(body):])
            continued = body.endswith("\\")
            continue
        out.append(line)
        depth, quote = _scan(body, depth, quote)
        joined = quote is None and body.endswith("\\")
    return "".join(out), magic


def _scan(line: str, depth: int, quote: str | None) -> tuple[int, str | None]:
    """Bracket depth and open string after ``line`` (IPython lines are only recognised where
    a statement starts: ``% y`` continuing a bracketed expression is Python)."""
    i = 0
    while i < len(line):
        c = line[i]
        if quote is not None:
            if c == "\\":
                i += 2
                continue
            if line.startswith(quote, i):
                i += len(quote)
                quote = None
                continue
            i += 1
            continue
        if c == "#":
            break
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth = max(0, depth - 1)
        elif c in "\"'":
            quote = c * 3 if line.startswith(c * 3, i) else c
            i += len(quote)
            continue
        i += 1
    if quote in ("'", '"') and not line.endswith("\\"):
        quote = None  # an unterminated one-line string: a syntax error the parser will report
    return depth, quote
