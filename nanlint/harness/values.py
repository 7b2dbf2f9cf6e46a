"""Outputs as the worker reports them (``{"outputs": {name: {"values", "nan", "inf", ...}}}``):
which are not finite, and how far two runs are apart.  Standard library only."""

from __future__ import annotations

import math


def _floats(values: list) -> list[float]:
    return [float(v) for v in values]  # float("nan"), float("-inf") parse the encoded strings


def nonfinite(run: dict) -> list[str]:
    """``["NaN: loss", "Inf: grad"]``-style names of the outputs that are not finite."""
    nan = [k for k, o in run["outputs"].items() if o["nan"]]
    inf = [k for k, o in run["outputs"].items() if o["inf"] and not o["nan"]]
    return ([f"NaN: {', '.join(nan)}"] if nan else []) + ([f"Inf: {', '.join(inf)}"] if inf else [])


def describe(run: dict | None) -> str:
    if run is None:
        return "-"
    if "error" in run:
        return "error"
    bad = nonfinite(run)
    return "; ".join(bad) if bad else "finite"


def compare(unfixed: dict, fixed: dict, tolerance: float,
            what: str = "the fix changes benign values of") -> tuple[float, list[str]]:
    """Max |fixed - unfixed| over all outputs, and the mismatches (numpy ``allclose``
    style: |fixed - unfixed| <= tol + tol * |unfixed|, NaN never equal). ``unfixed`` may
    be a reference run; ``what`` starts each mismatch's message."""
    problems: list[str] = []
    worst = 0.0
    a_out, b_out = unfixed["outputs"], fixed["outputs"]
    if set(a_out) != set(b_out):
        return math.inf, [f"{what.split(' values of')[0]}: other outputs: {sorted(b_out)} vs {sorted(a_out)}"]
    for name in a_out:
        a, b = a_out[name], b_out[name]
        if a["shape"] != b["shape"]:
            problems.append(f"output {name!r} changes shape: {a['shape']} -> {b['shape']}")
            worst = math.inf
            continue
        far = 0
        for x, y in zip(_floats(a["values"]), _floats(b["values"])):
            d = abs(y - x) if math.isfinite(x) and math.isfinite(y) else math.inf
            worst = max(worst, d)
            if not d <= tolerance + tolerance * abs(x):
                far += 1
        if far:
            problems.append(f"{what} {name!r}: {far} element(s) differ by more than "
                            f"the tolerance {tolerance:g}")
    return worst, problems


def g(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.3g}"
