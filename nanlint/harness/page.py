"""``index.html`` of ``nanlint verify --plot DIR``: every fixture's verdict (the harness's own:
PASS, FAIL, SKIP), its cases as the table shows them, its picture (:mod:`nanlint.harness.plot`)
or why no sweep was drawn, and a link to the numbers plotted.  One static file, no scripts."""

from __future__ import annotations

import html
from dataclasses import dataclass

from nanlint.harness import reference as references
from nanlint.harness.fixtures import Fixture

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em auto; max-width: 1500px; padding: 0 1em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin: 0; }
.meta { color: #555; } .fixture { border-top: 1px solid #ccc; padding: 1em 0; }
.badge { display: inline-block; min-width: 3.2em; text-align: center; font-weight: bold; border-radius: 3px;
         padding: 0 .4em; margin-right: .5em; color: white; }
.PASS { background: #2e7d32; } .FAIL { background: #c62828; } .SKIP { background: #757575; }
table { border-collapse: collapse; margin: .5em 0; font-size: 12.5px; }
td, th { border: 1px solid #ddd; padding: 2px 6px; text-align: left; } th { background: #f4f4f4; }
td.bad { color: #c62828; font-weight: bold; }
img { max-width: 100%; border: 1px solid #eee; } .why { color: #8a5a00; }
nav a { margin-right: .8em; white-space: nowrap; }
"""


@dataclass
class Entry:
    data: dict  # plot.numbers(fixture): verdict, paths, no_sweep, why
    fixture: Fixture
    json: str  # paths relative to the index
    png: str | None


def _e(text) -> str:
    return html.escape(str(text))


def _anchor(entry: Entry) -> str:
    return entry.fixture.id.replace("/", "--").replace(".", "-")


def _cases(f: Fixture) -> str:
    if not f.cases:
        return ""
    rows = ["<tr><th>case</th><th>criterion</th><th>unfixed</th><th>fixed</th><th>max diff (benign)</th>"
            "<th>vs reference</th><th>ok</th></tr>"]
    for c in f.cases:
        diff = f"{c.max_abs_diff:.2g}" if c.kind == "benign" and c.max_abs_diff is not None else "-"
        rows.append(f"<tr><td>{_e(c.name)}</td><td>{_e(c.criterion)}</td><td>{_e(c.unfixed)}</td>"
                    f"<td>{_e(c.fixed)}</td><td>{_e(diff)}</td><td>{_e(references.shown(c))}</td>"
                    f"<td class=\"{'' if c.ok else 'bad'}\">{'yes' if c.ok else 'NO'}</td></tr>")
    return "<table>" + "".join(rows) + "</table>"


def _problems(f: Fixture) -> str:
    lines = list(f.errors) + [f"{c.name}: {p}" for c in f.cases for p in c.problems]
    if f.combined is not None and not f.combined.ok:
        lines += [f"combined fix: {e}" for e in f.combined.errors]
        lines += [f"combined fix, {c.name}: {p}" for c in f.combined.cases for p in c.problems]
    if not lines or not f.failed:
        return ""
    return "<details open><summary>why it fails</summary><pre>" + _e("\n".join(lines)) + "</pre></details>"


def _section(entry: Entry) -> str:
    d, f = entry.data, entry.fixture
    out = [f'<div class="fixture" id="{_anchor(entry)}">',
           f'<h2><span class="badge {d["verdict"]}">{d["verdict"]}</span>{_e(f.id)}</h2>',
           f'<div class="meta">{_e(f.framework)} · device {_e(f.device)} · reference: {_e(d["reference"] or "none")}'
           f' · tolerance {d["tolerance"]:g} · <a href="{_e(entry.json)}">numbers plotted (JSON)</a></div>',
           _cases(f), _problems(f)]
    if d["why"]:
        out.append(f'<p class="why">No sweep drawn: {_e(d["why"])}</p>')
    for hazard, why in d["no_sweep"].items():
        out.append(f'<p class="why">No sweep drawn for <b>{_e(hazard)}</b>: {_e(why)}</p>')
    for p in d["paths"]:
        if p.get("axis_note"):
            out.append(f'<p class="why">{_e(p["hazard"])}: x axis is t, not SWEEP\'s param: {_e(p["axis_note"])}</p>')
    if entry.png:
        drawn = ", ".join(f"{p['benign']} → {p['hazard']}" for p in d["paths"])
        out.append(f'<p>Swept ({len(d["paths"][0]["t"])} points each): {_e(drawn)}</p>'
                   f'<a href="{_e(entry.png)}"><img src="{_e(entry.png)}" alt="{_e(f.id)} sweep" loading="lazy"></a>')
    out.append("</div>")
    return "\n".join(x for x in out if x)


def render(entries: list[Entry], meta: dict, verdict: str) -> str:
    counts = {v: sum(e.data["verdict"] == v for e in entries) for v in ("PASS", "FAIL", "SKIP")}
    drawn = sum(1 for e in entries if e.png)
    nav = " ".join(f'<a href="#{_anchor(e)}"><span class="badge {e.data["verdict"]}">{e.data["verdict"]}</span>'
                   f'{_e(e.fixture.id)}</a>' for e in entries)
    head = (f"<h1>nanlint verify: {_e(verdict)}</h1>"
            f'<p class="meta">{counts["PASS"]} PASS · {counts["FAIL"]} FAIL · {counts["SKIP"]} SKIP · '
            f"{drawn} of {len(entries)} fixtures swept · nanlint {_e(meta.get('nanlint'))} · commit "
            f"{_e(meta.get('commit') or '?')} · device requested {_e(meta.get('device_requested'))} · "
            f"{_e(meta.get('date'))}</p>"
            "<p>Each picture walks the straight path from a benign case's inputs (t = 0) to a hazard case's "
            "(t = 1) and runs, at every point, the unfixed code, nanlint's fixed copy and the reference, in the "
            "same worker run that gave the verdicts. An output of one element is plotted as its value, a larger "
            "one as its max |x|; a red x at the top of a panel marks a point where the unfixed code is NaN/Inf. "
            "The verdicts are the harness's own, from the cases (the sweep's points are not judged).</p>")
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>nanlint verify --plot</title>"
            f"<style>{STYLE}</style></head><body>\n{head}\n<nav>{nav}</nav>\n"
            + "\n".join(_section(e) for e in entries) + "\n</body></html>\n")
