"""Each finding with its source: the lines around it, a caret under the span, the fix
as a diff (and whether it is safe, unsafe or display-only), then the summary."""

from __future__ import annotations

import difflib

from nanlint.fix.fixes import apply_text

from nanlint.report._run import Run, fixes_text
from nanlint.report.text import BOLD, CYAN, DIM, GREEN, RED, line, paint, summary
from nanlint.source.lines import split_lines

CONTEXT = 2


def _apply(lines: list[str], edits) -> list[str]:
    """``lines`` with the edits applied (1-based row/column spans)."""
    return split_lines(apply_text("\n".join(lines) + "\n", edits))


def _snippet(run: Run, f, lines: list[str]) -> list[str]:
    first, last = f.start[0], max(f.end[0], f.start[0])
    lo, hi = max(1, first - CONTEXT), min(len(lines), last + CONTEXT)
    width = len(str(hi))
    gutter = " " * width + " |"
    out = [paint(run, gutter, DIM)]
    for row in range(lo, hi + 1):
        text = lines[row - 1]
        out.append(f"{paint(run, str(row).rjust(width) + ' |', DIM)} {text}".rstrip())
        if first <= row <= last:
            start = f.start[1] - 1 if row == first else len(text) - len(text.lstrip())
            end = f.end[1] - 1 if row == last else len(text)
            if end <= start:
                end = start + 1
            label = f" {f.code}" if row == last else ""
            out.append(f"{paint(run, gutter, DIM)} {' ' * start}{paint(run, '^' * (end - start) + label, BOLD, RED)}")
    out.append(paint(run, gutter, DIM))
    return out


def _fix(run: Run, f, lines: list[str]) -> list[str]:
    if not f.edits or f.fix_applicability is None:
        return []
    kind = {"safe": "Safe fix", "unsafe": "Unsafe fix (applied with --fix --unsafe-fixes)",
            "display-only": "Display-only fix (never applied; review and edit by hand)"}[f.fix_applicability]
    out = [paint(run, f"  = help: {f.fix_message}", CYAN)] if f.fix_message else []
    out.append(f"  {kind}:")
    fixed = _apply(lines, f.edits)
    diff = list(difflib.unified_diff(lines, fixed, lineterm="", n=1))[2:]
    for d in diff:
        if d.startswith("@@"):
            out.append(paint(run, "  " + d, DIM))
        elif d.startswith("-"):
            out.append(paint(run, "  " + d, RED))
        elif d.startswith("+"):
            out.append(paint(run, "  " + d, GREEN))
        else:
            out.append(("  " + d).rstrip())
    return out


def render(run: Run) -> str:
    blocks = []
    for f in run.findings:
        block = [line(run, f)]
        lines = run.source_lines(f)
        if lines is not None and 0 < f.start[0] <= len(lines):
            block += _snippet(run, f, lines)
            block += _fix(run, f, lines)
        elif f.edits and f.fix_applicability:
            block.append(f"  = help: {f.fix_message} ({f.fix_applicability} fix)")
        blocks.append("\n".join(block) + "\n")
    out = "\n".join(blocks)
    if blocks:
        out += "\n"
    if run.show_fixes:
        out += fixes_text(run)
    return out + summary(run) + "\n"
