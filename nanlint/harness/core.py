"""The fixture harness: discover fixtures, fix copies with nanlint itself, run unfixed and
fixed in one subprocess per framework, and judge the results.

Only the standard library is imported here; the frameworks are imported by the worker
(:mod:`nanlint.harness.workers`) in its own process.  nanlint is run as a program
(``sys.executable -m nanlint``), exactly as a user runs it.
"""

from __future__ import annotations

import ast
import concurrent.futures as futures
import datetime
import difflib
import importlib.util
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from nanlint.harness import reference as references
from nanlint.harness.values import compare, describe, g as _g, nonfinite  # noqa: F401 - re-exported

FRAMEWORKS = ("tensorflow", "keras", "torch", "jax")
# One worker process per group: Keras 3 runs on the TensorFlow backend, so the two
# share a process (TensorFlow's import alone costs ~5 s).
GROUP = {"tensorflow": "tensorflow", "keras": "tensorflow", "torch": "torch", "jax": "jax"}
REQUIRES = {"tensorflow": ("tensorflow",), "keras": ("keras", "tensorflow"), "torch": ("torch",),
            "jax": ("jax", "jaxlib")}
DEFAULT_TOLERANCE = 1e-5
FIXABLE = ("safe", "unsafe")
FIXTURE_DIR = re.compile(r"^(NAN\d{3})-([A-Za-z0-9][A-Za-z0-9_-]*)$")
PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the directory holding nanlint/
SKIP_DIRS = {".git", "__pycache__", ".venv", "venv", "node_modules", ".pytest_cache", ".hypothesis"}
# A fixture directory holding this file is linted as a project with it (``--config``)
# instead of ``--isolated``, so version-aware rules see the target it (or a
# ``requirements*.txt`` next to it) declares, e.g. NAN502's TensorFlow < 2.4.
PROJECT_CONFIG = "nanlint.toml"


class UsageError(Exception):
    """A bad path or option: exit 2."""


def default_fixture_dir() -> Path:
    """The repository's ``fixtures/`` (next to the package), else the copy an installed
    wheel ships (``nanlint/_fixtures``), else ``./fixtures``."""
    repo = PACKAGE_ROOT / "fixtures"
    packaged = Path(__file__).resolve().parent.parent / "_fixtures"
    return repo if repo.is_dir() else packaged if packaged.is_dir() else Path("fixtures")


@dataclass
class Case:
    name: str
    kind: str  # hazard / benign / invalid
    device: str = "-"
    unfixed: str = "-"  # "NaN: loss, grad" / "finite" / "error"
    fixed: str = "-"
    max_abs_diff: float | None = None
    criterion: str = "-"  # hazard cases: nonfinite / raises / reference (benign: "equal")
    observed: str = "-"  # what proved (or failed to prove) the hazard, e.g. "raises ValueError"
    ok: bool = False
    problems: list[str] = field(default_factory=list)
    raw: dict = field(default_factory=dict)
    reference: str = "-"  # hazard cases: where the exact values come from (float64 / closed form / none: why)
    ref_err: float | None = None  # max |fixed - reference| over every output element


@dataclass
class Combined:
    """The fixture fixed the way a user fixes it: every default rule (plus the fixture's rule
    when it is opt-in) with ``--fix --unsafe-fixes``, the fixture's config handling kept.

    ``mode``: ``"same"`` — its text equals the rule-alone copy's (or, for a display-only
    fixture, nothing changed it), so the rule-alone result is its result; ``"fix"`` — it
    differs and runs under the rule-alone criteria (hazards finite / EXPECT, benign equal);
    ``"keep"`` — a display-only fixture that other rules' fixes changed while the finding is
    still reported: the hazard is the user's to fix by hand, so only the benign cases are
    judged (finite and equal to unfixed: the other fixes broke nothing) and hazard cases are
    recorded, not judged."""

    selection: str  # e.g. "default rules" / "default rules + NAN109"
    path: Path | None = None
    identical: bool | None = None  # text == the rule-alone fixed copy's (None: not made)
    mode: str = "-"
    diff: str = ""  # rule-alone fixed text -> combined text
    rules_fixed: dict[str, int] = field(default_factory=dict)  # code -> fixes nanlint applied
    still_reported: list[dict] = field(default_factory=list)  # the fixture's rule, on the combined copy
    errors: list[str] = field(default_factory=list)
    cases: list[Case] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        if self.errors:
            return False
        if self.mode == "same":
            return True
        return bool(self.cases) and all(c.ok for c in self.cases)


@dataclass
class Fixture:
    rule: str
    slug: str
    framework: str
    path: Path
    mode: str | None = None  # "fix": nanlint's fix is applied; "manual": display-only, compute_manual
    fixed_path: Path | None = None
    diff: str = ""
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None
    requires: dict | None = None  # the fixture's REQUIRES (framework -> version specifier)
    requires_unmet: bool = False  # skipped because the worker's framework version does not meet REQUIRES
    device: str = "-"
    tolerance: float = DEFAULT_TOLERANCE
    reference_tolerance: float | None = None  # REFERENCE_TOLERANCE (default: the tolerance)
    reference_source: str | None = None  # float64 / closed form / None (see nanlint.harness.reference)
    cases: list[Case] = field(default_factory=list)
    findings_before: list[dict] = field(default_factory=list)
    findings_after: list[dict] = field(default_factory=list)
    combined: Combined | None = None  # the all-default-rules fix (see Combined)

    @property
    def id(self) -> str:
        return f"{self.rule}-{self.slug}/{self.path.name}"

    @property
    def config(self) -> Path | None:
        """The fixture directory's nanlint.toml, when it has one (see PROJECT_CONFIG)."""
        path = self.path.parent / PROJECT_CONFIG
        return path if path.is_file() else None

    @property
    def ok(self) -> bool:
        return (self.skipped is None and not self.errors and bool(self.cases) and all(c.ok for c in self.cases)
                and (self.combined is None or self.combined.ok))

    @property
    def failed(self) -> bool:
        """Not ok, and not excused by a skip: a skipped fixture still fails on an error of its
        own (nanlint no longer reporting it, a fixture that does not import, a combined fix
        that does not parse)."""
        return not self.ok and (self.skipped is None or bool(self.errors)
                                or bool(self.combined and self.combined.errors))

    @property
    def status(self) -> str:
        if self.failed:
            return "FAIL"
        return "skip" if self.skipped is not None else "ok"


@dataclass
class Options:
    paths: list[Path] = field(default_factory=list)
    device: str = "cpu"  # cpu / gpu / auto
    rules: list[str] | None = None
    frameworks: list[str] | None = None
    allow_missing: bool = False
    jobs: int = 0  # 0: one per framework group, at most the CPU count
    timeout: float = 900.0
    keep: Path | None = None  # keep the fixed copies here
    # framework -> the Python interpreter its worker runs on (default: this one), e.g.
    # {"tensorflow": "/work/tf23-venv/bin/python"} for fixtures that REQUIRE TF < 2.4
    python: dict[str, str] = field(default_factory=dict)


@dataclass
class Result:
    fixtures: list[Fixture]
    frameworks: dict[str, dict]
    meta: dict
    seconds: float
    problems: list[str] = field(default_factory=list)  # run-level failures (a crashed worker)

    @property
    def ok(self) -> bool:
        return bool(self.fixtures) and not self.problems and not any(f.failed for f in self.fixtures)


# --------------------------------------------------------------------------- discovery

def framework_of(path: Path) -> str | None:
    """``torch.py`` -> torch; ``tensorflow_tf1.py`` (a variant) -> tensorflow."""
    stem = path.stem
    if stem in FRAMEWORKS:
        return stem
    head = re.split(r"[_-]", stem, maxsplit=1)[0]
    return head if head in FRAMEWORKS else None


def _fixture_files(directory: Path, match: re.Match) -> list[Fixture]:
    found = []
    for path in sorted(directory.glob("*.py")):
        if path.name.startswith("_"):
            continue
        fw = framework_of(path)
        fixture = Fixture(match.group(1), match.group(2), fw or path.stem, path.resolve())
        if fw is None:
            fixture.errors.append(f"unknown framework {path.stem!r}: a fixture file is named "
                                  f"<framework>.py (or <framework>_<variant>.py), one of {', '.join(FRAMEWORKS)}")
        found.append(fixture)
    return found


def discover(paths: Iterable[Path]) -> list[Fixture]:
    """Fixtures under ``paths``: fixture directories (``NAN101-log-softmax/``), files in
    them, or any directory holding fixture directories (searched recursively)."""
    found: list[Fixture] = []
    seen: set[Path] = set()

    def add(items: list[Fixture]) -> None:
        for f in items:
            if f.path not in seen:
                seen.add(f.path)
                found.append(f)

    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise UsageError(f"path does not exist: {path}")
        if path.is_file():
            match = FIXTURE_DIR.match(path.resolve().parent.name)
            if match is None or path.suffix != ".py":
                raise UsageError(f"{path} is not a fixture: fixtures are <CODE>-<name>/<framework>.py "
                                 f"(e.g. fixtures/NAN101-log-softmax/torch.py)")
            add([f for f in _fixture_files(path.resolve().parent, match) if f.path == path.resolve()])
            continue
        match = FIXTURE_DIR.match(path.resolve().name)
        if match:
            add(_fixture_files(path, match))
            continue
        for root, dirs, _ in os.walk(path):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
            for d in list(dirs):
                m = FIXTURE_DIR.match(d)
                if m:
                    add(_fixture_files(Path(root) / d, m))
                    dirs.remove(d)
    return found


# --------------------------------------------------------------------------- nanlint

def _env() -> dict[str, str]:
    """The environment for child processes: nanlint importable from a source checkout
    even when it is not installed."""
    env = dict(os.environ)
    if (PACKAGE_ROOT / "pyproject.toml").is_file():
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PACKAGE_ROOT), env.get("PYTHONPATH")) if p)
    env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    return env


def nanlint(args: list[str], cwd: Path) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-m", "nanlint", *args], cwd=cwd, env=_env(),
                          capture_output=True, text=True, timeout=600)
    return proc.returncode, proc.stdout, proc.stderr


def config_args(config: Path | None) -> list[str]:
    """``--isolated``, or ``--config`` a fixture directory's nanlint.toml (its pins are read
    next to it; no cache is written there)."""
    return ["--isolated"] if config is None else ["--config", str(config), "--no-cache"]


def lint_json(paths: list[Path], codes: list[str], cwd: Path,
              config: Path | None = None) -> tuple[dict[str, list[dict]], str]:
    """nanlint's JSON findings for ``paths`` (selecting ``codes``), keyed by real path."""
    if not paths or not codes:
        return {}, ""
    rc, out, err = nanlint(["--format", "json", *config_args(config), "--exit-zero", "--select", ",".join(codes),
                            *map(str, paths)], cwd)
    by_file: dict[str, list[dict]] = {}
    try:
        findings = json.loads(out) if out.strip() else []
    except json.JSONDecodeError:
        return {}, f"nanlint --format json exited {rc} with unparsable output: {out[:300]} {err[-600:]}"
    for f in findings:
        by_file.setdefault(os.path.realpath(f["filename"]), []).append(f)
    return by_file, err.strip() if rc not in (0, 1) else ""


def known_rules() -> tuple[dict[str, str | None] | None, str]:
    """code -> the rule's best fix applicability, from nanlint's registry."""
    try:
        from nanlint.rules.base import all_rules

        return {r.code: r.fix for r in all_rules()}, ""
    except Exception as exc:  # noqa: BLE001 - a rule being written elsewhere may not import
        return None, f"nanlint's rule registry failed to load: {exc!r}"


def opt_in_rules() -> set[str]:
    """The codes of the rules that are not enabled by default (``Rule.default`` False)."""
    try:
        from nanlint.rules.base import all_rules

        return {r.code for r in all_rules() if not r.default}
    except Exception:  # noqa: BLE001 - reported by known_rules
        return set()


def _where(f: dict) -> str:
    return f"line {f['location']['row']}: {f['message']}"


def static_phase(fixtures: list[Fixture], work: Path, jobs: int) -> list[str]:
    """Per rule code (in parallel): fix copies with nanlint, lint the fixed copies.
    Each nanlint call selects only that code, so a rule that supersedes it (a
    fused-loss rule over log-softmax) cannot hide its findings; fixtures with a
    project config (PROJECT_CONFIG) get their own calls. In the same pool, a second copy
    of every fixture is fixed the way a user fixes it (all default rules, plus the
    fixture's rule when it is opt-in: see Combined) and compared with the first.
    Returns run-level notes."""
    notes: list[str] = []
    rules, problem = known_rules()
    if problem:
        notes.append(problem)
    live = [f for f in fixtures if not f.errors]
    for f in live:
        if rules is not None and f.rule not in rules:
            f.errors.append(f"rule {f.rule} does not exist in this nanlint (yet): nothing can fix this fixture")
    live = [f for f in live if not f.errors]
    opt_in = opt_in_rules()
    for i, f in enumerate(live):
        copy = work / "fixed" / f"{i:03d}" / f"{f.rule}-{f.slug}" / f.path.name
        copy.parent.mkdir(parents=True)
        shutil.copy2(f.path, copy)
        f.fixed_path = copy
        both = work / "combined" / f"{i:03d}" / f"{f.rule}-{f.slug}" / f.path.name
        both.parent.mkdir(parents=True)
        shutil.copy2(f.path, both)
        f.combined = Combined("default rules" + (f" + {f.rule}" if f.rule in opt_in else ""), both)

    def one(key: tuple[str, str, str]) -> list[str]:
        kind, code, config = key
        if kind == "alone":
            group = [f for f in live if (f.rule, str(f.config or "")) == (code, config)]
            return _static_code(code, group, work, Path(config) if config else None)
        group = [f for f in live if (f.rule if f.rule in opt_in else "", str(f.config or "")) == (code, config)]
        return _static_combined(code, group, work, Path(config) if config else None)

    keys = sorted({("alone", f.rule, str(f.config or "")) for f in live}
                  | {("combined", f.rule if f.rule in opt_in else "", str(f.config or "")) for f in live})
    with futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for more in pool.map(one, keys):
            notes.extend(more)
    for f in live:
        _compare_combined(f)
        if f.mode != "fix":
            f.fixed_path = None
    return notes


_SHOWN_FILE = re.compile(r"^- (.+):$")
_SHOWN_FIX = re.compile(r"^\s+(\d+) \S+ (NAN\d{3})\b")


def _fixes_shown(text: str, cwd: Path) -> dict[str, dict[str, int]]:
    """``--show-fixes`` (text format) as real path -> code -> fixes applied; best effort
    (only used to name the rules that rewrote a combined copy)."""
    out: dict[str, dict[str, int]] = {}
    current = None
    for line in text.splitlines():
        m = _SHOWN_FILE.match(line)
        if m:
            current = out.setdefault(os.path.realpath(cwd / m.group(1)), {})
            continue
        m = _SHOWN_FIX.match(line)
        if m and current is not None:
            current[m.group(2)] = current.get(m.group(2), 0) + int(m.group(1))
        elif not line.startswith(" "):
            current = None
    return out


def _static_combined(extra: str, group: list[Fixture], work: Path, config: Path | None = None) -> list[str]:
    """The combined copies of ``group``: ``--fix --unsafe-fixes`` with the default rules
    (``--extend-select extra`` for an opt-in rule), then a JSON lint of the copies with the
    same selection (what is left: the fixture's rule still reported, a parse error)."""
    notes: list[str] = []
    select = ["--extend-select", extra] if extra else []
    paths = [str(f.combined.path) for f in group]
    rc, out, err = nanlint(["--fix", "--unsafe-fixes", *config_args(config), "--exit-zero", "--show-fixes",
                            *select, *paths], work)
    if rc not in (0, 1):
        for f in group:
            f.combined.errors.append(f"nanlint --fix --unsafe-fixes ({f.combined.selection}) exited {rc}: "
                                     f"{(err.strip() or out.strip())[-800:]}")
        return notes
    shown = _fixes_shown(out, work)
    rc, out, err = nanlint(["--format", "json", *config_args(config), "--exit-zero", *select, *paths], work)
    try:
        left = json.loads(out) if out.strip() else []
    except json.JSONDecodeError:
        left = None
    if rc not in (0, 1) or left is None:
        notes.append(f"nanlint (lint of the combined copies, {extra or 'default rules'}) exited {rc}: "
                     f"{(err.strip() or out.strip())[-600:]}")
        left = []
    by_file: dict[str, list[dict]] = {}
    for x in left:
        by_file.setdefault(os.path.realpath(x["filename"]), []).append(x)
    for f in group:
        real = os.path.realpath(f.combined.path)
        f.combined.rules_fixed = dict(sorted(shown.get(real, {}).items()))
        found = by_file.get(real, [])
        f.combined.still_reported = [x for x in found if x["code"] == f.rule]
        for x in found:
            if x["code"] == "NAN001":
                f.combined.errors.append(f"nanlint cannot parse its combined copy: {_where(x)}")
    return notes


def _compare_combined(f: Fixture) -> None:
    """Set ``f.combined``'s mode from its text against the rule-alone copy's (see Combined)."""
    c = f.combined
    if c is None or c.path is None or f.mode is None or c.errors:
        return  # the rule-alone proof already failed (its errors say why), or nanlint failed
    original = f.path.read_text(encoding="utf-8")
    alone = f.fixed_path.read_text(encoding="utf-8") if f.mode == "fix" else original
    text = c.path.read_text(encoding="utf-8")
    c.identical = text == alone
    if c.identical:
        c.mode, c.path = "same", None
        return
    c.diff = "".join(difflib.unified_diff(alone.splitlines(True), text.splitlines(True),
                                          f"rule-alone/{f.id}", f"combined/{f.id}"))
    try:
        ast.parse(text, str(c.path))
    except SyntaxError as exc:
        c.errors.append(f"nanlint's combined copy does not parse: {exc}")
        return
    if f.mode == "manual" and c.still_reported:
        c.mode = "keep"
        return
    c.mode = "fix"
    for x in _fixable(c.still_reported):
        c.errors.append(f"a fixable {f.rule} finding is left after the combined fix ({c.selection}): {_where(x)}")


def _fixable(findings: list[dict]) -> list[dict]:
    return [x for x in findings if (x.get("fix") or {}).get("applicability") in FIXABLE]


def _static_code(code: str, group: list[Fixture], work: Path, config: Path | None = None) -> list[str]:
    """Two nanlint runs for one rule code: ``--fix --format json`` on the copies (its JSON
    lists what is left; on a copy it did not change, that is what nanlint reports on the
    fixture), then ``--format json`` on the copies it changed."""
    notes: list[str] = []
    rc, out, err = nanlint(["--fix", "--unsafe-fixes", *config_args(config), "--exit-zero", "--format", "json",
                            "--select", code, *(str(f.fixed_path) for f in group)], work)
    try:
        left = json.loads(out) if out.strip() else []
    except json.JSONDecodeError:
        left = None
    if rc not in (0, 1) or left is None:
        for f in group:
            f.errors.append(f"nanlint --fix exited {rc}: {(err.strip() or out.strip())[-800:]}")
        return notes
    by_file: dict[str, list[dict]] = {}
    for x in left:
        by_file.setdefault(os.path.realpath(x["filename"]), []).append(x)
    changed = []
    for f in group:
        remaining = [x for x in by_file.get(os.path.realpath(f.fixed_path), []) if x["code"] == f.rule]
        original = f.path.read_text(encoding="utf-8")
        fixed = f.fixed_path.read_text(encoding="utf-8")
        if fixed == original:
            f.findings_before = remaining
            if not remaining:
                f.errors.append(f"nanlint does not report {f.rule} on this fixture: the rule misses the hazard, "
                                f"or the fixture is not written in the hazardous form")
            elif _fixable(remaining):
                f.errors.append(f"nanlint --fix --unsafe-fixes did not change the file, yet reports a fixable "
                                f"{f.rule} finding: {_where(_fixable(remaining)[0])}")
            else:
                f.mode = "manual"
                kinds = sorted({(x.get("fix") or {}).get("applicability") or "no fix" for x in remaining})
                f.notes.append(f"nanlint reports {f.rule} with a {'/'.join(kinds)} fix: the fixed side is the "
                               f"fixture's compute_manual")
            continue
        f.mode = "fix"
        f.diff = "".join(difflib.unified_diff(original.splitlines(True), fixed.splitlines(True),
                                              f"a/{f.id}", f"b/{f.id}"))
        try:
            ast.parse(fixed, str(f.fixed_path))
        except SyntaxError as exc:
            f.errors.append(f"nanlint's fixed copy does not parse: {exc}")
            continue
        changed.append(f)
    after, err = lint_json([f.fixed_path for f in changed], [code, "NAN001"], work, config)
    if err:
        notes.append(f"nanlint (lint of the fixed {code} copies): {err}")
    for f in changed:
        found = after.get(os.path.realpath(f.fixed_path), [])
        f.findings_after = [x for x in found if x["code"] == f.rule]
        for x in _fixable(f.findings_after):
            f.errors.append(f"a fixable {f.rule} finding is left after --fix: {_where(x)}")
        for x in found:
            if x["code"] == "NAN001":
                f.errors.append(f"nanlint cannot parse its fixed copy: {_where(x)}")
        rest = [x for x in f.findings_after if x not in _fixable(f.findings_after)]
        if rest:
            f.notes.append(f"{len(rest)} display-only {f.rule} finding(s) remain after --fix")
    return notes


# --------------------------------------------------------------------------- judging

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


# --------------------------------------------------------------------------- workers

INSTALL = "python3 -m pip install -e '.[frameworks]' in a nanlint checkout"


def install_command(framework: str, requirements: list[str] | None = None) -> str:
    """The pip command installing ``framework`` at the version nanlint's ``frameworks`` extra
    pins for this platform (``requirements``: nanlint's metadata), else the checkout's extra."""
    import shlex
    from importlib.metadata import PackageNotFoundError, requires

    if requirements is None:
        try:
            requirements = requires("nanlint") or []
        except PackageNotFoundError:
            requirements = []
    env = {"extra": "frameworks", "sys_platform": sys.platform}
    picks = []
    for line in requirements:
        spec, _, marker = line.partition(";")
        # the extra's markers are `VAR ==/!= 'value'` clauses joined by `and` (pyproject.toml)
        clauses = re.findall(r"""(\w+)\s*(==|!=)\s*["']([^"']*)["']""", marker)
        if not any(var == "extra" for var, _, _ in clauses) or \
                not all((env.get(var) == value) == (op == "==") for var, op, value in clauses):
            continue
        name = re.split(r"[\s\[=<>!~]", spec.strip(), maxsplit=1)[0]
        if name.replace("-cpu", "") in REQUIRES[framework]:
            picks.append(spec.strip())
    return "python3 -m pip install " + " ".join(map(shlex.quote, picks)) if picks else INSTALL


def available(framework: str) -> str | None:
    """None when the framework's modules are importable, else why not."""
    missing = [m for m in REQUIRES[framework] if importlib.util.find_spec(m) is None]
    return f"{framework} is not installed (no module {', '.join(missing)})" if missing else None


def worker_env(group: str, device: str) -> dict[str, str]:
    env = _env()
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env["KERAS_BACKEND"] = "tensorflow"  # the protocol: Keras fixtures run on the TensorFlow backend
    env["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"  # several workers may share one GPU
    if device == "cpu":
        if group == "jax":
            env["JAX_PLATFORMS"] = "cpu"
        if group == "tensorflow":
            env["CUDA_VISIBLE_DEVICES"] = "-1"  # TensorFlow would otherwise claim every GPU
    return env


def run_worker(group: str, frameworks: list[str], fixtures: list[Fixture], device: str, work: Path,
               timeout: float, python: str | None = None) -> dict:
    job = {"device": device, "frameworks": frameworks,
           "fixtures": [{"id": str(i), "framework": f.framework, "unfixed": str(f.path),
                         "fixed": str(f.fixed_path) if f.fixed_path and f.mode == "fix" and not f.errors else None,
                         "manual": f.mode == "manual",
                         "combined": str(f.combined.path) if f.combined is not None and f.combined.path
                         and f.combined.mode in ("fix", "keep") and not f.errors and not f.combined.errors else None}
                        for i, f in enumerate(fixtures)]}
    job_path, out_path = work / f"job-{group}.json", work / f"out-{group}.json"
    job_path.write_text(json.dumps(job))
    start = time.monotonic()
    try:
        proc = subprocess.run([python or sys.executable, "-m", "nanlint.harness.workers", str(job_path), str(out_path)],
                              cwd=work, env=worker_env(group, device), capture_output=True, text=True,
                              timeout=timeout)
        rc, err = proc.returncode, proc.stderr
    except subprocess.TimeoutExpired as exc:
        tail = exc.stderr.decode("utf-8", "replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        rc, err = "killed", f"timed out after {timeout:g} s (--timeout)\n{tail}"
    try:
        out = json.loads(out_path.read_text())
    except (OSError, json.JSONDecodeError):
        out = {"frameworks": {}, "fixtures": {}}
    out["seconds"] = round(time.monotonic() - start, 2)
    if rc != 0:
        out["crash"] = f"the {group} worker exited {rc}: {err.strip()[-1500:]}"
    return out


def run(options: Options) -> Result:
    start = time.monotonic()
    paths = options.paths or [default_fixture_dir()]
    fixtures = discover(paths)
    if options.rules:
        wanted = {r.upper() for r in options.rules}
        fixtures = [f for f in fixtures if f.rule.upper() in wanted or f.slug.upper() in wanted]
    if options.frameworks:
        unknown = set(options.frameworks) - set(FRAMEWORKS)
        if unknown:
            raise UsageError(f"unknown framework(s) {', '.join(sorted(unknown))}; choose from {', '.join(FRAMEWORKS)}")
        fixtures = [f for f in fixtures if f.framework in options.frameworks]
    if not options.allow_missing:  # stop before any work, in one line, rather than fail every fixture
        for fw in sorted({f.framework for f in fixtures if f.framework in FRAMEWORKS} - set(options.python)):
            why = available(fw)
            if why:
                raise UsageError(f"{why}: {install_command(fw)} "
                                 f"(or --frameworks to run others, --allow-missing to skip {fw}'s fixtures)")
    jobs = options.jobs or min(3, os.cpu_count() or 1)
    for fw, exe in options.python.items():
        if fw not in FRAMEWORKS:
            raise UsageError(f"--python {fw}=...: unknown framework; choose from {', '.join(FRAMEWORKS)}")
        if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
            raise UsageError(f"--python {fw}={exe}: not an executable file")
    frameworks: dict[str, dict] = {}
    run_notes: list[str] = []
    problems: list[str] = []
    work = Path(tempfile.mkdtemp(prefix="nanlint-harness-"))
    try:
        run_notes += static_phase(fixtures, work, jobs)
        static_seconds = round(time.monotonic() - start, 2)
        runnable = [f for f in fixtures if f.framework in FRAMEWORKS]
        for fw in sorted({f.framework for f in runnable}):
            # another interpreter's packages are not visible here: its worker reports an import failure
            why = None if fw in options.python else available(fw)
            frameworks[fw] = {"status": "missing", "reason": why} if why else {"status": "pending"}
            if why:
                for f in runnable:
                    if f.framework == fw:
                        if options.allow_missing:
                            f.skipped = why
                        else:
                            f.errors.append(why + " (pass --allow-missing to skip it)")
        runnable = [f for f in runnable if frameworks[f.framework]["status"] != "missing"]
        groups: dict[str, list[Fixture]] = {}
        for f in runnable:  # a framework on its own interpreter gets its own worker
            exe = options.python.get(f.framework)
            groups.setdefault(GROUP[f.framework] + (f"-{f.framework}-python" if exe else ""), []).append(f)

        def go(group: str) -> tuple[str, dict]:
            members = groups[group]
            fws = sorted({f.framework for f in members})
            return group, run_worker(group, fws, members, options.device, work, options.timeout,
                                     options.python.get(fws[0]))

        with futures.ThreadPoolExecutor(max_workers=max(1, min(jobs, len(groups) or 1))) as pool:
            slowest_first = sorted(groups, key=lambda g: (g != "tensorflow", g))  # TF imports slowest
            outs = dict(pool.map(go, slowest_first))
        for group, out in outs.items():
            for fw, info in out.get("frameworks", {}).items():
                frameworks[fw] = {"status": "error" if "error" in info else "ran", **info,
                                  "worker_seconds": out["seconds"]}
                if fw in options.python:  # say which interpreter ran it
                    frameworks[fw].update(python=out.get("python"), numpy=out.get("numpy"),
                                          interpreter=options.python[fw])
            for i, f in enumerate(groups[group]):
                info = out.get("frameworks", {}).get(f.framework)
                raw = out.get("fixtures", {}).get(str(i))
                if raw is not None:
                    judge_fixture(f, raw)
                elif info is not None and "error" in info:
                    f.errors.append(info["error"])
                elif "error" in out:
                    f.errors.append(out["error"])
                else:
                    f.errors.append(out.get("crash") or "the worker returned nothing for this fixture")
            if "crash" in out:
                problems.append(out["crash"])
        if options.keep is not None:
            options.keep.mkdir(parents=True, exist_ok=True)
            for f in fixtures:
                if f.fixed_path is not None:
                    dest = options.keep / f"{f.rule}-{f.slug}" / f.path.name
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(f.fixed_path, dest)
                if f.combined is not None and f.combined.path is not None:
                    dest = options.keep / "combined" / f"{f.rule}-{f.slug}" / f.path.name
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(f.combined.path, dest)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "nanlint": _nanlint_version(),
        "commit": _commit(),
        "device_requested": options.device,
        "static_seconds": static_seconds,
        "paths": [str(p) for p in paths],
        "notes": run_notes,
    }
    return Result(fixtures, frameworks, meta, round(time.monotonic() - start, 2), problems)


def _nanlint_version() -> str:
    try:
        from nanlint import __version__

        return __version__
    except Exception:  # noqa: BLE001
        return "?"


def _commit() -> str | None:
    """The git commit of the nanlint that ran (``abc1234``, ``+dirty`` when nanlint/ or fixtures/
    had uncommitted changes), or None outside a git checkout: a report says what it measured."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=PACKAGE_ROOT, capture_output=True,
                              text=True, timeout=10)
        if head.returncode != 0 or not head.stdout.strip():
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "nanlint", "fixtures"], cwd=PACKAGE_ROOT,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("+dirty" if dirty else "")
