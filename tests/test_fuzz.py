"""Property tests: no input crashes the engine, a fix always parses, fixing is idempotent.

Three sources of input: hypothesmith's random programs (grammar- and CST-based),
meaning-preserving mutations of every Bad example of the rule pages (renamed aliases,
extra parentheses, comments and line breaks inside calls, swapped operands), and
random byte edits of those examples.  Example counts are kept small so the suite
stays fast; raise them with ``--hypothesis-profile=nanlint-long``.
"""

from __future__ import annotations

import random

import hypothesmith
import libcst as cst
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from nanlint.lint import catalogue
from nanlint.lint.engine import Linter
from nanlint.rules.base import all_rules

settings.register_profile("nanlint-long", max_examples=2000, deadline=None)
FAST = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])

LINTER = Linter(list(all_rules()))  # every rule, opt-in included
BAD = [(code, b.label, b.code) for code, page in sorted(catalogue.pages().items())
       for b in page.blocks() if b.kind == "bad" and code != "NAN001"]  # NAN001's examples do not parse


def compiles(source: bytes | str) -> bool:
    try:
        compile(source, "<fuzz>", "exec", dont_inherit=True, flags=0x400)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def check_robust(source: bytes, unsafe: bool = True):
    """The engine's contract on any input; returns the lint result."""
    lint = LINTER.lint_source(source, "fuzz.py")
    assert lint.error is None, lint.error
    fixed = LINTER.fix_source(source, "fuzz.py", unsafe)
    assert fixed.error is None, fixed.error
    if fixed.fixed_source is not None:
        assert compiles(fixed.fixed_source) or not compiles(source), fixed.fixed_source.decode()
        cst.parse_module(fixed.fixed_source)
        again = LINTER.fix_source(fixed.fixed_source, "fuzz.py", unsafe)
        assert again.error is None and again.fixed_source is None, "fixing is not idempotent"
    return lint


# --- random programs ----------------------------------------------------------------------------

@FAST
@given(hypothesmith.from_grammar())
def test_random_programs_from_the_grammar(source):
    check_robust(source.encode("utf-8", "surrogatepass"))


@settings(FAST, max_examples=10)
@given(hypothesmith.from_node())
def test_random_programs_from_the_cst(source):
    check_robust(source.encode("utf-8", "surrogatepass"))


# --- mutations of the rule pages' Bad examples ---------------------------------------------------

class _Mutator(cst.CSTTransformer):
    def __init__(self, rng: random.Random, kinds: frozenset[str], aliases: dict[str, str]) -> None:
        self.rng = rng
        self.kinds = kinds
        self.aliases = aliases

    def _pick(self) -> bool:
        return self.rng.random() < 0.6

    def leave_Arg(self, original, updated):
        if "parens" in self.kinds and self._pick() and not updated.star:
            value = updated.value
            updated = updated.with_changes(value=value.with_changes(lpar=[cst.LeftParen(), *value.lpar],
                                                                    rpar=[*value.rpar, cst.RightParen()]))
        if "comments" in self.kinds and isinstance(updated.comma, cst.Comma) and self._pick():
            # a line break with comments after an argument's comma (inside the call's parentheses)
            updated = updated.with_changes(comma=updated.comma.with_changes(whitespace_after=cst.ParenthesizedWhitespace(
                first_line=cst.TrailingWhitespace(whitespace=cst.SimpleWhitespace("  "),
                                                  comment=cst.Comment("# fuzz"), newline=cst.Newline()),
                empty_lines=[cst.EmptyLine(comment=cst.Comment("# more"))],
                indent=True, last_line=cst.SimpleWhitespace("        "))))
        return updated

    def leave_Call(self, original, updated):
        if "comments" in self.kinds and updated.args and self._pick():
            return updated.with_changes(whitespace_before_args=cst.ParenthesizedWhitespace(
                first_line=cst.TrailingWhitespace(newline=cst.Newline()), indent=True,
                last_line=cst.SimpleWhitespace("    ")))
        return updated

    def leave_BinaryOperation(self, original, updated):
        if "swap" in self.kinds and isinstance(updated.operator, (cst.Add, cst.Multiply)) and self._pick():
            return updated.with_changes(left=updated.right, right=updated.left)
        return updated

    def leave_AsName(self, original, updated):
        if isinstance(updated.name, cst.Name) and updated.name.value in self.aliases:
            return updated.with_changes(name=cst.Name(self.aliases[updated.name.value]))
        return updated

    def leave_Name(self, original, updated):
        if updated.value in self.aliases:
            return updated.with_changes(value=self.aliases[updated.value])
        return updated

    # only bound names are renamed: not an attribute (``torch.nn``) nor an imported module path
    def leave_Attribute(self, original, updated):
        return updated.with_changes(attr=original.attr)

    def leave_ImportAlias(self, original, updated):
        return updated.with_changes(name=original.name)

    def leave_ImportFrom(self, original, updated):
        return updated.with_changes(module=original.module)


def mutate(source: str, kinds: frozenset[str], seed: int) -> str:
    module = cst.parse_module(source)
    aliases: dict[str, str] = {}
    if "rename" in kinds:
        class Aliases(cst.CSTVisitor):
            def visit_AsName(self, node):
                if isinstance(node.name, cst.Name):
                    aliases[node.name.value] = f"{node.name.value}_{seed % 97}"
        module.visit(Aliases())
    return module.visit(_Mutator(random.Random(seed), kinds, aliases)).code


MUTATIONS = ("parens", "comments", "swap", "rename")


@settings(FAST, max_examples=25)
@given(case=st.sampled_from(BAD), kinds=st.frozensets(st.sampled_from(MUTATIONS), min_size=1),
       seed=st.integers(0, 10_000))
def test_mutated_page_examples(case, kinds, seed):
    code, label, source = case
    mutated = mutate(source, kinds, seed)
    assume(compiles(mutated))
    lint = check_robust(mutated.encode())
    if kinds <= {"parens", "comments", "rename"} and not ("comments" in kinds and "noqa" in source):
        # the same program, written differently: the same findings (a noqa comment is line-based)
        before = sorted(f.code for f in LINTER.lint_source(source.encode(), "fuzz.py").findings)
        assert sorted(f.code for f in lint.findings) == before, mutated


@pytest.mark.parametrize("code,label,source", BAD, ids=[f"{c}-{lbl}" for c, lbl, _ in BAD])
def test_every_page_example_with_all_mutations(code, label, source):
    """Deterministic: each Bad example with every mutation at once."""
    mutated = mutate(source, frozenset(MUTATIONS), seed=7)
    assert compiles(mutated), mutated
    check_robust(mutated.encode())


@FAST
@given(case=st.sampled_from(BAD), edits=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 3), st.binary(max_size=3)),
                                                  min_size=1, max_size=4))
def test_random_byte_edits_of_page_examples(case, edits):
    data = bytearray(case[2].encode())
    for where, delete, insert in edits:
        at = int(where * len(data))
        data[at:at + delete] = insert
    check_robust(bytes(data))
