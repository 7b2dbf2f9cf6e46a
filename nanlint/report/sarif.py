"""SARIF 2.1.0 (``--format sarif``), for GitHub code scanning and other SARIF viewers.

``tool.driver.rules`` carries every rule: id, name, short description (the rule's
summary), full description (its page's "What it does"), help (the whole page, text and
markdown) and, once the pages are published, helpUri.  Each result has the rule, level, message, location (path relative
to the working directory, 1-based region), the baseline fingerprint as a partial
fingerprint (stable when lines move), and the fix as SARIF ``fixes``."""

from __future__ import annotations

import json
import re

from nanlint import __version__
from nanlint.lint import catalogue
from nanlint.report import _run as run_mod
from nanlint.report._run import Run
from nanlint.lint import baseline
from nanlint.rules.base import all_rules

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _section(text: str, title: str) -> str:
    m = re.search(rf"^## {re.escape(title)}\s*\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    return " ".join(m.group(1).split()) if m else ""


def rule_descriptor(rule) -> dict:
    page = catalogue.pages().get(rule.code)
    what = _section(page.text, "What it does") if page else ""
    descriptor = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": what or rule.summary},
        "defaultConfiguration": {"level": "error", "enabled": bool(rule.default)},
        "properties": {"fix": rule.fix or "none", "frameworks": list(rule.frameworks)},
    }
    url = run_mod.rule_url(rule.code, rule.name)
    if url:
        descriptor["helpUri"] = url
    if page is not None:
        descriptor["help"] = {"text": page.text, "markdown": page.text}
    return descriptor


def _region(start, end) -> dict:
    return {"startLine": start[0], "startColumn": start[1], "endLine": end[0], "endColumn": end[1]}


def result(run: Run, f, index: dict[str, int], fingerprint: str) -> dict:
    uri = run.display_path(f.path)
    physical: dict = {"artifactLocation": {"uri": uri}}
    message = f.message
    if f.cell is None:
        physical["region"] = _region(f.start, f.end)
    else:
        message = f"cell {f.cell}, line {f.start[0]}, col {f.start[1]}: {message}"
    out = {
        "ruleId": f.code,
        "level": "warning" if f.may else "error",  # the may tier: weak evidence
        "message": {"text": message},
        "locations": [{"physicalLocation": physical}],
        "partialFingerprints": {"nanlint/v1": fingerprint},
    }
    if f.code in index:
        out["ruleIndex"] = index[f.code]
    if f.cell is not None:
        out["properties"] = {"cell": f.cell, "cellLine": f.start[0], "cellColumn": f.start[1]}
    if f.edits and f.fix_applicability is not None and f.cell is None:
        out["fixes"] = [{
            "description": {"text": f"{f.fix_message or 'Fix'} ({f.fix_applicability} fix)"},
            "artifactChanges": [{
                "artifactLocation": {"uri": uri},
                "replacements": [{"deletedRegion": _region(e.start, e.end),
                                  "insertedContent": {"text": e.content}} for e in f.edits],
            }],
        }]
    return out


def render(run: Run) -> str:
    rules = list(all_rules())
    index = {r.code: i for i, r in enumerate(rules)}
    fps = baseline.fingerprints(run.findings, run.cwd)
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "nanlint", "version": __version__, "semanticVersion": __version__,
                                **({"informationUri": run_mod.HOMEPAGE} if run_mod.HOMEPAGE else {}),
                                "rules": [rule_descriptor(r) for r in rules]}},
            "columnKind": "unicodeCodePoints",
            "results": [result(run, f, index, fp) for f, fp in zip(run.findings, fps)],
        }],
    }
    return json.dumps(log, indent=2) + "\n"
