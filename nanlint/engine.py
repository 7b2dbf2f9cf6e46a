"""One file: parse, run the enabled rules, honour noqa, fix to a fixpoint."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

import libcst as cst

from nanlint import fixes as fixes_mod
from nanlint import noqa as noqa_mod
from nanlint.noqa import noqa_codes  # noqa: F401 - re-exported; parsing lives in nanlint/noqa.py
from nanlint.context import FileContext, RawFinding
from nanlint.rule import Rule

MAX_FIX_PASSES = 10
PARSE_ERROR = ("NAN001", "parse-error")


@dataclass
class Edit:
    content: str
    start: tuple[int, int]  # (row, column), 1-based
    end: tuple[int, int]


@dataclass
class Finding:
    code: str
    name: str
    message: str
    path: str
    start: tuple[int, int]  # (row, column), 1-based like ruff
    end: tuple[int, int]
    fix_applicability: str | None = None
    fix_message: str | None = None
    edits: list[Edit] = field(default_factory=list)
    snippet: str = ""  # the flagged source text (baseline fingerprints)
    cell: int | None = None  # notebooks: the cell number (rows are then within the cell)

    @property
    def noqa_row(self) -> int:
        return self.start[0]

    def fixable(self, unsafe: bool) -> bool:
        return bool(self.edits) and fixes_mod.allowed(self.fix_applicability or "", unsafe)

    def sort_key(self):
        return (self.path, self.cell or 0, self.start, self.code)


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    fixed: int = 0  # fixes applied
    fixed_codes: dict[str, int] = field(default_factory=dict)  # code -> fixes applied
    fixed_source: bytes | None = None  # new content when fixes changed it
    error: str | None = None  # a one-line error (the file could not be read or fixed)


def parse(source: bytes | str) -> cst.Module:
    from nanlint.walk import parse as fast_parse  # the same tree, ~25% faster

    return fast_parse(source)


def parse_error_message(exc: Exception) -> tuple[str, tuple[int, int]]:
    if isinstance(exc, cst.ParserSyntaxError):
        message = exc.message.strip().splitlines()[0] if exc.message.strip() else "invalid syntax"
        message = re.sub(r"^parser error: error at \d+:\d+: ", "", message)
        if message.startswith("expected one of"):
            message = "invalid syntax"
        python_reason = _python_reason(getattr(exc, "_source", None))
        if python_reason:
            message = python_reason
        line, col = exc.raw_line, exc.raw_column + 1
        hint = ""
        lines = getattr(exc, "_lines", None) or []
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        if re.match(r"\s*(print\s+[^\s(=]|exec\s+[\"'a-zA-Z])", text) or re.search(r"except\s+[\w.]+\s*,\s*\w+\s*:", text):
            hint = " (Python 2 syntax?)"
        return f"SyntaxError: {message}{hint}", (line, max(col, 1))
    if isinstance(exc, UnicodeDecodeError):
        return f"cannot decode source: {exc.reason} at byte {exc.start} (add a PEP 263 coding cookie?)", (1, 1)
    if isinstance(exc, RecursionError):
        return "expression nesting too deep to parse", (1, 1)
    return f"{type(exc).__name__}: {exc}".splitlines()[0], (1, 1)


def _python_reason(source) -> str | None:
    """CPython's own wording for a syntax error (e.g. "Missing parentheses in call to 'print'")."""
    if source is None:
        return None
    try:
        compile(source, "<nanlint>", "exec", dont_inherit=True, flags=0x400)  # PyCF_ONLY_AST
    except SyntaxError as err:
        return err.msg
    except Exception:  # noqa: BLE001
        return None
    return None



def source_text(module: cst.Module, source: bytes | str) -> str:
    """``module.code`` without regenerating it (libcst round-trips byte for byte)."""
    if isinstance(source, str):
        return source
    try:
        return source.decode(module.encoding)
    except (LookupError, UnicodeDecodeError):
        return module.code


class Linter:
    def __init__(self, rules: Sequence[Rule], settings: dict | None = None) -> None:
        self.rules = list(rules)
        self.settings = settings or {}
        self.check_parse = any(r.code == PARSE_ERROR[0] for r in self.rules)

    # --- one pass ---------------------------------------------------------------
    def run_rules(self, module: cst.Module, text: str, path: str) -> tuple[FileContext, list[RawFinding]]:
        ctx = FileContext(module, path, self.settings)
        for rule in self.rules:
            if rule.code == PARSE_ERROR[0] or not rule.wanted(text):
                continue
            ctx._rule = rule
            rule.check(ctx)
        ctx._rule = None
        raw = self._drop_superseded(ctx, ctx.findings)
        return ctx, noqa_mod.apply(ctx, raw, self.rules, text)

    @staticmethod
    def _drop_superseded(ctx: FileContext, raw: list[RawFinding]) -> list[RawFinding]:
        superseding = [f for f in raw if f.rule.supersedes]
        if not superseding:
            return raw
        out = []
        for f in raw:
            r = ctx.positions[f.node]
            dropped = False
            for g in superseding:
                if f.code in g.rule.supersedes:
                    s = ctx.positions[g.node]
                    if (s.start.line, s.start.column) <= (r.start.line, r.start.column) and \
                            (r.end.line, r.end.column) <= (s.end.line, s.end.column):
                        dropped = True
                        break
            if not dropped:
                out.append(f)
        return out

    def _to_finding(self, ctx: FileContext, f: RawFinding) -> Finding:
        r = ctx.positions[f.node]
        finding = Finding(f.code, f.name, f.message, ctx.path,
                          (r.start.line, r.start.column + 1), (r.end.line, r.end.column + 1),
                          snippet=ctx.module.code_for_node(f.node))
        if f.fix is not None:
            finding.fix_applicability = f.fix.applicability
            finding.fix_message = f.fix.message
            for old, new in f.fix.replacements:
                p = ctx.positions[old]
                content = ctx.module.code_for_node(fixes_mod.keep_parens(old, new))
                finding.edits.append(Edit(content, (p.start.line, p.start.column + 1),
                                          (p.end.line, p.end.column + 1)))
            if f.fix.imports:
                index = fixes_mod.import_insert_index(ctx.module)
                if index < len(ctx.module.body):
                    row = ctx.positions[ctx.module.body[index]].start.line
                else:
                    row = len(ctx.module.code.splitlines()) + 1
                content = "".join(ctx.module.code_for_node(i.statement()) for i in f.fix.imports)
                finding.edits.append(Edit(content, (row, 1), (row, 1)))
        return finding

    # --- public -----------------------------------------------------------------
    def lint_source(self, source: bytes, path: str) -> FileResult:
        if path.endswith(".ipynb"):
            from nanlint import notebook
            return notebook.lint(self, source, path)
        result = FileResult(path)
        try:
            module = parse(source)
        except Exception as exc:  # noqa: BLE001 - any parser failure is a finding
            exc._source = source  # type: ignore[attr-defined]
            directive = noqa_mod.file_directive(source)
            if self.check_parse and not (directive and noqa_mod.matches(directive, *PARSE_ERROR)) \
                    and directive != noqa_mod.ALL:
                message, pos = parse_error_message(exc)
                result.findings.append(Finding(*PARSE_ERROR, message, path, pos, pos))
            return result
        ctx, raw = self.run_rules(module, source_text(module, source), path)
        result.findings = sorted((self._to_finding(ctx, f) for f in raw), key=Finding.sort_key)
        return result

    def fix_source(self, source: bytes, path: str, unsafe: bool) -> FileResult:
        """Apply fixes pass after pass until none applies; every pass must re-parse."""
        if path.endswith(".ipynb"):
            from nanlint import notebook
            return notebook.fix(self, source, path, unsafe)
        try:
            module = parse(source)
        except Exception:  # noqa: BLE001
            return self.lint_source(source, path)
        applied = 0
        applied_codes: dict[str, int] = {}
        for _ in range(MAX_FIX_PASSES):
            ctx, raw = self.run_rules(module, module.code, path)
            chosen = self._non_overlapping(ctx, [f for f in raw if f.fix is not None
                                                 and f.fix.applies_automatically
                                                 and fixes_mod.allowed(f.fix.applicability, unsafe)])
            if not chosen:
                break
            new_module = fixes_mod.apply(module, [f.fix for f in chosen])  # type: ignore[misc]
            try:
                new_bytes = new_module.bytes
                reparsed = parse(new_bytes)
            except Exception as exc:  # noqa: BLE001
                codes = ", ".join(sorted({f.code for f in chosen}))
                result = self.lint_source(source, path)
                result.error = f"fix for {codes} produced code that does not parse ({parse_error_message(exc)[0]}); file left unchanged"
                return result
            if reparsed.code == module.code:
                break
            module = reparsed
            applied += len(chosen)
            for f in chosen:
                applied_codes[f.code] = applied_codes.get(f.code, 0) + 1
        else:
            result = self.lint_source(source, path)
            result.error = f"fixes did not reach a fixpoint after {MAX_FIX_PASSES} passes; file left unchanged"
            return result
        final = module.bytes
        result = self.lint_source(final, path)
        result.fixed = applied
        result.fixed_codes = applied_codes
        if final != source:
            result.fixed_source = final
        return result

    @staticmethod
    def _non_overlapping(ctx: FileContext, candidates: list[RawFinding]) -> list[RawFinding]:
        chosen: list[RawFinding] = []
        taken: list[tuple[tuple[int, int], tuple[int, int]]] = []
        for f in candidates:
            spans = []
            for old, _ in f.fix.replacements:  # type: ignore[union-attr]
                p = ctx.positions[old]
                spans.append(((p.start.line, p.start.column), (p.end.line, p.end.column)))
            if any(a[0] < b[1] and b[0] < a[1] for a in spans for b in taken):
                continue
            taken.extend(spans)
            chosen.append(f)
        return chosen
