#!/usr/bin/env python3
"""Recall on the fix-history corpus (tests/fixhistory/README.md): real NaN/Inf fixes that
packages made between two released versions.  Lints every site the way
tests/test_fixhistory.py does (the default rules, on the site's before.py and after.py) and
prints, per class and per framework, how many sites there are, on how many the parent line
is flagged (recall) and on how many the fixed line is flagged (it should be none).

    python scripts/fixhistory.py              # the tables, then every site with its findings
    python scripts/fixhistory.py --markdown   # just the tables (markdown)
    python scripts/fixhistory.py --update     # set each record's "flagged" to what the rules do now
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from nanlint.lint.engine import Linter  # noqa: E402
from nanlint.rules.base import all_rules  # noqa: E402

HERE = ROOT / "tests" / "fixhistory"
FRAMEWORKS = {"torch": "torch", "tensorflow": "tensorflow", "keras": "tensorflow", "jax": "jax"}


def load_sites() -> list[dict]:
    sites: list[dict] = []
    for path in sorted(HERE.glob("*.json")):
        sites.extend(json.loads(path.read_text()))
    return sites


def codes_on(linter: Linter, path: Path, lines: list[int]) -> list[str]:
    """The codes of the default findings on any of ``lines`` of ``path``."""
    result = linter.lint_source(path.read_bytes(), str(path))
    if result.error is not None:
        raise SystemExit(f"{path}: {result.error}")
    wanted = set(lines)
    return sorted({f.code for f in result.findings if f.start[0] in wanted})


def lint_sites(sites: list[dict]) -> list[dict]:
    linter = Linter([r for r in all_rules() if r.default])
    may = Linter([r for r in all_rules() if r.default or r.may_tier], {"may": True})
    rows = []
    for site in sites:
        folder = HERE / "sites" / site["id"]
        rows.append({
            "site": site,
            "parent": codes_on(linter, folder / "before.py", site["parent_lines"]),
            "may": codes_on(may, folder / "before.py", site["parent_lines"]),
            "fixed": codes_on(linter, folder / "after.py", site["fixed_lines"]),
        })
    return rows


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def table(rows: list[dict], key: str, title: str) -> list[str]:
    groups: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        value = row["site"][key]
        groups[FRAMEWORKS.get(value, value) if key == "framework" else value].append(row)
    out = [f"| {title} | sites | parent flagged | recall | with --may | fixed flagged |",
           "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for name in sorted(groups):
        out.append("| " + " | ".join([name, *_counts(groups[name])]) + " |")
    out.append("| " + " | ".join(f"**{c}**" for c in ["all", *_counts(rows)]) + " |")
    return out


def _counts(group: list[dict]) -> list[str]:
    hit = sum(1 for r in group if r["parent"])
    may = sum(1 for r in group if r["may"])
    loud = sum(1 for r in group if r["fixed"])
    return [str(len(group)), str(hit), pct(hit, len(group)), f"{may} ({pct(may, len(group))})", str(loud)]


def report(rows: list[dict]) -> str:
    packages = len({r["site"]["package"] for r in rows})
    lines = [f"Fix-history corpus: {len(rows)} sites from {packages} packages, default rules.", ""]
    lines += table(rows, "class", "class") + [""] + table(rows, "framework", "framework")
    return "\n".join(lines)


def details(rows: list[dict]) -> str:
    lines = []
    for row in rows:
        s = row["site"]
        parent = ", ".join(row["parent"]) or "-"
        may = ", ".join(c for c in row["may"] if c not in row["parent"]) or "-"
        fixed = ", ".join(row["fixed"]) or "-"
        lines.append(f"{s['id']:<55} {s['class']:<24} parent: {parent:<16} --may adds: {may:<16} fixed: {fixed}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print only the markdown tables")
    parser.add_argument("--update", action="store_true", help='set each record\'s "flagged" to what the rules do now')
    args = parser.parse_args(argv)
    rows = lint_sites(load_sites())
    if args.update:
        flagged = {r["site"]["id"]: bool(r["parent"]) for r in rows}
        for path in sorted(HERE.glob("*.json")):
            records = json.loads(path.read_text())
            for record in records:
                record["flagged"] = flagged[record["id"]]
            path.write_text(json.dumps(records, indent=2) + "\n")
    print(report(rows))
    if not args.markdown:
        print()
        print(details(rows))
    return 1 if any(r["fixed"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
