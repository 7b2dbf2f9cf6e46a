"""GitLab Code Quality report (``artifacts: reports: codequality``): a JSON array of issues
with description, check_name, fingerprint (stable when lines move: the baseline's),
severity, and location.path (relative) + location.lines.begin."""

from __future__ import annotations

import json

from nanlint.report._run import Run
from nanlint.lint import baseline

EDITS = False  # shows whether a finding is fixable, never the edits (nanlint.report.shows_edits)


def render(run: Run) -> str:
    fps = baseline.fingerprints(run.findings, run.cwd)
    issues = []
    for f, fp in zip(run.findings, fps):
        description = f"{f.code} {f.message}"
        begin, end = f.start[0], max(f.end[0], f.start[0])
        if f.cell is not None:
            description = f"cell {f.cell}, line {f.start[0]}: {description}"
            begin = end = 1  # GitLab's lines are the notebook's JSON lines
        issues.append({
            "type": "issue",
            "description": description,
            "check_name": f.code,
            "categories": ["Bug Risk"],
            "fingerprint": fp,
            "severity": "major",
            "location": {"path": run.display_path(f.path), "lines": {"begin": begin, "end": end}},
        })
    return json.dumps(issues, indent=2) + "\n"
