#!/usr/bin/env python3
"""Recall on the fix-history corpus (tests/fixhistory/README.md): real NaN/Inf fixes that
packages made between two released versions.  Lints every site the way
tests/test_fixhistory.py does (the default rules, on the site's before.py and after.py) and
prints, per class and per framework, how many sites there are, on how many the parent line
is flagged (recall) and on how many the fixed line is flagged (it should be none).

    python scripts/fixhistory.py              # the tables, then every site with its findings
    python scripts/fixhistory.py --markdown   # just the tables (markdown)
    python scripts/fixhistory.py --update     # set each record's "flagged" to what the rules do now
    python scripts/fixhistory.py --packages   # also lint each site in its real releases (network, cache)

``--packages [DIR]`` (scripts/fixhistory_packages.py) fetches each site's OLD and NEW release
into DIR (default ``~/.cache/nanlint-fixhistory``), lints the real file where it lies, as
``nanlint pkg/`` would (the package's modules that import it count), and compares with the
excerpt: the tables get package columns and the list the sites the package mode still misses.
The real file's lines are written into the records (``file_parent_lines``,
``file_fixed_lines``; ``package_error`` for a release that cannot be had).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import fixhistory_packages as packages  # noqa: E402

import libcst as cst  # noqa: E402

from nanlint.analysis.differentiated import gradient_reaches  # noqa: E402
from nanlint.lint.engine import Linter  # noqa: E402
from nanlint.rules.base import all_rules  # noqa: E402
from nanlint.semantic import modules  # noqa: E402
from nanlint.semantic.context import FileContext  # noqa: E402

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


def gradient_evidence(path: Path, lines: list[int]) -> bool:
    """Whether the gradient rules' evidence (nanlint/analysis/differentiated.py) says a
    gradient reaches the first expression on one of ``lines`` of ``path``, as linted there
    (a forward pass, a tape, a loss, an importer that calls the function so)."""
    ctx = FileContext(cst.parse_module(path.read_bytes()), str(path))
    wanted = set(lines)
    found: list[cst.CSTNode] = []

    class First(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if found:
                return False
            if isinstance(node, cst.BaseExpression) and ctx.line_of(node) in wanted:
                found.append(node)
                return False
            return True

    ctx.module.visit(First())
    return bool(found) and gradient_reaches(ctx, found[0]) is not None


def linters() -> tuple[Linter, Linter]:
    return (Linter([r for r in all_rules() if r.default]),
            Linter([r for r in all_rules() if r.default or r.may_tier], {"may": True}))


def lint_sites(sites: list[dict]) -> list[dict]:
    linter, may = linters()
    rows = []
    for site in sites:
        folder = HERE / "sites" / site["id"]
        rows.append({
            "site": site,
            "parent": codes_on(linter, folder / "before.py", site["parent_lines"]),
            "may": codes_on(may, folder / "before.py", site["parent_lines"]),
            "fixed": codes_on(linter, folder / "after.py", site["fixed_lines"]),
            "grad": gradient_evidence(folder / "before.py", site["parent_lines"]),
        })
    return rows


def lint_packages(rows: list[dict]) -> None:
    """Package mode: each row gets ``pkg`` (None when its release cannot be had), the same
    three lists on the real files, linted where they lie in the unpacked release."""
    linter, may = linters()
    for row in rows:
        site = row["site"]
        try:
            found = packages.locate(site, HERE / "sites")
        except RuntimeError as exc:
            print(f"{site['id']}: {exc}", file=sys.stderr)
            row["pkg"] = None
            continue
        with modules.run_memo():  # one run per release, as `nanlint pkg/` makes it
            row["pkg"] = {
                "parent": codes_on(linter, found["before"], found["parent"]),
                "may": codes_on(may, found["before"], found["parent"]),
                "fixed": codes_on(linter, found["after"], found["fixed"]),
                "grad": gradient_evidence(found["before"], found["parent"]),
                "file": found,
            }


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def table(rows: list[dict], key: str, title: str) -> list[str]:
    groups: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        value = row["site"][key]
        groups[FRAMEWORKS.get(value, value) if key == "framework" else value].append(row)
    if "pkg" in rows[0]:
        out = [f"| {title} | sites | excerpt | excerpt --may | in package | package | package --may "
               "| gradient evidence (excerpt / package) | fixed flagged (excerpt / package) |",
               "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    else:
        out = [f"| {title} | sites | parent flagged | recall | with --may | fixed flagged |",
               "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for name in sorted(groups):
        out.append("| " + " | ".join([name, *_counts(groups[name])]) + " |")
    out.append("| " + " | ".join(f"**{c}**" for c in ["all", *_counts(rows)]) + " |")
    return out


def _counts(group: list[dict]) -> list[str]:
    n = len(group)
    hit = sum(1 for r in group if r["parent"])
    may = sum(1 for r in group if r["may"])
    loud = sum(1 for r in group if r["fixed"])
    if "pkg" not in group[0]:
        return [str(n), str(hit), pct(hit, n), f"{may} ({pct(may, n)})", str(loud)]
    linted = [r["pkg"] for r in group if r["pkg"] is not None]
    p_hit = sum(1 for p in linted if p["parent"])
    p_may = sum(1 for p in linted if p["may"])
    p_loud = sum(1 for p in linted if p["fixed"])
    grad = sum(1 for r in group if r["grad"])
    p_grad = sum(1 for p in linted if p["grad"])
    return [str(n), f"{hit} ({pct(hit, n)})", f"{may} ({pct(may, n)})", str(len(linted)),
            f"{p_hit} ({pct(p_hit, len(linted))})", f"{p_may} ({pct(p_may, len(linted))})",
            f"{grad} / {p_grad}", f"{loud} / {p_loud}"]


def report(rows: list[dict]) -> str:
    packages_ = len({r["site"]["package"] for r in rows})
    lines = [f"Fix-history corpus: {len(rows)} sites from {packages_} packages, default rules.", ""]
    lines += table(rows, "class", "class") + [""] + table(rows, "framework", "framework")
    return "\n".join(lines)


def _codes(codes: list[str], base: list[str] = ()) -> str:
    return ", ".join(c for c in codes if c not in base) or "-"


def details(rows: list[dict]) -> str:
    lines = []
    for row in rows:
        s = row["site"]
        line = (f"{s['id']:<55} {s['class']:<24} parent: {_codes(row['parent']):<16} "
                f"--may adds: {_codes(row['may'], row['parent']):<16} fixed: {_codes(row['fixed']):<8}"
                f"gradient: {'yes' if row['grad'] else 'no'}")
        if "pkg" in row:
            p = row["pkg"]
            line += ("  | package: n/a" if p is None else
                     f"  | package parent: {_codes(p['parent']):<16} --may adds: {_codes(p['may'], p['parent']):<16}"
                     f" fixed: {_codes(p['fixed']):<8}gradient: {'yes' if p['grad'] else 'no'}")
        lines.append(line)
    return "\n".join(lines)


def _write_records(change) -> None:
    for path in sorted(HERE.glob("*.json")):
        records = json.loads(path.read_text())
        for record in records:
            change(record)
        path.write_text(json.dumps(records, indent=2) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print only the markdown tables")
    parser.add_argument("--update", action="store_true", help='set each record\'s "flagged" to what the rules do now')
    parser.add_argument("--packages", nargs="?", const=str(packages.CACHE), metavar="DIR",
                        help="also lint each site in its real releases, fetched into DIR")
    args = parser.parse_args(argv)
    rows = lint_sites(load_sites())
    if args.packages:
        packages.CACHE = Path(args.packages).expanduser()
        lint_packages(rows)
        by_id = {r["site"]["id"]: r["site"] for r in rows}
        fields = ("file_parent_lines", "file_fixed_lines", "package_error")

        def located(record: dict) -> None:
            for field in fields:
                record.pop(field, None)
                if field in by_id[record["id"]]:
                    record[field] = by_id[record["id"]][field]
        _write_records(located)
    if args.update:
        flagged = {r["site"]["id"]: bool(r["parent"]) for r in rows}
        _write_records(lambda record: record.update(flagged=flagged[record["id"]]))
    print(report(rows))
    if not args.markdown:
        print()
        print(details(rows))
    loud = any(r["fixed"] or (r.get("pkg") or {}).get("fixed") for r in rows)
    return 1 if loud else 0


if __name__ == "__main__":
    sys.exit(main())
