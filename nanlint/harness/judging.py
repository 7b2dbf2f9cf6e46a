"""Judging: the verdict on each case (hazard NaN/Inf unfixed and finite, exact fixed; benign
values kept) and on each fixture, from what its worker reported.  Standard library only."""

from __future__ import annotations

import math

from nanlint.harness import reference as references
from nanlint.harness.fixtures import Case, Fixture
from nanlint.harness.values import compare, describe, g as _g, nonfinite


CRITERIA = ("nonfinite", "raises", "reference")


def _raised(run: dict) -> str:
    return f"raises {run.get('exception') or 'an exception'}" + (f": {run['message']}" if run.get("message") else "")


def judge_case(name: str, raw: dict, tolerance: float, has_fixed: bool, criterion: str = "nonfinite",
               reference: dict | None = None) -> Case:
    """One case's verdict from the worker's raw results (``{"unfixed": run, "fixed": run}``,
    plus ``"reference": run``). ``criterion`` is what a hazard case must show unfixed:
    ``nonfinite`` (a NaN/Inf in some output), ``raises`` (compute raises), ``reference``
    (some output is farther than the tolerance from the exact reference values). Benign
    cases ignore it. ``reference`` (``{"source", "why_none", "tolerance"}``, see
    :mod:`nanlint.harness.reference`): a hazard case's fixed side must also match its
    reference, values and gradients; None skips that check (unit tests of one criterion)."""
    kind = "hazard" if name.startswith("hazard") else "benign" if name.startswith("benign") else "invalid"
    unfixed, fixed, ref = raw.get("unfixed"), raw.get("fixed"), raw.get("reference")
    case = Case(name, kind, unfixed=describe(unfixed), fixed=describe(fixed), raw=raw,
                criterion=criterion if kind == "hazard" else "equal" if kind == "benign" else "-")
    devices = [r["device"] for r in (unfixed, fixed) if r and "device" in r]
    case.device = " | ".join(dict.fromkeys(devices)) or "-"
    p = case.problems
    if kind == "invalid":
        p.append(f"case name {name!r} must start with 'hazard' or 'benign'")
    if criterion not in CRITERIA:
        p.append(f"unknown criterion {criterion!r} in EXPECT: choose one of {', '.join(CRITERIA)}")
    elif criterion != "nonfinite" and kind != "hazard":
        p.append(f"EXPECT gives the criterion {criterion!r} to a {kind} case: only hazard* cases take one")
    raises = kind == "hazard" and criterion == "raises"
    if unfixed is None or ("error" in unfixed and not raises):
        p.append("the unfixed code raised:\n" + (unfixed or {}).get("error", "not run"))
    if fixed is not None and "error" in fixed:
        p.append("the fixed code raised:\n" + fixed["error"])
    elif fixed is None and has_fixed:
        p.append("the fixed code did not run")
    ok_runs = unfixed is not None and "error" not in unfixed
    if raises and unfixed is not None:
        if ok_runs:
            case.observed = "no exception"
            p.append("proves nothing: the unfixed code does not raise on this hazard case (criterion 'raises')")
        else:
            case.observed = _raised(unfixed)
            case.unfixed = case.observed.split(":")[0]
    if kind == "hazard" and criterion == "nonfinite" and ok_runs:
        case.observed = "; ".join(nonfinite(unfixed)) or "finite"
        if not nonfinite(unfixed):
            p.append("proves nothing: the unfixed code is finite on this hazard case (values and gradients); "
                     "choose inputs that make it NaN/Inf")
    if kind == "hazard" and criterion == "reference":
        if ref is None or "error" in ref:
            p.append("reference(case) did not give the exact values:\n" + (ref or {}).get("error", "not run"))
        elif nonfinite(ref):
            p.append(f"the reference is not finite: {'; '.join(nonfinite(ref))}")
        else:
            if ok_runs:
                err, mismatches = compare(ref, unfixed, tolerance, "the unfixed code differs from the reference in")
                case.observed = f"max err {_g(err)} vs reference"
                case.unfixed = f"{describe(unfixed)}; {case.observed}"
                if not mismatches:
                    p.append(f"proves nothing: the unfixed code already matches the reference within the tolerance "
                             f"{tolerance:g} (max err {_g(err)}); choose inputs where it is wrong")
            if fixed is not None and "error" not in fixed:
                case.max_abs_diff, mismatches = compare(ref, fixed, tolerance,
                                                        "the fixed code misses the reference in")
                case.fixed = f"{describe(fixed)}; max err {_g(case.max_abs_diff)} vs reference"
                p.extend(mismatches)
    if kind == "benign" and ok_runs and nonfinite(unfixed):
        p.append(f"a benign case must be finite unfixed, got {'; '.join(nonfinite(unfixed))}")
    if fixed is not None and "error" not in fixed:
        if nonfinite(fixed):
            p.append(f"still not finite after the fix: {'; '.join(nonfinite(fixed))}")
        if kind == "benign" and ok_runs:
            case.max_abs_diff, mismatches = compare(unfixed, fixed, tolerance)
            p.extend(mismatches)
        elif kind == "hazard" and ok_runs and set(fixed["outputs"]) != set(unfixed["outputs"]):
            p.append(f"the fixed code returns other outputs: {sorted(fixed['outputs'])} vs {sorted(unfixed['outputs'])}")
    if not has_fixed:
        p.append("no fixed version ran (see the fixture's errors)")
    if kind == "hazard" and reference is not None:
        if criterion == "reference":  # compared above, against the fixture's tolerance
            case.reference, case.ref_err = reference["source"] or "missing", case.max_abs_diff
        else:
            references.check(case, ref, fixed, reference["source"], reference["why_none"], reference["tolerance"])
    case.ok = not p
    return case


def _kept_hazard(name: str, sides: dict, rule: str, ran: bool) -> Case:
    """A hazard case of a display-only fixture whose combined copy other rules changed while
    ``rule`` is still reported: the hazard is the user's to fix by hand (compute_manual is
    proven on the rule-alone side), so it is recorded, not judged; only a combined copy that
    raises where the unfixed code did not (another fix broke the program) fails it."""
    unfixed, fixed = sides.get("unfixed"), sides.get("fixed")
    case = Case(name, "hazard", unfixed=describe(unfixed), fixed=describe(fixed), raw=sides,
                criterion="still reported", observed=f"{rule} still reported (display-only)")
    devices = [r["device"] for r in (unfixed, fixed) if r and "device" in r]
    case.device = " | ".join(dict.fromkeys(devices)) or "-"
    if not ran or fixed is None:
        case.problems.append("the combined copy did not run")
    elif "error" in fixed and unfixed is not None and "error" not in unfixed:
        case.problems.append("the combined copy raised where the unfixed code did not:\n" + fixed["error"])
    case.ok = not case.problems
    return case


def _reference_plan(f: Fixture, raw: dict):
    """From the worker's reference plan: case name -> what judge_case compares a hazard with."""
    tol = raw.get("reference_tolerance")
    if isinstance(tol, (int, float)) and math.isfinite(tol) and tol >= 0:
        f.reference_tolerance = float(tol)
    elif tol is not None:
        f.errors.append(f"REFERENCE_TOLERANCE must be a non-negative number, got {tol!r}")
    plan = raw.get("reference") or {}
    f.reference_source = plan.get("source")
    none = plan.get("no_reference") or {}
    if isinstance(none, dict):
        for name in sorted(set(none) - {n for n in raw.get("cases", {}) if n.startswith("hazard")}):
            f.errors.append(f"NO_REFERENCE names {name!r}, which is not a hazard case in CASES")
    tolerance = f.reference_tolerance if f.reference_tolerance is not None else f.tolerance

    def refer(name: str) -> dict:
        why = none.get(name) if isinstance(none, dict) else none
        return {"source": f.reference_source, "why_none": why, "tolerance": tolerance}

    return refer


def judge_fixture(f: Fixture, raw: dict) -> None:
    if "error" in raw:
        f.errors.append(raw["error"])
    f.sweeps = raw.get("sweeps")  # --plot only (None otherwise): harness.plot draws it
    if isinstance(raw.get("requires"), dict):
        f.requires = raw["requires"]
    if raw.get("requires_unmet"):  # the worker's framework is outside REQUIRES: nothing ran
        f.requires_unmet = True
        f.skipped = raw["requires_unmet"]
        return
    tol = raw.get("tolerance")
    if isinstance(tol, (int, float)) and math.isfinite(tol) and tol >= 0:
        f.tolerance = float(tol)
    elif tol is not None:
        f.errors.append(f"TOLERANCE must be a non-negative number, got {tol!r}")
    has_fixed = bool(raw.get("fixed_ran"))
    expect = raw.get("expect", {})
    if not isinstance(expect, dict):
        f.errors.append(f"EXPECT must be a dict of case name -> criterion ({', '.join(CRITERIA)}), got {expect}")
        expect = {}
    for name in sorted(set(expect) - set(raw.get("cases", {}))):
        f.errors.append(f"EXPECT names {name!r}, which is not a case in CASES")
    cases = raw.get("cases", {})
    refer = _reference_plan(f, raw)
    f.cases = [judge_case(name, {k: v for k, v in c.items() if k != "combined"}, f.tolerance, has_fixed,
                          expect.get(name, "nonfinite"), refer(name))
               for name, c in cases.items()]
    combined = f.combined
    if combined is not None and combined.mode in ("fix", "keep") and "combined_ran" in raw:
        if raw.get("combined_error"):
            combined.errors.append(raw["combined_error"])
        ran = bool(raw.get("combined_ran"))
        for name, c in cases.items():
            sides = {k: v for k, v in c.items() if k not in ("fixed", "combined")}
            if "combined" in c:
                sides["fixed"] = c["combined"]
            if combined.mode == "keep" and name.startswith("hazard"):
                combined.cases.append(_kept_hazard(name, sides, f.rule, ran))
            else:
                combined.cases.append(judge_case(name, sides, f.tolerance, ran, expect.get(name, "nonfinite"),
                                                 refer(name)))
    if raw.get("device_requested") == "gpu":
        for c in f.cases + (combined.cases if combined is not None else []):
            on_cpu = [side for side in ("unfixed", "fixed")
                      if str((c.raw.get(side) or {}).get("device", "")).startswith(("cpu", "host"))]
            if on_cpu:
                c.problems.append(f"ran on the CPU although the GPU was requested ({', '.join(on_cpu)}): "
                                  f"does compute honour its device argument?")
                c.ok = False
    devices = [c.device for c in f.cases if c.device != "-"]
    f.device = " | ".join(dict.fromkeys(devices)) or f.device
    if f.cases or "error" not in raw:
        kinds = {c.kind for c in f.cases}
        if "hazard" not in kinds:
            f.errors.append("the fixture has no hazard* case: it cannot show a NaN disappearing")
        if "benign" not in kinds:
            f.errors.append("the fixture has no benign* case: it cannot show the fix keeps values")
