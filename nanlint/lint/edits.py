"""A finding as the user sees it, with its fix's edits; which fixes one pass applies."""

from __future__ import annotations

from nanlint.fix import fixes as fixes_mod
from nanlint.fix import translate
from nanlint.findings import Edit, Finding
from nanlint.rules.context import RawFinding, RuleContext
from nanlint.source.codegen import code_of
from nanlint.source.lines import split_lines


def to_finding(ctx: RuleContext, f: RawFinding, edits: bool = True,
               parsed: translate.Parsed | None = None) -> Finding:
    """``f`` as the user sees it; ``edits``: with its fix's edits (else only whether it has
    any, ``edits_omitted``: a check whose report shows none).  On a module made from CPython's
    tree its place and snippet are read from the source as libcst's tree would give them
    (:class:`nanlint.source.from_ast.Spans`), and its edits, libcst's rewrite, are built on
    ``parsed``, libcst's parse, where its fix was moved (:meth:`nanlint.lint.engine.Linter.with_edits`);
    without one they are not built."""
    where = ctx
    if ctx.converted:
        (r1, c1), (r2, c2) = ctx.positions.chars(f.node)  # type: ignore[union-attr]
        edits, where = edits and parsed is not None, parsed  # type: ignore[assignment]
    else:
        r = ctx.positions[f.node]
        (r1, c1), (r2, c2) = (r.start.line, r.start.column), (r.end.line, r.end.column)
    finding = Finding(f.code, f.name, f.message, ctx.path, (r1, c1 + 1), (r2, c2 + 1),
                      snippet=ctx.code(f.node), may=f.may)
    if f.fix is None:
        return finding
    finding.fix_applicability = f.fix.applicability
    finding.fix_message = f.fix.message
    if not edits:
        finding.edits_omitted = bool(f.fix.replacements or f.fix.imports)
        return finding
    module = where.module
    for old, new in f.fix.replacements:
        p = where.positions[old]
        content = fixes_mod.replacement_code(module, old, new, where.parent)
        finding.edits.append(Edit(content, (p.start.line, p.start.column + 1), (p.end.line, p.end.column + 1)))
    if f.fix.imports:
        index = fixes_mod.import_insert_index(module)
        if index < len(module.body):
            row = where.positions[module.body[index]].start.line
        else:
            row = len(split_lines(module.code)) + 1
        content = "".join(code_of(module, i.statement()) for i in f.fix.imports)
        finding.edits.append(Edit(content, (row, 1), (row, 1)))
    return finding


def non_overlapping(where, candidates: list[RawFinding]) -> list[RawFinding]:
    """The candidates whose replacements overlap no earlier one's, in order (``where``: whose
    positions place the replaced nodes, a rule context or a :class:`translate.Parsed`)."""
    chosen: list[RawFinding] = []
    taken: list[tuple[tuple[int, int], tuple[int, int]]] = []
    for f in candidates:
        spans = []
        for old, _ in f.fix.replacements:  # type: ignore[union-attr]
            p = where.positions[old]
            spans.append(((p.start.line, p.start.column), (p.end.line, p.end.column)))
        if any(a[0] < b[1] and b[0] < a[1] for a in spans for b in taken):
            continue
        taken.extend(spans)
        chosen.append(f)
    return chosen
