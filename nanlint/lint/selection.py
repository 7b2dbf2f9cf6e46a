"""Which rules run: ``select`` / ``extend-select`` / ``ignore`` by code, prefix or name."""

from __future__ import annotations

import fnmatch
from pathlib import Path, PurePath
from typing import Iterable, Sequence

from nanlint.lint.config import ConfigError
from nanlint.rules.base import Rule


def matches(selector: str, rule: Rule) -> bool:
    s = selector.strip()
    if s.upper() == "ALL":
        return True
    if s.lower() == rule.name:
        return True
    return rule.code.upper().startswith(s.upper()) and s[:3].upper() == "NAN"


_DIGIT_LOOKALIKES = str.maketrans({"O": "0", "I": "1", "L": "1"})


def suggest(selector: str, rules: Sequence[Rule]) -> str | None:
    """The rule name or code closest to a mistyped ``selector``, if one is close."""
    import difflib

    s = selector.strip()
    names = [r.name for r in rules]
    codes = [r.code for r in rules]
    code = s.upper()
    code = code[:3] + code[3:].translate(_DIGIT_LOOKALIKES)  # NAN1O1: the letter O for a zero
    if code in codes:
        return code
    found = difflib.get_close_matches(s.lower(), names, n=1, cutoff=0.75) or \
        difflib.get_close_matches(code, codes, n=1, cutoff=0.75)
    return found[0] if found else None


def check(selectors: Iterable[str], rules: Sequence[Rule], where: str = "") -> None:
    """ConfigError for the first selector that matches no rule; ``where`` says where it was
    written (``--select``, ``pyproject.toml: [tool.nanlint] ignore``)."""
    for s in selectors:
        if not any(matches(s, r) for r in rules):
            close = suggest(s, rules)
            hint = f"; did you mean {close!r}?" if close else \
                " (use a code like NAN101, a prefix like NAN1, a name like log-softmax, or ALL)"
            raise ConfigError(f"unknown rule selector {s!r}{' in ' + where if where else ''}{hint}")


def select_rules(rules: Sequence[Rule], select: Sequence[str] | None, extend_select: Sequence[str],
                 ignore: Sequence[str], may: bool = False) -> list[Rule]:
    """``may``: the may tier; with the default selection it also enables the rules whose
    every finding is on weak evidence (``Rule.may_tier``)."""
    check(list(select or []) + list(extend_select) + list(ignore), rules)
    if select is None:
        chosen = [r for r in rules if r.default or (may and r.may_tier)]
    else:
        chosen = [r for r in rules if any(matches(s, r) for s in select)]
    for r in rules:
        if r not in chosen and any(matches(s, r) for s in extend_select):
            chosen.append(r)
    chosen = [r for r in chosen if not any(matches(s, r) for s in ignore)]
    return sorted(chosen, key=lambda r: r.code)


def per_file_ignored(path: Path, root: Path, per_file_ignores: dict[str, list[str]]) -> list[str]:
    """The selectors ignored for ``path`` by ``per-file-ignores`` patterns (relative to ``root``)."""
    if not per_file_ignores:
        return []
    try:
        rel = PurePath(path.resolve().relative_to(root.resolve())).as_posix()
    except ValueError:
        rel = path.as_posix()
    out: list[str] = []
    for pattern, codes in per_file_ignores.items():
        if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(path.name, pattern) \
                or fnmatch.fnmatch(rel, pattern.rstrip("/") + "/*"):
            out.extend(codes)
    return out
