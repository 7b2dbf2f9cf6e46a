#!/usr/bin/env python3
"""The precision regression corpora: lint the Python sources of real ML packages
and compare every finding with a hand-reviewed verdict.

Three corpora (``--corpus``), defined in ``scripts/corpus_sources.py``: ``frameworks``,
the installed, pinned framework packages (keras, torch, tensorflow's ``python/``,
jax, optax: their training-numerics subtrees), verdicts in ``tests/corpus/verdicts.json``;
and ``training``, training code (model zoos, pipelines, RL agents, probabilistic
models) from pinned PyPI wheels fetched into a cache, never installed, verdicts in
``tests/corpus/training-verdicts.json`` (both *library* code); and ``scripts``, *training
code* (training scripts, agents, paper implementations) from pinned PyPI sdists, verdicts in
``tests/corpus/scripts-verdicts.json``, with a held-out third reported apart.
Every finding of every rule (but NAN002 unused-noqa, which is about the
packages' own flake8 comments) is keyed by a line-independent fingerprint --
package, path inside the package, rule code, the flagged expression's source
text with whitespace collapsed, and its occurrence index among identical
(path, code, text) findings -- and looked up in the verdicts file, where a person
recorded ``true-positive`` or ``false-positive``, a reason and (false positives of
the training corpus) a ``class`` tag.

    python scripts/corpus.py            # compare: new/vanished findings, precision
    python scripts/corpus.py --update   # record new findings as "unreviewed", drop vanished ones
    python scripts/corpus.py --show     # print every unreviewed finding with its code, to review
    python scripts/corpus.py --corpus training --fetch   # the same on the training corpus, fetched first

Default rules are the gate; opt-in rules are linted, recorded and reported
separately (``"default": false`` in the report), with the same review on the
framework corpus and by sample on the training corpus (not gated there).
Exit status of the compare mode: 0 when every gated finding has a verdict and no
recorded true positive vanished (a vanished false positive is stale: reported,
dropped by ``--update``), 1 otherwise, 2 when the corpus is not there or its
versions differ from the recorded ones.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_sources import (SCRIPTS, NotInstalled, Package, fetch_scripts,  # noqa: E402
                            fetch_training, locate_frameworks, locate_scripts, locate_training)

EXCLUDED_RULES = ("NAN002",)  # unused-noqa: about the corpus's own flake8 comments, not hazards
VERDICT_VALUES = ("true-positive", "false-positive", "unreviewed")
MAX_EXPR = 160  # longer expressions are keyed by a prefix and a hash of the whole


@dataclass(frozen=True)
class Corpus:
    name: str
    verdicts: Path
    about: str
    locate: Callable[[], list[Package]]
    fetch: Callable[[], list[Package]] | None = None  # None: installed, not fetched
    how_to_get: str = ""
    review_opt_in: bool = True  # False: opt-in rules' findings are recorded, not gated (see gated())
    reviewed_opt_in: tuple[str, ...] = ()  # opt-in rules gated all the same (review_opt_in False)
    population: str = "library"  # docs/precision.md: library code or training code
    held_out: frozenset = frozenset()  # packages whose precision is reported apart (frozen before tuning)


CORPORA = {
    "frameworks": Corpus(
        "frameworks", ROOT / "tests" / "corpus" / "verdicts.json",
        "Hand-reviewed verdicts for every nanlint finding on the pinned framework sources; "
        "see docs/precision.md. Key: package, path, code, expr, n (line is a hint only).",
        locate_frameworks, how_to_get="pip install -e '.[frameworks]'"),
    "training": Corpus(
        "training", ROOT / "tests" / "corpus" / "training-verdicts.json",
        "Hand-reviewed verdicts for every nanlint finding on the training corpus (PyPI wheels pinned in "
        "scripts/corpus_sources.py); see docs/precision.md. Key: package, path, code, expr, n (line is a "
        "hint only); class names the false-positive class.",
        locate_training, fetch_training, how_to_get="python scripts/corpus.py --corpus training --fetch",
        review_opt_in=False),
    "scripts": Corpus(
        "scripts", ROOT / "tests" / "corpus" / "scripts-verdicts.json",
        "Hand-reviewed verdicts for every nanlint finding of the default rules and of the opt-in rules "
        "NAN109/NAN110/NAN201/NAN202/NAN203/NAN205/NAN301/NAN401 on the scripts corpus (training code: PyPI "
        "sdists pinned in scripts/corpus_sources.py); see docs/precision.md. Key: package, path, code, expr, n "
        "(line is a hint only); class names the false-positive class; gradient (NAN2xx) says whether a "
        "gradient reaches the expression in that program (reaches / none / unknown).",
        locate_scripts, fetch_scripts, how_to_get="python scripts/corpus.py --corpus scripts --fetch",
        review_opt_in=False,
        reviewed_opt_in=("NAN109", "NAN110", "NAN201", "NAN202", "NAN203", "NAN205", "NAN301", "NAN401"),
        population="training code", held_out=frozenset(s.name for s in SCRIPTS if s.held_out)),
}
VERDICTS = CORPORA["frameworks"].verdicts


def corpus_rules():
    from nanlint.rules.base import all_rules

    return [r for r in all_rules() if r.code not in EXCLUDED_RULES]


def normalize(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) > MAX_EXPR:
        digest = hashlib.sha1(text.encode()).hexdigest()[:12]
        text = f"{text[:MAX_EXPR - 20]}... #{digest}"
    return text


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def span_text(lines: list[str], start: tuple[int, int], end: tuple[int, int]) -> str:
    """Source text between two 1-based (row, column) positions, end exclusive."""
    (r1, c1), (r2, c2) = start, end
    if not (0 < r1 <= len(lines)):
        return ""
    if r1 == r2:
        return lines[r1 - 1][c1 - 1:c2 - 1]
    parts = [lines[r1 - 1][c1 - 1:]] + lines[r1:r2 - 1]
    if r2 - 1 < len(lines):
        parts.append(lines[r2 - 1][:c2 - 1])
    return "\n".join(parts)


def key_of(entry: dict) -> tuple:
    return (entry["package"], entry["path"], entry["code"], entry["expr"], entry["n"])


def lint_corpus(packages: list[Package], jobs: int | None = None, rules=None,
                everything: bool = False) -> tuple[list[dict], dict]:
    """Every finding as a fingerprinted entry, and statistics about the run."""
    from nanlint.lint import runner
    from nanlint.lint.engine import Linter

    rules = corpus_rules() if rules is None else rules
    # The corpus targets the framework versions installed with it (version-aware rules).
    # the may tier too: its findings are recorded apart from the default ones ("may": true)
    settings = {"frameworks": {p.name: p.version for p in packages}, "root": None, "may": True}
    linter = Linter(rules, settings)
    files: list[Path] = []
    owner: dict[Path, Package] = {}
    for pkg in packages:
        for f in pkg.files(everything):
            files.append(f)
            owner[f] = pkg
    stats = runner.Stats()
    started = time.perf_counter()
    cpu_started = _cpu_seconds()
    results = runner.run(files, lambda _: linter, fix=False, unsafe=False, write=False, jobs=jobs,
                         stats=stats)
    elapsed = time.perf_counter() - started
    cpu = _cpu_seconds() - cpu_started
    entries: list[dict] = []
    lines_total = 0
    per_package: dict[str, dict] = {p.name: {"version": p.version, "files": 0, "lines": 0} for p in packages}
    for path, (result, source) in zip(files, results):
        pkg = owner[path]
        text = (source or b"").decode("utf-8", "replace")
        lines = _LINE_BREAK.split(text)
        n_lines = text.count("\n")
        lines_total += n_lines
        per_package[pkg.name]["files"] += 1
        per_package[pkg.name]["lines"] += n_lines
        if result.error:
            raise RuntimeError(f"{path}: {result.error}")
        rel = path.relative_to(pkg.root).as_posix()
        seen: Counter = Counter()
        for f in sorted(result.findings, key=lambda f: (f.start, f.end, f.code)):
            expr = normalize(span_text(lines, f.start, f.end))
            k = (f.code, expr)
            entries.append({"package": pkg.name, "path": rel, "code": f.code, "expr": expr,
                            "n": seen[k], "line": f.start[0], "message": f.message, "may": f.may})
            seen[k] += 1
    stats_out = {"files": len(files), "lines": lines_total, "parsed": stats.parsed,
                 "prefiltered": stats.prefiltered, "jobs": stats.jobs, "seconds": round(elapsed, 1),
                 "cpu_seconds": round(cpu, 1),
                 "packages": per_package, "rules": sorted(r.code for r in rules),
                 "default": {r.code: r.default for r in rules}}
    return entries, stats_out


def _cpu_seconds() -> float:
    """CPU time of this process and its finished workers (wall time lies on a busy machine)."""
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


# --- the verdicts file ------------------------------------------------------------------
def load_verdicts(path: Path = VERDICTS) -> dict:
    if not path.exists():
        return {"versions": {}, "findings": []}
    data = json.loads(path.read_text(encoding="utf-8"))
    for e in data["findings"]:
        if e.get("verdict") not in VERDICT_VALUES:
            raise ValueError(f"{path}: bad verdict {e.get('verdict')!r} for {key_of(e)}")
        if e["verdict"] != "unreviewed" and not e.get("reason", "").strip():
            raise ValueError(f"{path}: a {e['verdict']} verdict needs a reason: {key_of(e)}")
        if "class" in e and not (isinstance(e["class"], str) and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", e["class"])):
            raise ValueError(f"{path}: a class is a short kebab-case tag, not {e['class']!r}: {key_of(e)}")
        if "gradient" in e and e["gradient"] not in GRADIENT_VALUES:
            raise ValueError(f"{path}: gradient is one of {GRADIENT_VALUES}, not {e['gradient']!r}: {key_of(e)}")
    return data


def false_positive_classes(entries: list[dict]) -> Counter:
    """class tag -> number of false positives (untagged ones under "-")."""
    return Counter(e.get("class", "-") for e in entries if e["verdict"] == "false-positive")


def save_verdicts(data: dict, path: Path = VERDICTS, about: str | None = None) -> None:
    data["findings"].sort(key=lambda e: (e["package"], e["path"], e["line"], e["code"], e["n"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["{", f' "about": {json.dumps(data.get("about") or about or ABOUT)},',
             f' "versions": {json.dumps(data["versions"], sort_keys=True)},', ' "findings": [']
    body = [" " + json.dumps({k: e[k] for k in FIELDS if k in e}, ensure_ascii=False) for e in data["findings"]]
    lines.append(",\n".join(body))
    lines += [" ]", "}", ""]
    path.write_text("\n".join(lines), encoding="utf-8")


ABOUT = CORPORA["frameworks"].about
FIELDS = ("package", "path", "code", "expr", "n", "line", "may", "verdict", "class", "gradient", "reason")
GRADIENT_VALUES = ("reaches", "none", "unknown")


@dataclass
class Comparison:
    matched: list[tuple[dict, dict]]  # (finding, recorded entry)
    new: list[dict]  # findings without a recorded entry
    vanished: list[dict]  # recorded entries no longer found

    @property
    def unreviewed(self) -> list[dict]:
        return self.new + [f for f, e in self.matched if e["verdict"] == "unreviewed"]

    @property
    def lost(self) -> list[dict]:
        """Recorded true positives no longer found: lost recall."""
        return [e for e in self.vanished if e["verdict"] == "true-positive"]

    @property
    def stale(self) -> list[dict]:
        """Recorded false positives (or unreviewed entries) no longer found: progress, to drop."""
        return [e for e in self.vanished if e["verdict"] != "true-positive"]


def compare(findings: list[dict], recorded: dict) -> Comparison:
    by_key = {key_of(e): e for e in recorded["findings"]}
    matched, new = [], []
    for f in findings:
        e = by_key.pop(key_of(f), None)
        if e is None:
            new.append(f)
        else:
            matched.append((f, e))
    return Comparison(matched, new, list(by_key.values()))


def precision_table(comparison: Comparison, default: dict[str, bool]) -> dict[str, dict]:
    """rule -> {findings, true, false, unreviewed, precision, default}."""
    table: dict[str, dict] = defaultdict(lambda: {"findings": 0, "true": 0, "false": 0, "unreviewed": 0})
    for f in comparison.new:
        table[row_key(f)]["findings"] += 1
        table[row_key(f)]["unreviewed"] += 1
    for f, e in comparison.matched:
        row = table[row_key(f)]
        row["findings"] += 1
        row[{"true-positive": "true", "false-positive": "false", "unreviewed": "unreviewed"}[e["verdict"]]] += 1
    for code in default:
        table[code]  # every rule gets a row, also with no findings
    for code, row in table.items():
        reviewed = row["true"] + row["false"]
        row["precision"] = round(row["true"] / reviewed, 3) if reviewed else None
        row["default"] = default.get(code, True) and not code.endswith(MAY_ROW)
    return dict(sorted(table.items()))


MAY_ROW = "~may"  # the row of a default rule's findings on weak evidence (the may tier: not default)


def row_key(f: dict) -> str:
    return f["code"] + MAY_ROW if f.get("may") else f["code"]


def reported_by_default(f: dict, default: dict[str, bool]) -> bool:
    return default.get(f["code"], True) and not f.get("may")


def overall(table: dict[str, dict], default: bool | None = None) -> tuple[int, int, float | None]:
    rows = [r for r in table.values() if default is None or r["default"] == default]
    t = sum(r["true"] for r in rows)
    f = sum(r["false"] for r in rows)
    return t, f, (round(t / (t + f), 3) if t + f else None)


def recorded_table(paths: list[Path]) -> dict[str, dict]:
    """The per-rule table over the recorded verdicts of several corpora (after ``--update``
    each file holds exactly the findings of the current rules): the grown corpus."""
    default = {r.code: r.default for r in corpus_rules()}
    table: dict[str, dict] = {code: {"findings": 0, "true": 0, "false": 0, "unreviewed": 0} for code in default}
    for path in paths:
        for e in load_verdicts(path)["findings"]:
            row = table.setdefault(row_key(e), {"findings": 0, "true": 0, "false": 0, "unreviewed": 0})
            row["findings"] += 1
            row[{"true-positive": "true", "false-positive": "false"}.get(e["verdict"], "unreviewed")] += 1
    for code, row in table.items():
        row["default"] = default.get(code, False) and not code.endswith(MAY_ROW)
        row["precision"] = round(row["true"] / (row["true"] + row["false"]), 3) if row["true"] + row["false"] else None
    return dict(sorted(table.items()))


def format_table(table: dict[str, dict]) -> str:
    out = ["rule     default  findings  true  false  unreviewed  precision"]
    for code, r in table.items():
        p = "-" if r["precision"] is None else f"{r['precision']:.3f}"
        out.append(f"{code:8} {'yes' if r['default'] else 'opt-in':7} {r['findings']:9} {r['true']:5} "
                   f"{r['false']:6} {r['unreviewed']:11}  {p:>9}")
    for label, which in (("default rules", True), ("opt-in rules", False), ("all rules", None)):
        t, f, p = overall(table, which)
        out.append(f"{label}: {t} true, {f} false, precision {'-' if p is None else f'{p:.3f}'}")
    return "\n".join(out)


def format_markdown(table: dict[str, dict]) -> str:
    """The per-rule table for docs/precision.md (rules with findings)."""
    out = ["| rule | default | findings | true | false | precision |", "|---|---|---|---|---|---|"]
    for code, r in table.items():
        if r["findings"]:
            p = "-" if r["precision"] is None else f"{r['precision']:.2f}"
            out.append(f"| {code} | {'yes' if r['default'] else 'opt-in'} | {r['findings']} | {r['true']} | "
                       f"{r['false']} | {p} |")
    for label, which in (("default rules", True), ("opt-in rules", False), ("all rules", None)):
        rows = [r for r in table.values() if which is None or r["default"] == which]
        t, f, p = overall(table, which)
        out.append(f"| **{label}** | | {sum(r['findings'] for r in rows)} | {t} | {f} | "
                   f"{'-' if p is None else f'{p:.2f}'} |")
    return "\n".join(out)


def split(comparison: Comparison, held_out: frozenset) -> dict[str, Comparison]:
    """The comparison of the tuning packages and of the held-out ones (frozen before tuning)."""
    out = {}
    for label, inside in (("tuning", False), ("held-out", True)):
        keep = lambda e: (e["package"] in held_out) == inside  # noqa: E731
        out[label] = Comparison([(f, e) for f, e in comparison.matched if keep(f)],
                                [f for f in comparison.new if keep(f)],
                                [e for e in comparison.vanished if keep(e)])
    return out


def split_report(comparison: Comparison, default: dict[str, bool], held_out: frozenset,
                 markdown: bool = False) -> str:
    """Precision per rule on the tuning packages and on the held-out ones, side by side, and
    pooled over the default rules."""
    parts = split(comparison, held_out)
    tables = {label: precision_table(c, default) for label, c in parts.items()}
    empty = {"findings": 0, "true": 0, "false": 0, "unreviewed": 0, "precision": None}
    for t in tables.values():  # a row (a rule's may tier) found on one side only
        for c in {c for tt in tables.values() for c in tt}:
            t.setdefault(c, dict(empty, default=not c.endswith(MAY_ROW) and default.get(c, True)))
    codes = sorted(c for c in tables["tuning"] if any(t[c]["findings"] for t in tables.values()))

    def cell(r):
        p = "-" if r["precision"] is None else f"{r['precision']:.2f}"
        return f"{r['true']}/{r['false']}/{r['unreviewed']} ({p})"

    head = ["rule", "default", "tuning true/false/unreviewed (precision)", "held-out true/false/unreviewed (precision)"]
    rows = [[c, "yes" if tables["tuning"][c]["default"] else "opt-in", cell(tables["tuning"][c]),
             cell(tables["held-out"][c])] for c in codes]
    for label, which in (("default rules", True), ("opt-in rules", False)):
        cells = []
        for t in tables.values():
            tt, ff, pp = overall(t, which)
            un = sum(r["unreviewed"] for r in t.values() if r["default"] == which)
            cells.append(cell({"true": tt, "false": ff, "unreviewed": un, "precision": pp}))
        rows.append([f"**{label}**" if markdown else label, "", *cells])
    title = f"held out: {', '.join(sorted(held_out))}"
    if markdown:
        return "\n".join([title, "", "| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
                         + ["| " + " | ".join(r) + " |" for r in rows])
    return "\n".join([title, "  ".join(f"{h:>10}" if i else f"{h:14}" for i, h in enumerate(head))]
                     + [f"{r[0]:14}  {r[1]:>7}  {r[2]:>26}  {r[3]:>26}" for r in rows])


def gradient_counts(entries: list[dict]) -> dict[str, Counter]:
    """rule -> Counter of (verdict, gradient tag) over recorded verdicts of the gradient rules."""
    out: dict[str, Counter] = defaultdict(Counter)
    for e in entries:
        if e["code"].startswith("NAN2"):
            out[e["code"]][(e["verdict"], e.get("gradient", "-"))] += 1
    return dict(sorted(out.items()))


def describe(e: dict) -> str:
    return f"{e['package']}/{e['path']}:{e['line']}: {e['code']} {e['expr']}"


def show(entries: list[dict], packages: list[Package], context: int = 6) -> str:
    roots = {p.name: p.root for p in packages}
    out = []
    for e in entries:
        path = roots[e["package"]] / e["path"]
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        lo, hi = max(1, e["line"] - context), min(len(lines), e["line"] + 2)
        out.append(f"=== {describe(e)} [n={e['n']}]")
        if e.get("message"):
            out.append(f"    {e['message']}")
        for i in range(lo, hi + 1):
            out.append(f"{'>' if i == e['line'] else ' '}{i:6} {lines[i - 1]}")
    return "\n".join(out)


def check_versions(packages: list[Package], recorded: dict, how_to_get: str = "pip install -e '.[frameworks]'") -> str | None:
    installed = {p.name: p.version for p in packages}
    if recorded.get("versions") and recorded["versions"] != installed:
        return (f"the corpus {installed} differs from the reviewed one {recorded['versions']}; "
                f"get the pinned versions: {how_to_get}")
    return None


def gated(comparison: Comparison, default: dict[str, bool], review_opt_in: bool = True,
          reviewed_opt_in: tuple[str, ...] = ()) -> Comparison:
    """The part of a comparison the gate judges: all of it, or (``review_opt_in`` False, the
    training corpus) only the default rules' findings -- opt-in audit rules such as NAN109
    are recorded there for the diff, and reviewed by sample -- and those of the opt-in rules
    ``reviewed_opt_in`` (the scripts corpus reviews every finding of them)."""
    if review_opt_in:
        return comparison
    keep = lambda f: reported_by_default(f, default) or f["code"] in reviewed_opt_in  # noqa: E731
    return Comparison([(f, e) for f, e in comparison.matched if keep(f)],
                      [f for f in comparison.new if keep(f)],
                      [e for e in comparison.vanished if keep(e)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", choices=sorted(CORPORA), default="frameworks",
                        help="which corpus: the installed frameworks (default) or the fetched training code")
    parser.add_argument("--fetch", action="store_true",
                        help="download and unpack the pinned wheels or sdists of a fetched corpus first (needs PyPI)")
    parser.add_argument("--update", action="store_true",
                        help="record new findings as unreviewed and drop vanished ones")
    parser.add_argument("--show", action="store_true", help="print unreviewed findings with their code")
    parser.add_argument("--markdown", action="store_true", help="print the per-rule table as Markdown")
    parser.add_argument("--classes", action="store_true", help="count the recorded false positives per class")
    parser.add_argument("--select", default=None, help="comma-separated rule codes to report on (default: all)")
    parser.add_argument("-j", "--jobs", type=int, default=0, help="worker processes (0: one per core)")
    parser.add_argument("--verdicts", type=Path, default=None, help="the verdicts file (default: the corpus's)")
    parser.add_argument("--everything", action="store_true",
                        help="lint every Python file of the packages, not only the corpus subtrees "
                             "(exploration: the recorded verdicts cover the corpus)")
    parser.add_argument("--combined", action="store_true",
                        help="print the per-rule table over the recorded verdicts of the corpora of each population "
                             "(library code, training code; no lint)")
    args = parser.parse_args(argv)
    if args.combined:  # one table per population: library code apart from training code (issue 21)
        for population in dict.fromkeys(c.population for c in CORPORA.values()):
            members = [c for c in CORPORA.values() if c.population == population]
            table = recorded_table([c.verdicts for c in members])
            print(f"{population} ({', '.join(c.name for c in members)}):")
            print(format_markdown(table) if args.markdown else format_table(table))
        return 0
    which = CORPORA[args.corpus]
    verdicts = args.verdicts or which.verdicts
    try:
        if args.fetch and which.fetch is None:
            parser.error(f"the {which.name} corpus is installed, not fetched: {which.how_to_get}")
        packages = which.fetch() if args.fetch else which.locate()
    except NotInstalled as exc:
        print(f"corpus: {exc}", file=sys.stderr)
        return 2
    recorded = load_verdicts(verdicts)
    mismatch = check_versions(packages, recorded, which.how_to_get)
    if mismatch and not args.update:
        print(f"corpus: {mismatch}", file=sys.stderr)
        return 2
    if mismatch:  # a package added to the corpus, or a deliberate upgrade: verdicts are re-keyed
        print(f"corpus: warning: {mismatch}; recording these versions", file=sys.stderr)
    rules = corpus_rules()
    if args.everything and args.update:
        parser.error("--everything is for exploration; --update records the corpus subtrees only")
    findings, stats = lint_corpus(packages, jobs=args.jobs or None, rules=rules, everything=args.everything)
    if args.select:
        wanted = {c.strip().upper() for c in args.select.split(",")}
        findings = [f for f in findings if f["code"] in wanted]
        recorded = dict(recorded, findings=[e for e in recorded["findings"] if e["code"] in wanted])
    comparison = compare(findings, recorded)
    print(f"corpus {which.name}: {stats['files']} files, {stats['lines']} lines "
          f"({', '.join(n + ' ' + p['version'] + ': ' + str(p['files']) + ' files' for n, p in stats['packages'].items())}); "
          f"{stats['parsed']} parsed, {stats['prefiltered']} prefiltered, {stats['jobs']} jobs, {stats['seconds']} s wall, {stats['cpu_seconds']} s CPU")
    if args.update:
        full = load_verdicts(verdicts)
        keep_codes = None if not args.select else wanted
        kept = [e for e in full["findings"] if keep_codes is not None and e["code"] not in keep_codes]
        for f, e in comparison.matched:
            kept.append(dict(e, line=f["line"], may=f.get("may", False)))
        for f in comparison.new:
            kept.append(dict(f, verdict="unreviewed", reason=""))
        full["findings"] = kept
        full["versions"] = {p.name: p.version for p in packages}
        save_verdicts(full, verdicts, which.about)
        print(f"updated {verdicts}: {len(comparison.new)} new (unreviewed), "
              f"{len(comparison.vanished)} vanished dropped")
        for e in comparison.vanished:
            print(f"  vanished ({e['verdict']}): {describe(e)}")
    else:
        for f in comparison.new:
            print(f"new: {describe(f)}")
        for e in comparison.lost:
            print(f"lost (true-positive no longer found): {describe(e)}")
        for e in comparison.stale:
            print(f"stale ({e['verdict']} no longer found; --update drops it): {describe(e)}")
    if args.show:
        print(show(comparison.unreviewed, packages))
    table = precision_table(comparison, stats["default"])
    print(format_markdown(table) if args.markdown else format_table(table))
    if which.held_out:
        print(split_report(comparison, stats["default"], which.held_out, args.markdown))
    if args.classes:
        for label, which_rules in (("default rules", True), ("opt-in rules", False)):
            found = [e for f, e in comparison.matched if reported_by_default(f, stats["default"]) == which_rules]
            print(f"false positives per class, {label}:")
            for cls, n in false_positive_classes(found).most_common():
                print(f"{n:5}  {cls}")
    judged = gated(comparison, stats["default"], which.review_opt_in, which.reviewed_opt_in)
    failed = bool(judged.unreviewed) or bool(judged.lost)
    return 1 if failed and not args.update else 0


if __name__ == "__main__":
    sys.exit(main())
