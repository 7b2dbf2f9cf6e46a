"""``path:line:col: NAN101 [*] message`` lines (``path:cell N:line L:col C:`` in a notebook)
and a summary; coloured on a terminal."""

from __future__ import annotations

from nanlint.report._run import Run, fixes_text, statistics_rows

EDITS = False  # shows whether a finding is fixable, never the edits (nanlint.report.shows_edits)

BOLD, RED, CYAN, GREEN, DIM, RESET = "\x1b[1m", "\x1b[31m", "\x1b[36m", "\x1b[32m", "\x1b[2m", "\x1b[0m"


def paint(run: Run, text: str, *styles: str) -> str:
    return "".join(styles) + text + RESET if run.color and text else text


def _plural(n: int) -> str:
    return f"{n} finding{'s' if n != 1 else ''}"


def summary(run: Run) -> str:
    """``Found 3 findings (1 fixable with --fix, 1 more with --unsafe-fixes).``, or after
    ``--fix``: ``Found 5 findings (3 fixed, 2 remaining; 2 fixable with --unsafe-fixes).``,
    then one line each on what was not shown: findings on weak evidence (``--may``) and what
    an unsafe fix is."""
    return "\n".join([_counts(run)] + _notes(run))


def _notes(run: Run) -> list[str]:
    notes = []
    if run.hidden:
        notes.append(f"{_plural(run.hidden)} on weak evidence not shown (a hazard only if something the code "
                     "does not show holds): --may shows them.")
    if run.opt_in:
        codes = ",".join(run.opt_in)
        notes.append(f"Not run (opt-in), though their ops are in the files checked: {', '.join(run.opt_in)}; "
                     f"--extend-select {codes} (or --select ALL) runs them.")
    unsafe = sorted({f.code for f in run.findings if f.fixable(True) and not f.fixable(False)})
    if unsafe and not run.unsafe_fixes:
        notes.append("An unsafe fix can change the value on some finite inputs (an epsilon, a clamp); "
                     f"`nanlint rule {unsafe[0]}` says what it changes.")
    return notes


def _counts(run: Run) -> str:
    n = len(run.findings)
    safe = sum(1 for f in run.findings if f.fixable(False))
    unsafe_more = sum(1 for f in run.findings if f.fixable(True) and not f.fixable(False))
    if run.fix_mode and run.fixed:
        head, counts = f"Found {_plural(n + run.fixed)}", [f"{run.fixed} fixed, {n} remaining"]
    elif n == 0:
        if run.explicit_files:
            excluded = f" ({run.excluded} excluded)" if run.excluded else ""
            return f"{run.files} file{'s' if run.files != 1 else ''} checked{excluded}, no findings."
        return "All checks passed!" if run.files else "No Python files checked."
    else:
        head, counts = f"Found {_plural(n)}", []
    hints = []
    if run.unsafe_fixes:
        if safe + unsafe_more:
            hints.append(f"{safe + unsafe_more} fixable with --fix")
    else:
        if safe:
            hints.append(f"{safe} fixable with --fix")
        if unsafe_more:
            hints.append(f"{unsafe_more} more with --unsafe-fixes" if safe
                         else f"{unsafe_more} fixable with --unsafe-fixes")
    inside = "; ".join(x for x in (", ".join(counts), ", ".join(hints)) if x)
    return f"{head} ({inside})." if inside else f"{head}."


def line(run: Run, f) -> str:
    marker = " " + paint(run, "[*]", CYAN) if f.fixable(run.unsafe_fixes) else ""
    return f"{paint(run, run.location(f), BOLD)}: {paint(run, f.code, BOLD, RED)}{marker} {f.message}"


def render(run: Run) -> str:
    lines = [line(run, f) for f in run.findings]
    out = "\n".join(lines) + ("\n" if lines else "")
    if run.show_fixes:
        out += fixes_text(run)
    return out + summary(run) + "\n"


def statistics(run: Run) -> str:
    rows = statistics_rows(run)
    if not rows:
        return ""
    count_w = max(len(str(r[2])) for r in rows)
    code_w = max(len(r[0]) for r in rows)
    any_fixable = any(r[3] for r in rows)
    out = []
    for code, name, count, fixable in rows:
        mark = ("[*] " if fixable else "[ ] ") if any_fixable else ""
        out.append(f"{count:>{count_w}}\t{code:<{code_w}}\t{mark}{name}")
    return "\n".join(out) + "\n"
