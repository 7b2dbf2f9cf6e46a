"""One file: parse, run the enabled rules, honour noqa, fix to a fixpoint."""

from __future__ import annotations

import dataclasses
import sys
from typing import Sequence

import libcst as cst

from nanlint.fix import fixes as fixes_mod
from nanlint.fix import translate
from nanlint.findings import PARSE_ERROR, FileResult, Finding
from nanlint.lint import noqa as noqa_mod
from nanlint.lint import edits as edits_mod
from nanlint.lint import large_fix, notebook
from nanlint.source.noqa import ALL as NOQA_ALL, file_directive, matches, may_hold
from nanlint.rules.context import RawFinding, RuleContext
from nanlint.rules.base import Rule, all_rules
from nanlint.lint.site_filter import SiteFilter
from nanlint.source import chunks as _chunks, from_ast, large
from nanlint.source.ast_tree import ast_depth, compile_tree
from nanlint.source.syntax import MAX_DEPTH, Checked, NestingTooDeep, parse, parse_error_message, precheck

MAX_FIX_PASSES = 10


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    if len(text) > 200:
        text = text[:197] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


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
        self.judges_noqa = any(r.judges_noqa for r in self.rules)
        # whether findings carry their fixes' edits: libcst's rewrite, so libcst parses every
        # file with a finding; off for a check whose report shows no edit (``Linter.on_tree``)
        self.edits = self.settings.get("edits", True)
        # the opt-in rules not run that a text check can say apply (their ``needs``): named once
        # in the summary; the may tier's rules are --may's, NAN002 is about directives
        self.not_run = [r for r in all_rules() if r not in self.rules and not r.default and not r.may_tier
                        and not r.judges_noqa and r.needs]
        self.sites = SiteFilter([r for r in self.rules if r.code != PARSE_ERROR[0]], self.settings)

    def _opt_in(self, text: str) -> list[str]:
        """The opt-in rules not run that a text check says apply (named in the summary)."""
        return [r.code for r in self.not_run if r.wanted(text)]

    def cannot_report(self, checked: Checked, path: str | None = None) -> bool:
        """True when no enabled rule can report in a source (:mod:`nanlint.lint.site_filter`)."""
        return self.sites.cannot_report(checked, path)

    def _reduced(self, checked: Checked, source: bytes) -> tuple[str, list[int]] | list | None:
        return self.sites.reduced(checked, source)

    # --- one pass ---------------------------------------------------------------
    def run_rules(self, module: cst.Module, text: str, path: str, rows: Sequence[int] | None = None,
                  tree=None) -> tuple[RuleContext, list[RawFinding], int]:
        """``rows``: a reduced large file's map from its lines to the file's (for messages);
        ``tree``: CPython's tree of ``text`` when the caller has one (positions read its lines)."""
        ctx = RuleContext(module, path, self.settings, self.rules, rows, text, tree)
        self._check(ctx, text)
        return (ctx, *self._kept(ctx, text))

    def _kept(self, ctx: RuleContext, text: str) -> tuple[list[RawFinding], int]:
        """The findings no directive silences nor a wider one supersedes, and how many of
        the may tier were dropped unjudged."""
        raw, hidden = ctx.findings, 0
        if not self.settings.get("may") and not self.judges_noqa:
            # not shown and no directive to judge: dropped before noqa, which would compute
            # the positions of the whole module for them
            raw = [f for f in ctx.findings if not f.may]
            hidden = len(ctx.findings) - len(raw)
        raw = self._drop_superseded(ctx, raw)
        return noqa_mod.apply(ctx, raw, self.rules, text), hidden

    def _judged(self, text: str) -> bool:
        """Whether NAN002 has directives to judge in ``text``: a file without findings still
        goes through noqa then."""
        return self.judges_noqa and may_hold(text)

    def _check(self, ctx: RuleContext, text: str) -> None:
        """Every enabled rule's ``check`` that can report in ``text`` (its triggers there:
        :meth:`SiteFilter.reporting`); a rule that raises is noted in ``ctx.crashes``."""
        crashes = ctx.crashes
        for rule in self.sites.reporting(text):  # a rule whose triggers the text lacks finds nothing
            ctx.rule = rule
            before = len(ctx.findings)
            try:
                rule.check(ctx)
            except RecursionError:
                raise
            except Exception as exc:  # noqa: BLE001 - one rule's bug must not stop the others
                del ctx.findings[before:]
                crashes.append(f"{rule.code} crashed ({_one_line(exc)})")
        ctx.rule = None

    def on_tree(self, checked: Checked, path: str,
                source: bytes | str | None = None) -> tuple[list[Finding], int] | None:
        """The file's findings (shown, and the number hidden) from the rules run on the
        module :mod:`nanlint.source.from_ast` makes of the syntax check's tree, without
        libcst's parse; None when libcst's tree must decide.  The rules read no comment,
        whitespace or parenthesis of such a module, and a finding reads its place and the
        code it quotes from the source (:class:`nanlint.source.from_ast.Spans`); its fix's
        edits, in a run that shows them (``edits`` setting), are libcst's rewrite of the
        user's tree (:meth:`with_edits`, ``source``: the file's bytes).  libcst's tree decides
        a file whose tree the conversion does not build, or where a rule crashed.  ``# noqa``
        on a finding's line is read from the statement's tokens, and every directive NAN002
        judges from the file's (:func:`nanlint.lint.noqa.apply`)."""
        tree = checked.tree
        if tree is None or checked.rejected is not None or isinstance(tree, _chunks.Skeleton):
            return None
        if self.edits:
            found = self.with_edits(checked, source, path) if source is not None else None
            if found is None:
                return None
            ctx, raw, hidden, parsed = found
            return sorted((self._to_finding(ctx, f, parsed=parsed) for f in raw), key=Finding.sort_key), hidden
        ctx = self._run_on_tree(tree, checked.text, path, None)
        if ctx is None:
            return None
        if not ctx.findings and not self._judged(checked.text):
            return [], 0
        try:
            raw, hidden = self.shown(*self._kept(ctx, checked.text))
            return sorted((self._to_finding(ctx, f) for f in raw), key=Finding.sort_key), hidden
        except Exception:  # noqa: BLE001 - a node or comment the source cannot place: libcst's tree decides
            return None

    def with_edits(self, checked: Checked, source: bytes | str, path: str, module: cst.Module | None = None,
                   rows: list[int] | None = None, sketch: bool = False) -> tuple | None:
        """The rules run on the module made of CPython's tree, their fixes moved onto libcst's
        parse of the source (``module``, when the caller has it; :mod:`nanlint.fix.translate`;
        ``rows``: a large file's window, its lines in the file's):
        (that run's context, the findings shown with their fixes over libcst's tree, the number
        hidden, the parse as :class:`translate.Parsed`, or None when it has no finding); None
        when libcst's tree must decide (a fix touches what the two trees do not share, or as
        :meth:`_run_on_tree` says).  ``sketch``: a large file's window in a run that shows no
        edit, where :func:`large_fix.sketch` can read every fix on the rules' own module: its
        fixes stay there (the parse is None)."""
        tree = checked.tree
        if tree is None or checked.rejected is not None or isinstance(tree, _chunks.Skeleton):
            return None
        with translate.recording() as record:
            ctx = self._run_on_tree(tree, checked.text, path, rows)
        if ctx is None:
            return None
        if not ctx.findings and not self._judged(checked.text):
            return ctx, [], 0, None
        try:
            raw, hidden = self.shown(*self._kept(ctx, checked.text))
            if not any(f.fix is not None and (f.fix.replacements or f.fix.imports) for f in raw):
                return ctx, raw, hidden, None
            if sketch and all(f.fix is None or large_fix.sketched(f.fix) for f in raw):
                return ctx, raw, hidden, None
            if module is None:
                module = parse(source, checked)
            parsed = translate.Parsed(module, checked.text, tree.body, ctx.module, ctx.origins, record, ctx.parent,
                                      ctx.positions.comments)  # type: ignore[union-attr]
            moved = [f if f.fix is None else dataclasses.replace(f, fix=parsed.fix(f.fix)) for f in raw]
        except Exception:  # noqa: BLE001 - Unpaired, a node the source cannot place: libcst's tree decides
            return None
        return ctx, moved, hidden, parsed

    def _run_on_tree(self, tree, text: str, path: str, rows: list[int] | None) -> RuleContext | None:
        """The rules run on the module :mod:`nanlint.source.from_ast` makes of CPython's
        ``tree`` of ``text`` (``rows``: a large file's window, its lines in the file's); None
        when libcst's tree must decide: a rule crashed, the conversion failed, or an
        expression nests past ``MAX_DEPTH`` (libcst's
        parse reports it, NAN001).  The conversion recurses once per level: under Python's
        default recursion limit it fails on such an expression, so its depth is measured only
        where the limit was raised (torch raises it to 3000 in any process that imports it).
        The directives NAN002 judges are read from the tokens (:meth:`Spans.directives`)."""
        if sys.getrecursionlimit() > MAX_DEPTH and ast_depth(tree, MAX_DEPTH, text) > MAX_DEPTH:
            return None
        try:
            module, spans = from_ast.convert(tree, text)
            ctx = RuleContext(module, path, self.settings, self.rules, rows, text, tree, spans)
            self._check(ctx, text)
        except Exception:  # noqa: BLE001 - Unsupported, RecursionError: libcst's tree decides
            return None
        return None if ctx.crashes else ctx

    def _piece_on_tree(self, text: str, rows: list[int], path: str) -> tuple | None:
        """A large file's window linted as :meth:`with_edits` lints a file: the rules run on
        CPython's tree of it; libcst parses it only for the edits of a finding's fix (which
        decide whether the fix carries over into the file, :mod:`nanlint.lint.large_fix`);
        None when libcst's tree must decide."""
        try:
            tree = compile_tree(text, kept=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        return self.with_edits(Checked(tree, None, text), text, path, rows=rows, sketch=not self.edits)

    def shown(self, raw: list[RawFinding], hidden: int) -> tuple[list[RawFinding], int]:
        """The findings this run shows (and fixes), and how many on weak evidence it does not:
        the may tier is shown only when asked for.  With NAN002 on, the may tier went through
        noqa too, so a directive that silences a may-tier finding is used in every run."""
        if self.settings.get("may"):
            return raw, hidden
        out = [f for f in raw if not f.may]
        return out, hidden + len(raw) - len(out)

    @staticmethod
    def _drop_superseded(ctx: RuleContext, raw: list[RawFinding]) -> list[RawFinding]:
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

    def _to_finding(self, ctx: RuleContext, f: RawFinding, edits: bool = True,
                    parsed: translate.Parsed | None = None) -> Finding:
        return edits_mod.to_finding(ctx, f, edits, parsed)

    # --- public -----------------------------------------------------------------
    def lint_source(self, source: bytes, path: str, site_filter: bool = True,
                    checked: Checked | None = None) -> FileResult:
        """The findings of one file.  ``site_filter``: skip the libcst parse of a file
        where no rule can report (:meth:`cannot_report`), or where the rules find nothing
        in CPython's tree, or decide its findings there (:meth:`on_tree`); off only to test that.
        ``checked``: the source's :func:`precheck`, when the caller has it."""
        if path.endswith(".ipynb"):
            try:
                return notebook.lint(self, source, path)
            except Exception as exc:  # noqa: BLE001 - a malformed notebook must not stop the run
                return FileResult(path, error=f"{path}: cannot read notebook ({_one_line(exc)})")
        result = FileResult(path)
        try:
            checked = checked if checked is not None else precheck(source)
            result.opt_in = self._opt_in(checked.text)
            if site_filter and self.cannot_report(checked, path):
                result.skipped = True
                return result
            reduced = self._reduced(checked, source)
            pieces = reduced if isinstance(reduced, list) else [reduced] if reduced is not None else None
            if pieces is None and site_filter:
                found = self.on_tree(checked, path, source=source)
                if found is not None:  # decided on CPython's tree: libcst never parses the file
                    result.findings, result.hidden = found
                    return result
            module = parse(source, checked) if pieces is None else None
        except Exception as exc:  # noqa: BLE001 - any parser failure is a finding
            return self._unparsable(result, exc, checked, source, path)
        try:
            if pieces is None:
                # the syntax check's tree, for positions (a large file's Skeleton holds no statements' lines)
                whole = checked.tree if not isinstance(checked.tree, _chunks.Skeleton) else None
                ctx, raw, hidden = self.run_rules(module, source_text(module, source), path, tree=whole)
                raw, result.hidden = self.shown(raw, hidden)
                result.findings = sorted((self._to_finding(ctx, f, self.edits) for f in raw), key=Finding.sort_key)
                crashes = ctx.crashes
            else:
                crashes = self.lint_pieces(pieces, path, result, checked.tree)
        except _Unparsable as exc:  # a window of a large file
            result.findings = []
            return self._unparsable(result, exc.error, checked, source, path)
        except RecursionError as exc:
            result.findings = self._too_deep(source, path, exc)
            return result
        except Exception as exc:  # noqa: BLE001 - report, and lint the other files
            result.findings = []
            result.error = f"{path}: internal error, file not linted ({_one_line(exc)}); please report it"
            return result
        if crashes:
            result.error = f"{path}: internal error, {'; '.join(crashes)}: " \
                "those rules' findings in this file are missing; please report it"  # type: ignore[attr-defined]
        return result

    def lint_pieces(self, pieces: list[tuple], path: str, result: FileResult, tree) -> list[str]:
        """A large file's findings from its reduced text, or from each of its windows
        (:mod:`nanlint.source.large`), in the file's lines, with the edits that mean the same
        in the file (:mod:`nanlint.lint.large_fix`; ``tree``: the file's Skeleton).  A
        statement in two windows (one binds what the other reads) is reported once, from the
        window it belongs to when that one finds it; its fix comes from no other (what lies
        between it and its values is not in the other)."""
        crashes: list[str] = []
        seen: dict[tuple, tuple[bool, Finding]] = {}
        bound: list[frozenset[str]] = []

        def file_binds() -> frozenset[str]:
            if not bound:
                bound.append(large.module_binds(tree))
            return bound[0]

        for text, rows, *rest in pieces:
            own: frozenset[int] | None = rest[0] if rest else None
            found = self._piece_on_tree(text, rows, path)
            if found is not None:  # the rules ran on its CPython tree, their fixes moved onto libcst's parse
                ctx, raw, shown_hidden, parsed = found
                found = None  # one window's trees at a time: none held while the next is built
                if not ctx.findings:
                    del ctx
                    continue
            else:
                try:
                    module = parse(text, None)
                except Exception as exc:  # noqa: BLE001 - reported as the file's parse error
                    raise _Unparsable(exc) from exc
                ctx, raw, hidden = self.run_rules(module, text, path, rows)
                raw, shown_hidden = self.shown(raw, hidden)
                parsed = None
            piece = large_fix.Piece(text, rows, file_binds)
            result.hidden += shown_hidden
            crashes.extend(c for c in ctx.crashes if c not in crashes)
            sketching = ctx.converted and parsed is None and not self.edits
            for r in raw:
                f = self._to_finding(ctx, r, parsed=parsed)
                f.start, f.end = (rows[f.start[0] - 1], f.start[1]), (rows[f.end[0] - 1], f.end[1])
                mine = own is None or f.start[0] in own
                if sketching and f.edits_omitted and mine:  # edits not built: their sketch decides
                    f.edits = large_fix.sketch(ctx, r.fix)  # type: ignore[arg-type]
                f.edits = (piece.to_file(f.edits) or []) if f.edits and mine else []
                key = (f.code, f.start, f.end, f.message)
                if key not in seen or mine and not seen[key][0]:
                    seen[key] = (mine, f)
            del ctx, raw, parsed
        result.findings.extend(f for _, f in seen.values())
        result.findings.sort(key=Finding.sort_key)
        result.reduced = True
        if not self.edits:  # built to know which map into the file; not shown
            for f in result.findings:
                f.edits_omitted, f.edits = bool(f.edits), []
        return crashes

    def _unparsable(self, result: FileResult, exc: Exception, checked: Checked | None, source: bytes,
                    path: str) -> FileResult:
        """A source the parsers reject: a NAN001 finding (unless a directive silences it)."""
        if checked is not None and checked.rejected is not None:
            exc = checked.rejected  # CPython's error: one source for the message and the position
        exc._source = source  # type: ignore[attr-defined]
        directive = file_directive(source)
        if self.check_parse and not (directive and matches(directive, *PARSE_ERROR)) and directive != NOQA_ALL:
            message, pos = parse_error_message(exc)
            result.findings.append(Finding(*PARSE_ERROR, message, path, pos, pos))
        return result

    def _too_deep(self, source: bytes, path: str, exc: BaseException) -> list[Finding]:
        if not self.check_parse:
            return []
        directive = file_directive(source)
        if directive == NOQA_ALL or (directive and matches(directive, *PARSE_ERROR)):
            return []
        message, pos = parse_error_message(exc if isinstance(exc, NestingTooDeep) else RecursionError())
        return [Finding(*PARSE_ERROR, message, path, pos, pos)]

    def fix_source(self, source: bytes, path: str, unsafe: bool, site_filter: bool = True) -> FileResult:
        """Apply fixes pass after pass until none applies; every pass must re-parse."""
        if path.endswith(".ipynb"):
            try:
                return notebook.fix(self, source, path, unsafe)
            except Exception as exc:  # noqa: BLE001 - nothing is written
                return FileResult(path, error=f"{path}: cannot read notebook ({_one_line(exc)}); left unchanged")
        try:
            checked = precheck(source)
            if site_filter and self.cannot_report(checked, path):
                return FileResult(path, skipped=True)
            if self._reduced(checked, source) is not None:  # its tree would not hold the whole file
                return large_fix.fix_text(source, checked, path,
                                          lambda text, check: self.lint_source(text, path, site_filter, check),
                                          unsafe, MAX_FIX_PASSES, precheck)
            # the first pass: the rules on CPython's tree, libcst's parse only for their fixes' edits
            first = self.with_edits(checked, source, path) if site_filter else None
            if first is not None and not first[0].findings:
                # nothing to fix, nothing to report: libcst never parses it
                return FileResult(path, opt_in=self._opt_in(checked.text))
            module = parse(source, checked) if first is None else first[3].module if first[3] is not None else None
        except Exception:  # noqa: BLE001
            return self.lint_source(source, path, site_filter)
        try:
            # the rules run on libcst's parse without the site filter (what the tests compare with), and
            # where the first run's fixes could not be moved onto it (not asked again of the same text)
            return self._fix_module(module, source, path, unsafe, checked if first is not None else None, first)
        except Exception as exc:  # noqa: BLE001 - RecursionError included: nothing is written
            result = self.lint_source(source, path)
            if isinstance(exc, RecursionError) and result.findings and result.findings[0].code == PARSE_ERROR[0]:
                return result
            result.error = result.error or \
                f"{path}: internal error while fixing ({_one_line(exc)}); file left unchanged, please report it"
            return result

    def _fix_module(self, module: cst.Module | None, source: bytes, path: str, unsafe: bool,
                    checked: Checked | None = None, first: tuple | None = None) -> FileResult:
        """Fix passes to a fixpoint. Each pass runs the rules on the module made of CPython's
        tree (``checked``) and moves their fixes onto ``module``, libcst's parse
        (:meth:`with_edits`; ``first``: the first pass's, when the caller has it, and then
        ``module`` is None when no fix has edits); where that cannot be done, the rules run on
        ``module`` itself."""
        applied = 0
        lost = b""  # what libcst does not reproduce: a final bare CR (``x = 1\r``)
        crashes: list[str] = []
        applied_codes: dict[str, int] = {}
        text = source_text(module, source) if module is not None else checked.text  # type: ignore[union-attr]
        for _ in range(MAX_FIX_PASSES):
            found = first if first is not None else \
                self.with_edits(checked, text, path, module) if checked is not None else None
            first = None
            if found is not None:
                ctx, raw, hidden, parsed = found
                module = parsed.module if parsed is not None else module
            else:
                module = module if module is not None else parse(text, checked)
                ctx, raw, hidden = self.run_rules(module, text, path)
                raw, hidden = self.shown(raw, hidden)  # what is not shown is not fixed
                parsed = None
            crashes.extend(c for c in ctx.crashes if c not in crashes)
            chosen = edits_mod.non_overlapping(parsed or ctx, [f for f in raw if f.fix is not None
                                                 and f.fix.applies_automatically
                                                 and fixes_mod.allowed(f.fix.applicability, unsafe)])
            if not chosen:
                break
            if applied == 0 and isinstance(source, bytes) and module.bytes != source:
                generated = module.bytes
                if source.startswith(generated) and not source[len(generated):].strip():
                    lost = source[len(generated):]
                else:
                    result = self.lint_source(source, path)
                    result.error = f"{path}: cannot fix: libcst does not reproduce this file byte for byte; " \
                        "file left unchanged, please report it"
                    return result
            new_module = fixes_mod.apply(module, [f.fix for f in chosen])  # type: ignore[misc]
            try:
                new_bytes = new_module.bytes
                checked = precheck(new_bytes)
                reparsed = parse(new_bytes, checked)
            except Exception as exc:  # noqa: BLE001
                codes = ", ".join(sorted({f.code for f in chosen}))
                result = self.lint_source(source, path)
                result.error = f"{path}: fix for {codes} produced code that does not parse " \
                    f"({parse_error_message(exc)[0]}); file left unchanged, please report it"
                return result
            if reparsed.code == module.code:
                break
            module = reparsed
            text = source_text(reparsed, new_bytes)
            applied += len(chosen)
            for f in chosen:
                applied_codes[f.code] = applied_codes.get(f.code, 0) + 1
        else:
            result = self.lint_source(source, path)
            codes = ", ".join(sorted({f.code for f in chosen}))
            result.error = f"{path}: fixes for {codes} did not reach a fixpoint after {MAX_FIX_PASSES} passes; " \
                "file left unchanged, please report it"
            return result
        # The last pass linted the final module: its findings are the result (no second lint).
        result = FileResult(path, hidden=hidden)
        result.findings = sorted((self._to_finding(ctx, f, parsed=parsed) for f in raw), key=Finding.sort_key)
        if applied:  # a file no fix changed is never rewritten (libcst may not round-trip a final bare CR)
            final = module.bytes + lost
            result.fixed = applied
            result.fixed_codes = applied_codes
            if final != source:
                result.fixed_source = final
        if crashes and result.error is None:
            result.error = f"{path}: internal error, {'; '.join(crashes)}: " \
                "those rules' findings and fixes in this file are missing; please report it"
        return result


class _Unparsable(Exception):
    """A window of a large file that does not parse (nesting too deep for libcst)."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error
