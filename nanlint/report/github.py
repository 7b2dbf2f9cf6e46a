"""GitHub Actions workflow commands: one ``::error`` annotation per finding.

Syntax and escaping as GitHub documents them for workflow commands: in the message
``%`` -> ``%25``, CR -> ``%0D``, LF -> ``%0A``; in properties also ``:`` -> ``%3A`` and
``,`` -> ``%2C``.  A notebook finding names the cell in its message (GitHub's lines are
the notebook's JSON lines) and carries no line."""

from __future__ import annotations

import os
from pathlib import Path

from nanlint.report._run import Run

EDITS = False  # shows whether a finding is fixable, never the edits (nanlint.report.shows_edits)


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def file_of(run: Run, path: str) -> str:
    """Relative to the repository (``GITHUB_WORKSPACE``) when running in Actions, else to
    the working directory: GitHub matches annotations to files by repository path."""
    workspace = os.environ.get("GITHUB_WORKSPACE")
    if workspace:
        try:
            return Path(path).absolute().relative_to(Path(workspace).absolute()).as_posix()
        except ValueError:
            pass
    return run.display_path(path)


def annotation(run: Run, f) -> str:
    props = [("file", file_of(run, f.path))]
    message = f"{f.code} {f.message}"
    if f.cell is None:
        props += [("line", str(f.start[0])), ("col", str(f.start[1])),
                  ("endLine", str(f.end[0])), ("endColumn", str(f.end[1]))]
    else:
        message = f"cell {f.cell}, line {f.start[0]}, col {f.start[1]}: {message}"
    props.append(("title", f.code))
    head = ",".join(f"{k}={escape_property(v)}" for k, v in props)
    return f"::error {head}::{escape_data(message)}"


def render(run: Run) -> str:
    return "".join(annotation(run, f) + "\n" for f in run.findings)
