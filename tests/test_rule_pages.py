"""The rule catalogue is executable: every Bad block is flagged by its rule and
fixed (with unsafe fixes) into its Good block; every Good block is silent."""

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
