"""NAN110 may-reach-zero (opt-in): the log, division and root sinks of NAN107, NAN108 and
NAN206 when the evidence that the value reaches 0 is weak -- it is 0 only when a
precondition the code never writes down fails: a count of a mask passed in (a padding or
validity mask), a sigmoid or softmax of a value that is not a logit (a box coordinate, an
embedding), a defensive clamp of a variance, a sum of rectified weights, a distance, a
product of scores, ``floor``/``round`` of data.  Measured on the training corpus these are
mostly false (docs/zero-rules.md); the strong classes stay on by default in the three rules."""

from __future__ import annotations

from nanlint.fix import fixes
from nanlint.analysis import zeros
from nanlint.rules.context import RuleContext
from nanlint.rules.base import Rule
from nanlint.rules._zero_divisions import DivisionSinks
from nanlint.rules._zero_logs import LogSinks
from nanlint.rules._zero_roots import RootSinks

# the sinks, and the rule that reports their strong evidence
_SINKS = ((LogSinks, "NAN107"), (DivisionSinks, "NAN108"), (RootSinks, "NAN206"))
_RULES = tuple(sinks for sinks, _ in _SINKS)


class MayReachZero(Rule):
    code = "NAN110"
    name = "may-reach-zero"
    summary = "log, division or root of a value that reaches 0 on weaker evidence (a given mask's count, a non-logit sigmoid)"
    fix = fixes.UNSAFE
    default = False  # opt-in: the weak classes are mostly false on training code (docs/zero-rules.md)
    may_tier = True
    supersedes = ("NAN109",)
    needs = tuple(dict.fromkeys(n for r in _RULES for n in r.needs))
    # a sink of one of the three rules (or a source op: ``x ** -1`` and ``x ** 0.25`` have no
    # site key), and a source op
    triggers = (frozenset().union(*(r.triggers[0] for r in _RULES)) | zeros.SOURCE_OPS,
                zeros.SOURCE_OPS | zeros.STRONG_OPS)

    def check(self, ctx: RuleContext) -> None:
        for sinks, strong_code in _SINKS:
            for node, message, fix, zero in sinks().findings(ctx):
                if not zero.strong:
                    ctx.report(node, f"{message} (weak evidence: {zero.weak}; {strong_code} reports the strong cases)", fix)
