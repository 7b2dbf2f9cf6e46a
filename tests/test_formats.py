"""Output formats, each checked against what its consumer reads: SARIF against the
SARIF 2.1.0 JSON schema, GitHub annotations against the documented workflow-command
syntax and escaping, JUnit XML parsed back, GitLab Code Quality against the documented
fields; plus --output-file, --statistics, --show-fixes and colour."""

import io
import json
import re
import textwrap
from pathlib import Path
from xml.etree import ElementTree as ET

import jsonschema
import pytest

from nanlint import report
from nanlint.lint import catalogue
from nanlint.report import github
from nanlint.rules.base import all_rules

SCHEMAS = Path(__file__).parent / "schemas"

HAZARDS = textwrap.dedent("""\
    import torch


    def log_probs(z):
        return z.softmax(-1).log()


    def g(z):
        p = torch.softmax(z, dim=-1)
        return torch.log(p)
""")
# line 5: NAN101 with a safe fix (col 12..31); line 10: NAN101 through `p`, unsafe fix


def write(tmp_path, name, text):
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


@pytest.fixture
def hazards(tmp_path):
    return write(tmp_path, "src/model.py", HAZARDS)


def test_every_format_is_offered():
    assert {"text", "json", "full", "github", "sarif", "junit", "gitlab", "json-lines"} <= set(report.formats())


# --- full ---------------------------------------------------------------------------------------
def test_full_shows_source_caret_and_fix_diff(run_cli, hazards):
    code, out, _ = run_cli("--isolated", "--format", "full", "src/model.py")
    assert code == 1
    lines = out.splitlines()
    i = lines.index("src/model.py:5:12: NAN101 [*] log of softmax is -inf/NaN once a probability underflows to 0; use log_softmax")
    src = next(n for n in range(i, len(lines)) if lines[n].endswith("return z.softmax(-1).log()"))
    caret = lines[src + 1]
    # the caret sits under the span: same column as "z.softmax" in the source line
    assert caret.index("^") == lines[src].index("z.softmax")
    assert caret.count("^") == len("z.softmax(-1).log()")
    assert caret.rstrip().endswith("NAN101")
    block = "\n".join(lines[i:i + 20])
    assert "Safe fix:" in block
    assert "-    return z.softmax(-1).log()" in block
    assert "+    return z.log_softmax(-1)" in block
    # the finding through an assignment has an unsafe fix, and says so
    assert "Unsafe fix (applied with --fix --unsafe-fixes):" in out
    assert "+    return torch.log_softmax(z, dim=-1)" in out
    summary, unsafe = out.rstrip().splitlines()[-2:]
    assert summary == "Found 2 findings (1 fixable with --fix, 1 more with --unsafe-fixes)."
    assert unsafe.startswith("An unsafe fix can change the value") and "`nanlint rule NAN101`" in unsafe


# --- github ---------------------------------------------------------------------------------------
# https://docs.github.com/en/actions/reference/workflow-commands-for-github-actions
ANNOTATION = re.compile(r"^::error (?P<props>[^:]*)::(?P<message>.*)$")


def _unescape(text):
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


def _props(text):
    return {k: _unescape(v) for k, v in (p.split("=", 1) for p in text.split(","))}


def test_github_annotations_follow_the_workflow_command_syntax(run_cli, hazards):
    code, out, _ = run_cli("--isolated", "--format", "github", "src/model.py")
    assert code == 1
    lines = out.splitlines()
    assert len(lines) == 2
    m = ANNOTATION.match(lines[0])
    assert m, lines[0]
    props = _props(m["props"])
    assert props == {"file": "src/model.py", "line": "5", "col": "12", "endLine": "5", "endColumn": "31",
                     "title": "NAN101"}
    assert m["message"].startswith("NAN101 log of softmax")


def test_github_paths_are_relative_to_the_workspace(run_cli, hazards, tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    _, out, _ = run_cli("--isolated", "--format", "github", "model.py", cwd=tmp_path / "src")
    assert _props(ANNOTATION.match(out.splitlines()[0])["props"])["file"] == "src/model.py"


def test_github_escaping_of_properties_and_data():
    assert github.escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert github.escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_github_escapes_a_path_with_comma_and_colon(run_cli, tmp_path):
    write(tmp_path, "we,ird:dir/m.py", HAZARDS)
    _, out, _ = run_cli("--isolated", "--format", "github", ".")
    m = ANNOTATION.match(out.splitlines()[0])
    assert m, out
    assert "we%2Cird%3Adir/m.py" in m["props"]
    assert _props(m["props"])["file"] == "we,ird:dir/m.py"


# --- sarif ------------------------------------------------------------------------------------------
def sarif_validator():
    # The OASIS SARIF 2.1.0 schema (errata 01), committed from its source, see tests/schemas/README.md
    schema = json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text())
    return jsonschema.Draft4Validator(schema)


def test_sarif_is_valid_against_the_schema_and_carries_rules_and_fixes(run_cli, hazards):
    code, out, _ = run_cli("--isolated", "--format", "sarif", "src/model.py")
    assert code == 1
    log = json.loads(out)
    errors = sorted(sarif_validator().iter_errors(log), key=str)
    assert not errors, errors[0]
    assert log["version"] == "2.1.0"
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    rules = {r["id"]: r for r in driver["rules"]}
    assert set(rules) == {r.code for r in all_rules()}
    nan101 = rules["NAN101"]
    page = catalogue.pages()["NAN101"]
    assert nan101["name"] == "log-softmax"
    assert nan101["shortDescription"]["text"]
    assert nan101["fullDescription"]["text"].startswith("Flags the logarithm of a softmax")
    assert nan101["help"]["markdown"] == page.text
    assert "helpUri" not in nan101  # the page is in "help"; no link to an unpublished address
    results = run["results"]
    assert [r["ruleId"] for r in results] == ["NAN101", "NAN101"]
    first = results[0]
    assert driver["rules"][first["ruleIndex"]]["id"] == "NAN101"
    loc = first["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "src/model.py"
    assert loc["region"] == {"startLine": 5, "startColumn": 12, "endLine": 5, "endColumn": 31}
    replacement = first["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert replacement["insertedContent"]["text"] == "z.log_softmax(-1)"
    assert replacement["deletedRegion"]["startLine"] == 5
    assert "unsafe" in results[1]["fixes"][0]["description"]["text"]
    assert first["partialFingerprints"]["nanlint/v1"] != results[1]["partialFingerprints"]["nanlint/v1"]


def test_sarif_schema_check_can_fail():
    """The validator catches a broken log (the test above could not pass vacuously)."""
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {}}, "results": [{"message": {}}]}]}
    assert list(sarif_validator().iter_errors(bad))


def test_sarif_of_a_clean_run_is_valid(run_cli, tmp_path):
    write(tmp_path, "ok.py", "x = 1\n")
    code, out, _ = run_cli("--isolated", "--format", "sarif", "ok.py")
    assert code == 0
    log = json.loads(out)
    assert not list(sarif_validator().iter_errors(log))
    assert log["runs"][0]["results"] == []


# --- junit --------------------------------------------------------------------------------------------
def test_junit_xml_has_suites_cases_and_failures(run_cli, hazards, tmp_path):
    write(tmp_path, "src/other.py", "import torch\n\ny = torch.log(torch.sigmoid(torch.zeros(2)))\n")
    code, out, _ = run_cli("--isolated", "--format", "junit", "src")
    assert code == 1
    root = ET.fromstring(out.encode())
    assert root.tag == "testsuites"
    assert root.get("tests") == "3" and root.get("failures") == "3"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["src/model.py", "src/other.py"]
    cases = suites[0].findall("testcase")
    assert len(cases) == int(suites[0].get("tests")) == int(suites[0].get("failures")) == 2
    failure = cases[0].find("failure")
    assert cases[0].get("name") == "org.nanlint.NAN101"
    assert cases[0].get("classname") == "src/model.py" and cases[0].get("line") == "5"
    assert failure.get("type") == "NAN101"
    assert failure.get("message").startswith("NAN101 log of softmax")
    assert failure.text.startswith("line 5, col 12: NAN101")


def test_junit_clean_run_is_one_passing_case(run_cli, tmp_path):
    write(tmp_path, "ok.py", "x = 1\n")
    code, out, _ = run_cli("--isolated", "--format", "junit", "ok.py")
    assert code == 0
    root = ET.fromstring(out.encode())
    cases = root.findall("testsuite/testcase")
    assert len(cases) == 1 and cases[0].find("failure") is None
    assert root.get("failures") == "0"


# --- gitlab ---------------------------------------------------------------------------------------------
# https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format
GITLAB_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "minLength": 1},
            "fingerprint": {"type": "string", "minLength": 1},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {
                "type": "object",
                "required": ["path", "lines"],
                "properties": {
                    "path": {"type": "string", "pattern": "^[^/]"},
                    "lines": {"type": "object", "required": ["begin"],
                              "properties": {"begin": {"type": "integer", "minimum": 1}}},
                },
            },
        },
    },
}


def test_gitlab_code_quality_report(run_cli, hazards, tmp_path):
    code, out, _ = run_cli("--isolated", "--format", "gitlab", ".")
    assert code == 1
    issues = json.loads(out)
    jsonschema.validate(issues, GITLAB_SCHEMA)
    assert [(i["check_name"], i["location"]["path"], i["location"]["lines"]["begin"]) for i in issues] == \
        [("NAN101", "src/model.py", 5), ("NAN101", "src/model.py", 10)]
    assert len({i["fingerprint"] for i in issues}) == 2
    # the fingerprint survives lines moving above it
    hazards.write_text("# a comment\n" * 3 + HAZARDS)
    _, out2, _ = run_cli("--isolated", "--format", "gitlab", ".")
    moved = json.loads(out2)
    assert [i["location"]["lines"]["begin"] for i in moved] == [8, 13]
    assert [i["fingerprint"] for i in moved] == [i["fingerprint"] for i in issues]


# --- json-lines -------------------------------------------------------------------------------------------
def test_json_lines_is_one_json_object_per_line_like_json(run_cli, hazards):
    _, out, _ = run_cli("--isolated", "--format", "json-lines", "src/model.py")
    _, whole, _ = run_cli("--isolated", "--format", "json", "src/model.py")
    objects = [json.loads(line) for line in out.splitlines()]
    assert objects == json.loads(whole)
    assert [o["location"]["row"] for o in objects] == [5, 10]


# --- options ------------------------------------------------------------------------------------------------
def test_output_file(run_cli, hazards, tmp_path):
    code, out, _ = run_cli("--isolated", "--format", "sarif", "--output-file", "out.sarif", "src/model.py")
    assert code == 1
    assert out == ""
    log = json.loads((tmp_path / "out.sarif").read_text())
    assert len(log["runs"][0]["results"]) == 2


def test_statistics_counts_per_rule(run_cli, hazards, tmp_path):
    write(tmp_path, "src/other.py", "import torch\n\ny = torch.log(torch.sigmoid(torch.zeros(2)))\n")
    code, out, _ = run_cli("--isolated", "--statistics", "src")
    assert code == 1
    assert out.splitlines() == ["2\tNAN101\t[*] log-softmax", "1\tNAN102\t[*] log-sigmoid"]
    _, out, _ = run_cli("--isolated", "--statistics", "--format", "json", "src")
    assert json.loads(out) == [{"code": "NAN101", "name": "log-softmax", "count": 2, "fixable": True},
                               {"code": "NAN102", "name": "log-sigmoid", "count": 1, "fixable": True}]


def test_statistics_marks_what_is_not_fixable(run_cli, tmp_path):
    write(tmp_path, "a.py", "import torch\n\ndef g(z):\n    p = torch.softmax(z, dim=-1)\n    return torch.log(p)\n\n"
                            "y = torch.log(torch.sigmoid(torch.zeros(2)))\n")
    _, out, _ = run_cli("--isolated", "--statistics", "a.py")
    assert out.splitlines() == ["1\tNAN101\t[ ] log-softmax", "1\tNAN102\t[*] log-sigmoid"]


def test_show_fixes_lists_fixes_per_file_and_rule(run_cli, hazards, tmp_path):
    write(tmp_path, "src/other.py", "import torch\n\ny = torch.log(torch.sigmoid(torch.zeros(2)))\n")
    code, out, _ = run_cli("--isolated", "--fix", "--unsafe-fixes", "--show-fixes", "src")
    assert code == 0
    assert "Fixed 3 findings:\n- src/model.py:\n    2 \u00d7 NAN101 (log-softmax)\n" \
           "- src/other.py:\n    1 \u00d7 NAN102 (log-sigmoid)\n" in out
    _, out, _ = run_cli("--isolated", "--fix", "src")
    assert "Fixed" not in out  # only with --show-fixes


# --- colour ---------------------------------------------------------------------------------------------------
class Tty(io.StringIO):
    def isatty(self):
        return True


def test_use_color_only_on_a_terminal_and_honours_no_color_and_force_color():
    assert report.use_color(Tty(), {}) is True
    assert report.use_color(io.StringIO(), {}) is False
    assert report.use_color(Tty(), {"NO_COLOR": "1"}) is False
    assert report.use_color(io.StringIO(), {"FORCE_COLOR": "1"}) is True
    assert report.use_color(io.StringIO(), {"FORCE_COLOR": "0"}) is False
    assert report.use_color(Tty(), {"NO_COLOR": "1", "FORCE_COLOR": "1"}) is False


def test_cli_colours_with_force_color_and_not_with_no_color(run_cli, hazards, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    _, plain, _ = run_cli("--isolated", "src/model.py")  # not a terminal
    assert "\x1b[" not in plain
    monkeypatch.setenv("FORCE_COLOR", "1")
    _, coloured, _ = run_cli("--isolated", "src/model.py")
    assert "\x1b[31m" in coloured
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == plain
    _, machine, _ = run_cli("--isolated", "--format", "json", "src/model.py")
    assert "\x1b[" not in machine  # machine formats never
    monkeypatch.setenv("NO_COLOR", "1")
    _, out, _ = run_cli("--isolated", "src/model.py")
    assert "\x1b[" not in out
