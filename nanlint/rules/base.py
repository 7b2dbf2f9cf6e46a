"""The rule base class and the registry.

A rule is one module in ``nanlint/rules/`` defining a :class:`Rule` subclass;
the registry finds it by discovery (no hand-kept list).  A rule speaks of
canonical ops through :class:`nanlint.semantic.context.RuleContext` and never of a
framework's spelling.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from typing import ClassVar

from nanlint.rules.context import RuleContext
from nanlint.vocabulary.ops import with_implying
from nanlint import rules as package

ALL_FRAMEWORKS = ("tensorflow", "keras", "torch", "jax")


_FOUND: list = [None, {}]  # the last text asked about, and which needles it holds


def _contains(text: str, needle: str) -> bool:
    """``needle in text``, remembered for the last text: the rules' ``needs`` share words
    (``log``, ``sum``), and a 10 MB text took 3.5 ms per scan, hundreds of scans per file."""
    if _FOUND[0] is not text:
        _FOUND[:] = [text, {}]
    found = _FOUND[1].get(needle)
    if found is None:
        found = _FOUND[1][needle] = needle in text
    return found


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]  # one line, for ``nanlint rule --all``
    fix: ClassVar[str | None] = None  # best applicability the rule offers: safe/unsafe/display-only
    default: ClassVar[bool] = True  # False: opt-in (enabled only when selected)
    # True: every finding of the rule is on weak evidence (NAN109, NAN110): the may tier
    # (``--may``, ``may = true``) enables it with the weak findings of the other rules
    may_tier: ClassVar[bool] = False
    frameworks: ClassVar[tuple[str, ...]] = ALL_FRAMEWORKS
    supersedes: ClassVar[tuple[str, ...]] = ()  # codes whose findings inside ours are dropped
    # Prefilter: the file is skipped unless its source contains one of these
    # strings (all must be satisfied when ``needs_all`` is set); empty: always run.
    needs: ClassVar[tuple[str, ...]] = ()
    needs_all: ClassVar[bool] = False
    # Sites: the rule can report only in a file that, for each group, contains one of
    # its canonical ops (a name resolving to it, or a tensor method) or site keys
    # (``nanlint.semantic.sites.POW_HALF``); other files are not parsed with libcst.  None: the
    # rule may report in any file.  Every way ``check`` starts (``ctx.calls(...)``, the
    # binops it reads, what ``op_of`` must find) must be in a group, or a finding is lost.
    triggers: ClassVar[tuple[frozenset[str], ...] | None] = None

    # The engine's second hook: a rule that judges the ``# noqa`` directives (NAN002) is
    # called with them once every other rule has run and noqa has been applied.
    judges_noqa: ClassVar[bool] = False

    def check(self, ctx: RuleContext) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def check_noqa(self, ctx: RuleContext, directives: list) -> None:
        """Report on the file's ``# noqa`` directives (:class:`nanlint.source.noqa.Directive`),
        each knowing which codes it suppressed; asked only when ``judges_noqa``."""

    def wanted(self, text: str) -> bool:
        if not self.needs:
            return True
        hits = (_contains(text, needle) for needle in self.needs)
        return all(hits) if self.needs_all else any(hits)

    def can_report(self, present: frozenset[str]) -> bool:
        """Whether a file that contains (only) ``present`` can have a finding of this rule."""
        return self.triggers is None or all(not with_implying(group).isdisjoint(present) for group in self.triggers)

    def __repr__(self) -> str:
        return f"<{self.code} {self.name}>"


@lru_cache(maxsize=None)
def all_rules() -> tuple[Rule, ...]:
    found: dict[str, Rule] = {}
    names: set[str] = set()
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, Rule) and obj is not Rule \
                    and obj.__module__ == module.__name__ and "code" in vars(obj):
                rule = obj()
                if rule.code in found or rule.name in names:
                    raise RuntimeError(f"duplicate rule {rule.code} {rule.name}")
                found[rule.code] = rule
                names.add(rule.name)
    return tuple(sorted(found.values(), key=lambda r: r.code))


def by_code() -> dict[str, Rule]:
    return {r.code: r for r in all_rules()}


def find(code_or_name: str) -> Rule | None:
    key = code_or_name.strip()
    for r in all_rules():
        if r.code.upper() == key.upper() or r.name == key.lower():
            return r
    return None
