"""One JSON object per line (``ruff --output-format json-lines``): the objects of ``json``."""

from __future__ import annotations

import json

from nanlint.report._run import Run
from nanlint.report.json import finding_dict


def render(run: Run) -> str:
    return "".join(json.dumps(finding_dict(f)) + "\n" for f in run.findings)
