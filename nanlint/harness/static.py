"""The static phase: nanlint, run as a program (``sys.executable -m nanlint``, exactly as a
user runs it), fixes a copy of every fixture (one rule alone, and all default rules
combined) and lints the copies; the combined copy is compared with the rule-alone one."""

from __future__ import annotations

import ast
import concurrent.futures as futures
import difflib
import json
import os
import re
import shutil
from pathlib import Path

from nanlint.harness.fixtures import Combined, Fixture
from nanlint.harness.launch import nanlint
from nanlint.rules.base import all_rules

FIXABLE = ("safe", "unsafe")


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
        return {r.code: r.fix for r in all_rules()}, ""
    except Exception as exc:  # noqa: BLE001 - a rule being written elsewhere may not import
        return None, f"nanlint's rule registry failed to load: {exc!r}"


def opt_in_rules() -> set[str]:
    """The codes of the rules that are not enabled by default (``Rule.default`` False)."""
    try:
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
