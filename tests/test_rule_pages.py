"""The rule catalogue is executable: every Bad block is flagged by its rule and
fixed (with unsafe fixes) into its Good block; every Good block is silent."""

import re

import pytest

from nanlint.lint import catalogue
from nanlint.lint.engine import Linter
from nanlint.rules.base import all_rules, by_code

PAGES = catalogue.pages()
RULES = by_code()


def test_every_rule_has_a_page_and_every_page_a_rule():
    assert set(PAGES) == set(RULES)
    for code, page in PAGES.items():
        assert page.name == RULES[code].name, f"{page.path.name} names {page.name}, rule is {RULES[code].name}"


@pytest.mark.parametrize("code", sorted(PAGES))
def test_page_has_the_sections(code):
    sections = PAGES[code].sections()
    for wanted in catalogue.SECTIONS:
        assert wanted in sections, f"{code}: missing section '## {wanted}'"
    assert PAGES[code].text.startswith(f"# {code} {RULES[code].name}\n")


def _cases():
    for code, page in sorted(PAGES.items()):
        blocks = page.blocks()
        assert any(b.kind == "bad" for b in blocks), f"{code} has no bad example"
        goods = {b.label: b for b in blocks if b.kind == "good"}
        for b in blocks:
            if b.kind == "bad":
                yield pytest.param(code, b, goods.get(b.label), id=f"{code}-bad-{b.label}")
            else:
                yield pytest.param(code, b, None, id=f"{code}-good-{b.label}")


@pytest.mark.parametrize("code,block,good", list(_cases()))
def test_page_example(code, block, good):
    rule = RULES[code]
    settings = PAGES[code].settings()  # e.g. the TF version a version-aware rule targets
    source = block.code.encode()
    if block.kind == "bad":
        found = Linter([rule], settings).lint_source(source, "example.py").findings
        assert found, f"{code}: Bad block '{block.label}' is not flagged:\n{block.code}"
        assert all(f.code == code for f in found)
        result = Linter([rule], settings).fix_source(source, "example.py", unsafe=True)
        assert result.error is None
        if any(f.edits and f.fix_applicability != "display-only" for f in found):
            assert good is not None, f"{code}: Bad block '{block.label}' has a fix but no Good block"
            fixed = (result.fixed_source or source).decode()
            assert fixed == good.code, f"{code} '{block.label}': --fix gave\n{fixed}\nexpected\n{good.code}"
        elif good is not None:
            assert result.fixed_source is None
    else:
        default_rules = [r for r in all_rules() if r.default or r.code == code]
        found = Linter(default_rules, settings).lint_source(source, "example.py").findings
        assert not found, f"{code}: Good block '{block.label}' is flagged: {[(f.code, f.message) for f in found]}"


# --- the declared fix applicability (Rule.fix) is what the rule does and what the docs say ---
_PERMISSIVE = {None: 0, "display-only": 1, "unsafe": 2, "safe": 3}
_WORD = r"(safe|unsafe|display-only)"
# where a page states an applicability: in bold, opening a sentence, or "the fix is unsafe"
_STATED = [re.compile(r"\*\*" + _WORD + r"[.:]?\*\*", re.I),
           re.compile(r"(?:^|(?<=[.!]\s))" + _WORD + r"[.:,]", re.I | re.M),
           re.compile(r"\bfix is " + _WORD + r"\b", re.I)]
README = catalogue.pages_dir().parent / "README.md"


def _best(values):
    return max(values, key=_PERMISSIVE.__getitem__, default=None)


def _fix_safety(code: str) -> str:
    return PAGES[code].text.split("## Fix safety", 1)[1].split("\n## ", 1)[0]


@pytest.mark.parametrize("code", sorted(PAGES))
def test_declared_fix_is_the_best_the_rule_offers_on_its_bad_blocks(code):
    rule = RULES[code]
    settings = PAGES[code].settings()
    offered = [f.fix_applicability for b in PAGES[code].blocks() if b.kind == "bad"
               for f in Linter([rule], settings).lint_source(b.code.encode(), "example.py").findings]
    assert _best(offered) == rule.fix, \
        f"{code} declares fix={rule.fix!r}; its Bad blocks get {sorted(set(map(str, offered)))}"


@pytest.mark.parametrize("code", sorted(PAGES))
def test_declared_fix_is_what_the_page_says(code):
    section = _fix_safety(code)
    stated = {m.lower() for pattern in _STATED for m in pattern.findall(section)}
    if RULES[code].fix is None:
        assert not stated and "no fix" in section.lower(), section
    else:
        assert _best(stated) == RULES[code].fix, f"{code} declares {RULES[code].fix}; its page says {stated}"


def test_declared_fix_is_the_readme_tables():
    rows = dict(re.findall(r"^\| (NAN\d{3}) \| [\w-]+ \| ([\w-]+) \|", README.read_text(encoding="utf-8"), re.M))
    assert set(rows) == set(RULES)
    wrong = {code: (rows[code], rule.fix) for code, rule in RULES.items() if rows[code] != (rule.fix or "none")}
    assert not wrong, f"README's Fix column against Rule.fix: {wrong}"
