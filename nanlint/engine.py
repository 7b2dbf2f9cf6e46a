"""One file: parse, run the enabled rules, honour noqa, fix to a fixpoint."""

from __future__ import annotations

import ast
import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, Sequence

import libcst as cst

from nanlint import chunks as _chunks
from nanlint import fixes as fixes_mod
from nanlint import large as _large
from nanlint import noqa as noqa_mod
from nanlint.context import FileContext, RawFinding
from nanlint.ops import VALUE_SOURCES, with_implying
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
    skipped: bool = False  # no enabled rule's triggers are in the file: it was not parsed with libcst
    reduced: bool = False  # a large file of which only the statements that can hold a finding were parsed


_DEP_OPS: dict[tuple, frozenset[str]] = {}  # ops of imported project modules, per process
MAX_DEPTH = 1000  # expression nesting nanlint analyses (CPython itself stops near 3000)
_PYCF_ONLY_AST = 0x400
_MAX_BRACKETS = 200  # CPython's limit on nested brackets; libcst's native parser overflows its stack far past it


class NestingTooDeep(Exception):
    """The source is nested too deeply to analyse; reported as NAN001."""


class Checked(NamedTuple):
    """What :func:`precheck` learnt of a source."""

    tree: ast.Module | None  # CPython's tree; None when CPython rejected the source
    rejected: SyntaxError | None  # why (it may be syntax newer than this interpreter)
    text: str  # the decoded source


def precheck(source: bytes | str) -> Checked:
    """Decode ``source`` and parse it with CPython's parser.

    CPython's parser goes first: it is cheap, it fails safely where libcst's native
    parser would overflow the C stack (brackets nested thousands deep kill the
    process) or take minutes (chains nested thousands deep), and it rejects what
    libcst accepts but no Python 3 runs (``except E, e:``).  Syntax newer than the
    running interpreter (PEP 695 ``type``/generics, PEP 701 f-strings) is rejected
    here and still accepted by :func:`parse` when libcst parses it.  Raises
    SyntaxError, UnicodeDecodeError (CPython lets undecodable bytes in comments
    through; Python refuses to run them) or NestingTooDeep when the file cannot be
    analysed at all."""
    import warnings

    if isinstance(source, str):
        text = source
    else:
        import io
        import tokenize

        text = source.decode(tokenize.detect_encoding(io.BytesIO(source).readline)[0])
    try:
        with warnings.catch_warnings():  # "invalid escape sequence" and the like: not ours to print
            warnings.simplefilter("ignore")
            if len(source) > _large.LARGE:  # never the whole file's tree: chunk by chunk (nanlint.chunks)
                tree = _chunks.compile_large(text, source=source if isinstance(source, bytes) else None)
            else:
                tree = compile(source, "<nanlint>", "exec", flags=_PYCF_ONLY_AST, dont_inherit=True)
        return Checked(tree, None, text)
    except SyntaxError as err:
        if "too many nested" in (err.msg or "") or _bracket_depth(source) > _MAX_BRACKETS:
            raise
        return Checked(None, err, text)
    except (RecursionError, MemoryError):
        raise NestingTooDeep("expressions nested too deeply for the Python parser") from None
    except ValueError as err:  # "source code string cannot contain null bytes"
        raise SyntaxError(str(err)) from None


def parse(source: bytes | str, checked: Checked | None = None) -> cst.Module:
    """The libcst tree of ``source``, after CPython's own parser accepted it
    (:func:`precheck`, or its result ``checked``) and its nesting is within
    what libcst can take."""
    from nanlint.walk import parse as fast_parse  # the same tree, ~25% faster

    tree, rejected, text = checked if checked is not None else precheck(source)
    if tree is not None:
        depth = _ast_depth(tree, MAX_DEPTH, text)
        if depth > MAX_DEPTH:
            raise NestingTooDeep(f"expressions nested more than {MAX_DEPTH} deep")
    module = fast_parse(source)
    if rejected is not None and not _newer_syntax(module, rejected):
        raise rejected
    return module


def _ast_depth(tree, limit: int, text: str | None = None) -> int:
    """The nesting depth of a CPython AST, counting a chain ``a and b and c`` as libcst
    nests it (one level per operator); stops counting past ``limit``.

    Given the source ``text``, a statement too short to nest past ``limit`` is not
    walked: below a statement, every level of an expression takes at least one
    character of source (an operator, a bracket, a dot, a keyword) and adds at most two
    levels (a leaf's context node), so a statement of ``n`` characters at statement depth
    ``d`` nests at most ``d + 2n + 2`` deep.  The returned depth is then a bound, exact
    only past ``limit``."""
    if hasattr(tree, "nesting"):  # a large file's chunks.Skeleton: measured chunk by chunk
        return tree.nesting(limit)
    starts = None
    if text is not None and "\r" not in text.replace("\r\n", "\n"):  # CPython's lines are text's \n-lines
        starts = [0, *itertools.accumulate(len(line) + 1 for line in text.split("\n"))]
    deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                break
        if starts is not None and isinstance(node, ast.stmt) and not getattr(node, "handlers", None) \
                and not getattr(node, "cases", None):
            line = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
            end = node.end_lineno or node.lineno
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                end = body[0].lineno  # a compound statement's own part ends where its body starts
            if end < len(starts):
                span = starts[end] - starts[line - 1]  # whole lines: never less than the statement
                if depth + 2 * span + 2 <= limit:
                    deepest = max(deepest, min(depth + 2 * span + 2, limit))
                    for child in _statements_below(node):
                        stack.append((child, depth + 1))
                    continue
        for child in ast.iter_child_nodes(node):
            step = len(child.values) - 1 if isinstance(child, ast.BoolOp) else 1
            stack.append((child, depth + max(step, 1)))
    return deepest


def _statements_below(node: ast.stmt):
    """The statements nested in a compound statement without handlers or cases."""
    for field in ("body", "orelse", "finalbody"):
        for child in getattr(node, field, ()) or ():
            if isinstance(child, ast.stmt):
                yield child


def _bracket_depth(source: bytes | str) -> int:
    """A conservative upper bound of the bracket nesting (strings and comments included)."""
    data = source.encode("utf-8", "surrogateescape") if isinstance(source, str) else source
    depth = deepest = 0
    for byte in data:
        if byte in b"([{":
            depth += 1
            if depth > deepest:
                deepest = depth
        elif byte in b")]}" and depth:
            depth -= 1
    return deepest


def _newer_syntax(module: cst.Module, err: SyntaxError) -> bool:
    """Whether CPython rejected ``module`` only for syntax newer than itself."""
    import sys

    if sys.version_info >= (3, 12):
        return False
    if "f-string" in (err.msg or ""):
        return True  # PEP 701 (3.12): quotes and backslashes inside replacement fields
    newer = tuple(t for t in (getattr(cst, n, None) for n in ("TypeAlias", "TypeParameters")) if t)

    class Finder(cst.CSTVisitor):
        found = False

        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, newer):
                Finder.found = True
            return not Finder.found

    try:
        module.visit(Finder())
    except RecursionError:
        return False
    return Finder.found


_PY2 = re.compile(r"^\s*(print\s+[^\s(=]|exec\s+[\"'a-zA-Z])|except\s+[\w.]+\s*,\s*\w+\s*:|^\s*raise\s+[\w.]+\s*,")


def parse_error_message(exc: Exception) -> tuple[str, tuple[int, int]]:
    if isinstance(exc, cst.ParserSyntaxError):
        message = exc.message.strip().splitlines()[0] if exc.message.strip() else "invalid syntax"
        message = re.sub(r"^parser error: error at \d+:\d+: ", "", message)
        if message.startswith("expected one of"):
            message = "invalid syntax"
        python_reason = _python_reason(getattr(exc, "_source", None))
        if python_reason:
            message = python_reason
        elif _python_accepts(getattr(exc, "_source", None)):
            message = f"libcst cannot parse this file, though Python accepts it ({message})"
        line, col = exc.raw_line, exc.raw_column + 1
        hint = ""
        lines = getattr(exc, "_lines", None) or []
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        if _PY2.search(text):
            hint = " (Python 2 syntax?)"
        return f"SyntaxError: {message}{hint}", (line, max(col, 1))
    if isinstance(exc, UnicodeDecodeError):
        return f"cannot decode source: {exc.reason} at byte {exc.start} (add a PEP 263 coding cookie?)", (1, 1)
    if isinstance(exc, (RecursionError, NestingTooDeep)):
        detail = str(exc) if isinstance(exc, NestingTooDeep) else "expressions nested too deeply"
        return f"cannot analyse: {detail} (nanlint's limit, not a Python error)", (1, 1)
    if isinstance(exc, SyntaxError):
        message = (exc.msg or "invalid syntax").splitlines()[0] if exc.msg else "invalid syntax"
        text = (exc.text or "")
        hint = ""
        if _PY2.search(text) and "Python 2" not in message:
            hint = " (Python 2 syntax?)"
        line = exc.lineno or 1
        col = exc.offset or 1
        return f"SyntaxError: {message}{hint}", (max(line, 1), max(col, 1))
    return f"{type(exc).__name__}: {exc}".splitlines()[0], (1, 1)


def _python_accepts(source) -> bool:
    if source is None:
        return False
    try:
        compile(source, "<nanlint>", "exec", dont_inherit=True, flags=_PYCF_ONLY_AST)
    except BaseException:  # noqa: BLE001
        return False
    return True


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
        # rules whose Rule.site is their own go last: it is asked only when no other rule can report
        self._site_rules = sorted((r for r in self.rules if r.code != PARSE_ERROR[0]),
                                  key=lambda r: type(r).site is not Rule.site)
        # every op and site key some rule's triggers name; None: a rule may report anywhere
        self._wanted = None if any(r.triggers is None for r in self._site_rules) else \
            frozenset(k for r in self._site_rules for group in r.triggers  # type: ignore[union-attr]
                      for k in with_implying(group))

    def cannot_report(self, checked: Checked, path: str | None = None) -> bool:
        """True when no enabled rule can report in a source (whose :func:`precheck` is
        ``checked``): it lacks some group of every rule's triggers (:mod:`nanlint.sites`),
        counting the ops of the project modules it imports (a value may come from them),
        so it need not be parsed with libcst."""
        from nanlint import sites

        if checked.tree is None or self._wanted is None:
            return False
        rules = [r for r in self._site_rules if r.wanted(checked.text)]  # as run_rules skips them
        if not rules:
            return True
        shaped: dict[str, bool] = {}  # rule code -> Rule.site, asked once its triggers are there
        deps: list[tuple[Path, frozenset[str]]] = []  # imported project modules, the ops their names spell

        def site(rule: Rule) -> bool:
            if rule.code not in shaped:  # a large file's skeleton has no calls to read: yes
                shaped[rule.code] = isinstance(checked.tree, _chunks.Skeleton) or rule.site(checked.tree, checked.text)
            return shaped[rule.code]

        def may(present: frozenset[str]) -> bool:
            return any(rule.can_report(present) and site(rule) for rule in rules)

        def enough(present: frozenset[str]) -> bool:
            if may(present):
                return True
            if not may(present | VALUE_SOURCES):
                return False  # no value an imported module can give would make it enough
            # the imported modules: the names in their texts bound what their trees can
            # hold; a tree is built only while those bounds could still decide
            if not deps:
                deps.extend((d, self._dep_ops(d, exact=False)) for d in self._dependencies(checked, path))
            loose = [ops for _, ops in deps]
            if not may(present.union(*loose)):
                return False
            found: set[str] = set()
            for i, (dep, ops) in enumerate(deps):
                if ops:
                    found |= self._dep_ops(dep, exact=True)
                    if may(present | found):
                        return True
                    if not may(present.union(found, *loose[i + 1:])):
                        return False
            return False
        return not enough(sites.scan(checked.tree, checked.text, self._wanted, enough))

    def _reduced(self, checked: Checked, source: bytes) -> tuple[str, list[int]] | None:
        """A large file's text with only the statements that can hold a finding
        (:mod:`nanlint.large`), or None to parse it whole."""
        from nanlint import large, sites

        if len(source) <= large.LARGE or checked.tree is None or self._wanted is None:
            return None
        return large.reduce(checked.tree, checked.text, sites.last_names(self._wanted))

    def _dep_ops(self, dep: Path, exact: bool) -> frozenset[str]:
        """The value-source ops an imported project module can hold: read from its tree
        when ``exact``, else from the names in its text alone (more, never fewer; no
        tree is built).  Remembered per process."""
        from nanlint import sites

        try:
            st = dep.stat()
        except OSError:
            return frozenset()
        key = (str(dep), st.st_mtime_ns, st.st_size, self._wanted, exact)
        if key not in _DEP_OPS:
            try:
                if exact:
                    dep_checked = precheck(dep.read_bytes())
                    ops = sites.scan(dep_checked.tree, dep_checked.text, self._wanted, lambda p: True) \
                        if dep_checked.tree is not None else frozenset()
                else:  # the first, text-only step of a scan
                    text = dep.read_bytes().decode("utf-8", "replace")
                    ops = sites.scan(None, text, self._wanted, lambda p: False)  # type: ignore[arg-type]
                _DEP_OPS[key] = ops & VALUE_SOURCES
            except Exception:  # noqa: BLE001 - an unreadable or broken module gives nothing
                _DEP_OPS[key] = frozenset()
        return _DEP_OPS[key]

    def _dependencies(self, checked: Checked, path: str | None) -> list[Path]:
        from nanlint import modules

        if not path or path.startswith("<") or "import" not in checked.text:
            return []
        return list(modules.dependencies(Path(path), checked.text, modules.extra_roots(self.settings)))

    # --- one pass ---------------------------------------------------------------
    def run_rules(self, module: cst.Module, text: str, path: str) -> tuple[FileContext, list[RawFinding]]:
        ctx = FileContext(module, path, self.settings)
        crashes: list[str] = []
        ctx.crashes = crashes  # type: ignore[attr-defined]
        for rule in self.rules:
            if rule.code == PARSE_ERROR[0] or not rule.wanted(text):
                continue
            ctx._rule = rule
            before = len(ctx.findings)
            try:
                rule.check(ctx)
            except RecursionError:
                raise
            except Exception as exc:  # noqa: BLE001 - one rule's bug must not stop the others
                del ctx.findings[before:]
                crashes.append(f"{rule.code} crashed ({_one_line(exc)})")
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
                content = ctx.module.code_for_node(fixes_mod.restyle(old, new))
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
    def lint_source(self, source: bytes, path: str, site_filter: bool = True) -> FileResult:
        """The findings of one file.  ``site_filter``: skip the libcst parse of a file
        where no rule can report (:meth:`cannot_report`); off only to test that."""
        if path.endswith(".ipynb"):
            from nanlint import notebook
            try:
                return notebook.lint(self, source, path)
            except Exception as exc:  # noqa: BLE001 - a malformed notebook must not stop the run
                return FileResult(path, error=f"{path}: cannot read notebook ({_one_line(exc)})")
        result = FileResult(path)
        checked = None
        try:
            checked = precheck(source)
            if site_filter and self.cannot_report(checked, path):
                result.skipped = True
                return result
            reduced = self._reduced(checked, source)
            text = reduced[0] if reduced is not None else None
            module = parse(text, None) if text is not None else parse(source, checked)
        except Exception as exc:  # noqa: BLE001 - any parser failure is a finding
            if checked is not None and checked.rejected is not None:
                exc = checked.rejected  # CPython's error: one source for the message and the position
            exc._source = source  # type: ignore[attr-defined]
            directive = noqa_mod.file_directive(source)
            if self.check_parse and not (directive and noqa_mod.matches(directive, *PARSE_ERROR)) \
                    and directive != noqa_mod.ALL:
                message, pos = parse_error_message(exc)
                result.findings.append(Finding(*PARSE_ERROR, message, path, pos, pos))
            return result
        try:
            ctx, raw = self.run_rules(module, text if text is not None else source_text(module, source), path)
            result.findings = sorted((self._to_finding(ctx, f) for f in raw), key=Finding.sort_key)
            if reduced is not None:  # back to the file's lines; no fix on a partial tree
                rows = reduced[1]
                for f in result.findings:
                    f.start, f.end = (rows[f.start[0] - 1], f.start[1]), (rows[f.end[0] - 1], f.end[1])
                    f.edits = []
                result.reduced = True
        except RecursionError as exc:
            result.findings = self._too_deep(source, path, exc)
            return result
        except Exception as exc:  # noqa: BLE001 - report, and lint the other files
            result.findings = []
            result.error = f"{path}: internal error, file not linted ({_one_line(exc)}); please report it"
            return result
        if ctx.crashes:  # type: ignore[attr-defined]
            result.error = f"{path}: internal error, {'; '.join(ctx.crashes)}: " \
                "those rules' findings in this file are missing; please report it"  # type: ignore[attr-defined]
        return result

    def _too_deep(self, source: bytes, path: str, exc: BaseException) -> list[Finding]:
        if not self.check_parse:
            return []
        directive = noqa_mod.file_directive(source)
        if directive == noqa_mod.ALL or (directive and noqa_mod.matches(directive, *PARSE_ERROR)):
            return []
        message, pos = parse_error_message(exc if isinstance(exc, NestingTooDeep) else RecursionError())
        return [Finding(*PARSE_ERROR, message, path, pos, pos)]

    def fix_source(self, source: bytes, path: str, unsafe: bool, site_filter: bool = True) -> FileResult:
        """Apply fixes pass after pass until none applies; every pass must re-parse."""
        if path.endswith(".ipynb"):
            from nanlint import notebook
            try:
                return notebook.fix(self, source, path, unsafe)
            except Exception as exc:  # noqa: BLE001 - nothing is written
                return FileResult(path, error=f"{path}: cannot read notebook ({_one_line(exc)}); left unchanged")
        try:
            checked = precheck(source)
            if site_filter and self.cannot_report(checked, path):
                return FileResult(path, skipped=True)
            if self._reduced(checked, source) is not None:  # its tree would not hold the whole file
                result = self.lint_source(source, path, site_filter)
                if any(f.fix_applicability in (fixes_mod.SAFE, fixes_mod.UNSAFE) for f in result.findings):
                    result.error = result.error or f"{path}: too large to fix ({len(source) // 1_000_000} MB): " \
                        "linted, no fix applied"
                return result
            module = parse(source, checked)
        except Exception:  # noqa: BLE001
            return self.lint_source(source, path, site_filter)
        try:
            return self._fix_module(module, source, path, unsafe)
        except Exception as exc:  # noqa: BLE001 - RecursionError included: nothing is written
            result = self.lint_source(source, path)
            if isinstance(exc, RecursionError) and result.findings and result.findings[0].code == PARSE_ERROR[0]:
                return result
            result.error = result.error or \
                f"{path}: internal error while fixing ({_one_line(exc)}); file left unchanged, please report it"
            return result

    def _fix_module(self, module: cst.Module, source: bytes, path: str, unsafe: bool) -> FileResult:
        applied = 0
        lost = b""  # what libcst does not reproduce: a final bare CR (``x = 1\r``)
        crashes: list[str] = []
        applied_codes: dict[str, int] = {}
        text = source_text(module, source)
        for _ in range(MAX_FIX_PASSES):
            ctx, raw = self.run_rules(module, text, path)
            crashes.extend(c for c in ctx.crashes if c not in crashes)  # type: ignore[attr-defined]
            chosen = self._non_overlapping(ctx, [f for f in raw if f.fix is not None
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
                reparsed = parse(new_bytes)
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
        result = FileResult(path)
        result.findings = sorted((self._to_finding(ctx, f) for f in raw), key=Finding.sort_key)
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
