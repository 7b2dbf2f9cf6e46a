"""JUnit XML, as CI systems read it (GitLab, Jenkins, Azure, CircleCI): ``testsuites`` >
one ``testsuite`` per file with findings > one ``testcase`` per finding with a ``failure``.
A clean run is one suite with one passing test case, so the report is never empty."""

from __future__ import annotations

from xml.etree import ElementTree as ET

from nanlint.report._run import Run

EDITS = False  # shows whether a finding is fixable, never the edits (nanlint.report.shows_edits)


def render(run: Run) -> str:
    by_file: dict[str, list] = {}
    for f in run.findings:
        by_file.setdefault(run.display_path(f.path), []).append(f)
    total = len(run.findings)
    root = ET.Element("testsuites", name="nanlint", tests=str(max(total, 1)), failures=str(total), errors="0")
    if not by_file:
        suite = ET.SubElement(root, "testsuite", name="nanlint", tests="1", failures="0", errors="0", skipped="0")
        ET.SubElement(suite, "testcase", name="nanlint", classname="nanlint")
    for path, findings in sorted(by_file.items()):
        suite = ET.SubElement(root, "testsuite", name=path, tests=str(len(findings)),
                              failures=str(len(findings)), errors="0", skipped="0")
        for f in findings:
            where = f"cell {f.cell}, line {f.start[0]}, col {f.start[1]}" if f.cell is not None \
                else f"line {f.start[0]}, col {f.start[1]}"
            case = ET.SubElement(suite, "testcase", name=f"org.nanlint.{f.code}", classname=path,
                                 file=path, line=str(f.start[0]))
            failure = ET.SubElement(case, "failure", message=f"{f.code} {f.message}", type=f.code)
            failure.text = f"{where}: {f.code} {f.message}"
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
