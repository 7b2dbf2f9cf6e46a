"""What a rule is handed: the file's semantic model (:class:`FileContext`, read-only)
plus a small context of its own -- ``report``, the rule being run, the rules enabled,
the crashes the engine collects, and the fix speller in the file's aliases."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

import libcst as cst

from nanlint.fix import fixes, spelling
from nanlint.semantic.context import FileContext, OpCall
from nanlint.semantic.resolve import Scope
from nanlint.vocabulary.ops import Fn, Framework


class Reporting(Protocol):
    """What the context needs of a rule (:class:`nanlint.rules.base.Rule` has it)."""

    code: str
    name: str
    supersedes: tuple[str, ...]


@dataclass(eq=False)
class RawFinding:
    rule: Reporting
    node: cst.CSTNode
    message: str
    fix: fixes.Fix | None = None
    code: str = ""
    name: str = ""
    may: bool = False  # weak evidence: reported only with the may tier (``--may``)


class RuleContext(FileContext):
    """The model of one file as one run of the rules sees it; the engine makes one per pass."""

    def __init__(self, module: cst.Module, path: str = "<string>", settings: dict | None = None,
                 rules: Sequence[Reporting] = (), rows: list[int] | None = None, text: str | None = None,
                 tree=None, spans: dict | None = None) -> None:
        super().__init__(module, path, settings, rows, text, tree, spans)
        self.findings: list[RawFinding] = []
        self.rule: Reporting | None = None  # the rule being run (its findings' code and name)
        self.enabled_rules: Sequence[Reporting] = rules  # every rule of this run (NAN002 judges their noqa)
        self.crashes: list[str] = []  # one line per rule that raised (the engine reports them)

    def another(self) -> "RuleContext":
        """A context of its own over the same module and model inputs, for asking rules this
        run does not check (NAN002: would a rule not enabled report on a directive's line?)."""
        return RuleContext(self.module, self.path, self.settings, (), self.rows, self.text, self._tree, self._spans)

    def report(self, node: cst.CSTNode, message: str, fix: fixes.Fix | None = None,
               rule: Reporting | None = None, may: bool = False) -> None:
        """A finding at ``node``.  ``may``: the evidence is weak (the hazard happens only if
        something the code does not show holds): shown only when the run asks for the may
        tier (``--may``, ``may = true``; the engine counts the others), while a finding on
        strong evidence always is."""
        rule = rule or self.rule
        assert rule is not None
        self.findings.append(RawFinding(rule, node, message, fix, rule.code, rule.name, may))

    # --- fix spelling (nanlint.fix.spelling) -------------------------------------------
    def spell(self, framework: Framework, op: str, scope: Scope,
              prefer: tuple[cst.CSTNode, ...] = ()) -> tuple[cst.BaseExpression, Fn, list[fixes.Import]] | None:
        return spelling.spell(self, framework, op, scope, prefer)

    def carry_args(self, source: OpCall, target: Fn, roles: tuple[str, ...],
                   x: cst.BaseExpression | None = None) -> list[cst.Arg] | None:
        return spelling.carry_args(source, target, roles, x)
