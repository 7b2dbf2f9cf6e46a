"""NAN002 unused-noqa: a ``# noqa: NANxxx`` that suppresses nothing.

The engine runs the other rules first, notes what each ``# noqa`` silenced
(:func:`nanlint.lint.noqa.apply`), then calls :meth:`UnusedNoqa.check_noqa`.  Only
nanlint's own codes and rule names are judged: a blanket ``# noqa`` and codes of
other tools (``E501``, ``F401``) are left alone, and so are codes of known rules that
are not enabled in this run (another configuration may enable them)."""

from __future__ import annotations

import re

import libcst as cst

from nanlint.fix import fixes
from nanlint.source import noqa
from nanlint.rules.context import RuleContext
from nanlint.rules.base import Rule, by_code


class UnusedNoqa(Rule):
    code = "NAN002"
    name = "unused-noqa"
    summary = "A `# noqa` names a nanlint rule that reports nothing on that line"
    fix = "safe"
    default = False
    frameworks = ()
    needs = ("noqa",)  # nothing to judge in a file without a directive: in any case (wanted)

    judges_noqa = True

    def wanted(self, text: str) -> bool:
        return noqa.may_hold(text)  # a directive in capitals is one too

    def check(self, ctx) -> None:
        """Nothing: the work happens in :meth:`check_noqa`, once the other rules ran."""

    def check_noqa(self, ctx: RuleContext, directives: list[noqa.Directive]) -> None:
        rules = by_code()
        names = {r.name.upper(): r.code for r in rules.values()}
        enabled = {r.code for r in ctx.enabled_rules or rules.values()}
        others: dict[str, set[int]] | None = None
        for d in directives:
            if d.codes is None:
                continue
            unused, unknown = [], []
            for written in d.codes:
                key = written.upper()
                if key in d.used or key in (self.code, self.name.upper()):
                    continue
                code = names.get(key, key)
                if code in rules:
                    if code not in enabled:
                        # a rule this run does not check: ask it whether it has a finding here
                        if others is None:
                            others = _rows_of_other_rules(ctx, directives, rules, enabled)
                        if d.row in others.get(code, ()) or code == "NAN001":
                            continue
                    unused.append(written)
                elif noqa.NAN_CODE.match(key):
                    unknown.append(written)
            if not unused and not unknown:
                continue
            parts = []
            if unused:
                parts.append("unused: " + ", ".join(f"`{c}`" for c in unused))
            if unknown:
                parts.append("unknown: " + ", ".join(f"`{c}`" for c in unknown))
            message = f"Unused `noqa` directive ({'; '.join(parts)})"
            ctx.report(d.comment, message, _removal(d, set(unused + unknown)))


def _rows_of_other_rules(ctx, directives, rules, enabled) -> dict[str, set[int]]:
    """Rows where the named rules that are not enabled in this run would report."""
    names = {r.name.upper(): r.code for r in rules.values()}
    wanted = {names.get(c.upper(), c.upper()) for d in directives for c in d.codes or ()}
    wanted = {c for c in wanted if c in rules and c not in enabled and not rules[c].judges_noqa}
    other = ctx.another()
    text = ctx.text
    for code in sorted(wanted):
        rule = rules[code]
        if code == "NAN001" or not rule.wanted(text):
            continue
        other.rule = rule
        rule.check(other)
    other.rule = None
    out: dict[str, set[int]] = {}
    for f in other.findings:
        out.setdefault(f.code, set()).add(ctx.positions[f.node].start.line)
    return out


def _removal(d: noqa.Directive, drop: set[str]) -> fixes.Fix | None:
    value = d.comment.value
    start, end = d.span
    m = re.compile(r"#\s*noqa:[ \t]*", re.IGNORECASE).match(value, start)
    if m is None:
        return None
    codes_text = value[m.end():end]
    tokens = [t for t in re.finditer(r"[\w-]+", codes_text)]
    keep = [t.group() for t in tokens if t.group() not in drop]
    if keep:
        sep = ", " if "," in codes_text else " "
        new_value = value[:m.end()] + sep.join(keep) + value[end:]
        return fixes.Fix(fixes.SAFE, "Remove the unused codes", [(d.comment, cst.Comment(new_value))])
    before = value[:start].rstrip(" \t")
    after = value[end:].strip(" \t")
    if before:
        new_value = before + ("  " + after if after else "")
    elif after:
        new_value = after if after.startswith("#") else "# " + after
    else:
        new_value = ""
    if new_value:
        return fixes.Fix(fixes.SAFE, "Remove the unused codes", [(d.comment, cst.Comment(new_value))])
    if isinstance(d.parent, cst.TrailingWhitespace):
        new = d.parent.with_changes(whitespace=cst.SimpleWhitespace(""), comment=None)
        return fixes.Fix(fixes.SAFE, "Remove the unused `noqa` directive", [(d.parent, new)])
    return None
