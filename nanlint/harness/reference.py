"""The exact values a fixed hazard case must reproduce (see fixtures/README.md, "References").

A fix that is merely finite proves little: ``log(softmax(z) + 1e-30)`` is finite and wrong.
So every hazard case is also compared, values and gradients, with a reference:

- ``"float64"``: the fixture defines ``DTYPE`` (its float32, used for every input); the
  worker imports a second copy of the *unfixed* fixture, sets ``DTYPE`` to the framework's
  float64 (JAX with x64 enabled for that call only) and runs ``compute`` on the case;
- ``"closed form"``: the fixture defines ``reference(case)`` (float64 numpy, never the code
  under test), which wins over ``DTYPE``;
- none: ``NO_REFERENCE`` (a reason, or a dict hazard case name -> reason) says why no exact
  value exists (a divergence whose path the fix changes); the report shows the reason.

The worker half (:func:`prepare`) runs in the framework's process; the parent half
(:func:`check`) judges.  Standard library only at import time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from nanlint.harness.values import compare, g, nonfinite

FLOAT64 = "float64"
CLOSED_FORM = "closed form"
NONE = "none"


# --------------------------------------------------------------------------- worker side

@dataclass
class Plan:
    """How one fixture's hazard cases get their reference (made in the worker)."""

    source: str | None = None  # FLOAT64 / CLOSED_FORM / None (nothing declared)
    compute: object = None  # callable(case, device) -> outputs, or None
    none: dict[str, str] = field(default_factory=dict)  # hazard case -> why there is no reference
    none_all: str | None = None  # NO_REFERENCE as one reason for every hazard case
    error: str | None = None

    def why_none(self, case: str) -> str | None:
        return self.none.get(case, self.none_all)

    def to_json(self) -> dict:
        return {"source": self.source, "no_reference": self.none_all if self.none_all is not None else self.none}


def prepare(fw, module, path: str, name: str, load) -> Plan:
    """The reference plan for the unfixed fixture ``module`` (loaded from ``path``);
    ``load(path, name)`` imports a fresh copy for the float64 run."""
    plan = Plan()
    why = getattr(module, "NO_REFERENCE", None)
    if isinstance(why, str) and why.strip():
        plan.none_all = why.strip()
    elif isinstance(why, dict) and all(isinstance(v, str) and v.strip() for v in why.values()):
        plan.none = {str(k): v.strip() for k, v in why.items()}
    elif why is not None:
        plan.error = f"NO_REFERENCE must be a reason (str) or a dict hazard case name -> reason, got {why!r}"
        return plan
    closed = getattr(module, "reference", None)
    if callable(closed):
        plan.source, plan.compute = CLOSED_FORM, lambda case, _device: closed(case)
    elif hasattr(module, "DTYPE"):
        plan.source = FLOAT64
        try:
            copy = load(path, name)
            copy.DTYPE = fw.float64(copy.DTYPE)
        except BaseException as exc:  # noqa: BLE001 - reported per fixture
            plan.error = f"cannot make the float64 copy of the fixture (DTYPE = {getattr(module, 'DTYPE', None)!r}): {exc}"
            return plan
        compute = getattr(copy, "compute", None)

        def run(case, device):
            with fw.x64():
                return compute(case, device)

        plan.compute = run if callable(compute) else None
    return plan


# --------------------------------------------------------------------------- parent side

MISSING = ("no reference for this hazard case: define DTYPE (the float32 of every input; the harness runs the "
           "unfixed code in float64), reference(case) (a closed form), or NO_REFERENCE (why none exists); "
           "see fixtures/README.md")


def check(case, ref: dict | None, fixed: dict | None, source: str | None, why_none: str | None,
          tolerance: float) -> None:
    """Compare a hazard case's fixed run with its reference: sets ``case.reference`` (the
    source, or ``none: why``) and ``case.ref_err`` (max |fixed - reference| over every output
    element), and appends to ``case.problems``. A reference that raised or is not finite, or
    a float64 run that is not float64, is the fixture's error."""
    if why_none is not None:
        case.reference = f"{NONE}: {why_none}"
        return
    if source is None:
        case.reference = "missing"
        case.problems.append(MISSING)
        return
    case.reference = source
    if ref is None:
        case.problems.append(f"the {source} reference did not run")
        return
    if "error" in ref:
        case.problems.append(f"the {source} reference raised:\n{ref['error']}")
        return
    undefined = 0
    if source == CLOSED_FORM and not any(o["inf"] for o in ref["outputs"].values()):
        ref, fixed, undefined = _without_undefined(ref, fixed)
        if undefined:
            case.reference = f"{source} ({undefined} undefined)"
    if nonfinite(ref):
        case.problems.append(f"the {source} reference is not finite ({'; '.join(nonfinite(ref))}): choose hazard "
                             f"inputs where float64 neither overflows nor underflows, or state a closed form")
        return
    if source == FLOAT64:
        narrow = sorted(k for k, o in ref["outputs"].items() if o.get("dtype") != "float64")
        if narrow:
            case.problems.append(f"the float64 reference is not float64 in {', '.join(narrow)}: does every input "
                                 f"use DTYPE?")
            return
    if fixed is None or "error" in fixed:
        return  # the fixed side's own problem is reported already
    case.ref_err, mismatches = compare(ref, fixed, tolerance, f"the fixed code misses the {source} reference in")
    case.problems.extend(mismatches)


def _without_undefined(ref: dict, fixed: dict | None) -> tuple[dict, dict | None, int]:
    """A closed form marks with NaN the elements where the exact function has no value (the
    gradient of x / |x| at x = 0): those are left out of the comparison, and counted."""
    if fixed is None or "outputs" not in fixed or set(fixed["outputs"]) != set(ref["outputs"]):
        return ref, fixed, 0
    r_out, f_out, count = {}, {}, 0
    for name, r in ref["outputs"].items():
        f = fixed["outputs"][name]
        keep = [i for i, v in enumerate(r["values"]) if v != "nan"]
        count += len(r["values"]) - len(keep)
        if len(keep) == len(r["values"]) or len(f["values"]) != len(r["values"]):
            r_out[name], f_out[name] = r, f
            continue
        r_out[name] = {**r, "shape": [len(keep)], "nan": 0, "values": [r["values"][i] for i in keep]}
        values = [f["values"][i] for i in keep]
        f_out[name] = {**f, "shape": [len(keep)], "values": values,
                       "nan": sum(v == "nan" for v in values), "inf": sum(v in ("inf", "-inf") for v in values)}
    return {**ref, "outputs": r_out}, {**fixed, "outputs": f_out}, count


def shown(case) -> str:
    """The table's "vs reference" cell: the max error, or why there is none."""
    if case.ref_err is not None:
        return g(case.ref_err) if not math.isfinite(case.ref_err) or case.ref_err else "0"
    if case.reference.startswith(NONE):
        return "none"
    return "-"
