"""A list of findings in the schema of ``ruff check --output-format json``, plus ``name``."""

from __future__ import annotations

import json
import os

from nanlint.findings import Finding
from nanlint.report._run import Run, rule_url, statistics_rows


def finding_dict(f: Finding) -> dict:
    fix = None
    if f.fix_applicability is not None:
        fix = {
            "applicability": f.fix_applicability,
            "message": f.fix_message,
            "edits": [
                {"content": e.content,
                 "location": {"row": e.start[0], "column": e.start[1]},
                 "end_location": {"row": e.end[0], "column": e.end[1]}}
                for e in f.edits
            ],
        }
    return {
        "cell": f.cell,
        "code": f.code,
        "name": f.name,
        "message": f.message,
        "filename": os.path.abspath(f.path),
        "location": {"row": f.start[0], "column": f.start[1]},
        "end_location": {"row": f.end[0], "column": f.end[1]},
        "fix": fix,
        "noqa_row": f.noqa_row,
        "url": rule_url(f.code, f.name),
        "may": f.may,  # on weak evidence (the may tier, shown with --may)
    }


def render(run: Run) -> str:
    return json.dumps([finding_dict(f) for f in run.findings], indent=2) + "\n"


def statistics(run: Run) -> str:
    return json.dumps([{"code": code, "name": name, "count": count, "fixable": fixable}
                       for code, name, count, fixable in statistics_rows(run)], indent=2) + "\n"
