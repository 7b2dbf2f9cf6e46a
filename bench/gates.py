"""Per rule: how many files its gate passes to libcst, and how many have a finding of it.

    PYTHONPATH=. python3 bench/gates.py               # the frameworks corpus (copied, as bench/run.py does)
    PYTHONPATH=. python3 bench/gates.py path/to/tree  # any tree
    PYTHONPATH=../old python3 bench/gates.py --select NAN111,NAN506 --markdown  # another checkout's gates

A rule's gate is the site filter with that rule alone (``SiteFilter([rule]).cannot_report``:
its ``triggers`` against the ops the file's names resolve to, and its text check, ``wanted``).
"passed" counts the files it sends to the rules (run on CPython's tree first, then on
libcst's where they find something: ``Linter.on_tree``), "found" the files with a finding of the rule
(the may tier included, every default rule run on every file without the filter, so a
finding superseded by another rule's is not counted).  A gate passing a file with no
finding costs a conversion and the analysis; a file found but not passed would be a lost
finding: the script says so and exits 1.  "only" counts the files no other rule's gate
passes: what the rule alone sends to the rules.  ``gate ms`` is the time the rule's gate took
over all files (its share of the site filter).  The last row is the filter of all the
rules together: what a run analyses.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

from nanlint.lint.engine import Linter  # noqa: E402
from nanlint.lint.site_filter import SiteFilter  # noqa: E402
from nanlint.rules.base import all_rules  # noqa: E402
from nanlint.source.syntax import precheck  # noqa: E402


def measure(files: list[Path], rules, settings: dict):
    """{code: [passed, found, lost, gate seconds, only]} and (passed, found) of all rules together."""
    table = {r.code: [0, 0, 0, 0.0, 0] for r in rules}
    filters = {r.code: SiteFilter([r], settings) for r in rules}
    together = SiteFilter(rules, settings)
    linter = Linter(rules, {**settings, "may": True})
    union = [0, 0]
    for path in files:
        source = path.read_bytes()
        checked = precheck(source)
        if checked.tree is None:
            continue
        passed = set()
        for r in rules:
            t0 = time.perf_counter()
            if not filters[r.code].cannot_report(checked, str(path)):
                passed.add(r.code)
            table[r.code][3] += time.perf_counter() - t0
        found = {f.code for f in linter.lint_source(source, str(path), site_filter=False).findings}
        for code in table:
            table[code][0] += code in passed
            table[code][1] += code in found
            table[code][2] += code in found and code not in passed
            table[code][4] += passed == {code}
        union[0] += not together.cannot_report(checked, str(path))
        union[1] += bool(found & set(table))
    return table, union


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path", nargs="?", type=Path, help="a tree (default: the frameworks corpus)")
    ap.add_argument("--select", help="comma-separated codes (default: the default rules)")
    ap.add_argument("--markdown", action="store_true", help="a Markdown table")
    args = ap.parse_args(argv)
    rules = [r for r in all_rules() if r.code != "NAN001" and not r.judges_noqa and
             (r.code in args.select.split(",") if args.select else r.default)]
    with tempfile.TemporaryDirectory() as tmp:
        if args.path is None:
            sys.path.insert(0, str(HERE))
            import run as bench_run  # noqa: E402 - bench/run.py: the corpus, copied as it copies it
            root = bench_run.make_corpus(Path(tmp), None)
        else:
            root = args.path
        files = sorted(p for p in root.rglob("*.py") if p.is_file())
        table, union = measure(files, rules, {"frameworks": {}})
    sep = " | " if args.markdown else "  "
    head = ["rule", "passed", "only", "found", "passed/found", "gate ms"]
    rows = [[code, str(p), str(only), str(f), f"{p / f:.1f}" if f else ("-" if not p else "inf"), f"{s * 1000:.0f}"]
            for code, (p, f, _, s, only) in table.items()]
    rows.append([f"all ({len(files)} files)", str(union[0]), "", str(union[1]),
                 f"{union[0] / union[1]:.1f}" if union[1] else "-", f"{sum(v[3] for v in table.values()) * 1000:.0f}"])
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
        for row in [head] + rows:
            print(sep.join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))))
    lost = {code: v[2] for code, v in table.items() if v[2]}
    if lost:
        print("LOST (a finding in a file its gate does not pass): " + ", ".join(f"{c}: {n}" for c, n in lost.items()))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
