"""The harness's outputs: a table on stdout and a JSON report."""

from __future__ import annotations

import json
import math
import re
import textwrap
from pathlib import Path

from nanlint.harness import reference as references
from nanlint.harness.fixtures import Fixture
from nanlint.harness.verify import Result

# "max diff": benign cases, fixed vs unfixed; "vs ref": hazard cases, fixed vs the exact
# reference (float64 run or closed form), or "none" where the fixture says why none exists
COLUMNS = ("status", "rule", "framework", "device", "case", "criterion", "unfixed", "fixed", "max diff", "vs ref")


def _diff(value: float | None) -> str:
    if value is None:
        return "-"
    return "inf" if math.isinf(value) else f"{value:.2g}"


def rows(result: Result) -> list[tuple[str, ...]]:
    out = []
    for f in result.fixtures:
        fw = f.framework + (f" ({f.path.stem})" if f.path.stem != f.framework else "")
        if not f.cases:
            out.append((f.status, f.rule, fw, f.device, "-", "-", "-", "-", "-", "-"))
        for c in f.cases:
            status = "skip" if f.skipped else "ok" if c.ok and f.ok else "FAIL" if not c.ok else "ok*"
            fixed = c.fixed + (" (compute_manual)" if f.mode == "manual" and c.fixed != "-" else "")
            benign = _diff(c.max_abs_diff) if c.kind == "benign" else "-"
            out.append((status, f.rule, fw, c.device, c.name, c.criterion, c.unfixed, fixed, benign,
                        references.shown(c)))
    return out


WIDTH = 120  # the table's rows fit a terminal this wide: a longer cell wraps within its column
_MIN_CELL = 10


def fit(body: list[tuple[str, ...]], width: int = WIDTH) -> list[int]:
    """Column widths whose rows fit ``width`` (the widest columns shrink first)."""
    widths = [max(len(r[i]) for r in body) for i in range(len(body[0]))]
    while sum(widths) + 2 * (len(widths) - 1) > width and max(widths) > _MIN_CELL:
        widths[widths.index(max(widths))] -= 1
    return widths


def _wrapped(row: tuple[str, ...], widths: list[int]) -> list[str]:
    """One table row as lines: a cell longer than its column wraps onto the next lines, whole."""
    cells = [[c] if len(c) <= w else textwrap.wrap(c, w, break_on_hyphens=False) or [""]
             for c, w in zip(row, widths)]
    return ["  ".join((cell[i] if i < len(cell) else "").ljust(w) for cell, w in zip(cells, widths)).rstrip()
            for i in range(max(map(len, cells)))]


def verdict(result: Result) -> str:
    """The table's last line: PASSED, FAILED, or that no case ran (a failure unless --allow-empty)."""
    if result.empty and not result.problems and not any(f.failed for f in result.fixtures):
        return "nothing verified" if result.ok else \
            "FAILED: nothing verified (no case ran; pass --allow-empty if that is what you meant)"
    return "PASSED" if result.ok else "FAILED"


def table(result: Result) -> str:
    """The table, then every failure's reasons, then a summary line."""
    body = [COLUMNS, *rows(result)]
    widths = fit(body)
    lines = [line for r in body for line in _wrapped(r, widths)]
    lines.insert(1, "  ".join("-" * w for w in widths))
    failed = [f for f in result.fixtures if f.failed]
    skipped = [f for f in result.fixtures if f.skipped is not None]
    if skipped:
        lines += ["", "SKIPPED (--allow-missing, or a framework version outside the fixture's REQUIRES):"]
        for why in sorted({f.skipped for f in skipped}):
            n = sum(1 for f in skipped if f.skipped == why)
            lines.append(f"  {why}: {n} fixture(s) NOT verified")
    unreferenced = [(f, c) for f in result.fixtures for c in f.cases if c.reference.startswith(references.NONE)]
    if unreferenced:
        lines += ["", "NO REFERENCE (hazard cases whose fixed values cannot be compared with exact ones; the "
                      "fixture says why):"]
        for why in dict.fromkeys(c.reference for _, c in unreferenced):
            ids = ", ".join(f"{f.id} {c.name}" for f, c in unreferenced if c.reference == why)
            lines += textwrap.wrap(f"{ids}: {why.split(': ', 1)[1]}", 118, initial_indent="  ",
                                   subsequent_indent="      ")
    if failed:
        lines += ["", "FAILURES:"]
        for f in failed:
            lines.append(f"  {f.id} ({f.framework}):")
            for e in f.errors:
                lines += ["    - " + line if i == 0 else "      " + line for i, line in enumerate(e.splitlines())]
            for c in f.cases:
                for p in c.problems:
                    lines += [f"    - {c.name}: " + line if i == 0 else "      " + line
                              for i, line in enumerate(p.splitlines())]
            if f.combined is not None and not f.combined.ok:
                comb = f.combined
                head = f"combined fix ({comb.selection})"
                for e in comb.errors:
                    lines += [f"    - {head}: " + line if i == 0 else "      " + line
                              for i, line in enumerate(e.splitlines())]
                for c in comb.cases:
                    for p in c.problems:
                        lines += [f"    - {head}, {c.name}: " + line if i == 0 else "      " + line
                                  for i, line in enumerate(p.splitlines())]
                if comb.diff:
                    lines += ["      " + line for line in comb.diff.rstrip("\n").splitlines()]
    differ = [f for f in result.fixtures if f.combined is not None and f.combined.identical is False]
    if differ:
        lines += ["", "COMBINED FIX (all default rules, plus the fixture's rule when opt-in, --fix --unsafe-fixes) "
                      "differs from the rule-alone fix:"]
        for f in differ:
            c = f.combined
            status = "FAIL" if not c.ok and (f.skipped is None or c.errors) else "skip" if f.skipped else "ok"
            fixed_by = ", ".join(f"{code} x{n}" for code, n in c.rules_fixed.items()) or "?"
            what = {"fix": "hazards fixed, benign values kept", "keep": f"{f.rule} still reported, benign values kept",
                    }.get(c.mode, c.mode)
            n_ok = sum(1 for x in c.cases if x.ok)
            lines.append(f"  {status:<4}  {f.id}: fixed by {fixed_by}; {what} ({n_ok}/{len(c.cases)} cases ok)")
    for p in result.problems:
        lines += ["", "PROBLEM: " + p]
    for n in result.meta.get("notes", []):
        lines += ["", "note: " + n]
    cases = sum(len(f.cases) for f in result.fixtures)
    fws = ", ".join(f"{name} {info.get('versions', {}).get(name, '')} on {info.get('device') or info['status']}".strip()
                    + (f" (python {info.get('python')}: {info['interpreter']})" if info.get("interpreter") else "")
                    for name, info in sorted(result.frameworks.items()))
    lines += ["", f"{len(result.fixtures)} fixtures, {cases} cases: {len(failed)} failed, {len(skipped)} skipped"
                  f" ({result.seconds:g} s; {fws or 'no framework ran'})",
              verdict(result)]
    return "\n".join(lines) + "\n"


def shown(path) -> str:
    """``path`` relative to the working directory when it is under it (reports get committed)."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def fixture_dict(f: Fixture) -> dict:
    return {
        "id": f.id,
        "rule": f.rule,
        "name": f.slug,
        "framework": f.framework,
        "path": shown(f.path),
        "status": f.status,
        "ok": f.ok,
        "skipped": f.skipped,
        "requires": f.requires,
        "requires_unmet": f.requires_unmet,
        "mode": f.mode,
        "device": f.device,
        "tolerance": f.tolerance,
        "reference_source": f.reference_source,
        "reference_tolerance": f.reference_tolerance if f.reference_tolerance is not None else f.tolerance,
        "errors": f.errors,
        "notes": f.notes,
        "fix_diff": f.diff,
        "still_reported": _findings(f.findings_before),
        "findings_after": _findings(f.findings_after),
        "combined": combined_dict(f),
        "cases": [case_dict(c) for c in f.cases],
    }


def _findings(found: list[dict]) -> list[dict]:
    """nanlint's JSON findings, as the report keeps them: row, message, fix applicability."""
    return [{"row": x["location"]["row"], "message": x["message"],
             "fix": (x.get("fix") or {}).get("applicability")} for x in found]


def combined_dict(f: Fixture) -> dict | None:
    """The combined fix (all default rules, plus the fixture's rule when opt-in): whether its
    text is identical to the rule-alone copy's, and if not, its own outcome."""
    c = f.combined
    if c is None:
        return None
    return {
        "selection": c.selection,
        "identical": c.identical,
        "mode": c.mode,
        "ok": c.ok,
        "rules_fixed": c.rules_fixed,
        "still_reported": _findings(c.still_reported),
        "errors": c.errors,
        "diff_vs_rule_alone": c.diff,
        "cases": [case_dict(x) for x in c.cases],
    }


def _number(x: float | None):
    return None if x is None else x if math.isfinite(x) else "inf"


def case_dict(c) -> dict:
    return {
        "case": c.name,
        "kind": c.kind,
        "criterion": c.criterion,
        "observed": c.observed,
        "ok": c.ok,
        "device": c.device,
        "unfixed": c.unfixed,
        "fixed": c.fixed,
        "max_abs_diff": _number(c.max_abs_diff),
        "reference": c.reference,
        "reference_max_err": _number(c.ref_err),
        "problems": c.problems,
        "outputs": {side: run.get("outputs") if run and "outputs" in run else run
                    for side, run in c.raw.items()},
    }


def to_json(result: Result) -> dict:
    return {
        "ok": result.ok,
        "seconds": result.seconds,
        **result.meta,
        "paths": [shown(p) for p in result.meta.get("paths", [])],
        "frameworks": result.frameworks,
        "problems": result.problems,
        "summary": {
            "fixtures": len(result.fixtures),
            "cases": sum(len(f.cases) for f in result.fixtures),
            "nothing_verified": result.empty,
            "failed": sum(1 for f in result.fixtures if f.failed),
            "skipped": sum(1 for f in result.fixtures if f.skipped is not None),
            "hazard_cases": sum(1 for f in result.fixtures for c in f.cases if c.kind == "hazard"),
            "hazard_vs_reference": sum(1 for f in result.fixtures for c in f.cases
                                       if c.kind == "hazard" and c.ref_err is not None),
            "hazard_no_reference": sum(1 for f in result.fixtures for c in f.cases
                                       if c.kind == "hazard" and c.reference.startswith(references.NONE)),
            "combined_differs": sum(1 for f in result.fixtures if f.combined is not None
                                    and f.combined.identical is False),
            "combined_failed": sum(1 for f in result.fixtures if f.combined is not None and not f.combined.ok
                                   and f.combined.mode != "-" and f.skipped is None),
        },
        "fixtures": [fixture_dict(f) for f in result.fixtures],
    }


def dumps(result: Result) -> str:
    """Indented JSON, with each case's outputs on one line (a report stays readable and diffable)."""
    data = to_json(result)
    compact: list[str] = []
    for f in data["fixtures"]:
        for c in f["cases"] + ((f["combined"] or {}).get("cases") or []):
            compact.append(json.dumps(c["outputs"], allow_nan=False, separators=(", ", ": ")))
            c["outputs"] = f"@@outputs-{len(compact) - 1}@@"
    text = json.dumps(data, indent=1, allow_nan=False)
    return re.sub(r'"@@outputs-(\d+)@@"', lambda m: compact[int(m.group(1))], text) + "\n"
