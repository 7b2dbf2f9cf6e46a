"""``path:line:col: NAN101 [*] message`` lines and a summary."""

from __future__ import annotations

from nanlint.report import Run


def summary(run: Run) -> str:
    n = len(run.findings)
    safe = sum(1 for f in run.findings if f.fixable(False))
    unsafe_more = sum(1 for f in run.findings if f.fixable(True) and not f.fixable(False))
    if run.fix_mode and run.fixed:
        head = f"Found {n + run.fixed} findings ({run.fixed} fixed, {n} remaining)."
    elif n == 0:
        return "All checks passed!"
    else:
        head = f"Found {n} finding{'s' if n != 1 else ''}."
    parts = []
    if run.unsafe_fixes:
        if safe + unsafe_more:
            parts.append(f"{safe + unsafe_more} fixable with --fix")
    else:
        if safe:
            parts.append(f"{safe} fixable with --fix")
        if unsafe_more:
            parts.append(f"{unsafe_more} more with --unsafe-fixes")
    if parts:
        head = head[:-1] + f" ({', '.join(parts)})."
    return head


def render(run: Run) -> str:
    lines = []
    for f in run.findings:
        marker = " [*]" if f.fixable(run.unsafe_fixes) else ""
        lines.append(f"{run.display_path(f.path)}:{f.start[0]}:{f.start[1]}: {f.code}{marker} {f.message}")
    lines.append(summary(run))
    return "\n".join(lines) + "\n"
