"""The sweep behind ``nanlint verify --plot`` (worker half; :mod:`nanlint.harness.plot` draws it).

A fixture's ``CASES`` are points; a picture needs a range. For each hazard case the sweep
takes a benign case whose inputs have the same structure (the same keys, the same nested
list lengths, the same non-numeric values, the same integers) and walks the straight path
between them: at ``t`` in ``[0, 1]`` every float input is ``(1 - t) * benign + t * hazard``
(exactly the benign inputs at 0 and exactly the hazard inputs at 1), and the unfixed code,
the fixed code and the reference run there with the worker's own machinery (``run_one`` and
the reference plan's ``compute``, as for the cases themselves).

A fixture needs nothing for it. It may declare ``SWEEP`` for a better axis:

    SWEEP = {"param": "logits", "index": 1, "label": "logit z[0, 1]",
             "from": "benign_moderate_logits", "points": 41}

``param`` (an input key) and ``index`` (a flat index into it; default: the element that
moves most) make that input element the x axis instead of ``t``; ``label`` names it;
``from`` picks the benign case (default: the first in ``CASES`` with the same structure);
``points`` (3 to 401, default :data:`POINTS`). Standard library only: it runs in the worker.
"""

from __future__ import annotations

import math

POINTS = 41  # points on each path, t = 0, 1/40, ..., 1
KEYS = ("param", "index", "label", "from", "points")


def _mismatch(a, b, where: str) -> str | None:
    """Why inputs ``a`` (benign) and ``b`` (hazard) are not on one straight path, or None."""
    if isinstance(a, bool) or isinstance(b, bool):
        return None if a == b else f"{where} is a bool that differs"
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, int) and isinstance(b, int) and a != b:
            return f"{where} is an integer that differs ({a} vs {b}): an index or a count is not swept"
        return None
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return f"{where or 'the inputs'} have other keys ({', '.join(sorted(map(str, set(a) ^ set(b))))})"
        for k in a:
            why = _mismatch(a[k], b[k], f"{where}[{k!r}]" if where else repr(k))
            if why:
                return why
        return None
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return f"{where} has another shape ({len(a)} vs {len(b)} along one axis)"
        for i, (x, y) in enumerate(zip(a, b)):
            why = _mismatch(x, y, f"{where}[{i}]")
            if why:
                return why
        return None
    return None if a == b and type(a) is type(b) else f"{where} differs and is not a number"


def mismatch(benign: dict, hazard: dict) -> str | None:
    """Why two cases' inputs have not the same structure (so no straight path joins them), or None."""
    if not isinstance(benign, dict) or not isinstance(hazard, dict):
        return "a case is not a dict of inputs"
    return _mismatch(benign, hazard, "")


def between(benign, hazard, t: float):
    """The inputs at ``t`` on the straight path: ``(1 - t) * benign + t * hazard`` per float."""
    if isinstance(benign, bool):
        return benign
    if isinstance(benign, (int, float)) and isinstance(hazard, (int, float)):
        if isinstance(benign, int) and isinstance(hazard, int):
            return benign  # equal (mismatch() said so)
        return benign if t == 0 else float(hazard) if t == 1 else (1 - t) * benign + t * hazard
    if isinstance(benign, dict):
        return {k: between(v, hazard[k], t) for k, v in benign.items()}
    if isinstance(benign, (list, tuple)):
        return [between(x, y, t) for x, y in zip(benign, hazard)]
    return benign


def _flat(value) -> list:
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flat(v)]
    return [value]


def _declared(decl) -> tuple[dict, str | None]:
    """``SWEEP`` checked: (the declaration, or {}; why it cannot be used, or None)."""
    if decl is None:
        return {}, None
    if not isinstance(decl, dict):
        return {}, f"SWEEP must be a dict ({', '.join(KEYS)}), got {decl!r}"
    unknown = sorted(map(str, set(decl) - set(KEYS)))
    if unknown:
        return {}, f"SWEEP has unknown keys {', '.join(unknown)} (known: {', '.join(KEYS)})"
    points = decl.get("points", POINTS)
    if isinstance(points, bool) or not isinstance(points, int) or not 3 <= points <= 401:
        return {}, f"SWEEP['points'] must be an integer from 3 to 401, got {points!r}"
    return decl, None


def plan(cases: dict, decl=None) -> tuple[list[dict], dict[str, str]]:
    """The paths to walk: ``[{"hazard", "benign"}]``, and hazard case -> why it has none."""
    decl, bad = _declared(decl)
    hazards = [n for n in cases if str(n).startswith("hazard")]
    benign = [n for n in cases if str(n).startswith("benign")]
    if bad:
        return [], {str(h): bad for h in hazards}
    paths, why = [], {}
    start = decl.get("from")
    if start is not None and start not in benign:
        return [], {str(h): f"SWEEP['from'] names {start!r}, which is not a benign case" for h in hazards}
    for h in hazards:
        reasons = []
        for b in [start] if start is not None else benign:
            wrong = mismatch(cases[b], cases[h])
            if wrong is None:
                paths.append({"hazard": str(h), "benign": str(b)})
                break
            reasons.append(f"{b}: {wrong}")
        else:
            why[str(h)] = ("no benign case has the same input structure (" + "; ".join(reasons) + ")"
                           if reasons else "the fixture has no benign case")
    return paths, why


def _axis(decl: dict, benign: dict, hazard: dict) -> tuple[list | None, str | None, str | None]:
    """(the input element on the x axis: key, flat index; its label; why SWEEP's param is unusable)."""
    param = decl.get("param")
    if param is None:
        return None, None, None
    if param not in benign:
        return None, None, f"SWEEP['param'] names {param!r}, which is not an input ({', '.join(map(str, benign))})"
    a, b = _flat(benign[param]), _flat(hazard[param])
    moves = [abs(float(y) - float(x)) if isinstance(x, (int, float)) and isinstance(y, (int, float)) else 0.0
             for x, y in zip(a, b)]
    index = decl.get("index")
    if index is None:
        index = max(range(len(moves)), key=moves.__getitem__) if moves else 0
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(a):
        return None, None, f"SWEEP['index'] must be a flat index into {param!r} (0..{len(a) - 1}), got {index!r}"
    if not moves[index]:
        return None, None, f"SWEEP: {param}[{index}] does not move between the two cases"
    return [param, index], str(decl.get("label") or f"{param} (flat element {index})"), None


def run(cases: dict, decl, run_one, compute, fixed_compute, reference_of) -> dict:
    """Walk every path of :func:`plan`. ``run_one(func, case)`` runs one side on one input
    (the worker's own, JSON out); ``reference_of(hazard)`` is the reference's compute for that
    hazard case, or None (no reference: ``NO_REFERENCE``). Returns
    ``{"paths": [{"hazard", "benign", "t", "x", "x_label", "points": [{"unfixed", "fixed",
    "reference"}]}], "none": {hazard: why}}``."""
    paths, none = plan(cases, decl)
    decl, _ = _declared(decl)
    n = decl.get("points", POINTS) if decl else POINTS
    ts = [i / (n - 1) for i in range(n)]
    for path in paths:
        benign, hazard = cases[path["benign"]], cases[path["hazard"]]
        axis, label, bad = _axis(decl, benign, hazard)
        if bad:
            path["axis_note"] = bad
        path["t"] = ts
        path["x_label"] = label or f"t (0 = {path['benign']}, 1 = {path['hazard']}: the straight path between their inputs)"
        ref = reference_of(path["hazard"])
        points, xs = [], []
        for t in ts:
            case = between(benign, hazard, t)
            point = {"unfixed": run_one(compute, case)}
            if callable(fixed_compute):
                point["fixed"] = run_one(fixed_compute, case)
            if callable(ref):
                point["reference"] = run_one(ref, case)
                point["reference"].pop("device", None)
            points.append(point)
            if axis is not None:
                x = _flat(case[axis[0]])[axis[1]]
                xs.append(float(x) if math.isfinite(float(x)) else None)
        path["x"] = xs if axis is not None else None
        path["points"] = points
    return {"paths": paths, "none": none}
