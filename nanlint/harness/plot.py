"""``nanlint verify --plot DIR``: the proof as a picture.

With ``--plot`` the workers also walk, for each hazard case, the straight path from a benign
case with the same input structure to it (:mod:`nanlint.harness.sweep`), running the unfixed
code, nanlint's fixed copy and the reference at every point. This module turns the numbers
that run reported (``Fixture.sweeps``, never anything computed here) into, per fixture:

- ``DIR/<CODE>-<name>/<file>.json``: the numbers plotted (per path and output: the summary
  of each side at every point, and at which points a side was NaN/Inf or raised), with the
  harness's verdict;
- ``DIR/<CODE>-<name>/<file>.png``: one panel per output (values and gradients), the x axis
  the path (``t``, or the input element ``SWEEP`` names), the unfixed, fixed and reference
  curves, and a red x at the top of the panel wherever the unfixed code is NaN/Inf;

and ``DIR/index.html`` (:mod:`nanlint.harness.page`) showing them all with the verdicts.

An output of one element is plotted as its value; a larger one as its max |x| over the
elements (NaN when any element is NaN), and the axis says which. matplotlib is optional
(``nanlint[plot]``) and loaded only here, only when ``--plot`` draws (:func:`_pyplot`).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import math
from pathlib import Path

from nanlint.harness import page
from nanlint.harness.fixtures import Fixture
from nanlint.harness.summary import verdict as run_verdict
from nanlint.harness.verify import Result

INSTALL = "python3 -m pip install 'nanlint[plot]' (or python3 -m pip install 'matplotlib>=3.8')"
VERDICTS = {"ok": "PASS", "FAIL": "FAIL", "skip": "SKIP"}
SIDES = ("unfixed", "fixed", "reference")
TOP, FIXED_TOP = 0.955, 0.905  # where the non-finite markers sit, in axes coordinates (1 = the top)
HEADROOM = 0.16  # the y range grows by this much on top, so that the markers sit above every curve


def missing() -> str | None:
    """Why ``--plot`` cannot draw here (matplotlib is not installed), or None."""
    try:
        found = importlib.util.find_spec("matplotlib") is not None
    except (ImportError, ValueError):
        found = False
    return None if found else f"--plot needs matplotlib, which is not installed: {INSTALL}"


def _pyplot():
    """matplotlib's pyplot on the Agg backend (files only, no display). Loaded lazily, here
    alone: matplotlib is an optional extra that neither the linter nor a plain ``nanlint
    verify`` imports (docs/architecture.md: lazy loads go through ``importlib``)."""
    matplotlib = importlib.import_module("matplotlib")
    matplotlib.use("Agg")
    return importlib.import_module("matplotlib.pyplot")


# --------------------------------------------------------------------------- the numbers

def _encode(x: float | None):
    if x is None:
        return None
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def decode(v) -> float:
    """A plotted number from the JSON (``"nan"``, ``"inf"``, ``None`` for a side that raised)."""
    return math.nan if v is None else float(v)


def summarize(output: dict) -> tuple[str, float]:
    """(what the point shows, the number): ``value`` for one element, else ``max |x|``
    (NaN when an element is NaN, inf when one is infinite)."""
    values = [float(v) for v in output["values"]]
    if len(values) == 1:
        return "value", values[0]
    if not values or any(math.isnan(v) for v in values):
        return "max |x|", math.nan
    return "max |x|", max(abs(v) for v in values)


def verdict(f: Fixture) -> str:
    return VERDICTS.get(f.status, f.status)


def why_none(f: Fixture) -> str | None:
    """Why no sweep ran for the whole fixture, or None."""
    if f.skipped is not None:
        return f"skipped: {f.skipped}"
    if f.sweeps is None:
        first = (f.errors or ["the worker did not run it"])[0].splitlines()[0]
        return f"no sweep ran: {first}"
    if "error" in f.sweeps:
        return f.sweeps["error"]
    return None


def _path_numbers(path: dict, fixed_label: str, reference: str) -> dict:
    points = path["points"]
    names: list[str] = []
    for point in points:
        for side in SIDES:
            for name in (point.get(side) or {}).get("outputs", {}):
                if name not in names:
                    names.append(name)
    outputs = {}
    for name in names:
        o: dict = {"summary": None, "elements": None, "dtype": {}, "nonfinite": {}, "raised": {}}
        for side in SIDES:
            if not any(side in p for p in points):
                o[side] = None
                continue
            series, bad, raised = [], [], []
            for i, point in enumerate(points):
                run = point.get(side)
                out = (run or {}).get("outputs", {}).get(name)
                if out is None:
                    series.append(None)
                    raised.append(i)
                    continue
                kind, value = summarize(out)
                o["summary"] = o["summary"] or kind
                o["elements"] = o["elements"] or len(out["values"])
                o["dtype"].setdefault(side, out.get("dtype"))
                series.append(_encode(value))
                if out["nan"] or out["inf"]:
                    bad.append(i)
            o[side], o["nonfinite"][side], o["raised"][side] = series, bad, raised
        outputs[name] = o
    keep = ("hazard", "benign", "t", "x", "x_label", "axis_note")
    return {**{k: path[k] for k in keep if k in path}, "fixed_label": fixed_label, "reference": reference,
            "outputs": outputs}


def numbers(f: Fixture) -> dict:
    """What :func:`draw` plots for ``f``, from its worker's sweep and the harness's verdict."""
    data = {"fixture": f.id, "rule": f.rule, "framework": f.framework, "verdict": verdict(f),
            "reference": f.reference_source, "tolerance": f.tolerance,
            "reference_tolerance": f.reference_tolerance if f.reference_tolerance is not None else f.tolerance,
            "paths": [], "no_sweep": {}, "why": why_none(f)}
    if data["why"] is None:
        fixed_label = "compute_manual (display-only fix)" if f.mode == "manual" else "fixed by nanlint"
        judged = {c.name: c.reference for c in f.cases}  # the hazard case's reference, as the table shows it
        data["paths"] = [_path_numbers(p, fixed_label, judged.get(p["hazard"], "-")) for p in f.sweeps.get("paths", [])]
        data["no_sweep"] = dict(f.sweeps.get("none", {}))
        if not data["paths"] and not data["no_sweep"]:
            data["why"] = "the fixture has no hazard case"
    return data


# --------------------------------------------------------------------------- the picture

def _short(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def _first(xs: list[float], indices: list[int]) -> str:
    return f"{xs[indices[0]]:.3g}"


def _panel(ax, xs: list[float], name: str, o: dict, path: dict, x_name: str) -> None:
    fixed_label, reference = path["fixed_label"], path["reference"]
    n = len(xs)
    series = {side: [decode(v) for v in o[side]] if o.get(side) is not None else None for side in SIDES}
    finite = {side: [v if math.isfinite(v) else math.nan for v in s] if s is not None else None
              for side, s in series.items()}
    dtype = o["dtype"].get("unfixed") or "?"
    if finite["unfixed"] is not None:
        ax.plot(xs, finite["unfixed"], color="tab:blue", lw=2.6, alpha=0.55, marker="o", ms=3.5,
                label=f"unfixed ({dtype})", zorder=2)
    if finite["reference"] is not None:
        source = reference.split(" (")[0]  # float64 / closed form (the case's, as the table shows it)
        label = f"{source} reference" if source in ("float64", "closed form") else "reference"
        ax.plot(xs, finite["reference"], color="black", lw=1.1, label=label, zorder=3)
    if finite["fixed"] is not None:
        ax.plot(xs, finite["fixed"], color="tab:orange", lw=1.8, ls="--", label=fixed_label, zorder=4)
    marks = ((o["nonfinite"].get("unfixed", []), TOP, "x", "red", "unfixed is NaN/Inf here"),
             (o["raised"].get("unfixed", []), TOP, "v", "purple", "unfixed raised here"),
             (o["nonfinite"].get("fixed", []), FIXED_TOP, "x", "magenta", "fixed is NaN/Inf here"),
             (o["raised"].get("fixed", []), FIXED_TOP, "v", "magenta", "fixed raised here"))
    for where, y, marker, color, label in marks:
        if where:
            ax.plot([xs[i] for i in where], [y] * len(where), transform=ax.get_xaxis_transform(), ls="none",
                    marker=marker, color=color, ms=8, mew=2.2, clip_on=False, label=label, zorder=5)
    bad = sorted(set(o["nonfinite"].get("unfixed", [])) | set(o["raised"].get("unfixed", [])))
    if bad:
        step = (xs[-1] - xs[0]) / (2 * (n - 1)) if n > 1 else 0
        ax.axvspan(xs[bad[0]] - step, xs[bad[-1]] + step, color="red", alpha=0.07, lw=0, zorder=0)
        note = f"unfixed NaN/Inf at {len(bad)}/{n} points, first at {x_name} = {_first(xs, bad)}"
    else:
        note = f"unfixed finite at all {n} points"
    if finite["reference"] is None:
        note += "\nno reference (NO_REFERENCE)" if reference.startswith("none") else "\nno reference"
    ax.set_title(f"{name}\n{note}", fontsize=9)
    ax.set_ylabel(name if o["summary"] == "value" else f"max |{name}|  ({o['elements']} elements)", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.tick_params(labelsize=8)
    values = [abs(v) for s in finite.values() if s is not None for v in s if math.isfinite(v) and v]
    if values and max(values) / min(values) > 1e6 and max(values) > 1e6:  # a blow-up would flatten the rest
        typical = sorted(values)[len(values) // 10]
        ax.set_yscale("symlog", linthresh=10.0 ** math.floor(math.log10(typical)))
        ax.yaxis.get_major_locator().set_params(numticks=9)
    elif any(o["nonfinite"].get(s) or o["raised"].get(s) for s in ("unfixed", "fixed")):
        lo, hi = ax.get_ylim()
        ax.set_ylim(lo, hi + HEADROOM * (hi - lo))


def draw(data: dict, target: Path, plt=None) -> None:
    """The PNG of ``numbers(f)``: one row per path (hazard case), one panel per output."""
    plt = plt or _pyplot()
    paths = data["paths"]
    cols = max(len(p["outputs"]) for p in paths)
    fig, axes = plt.subplots(len(paths), cols, figsize=(4.9 * cols, 3.9 * len(paths) + 1.1), squeeze=False)
    for r, p in enumerate(paths):
        xs = [x if x is not None else math.nan for x in p["x"]] if p.get("x") else list(p["t"])
        x_name = "x" if p.get("x") else "t"
        if p.get("x"):
            x_label = p["x_label"]
        else:
            x_label = f"t:  0 = {_short(p['benign'], 34)}  →  1 = {_short(p['hazard'], 34)}"
        for c, (name, o) in enumerate(p["outputs"].items()):
            ax = axes[r][c]
            _panel(ax, xs, name, o, p, x_name)
            ax.set_xlabel(x_label, fontsize=8)
        for c in range(len(p["outputs"]), cols):
            axes[r][c].axis("off")
    handles: dict = {}
    for ax in axes.flat:
        for h, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, h)
    fig.suptitle(f"{data['fixture']}: {data['verdict']}    (an output of one element: its value; "
                 f"of more: its max |x|)", fontsize=11)
    fig.legend(list(handles.values()), list(handles), loc="lower center", ncol=min(len(handles), 4), fontsize=9,
               frameon=False)
    legend_rows = math.ceil(len(handles) / 4)
    fig.tight_layout(rect=(0, 0.045 * legend_rows / len(paths) + 0.02, 1, 1 - 0.05 / len(paths)))
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, dpi=100)
    plt.close(fig)


def write(result: Result, directory: Path) -> Path:
    """Every fixture's numbers (JSON) and picture (PNG), and ``index.html``; returns the index."""
    plt = _pyplot()
    directory.mkdir(parents=True, exist_ok=True)
    entries = []
    for f in result.fixtures:
        data = numbers(f)
        stem = directory / f"{f.rule}-{f.slug}" / f.path.stem
        stem.parent.mkdir(parents=True, exist_ok=True)
        json_path = stem.with_suffix(".json")
        json_path.write_text(json.dumps(data, indent=1))
        png = None
        if data["paths"]:
            png = stem.with_suffix(".png")
            draw(data, png, plt)
        entries.append(page.Entry(data, f, json_path.relative_to(directory).as_posix(),
                                  png.relative_to(directory).as_posix() if png else None))
    index = directory / "index.html"
    index.write_text(page.render(entries, result.meta, run_verdict(result)), encoding="utf-8")
    return index
