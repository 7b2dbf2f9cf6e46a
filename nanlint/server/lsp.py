"""``nanlint server``: the Language Server Protocol over stdio, on pygls.

* diagnostics on open, change and save (an edit after a quiet spell at once, a burst of
  typing debounced), from the editor's text, computed in a
  worker process per document (worker.py): the protocol never waits on an analysis, an
  edit kills the analysis of the version before, and a stale result is never published;
* an edit of a large document (``INCREMENTAL_MIN`` characters) is analysed first from the
  statements it touched (nanlint.lint.incremental: a fraction of a second whatever the
  document holds), published, and the whole document after a quiet spell
  (``EXACT_DELAY_S``), which replaces it;
* a quick fix per finding, labelled with its applicability (safe, unsafe), and
  ``# noqa: CODE`` insertion;
* "Fix all nanlint safe fixes" as ``source.fixAll.nanlint`` (what editors run on save:
  never an unsafe fix) and, with ``unsafeFixes``, a separate ``source.nanlint.fixAllUnsafe``;
* hover on a finding shows its rule page;
* settings ``select``, ``extendSelect``, ``ignore``, ``unsafeFixes`` from the client.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from pathlib import Path
from typing import Sequence

from lsprotocol import types
from pygls.exceptions import JsonRpcContentModified, JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from nanlint import __version__
from nanlint.lint import catalogue, incremental
from nanlint.findings import Finding
from nanlint.fix.fixes import DISPLAY_ONLY, SAFE
from nanlint.server import analysis, documents, wire, worker
from nanlint.source.ast_tree import collector_paused

DEBOUNCE_S = 0.25
INCREMENTAL_MIN = 50_000  # characters: an edit of a document this large is analysed from what it touched first
EXACT_DELAY_S = 1.5  # the whole document's analysis, after an edit's, once edits have stopped this long
BACKGROUND_NICE = 10  # that analysis yields the CPU to those of the edits that come while it runs
MAX_JOBS = min(8, max(4, os.cpu_count() or 1))  # analyses running at once, one worker process each
FIX_ALL = "source.fixAll.nanlint"
FIX_ALL_UNSAFE = "source.nanlint.fixAllUnsafe"
KINDS = [types.CodeActionKind.QuickFix, FIX_ALL, FIX_ALL_UNSAFE]
log = logging.getLogger("nanlint.server")


class NanlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("nanlint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         protocol_cls=wire.Protocol)
        self.wire = wire.Diagnostics()
        self.settings = analysis.Settings()
        self.analyses: dict[str, tuple[int | None, analysis.Analysis | None]] = {}  # uri -> (version, analysis)
        # uri -> (version, its analysis with the fixes' edits): made when a quick fix asks for them
        self.edited: dict[str, tuple[int | None, analysis.Analysis]] = {}
        self.linting: dict[str, tuple[int | None, asyncio.Task]] = {}  # uri -> (version, its lint task)
        self.slots: asyncio.Semaphore | None = None  # at most MAX_JOBS analyses at a time
        self.shown_errors: set[str] = set()
        self.last_edit: dict[str, float] = {}  # uri -> when its latest edit came (time.monotonic)
        # uri -> what its last published analysis leaves for the next edit's (a large document's)
        self.snapshots: dict[str, incremental.Snapshot] = {}

    # --- documents -> analyses ------------------------------------------------------------
    # Every analysis runs in a worker process (worker.py); the protocol thread only starts
    # it, waits for it without blocking, and publishes. One task per document lints its
    # latest version: an edit cancels the task of the version before (killing its worker),
    # and a result whose version is no longer the document's is never published.
    def path_of(self, uri: str) -> Path:
        path = to_fs_path(uri) if uri.startswith("file:") else None
        if path is None:  # an unsaved buffer: lint it as a file in the workspace root
            root = self.workspace.root_path or str(Path.cwd())
            return Path(root) / "untitled.py"
        return Path(path)

    def lintable(self, uri: str) -> bool:
        doc = self.workspace.get_text_document(uri)
        path = self.path_of(uri)
        # notebooks are linted by the command line (cells); other languages not at all
        return path.suffix != ".ipynb" and (path.suffix in (".py", ".pyi") or doc.language_id == "python")

    async def compute(self, fn, *args, background: bool = False):
        """``fn(*args)`` in a worker process, once a slot is free; killed if cancelled.
        ``background``: at a lower priority (the whole document after an edit's analysis)."""
        if self.slots is None:
            self.slots = asyncio.Semaphore(MAX_JOBS)
        async with self.slots:
            job = worker.run(fn, *args, nice=BACKGROUND_NICE if background else 0)
            try:
                return await job.future
            finally:
                job.kill()  # nothing left to do when it is done; stops the child when cancelled

    async def lint(self, uri: str, version: int | None, delay: float,
                   whole: bool = False) -> analysis.Analysis | None:
        """Analyse the document as it is at ``version`` and publish, unless a newer version came.
        A large document's edit is analysed from the statements it touched first, then, after
        ``EXACT_DELAY_S``, whole (``whole``: that second analysis)."""
        if delay:
            await asyncio.sleep(delay)
        if uri not in self.workspace.text_documents:
            return None
        doc = self.workspace.get_text_document(uri)
        if doc.version != version:
            return None  # a newer edit has its own task
        path = self.path_of(uri)
        result, partial = None, False
        if self.lintable(uri):
            large = len(doc.source) >= INCREMENTAL_MIN
            base = self.snapshots.get(uri) if large and not whole else None
            if base is not None:
                try:
                    result = await self.compute(analysis.analyse_edit, path, base, doc.source, self.settings)
                except worker.WorkerError:
                    result = None
                if result is not None and result.change is not None:
                    with collector_paused():
                        applied = result.change.applied(base, doc.source)
                    result.findings, result.units, result.change = applied.findings, applied.units, None
                partial = result is not None
            if result is None:
                try:
                    result = await self.compute(analysis.analyse, path, doc.source, self.settings, False, large,
                                                background=whole)
                except worker.WorkerError as exc:
                    result = analysis.Analysis(path, error=str(exc))
        if self.workspace.text_documents.get(uri) is not doc or doc.version != version:
            return None  # stale (edited, or closed and opened again): never published
        self.analyses[uri] = (version, result)
        if result is not None and result.units is not None:
            self.snapshots[uri] = incremental.Snapshot(doc.source, result.units, result.findings)
        # else the last snapshot stays: any later text is an edit of it (a bracket opened, then
        # closed: the closing edit is analysed from what it touched since that snapshot)
        if partial:  # the whole document once edits stop (a newer edit cancels it)
            self.linting[uri] = (version, asyncio.ensure_future(self.lint(uri, version, EXACT_DELAY_S, True)))
        if result is not None and result.error and result.error not in self.shown_errors:
            self.shown_errors.add(result.error)
            self.window_show_message(types.ShowMessageParams(types.MessageType.Error,
                                                             f"nanlint: error: {result.error}"))
        with collector_paused():  # the collector walking the heap doubled the time to write them
            self.publish(doc, uri, version, result.findings if result is not None else [])
        return result

    def debounce(self, uri: str) -> float:
        """How long an edit of ``uri`` waits before its analysis starts: not at all after a
        quiet spell (an edit then costs what its analysis costs), ``DEBOUNCE_S`` while edits
        come closer together than that (typing: only the latest version is analysed; an
        analysis an edit started at once is killed by the next, :meth:`schedule`)."""
        now = time.monotonic()
        last = self.last_edit.get(uri)
        self.last_edit[uri] = now
        return DEBOUNCE_S if last is not None and now - last < DEBOUNCE_S else 0.0

    def schedule(self, uri: str, delay: float = 0.0) -> asyncio.Task:
        """Lint the document's current version after ``delay``, dropping the older one's work."""
        self.cancel(uri)
        version = self.workspace.get_text_document(uri).version
        task = asyncio.ensure_future(self.lint(uri, version, delay))
        self.linting[uri] = (version, task)
        return task

    def cancel(self, uri: str) -> None:
        _, task = self.linting.pop(uri, (None, None))
        if task is not None and not task.done():
            task.cancel()

    async def current(self, uri: str):
        """(the analysis of the document's current version, the document), waiting for it if
        it is being computed; an error ``ContentModified`` if edits keep outrunning it."""
        for _ in range(5):
            doc = self.workspace.get_text_document(uri)
            cached = self.analyses.get(uri)
            if cached is not None and cached[0] == doc.version and doc.version is not None:
                return cached[1], doc
            version, task = self.linting.get(uri, (None, None))
            if task is None or task.done() or version != doc.version:
                task = self.schedule(uri)
            try:
                await asyncio.shield(task)
            except asyncio.CancelledError:
                if not task.cancelled():
                    raise  # this request was cancelled, not the analysis
            if uri not in self.workspace.text_documents:
                break
        raise JsonRpcContentModified(f"nanlint: {uri} changed while it was being analysed")

    def forget(self, uri: str) -> None:
        self.analyses.pop(uri, None)
        self.edited.pop(uri, None)
        self.snapshots.pop(uri, None)

    async def with_edits(self, found: analysis.Analysis, doc) -> analysis.Analysis:
        """The analysis of ``doc``'s version with its fixes' edits (diagnostics are computed
        without them: libcst parses only for a quick fix), computed once per version;
        ``ContentModified`` if the document changed meanwhile."""
        cached = self.edited.get(doc.uri)
        if cached is not None and cached[0] == doc.version:
            return cached[1]
        version = doc.version
        try:
            full = await self.compute(analysis.analyse, found.path, doc.source, self.settings, True)
        except worker.WorkerError as exc:
            raise JsonRpcInternalError(f"nanlint: {exc}") from None
        if self.workspace.text_documents.get(doc.uri) is not doc or doc.version != version:
            raise JsonRpcContentModified(f"nanlint: {doc.uri} changed while its fixes were computed")
        self.edited[doc.uri] = (version, full)
        return full

    def snapshot_of(self, doc) -> incremental.Snapshot | None:
        """The snapshot of ``doc`` as it is now (None when there is none, or it is of another text)."""
        snapshot = self.snapshots.get(doc.uri)
        return snapshot if snapshot is not None and snapshot.text == doc.source else None

    async def edits_around(self, found: analysis.Analysis, doc, first: int, last: int) -> analysis.Analysis | None:
        """A large document's findings on lines ``first``..``last`` with their fixes' edits,
        from the statements there alone (:func:`analysis.fixes_around`: a quick fix in a 2 MB
        document in a fraction of a second, not its whole analysis); None for another document
        or where that cannot be done."""
        snapshot = self.snapshot_of(doc)
        if snapshot is None:
            return None
        version = doc.version
        try:
            near = await self.compute(analysis.fixes_around, found.path, snapshot, first, last, self.settings)
        except worker.WorkerError:
            return None
        if self.workspace.text_documents.get(doc.uri) is not doc or doc.version != version:
            raise JsonRpcContentModified(f"nanlint: {doc.uri} changed while its fixes were computed")
        return near

    def relint_all(self) -> None:
        self.analyses.clear()
        self.edited.clear()
        self.snapshots.clear()
        for uri in list(self.workspace.text_documents):
            self.schedule(uri)

    # --- conversions ---------------------------------------------------------------------------
    @staticmethod
    def span_of(doc, start: tuple[int, int], end: tuple[int, int], lines: Sequence[str]) -> tuple[int, int, int, int]:
        """nanlint's 1-based (row, code point column) -> the client's position units, (line,
        character, end line, end character); ``lines``: ``doc.lines``, read once by the caller
        (each read splits the whole document: per finding, a document of 8,000 findings took
        twice as long to publish as to analyse)."""

        def server(pos):
            row, col = max(pos[0] - 1, 0), max(pos[1] - 1, 0)
            if row >= len(lines):
                return len(lines), 0
            return row, min(col, len(lines[row].rstrip("\r\n")))

        (r1, c1), (r2, c2) = server(start), server(end)
        if r1 < len(lines) and r2 < len(lines) and lines[r1][:c1].isascii() and lines[r2][:c2].isascii():
            return r1, c1, r2, c2  # a column in any unit the client counts (the codec: 20x slower)
        rng = doc.position_codec.range_to_client_units(
            lines, ServerTextRange(ServerTextPosition(r1, c1), ServerTextPosition(r2, c2)))
        return rng.start.line, rng.start.character, rng.end.line, rng.end.character

    def range_of(self, doc, start: tuple[int, int], end: tuple[int, int], lines: Sequence[str]) -> types.Range:
        r1, c1, r2, c2 = self.span_of(doc, start, end, lines)
        return types.Range(types.Position(r1, c1), types.Position(r2, c2))

    def diagnostic(self, doc, f: Finding, lines: Sequence[str]) -> types.Diagnostic:
        """``f`` as a code action names it (published: :meth:`publish`, the same fields)."""
        rest = wire.rest(f)
        return types.Diagnostic(range=self.range_of(doc, f.start, f.end, lines), message=rest["message"],
                                severity=types.DiagnosticSeverity(rest["severity"]), code=rest["code"],
                                source=rest["source"], data=rest["data"])

    def publish(self, doc, uri: str, version: int | None, findings: Sequence[Finding]) -> None:
        """The document's diagnostics, written as JSON here (wire.py: 35,000 of them made as
        lsprotocol's objects and serialized by pygls took 0.6 s)."""
        lines = doc.lines
        span_of = self.span_of
        self.protocol.send_written(self.wire.notification(
            uri, version, ((f, span_of(doc, f.start, f.end, lines)) for f in findings)))

    def whole(self, doc, new_text: str) -> types.WorkspaceEdit:
        lines = doc.lines
        end = ServerTextPosition(len(lines), 0)
        rng = doc.range_to_client_units(ServerTextRange(ServerTextPosition(0, 0), end))
        return self.edit(doc, [types.TextEdit(rng, new_text)])

    @staticmethod
    def edit(doc, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
            types.OptionalVersionedTextDocumentIdentifier(doc.uri, doc.version), edits)])

    # --- requests -------------------------------------------------------------------------------
    async def answer(self, handler, params):
        """``handler(params)``, failing as an LSP error of one line: the editor shows the
        message; the Python traceback of an unexpected error is logged at debug level only."""
        uri = params.text_document.uri
        if uri not in self.workspace.text_documents:
            raise JsonRpcInvalidParams(f"nanlint: {uri} is not open (send textDocument/didOpen first)")
        try:
            return await handler(params)
        except JsonRpcException:
            raise
        except Exception as exc:  # noqa: BLE001 - a bug: one line to the editor, the trace to the debug log
            log.debug("request on %s failed", uri, exc_info=True)
            raise JsonRpcInternalError(f"nanlint: internal error on {uri}: "
                                       f"{' '.join(f'{type(exc).__name__}: {exc}'.split())[:300]}") from None

    # --- code actions ---------------------------------------------------------------------------
    async def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        found, doc = await self.current(uri)
        if found is None or found.excluded:
            return []
        version, source = doc.version, doc.source
        only = params.context.only

        def wanted(kind: str) -> bool:  # "source.fixAll" asks for "source.fixAll.nanlint" too
            kind = getattr(kind, "value", kind)
            return not only or any(kind == getattr(k, "value", k) or kind.startswith(getattr(k, "value", k) + ".")
                                   for k in only)

        actions: list[types.CodeAction] = []
        # a finding on a line of the request (a cursor anywhere on the line of a finding gets its fixes)
        first, last = params.range.start.line + 1, params.range.end.line + 1
        in_range = [f for f in found.findings if f.start[0] <= last and f.end[0] >= first]
        if wanted(types.CodeActionKind.QuickFix):
            lines = doc.lines
            fixes: dict = {}  # a finding -> its edits, from the analysis that builds them
            wanting = [f for f in in_range if f.edits_omitted and f.fix_applicability != DISPLAY_ONLY]
            if wanting:  # a large document's: from the statements around them first
                near = await self.edits_around(found, doc, min(f.start[0] for f in wanting),
                                               max(f.end[0] for f in wanting))
                fixes = {_key(g): g.edits for g in near.findings if g.edits} if near is not None else {}
            if any(_key(f) not in fixes for f in wanting):
                full = await self.with_edits(found, doc)
                fixes = {_key(g): g.edits for g in full.findings if g.edits}
            for f in in_range:
                diag = self.diagnostic(doc, f, lines)
                made = f.edits or fixes.get(_key(f))
                if made and f.fix_applicability != DISPLAY_ONLY:
                    edits = [types.TextEdit(self.range_of(doc, e.start, e.end, lines), e.content) for e in made]
                    actions.append(types.CodeAction(
                        title=f"{f.code}: {f.fix_message or 'fix'} ({f.fix_applicability} fix)",
                        kind=types.CodeActionKind.QuickFix, diagnostics=[diag],
                        is_preferred=f.fix_applicability == SAFE, edit=self.edit(doc, edits)))
                if f.code != "NAN001":
                    line = self.noqa_line(doc, lines, f.noqa_row, f.code)
                    if line is not None:
                        row = f.noqa_row - 1
                        old = lines[row].rstrip("\r\n")
                        rng = doc.position_codec.range_to_client_units(
                            lines, ServerTextRange(ServerTextPosition(row, 0), ServerTextPosition(row, len(old))))
                        actions.append(types.CodeAction(
                            title=f"{f.code}: disable for this line (# noqa: {f.code})",
                            kind=types.CodeActionKind.QuickFix, diagnostics=[diag],
                            edit=self.edit(doc, [types.TextEdit(rng, line)])))
        if wanted(FIX_ALL) and any(f.fixable(False) for f in found.findings):
            fixed = await self.fixed(found.path, source, version, doc)
            if fixed is not None:
                actions.append(types.CodeAction(title="Fix all nanlint safe fixes",
                                                kind=FIX_ALL, edit=self.whole(doc, fixed)))
        if wanted(FIX_ALL_UNSAFE) and only and found.unsafe \
                and any(f.fixable(True) and not f.fixable(False) for f in found.findings):
            fixed = await self.fixed(found.path, source, version, doc, unsafe=True)
            if fixed is not None:
                actions.append(types.CodeAction(title="Fix all nanlint fixes, including unsafe ones",
                                                kind=FIX_ALL_UNSAFE,
                                                edit=self.whole(doc, fixed)))
        return actions

    def noqa_line(self, doc, lines: Sequence[str], row: int, code: str) -> str | None:
        """Line ``row`` with ``# noqa: CODE`` added (:func:`analysis.noqa_line`); in a large
        document, the tokens read are those of the statement the line is in, not the whole
        text's (0.5 s for 300 KB, on the protocol thread, per finding of the request)."""
        snapshot = self.snapshot_of(doc)
        if snapshot is None:
            return analysis.noqa_line(doc.source, row, code)
        first, last = incremental.statement_rows(snapshot, lines, row)
        return analysis.noqa_line("".join(lines[first - 1:last]), row - first + 1, code)

    async def fixed(self, path: Path, source: str, version: int | None, doc, unsafe: bool = False) -> str | None:
        """The fixed text, computed in a worker; ``ContentModified`` if the document changed meanwhile."""
        try:
            fixed = await self.compute(analysis.fix_all, path, source, self.settings, unsafe)
        except worker.WorkerError:
            fixed = None
        if doc.version != version:
            raise JsonRpcContentModified(f"nanlint: {doc.uri} changed while its fixes were computed")
        return fixed

    async def hover(self, params: types.HoverParams) -> types.Hover | None:
        found, doc = await self.current(params.text_document.uri)
        if found is None:
            return None
        point = types.Range(params.position, params.position)
        lines = doc.lines
        for f in found.findings:
            rng = self.range_of(doc, f.start, f.end, lines)
            if _overlaps(rng, point):
                page = catalogue.pages().get(f.code)
                text = page.text if page is not None else f"**{f.code} {f.name}**: {f.message}"
                return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, text), rng)
        return None


def _key(f: Finding) -> tuple:
    """What a finding is in both analyses of a version (with and without edits)."""
    return f.code, f.start, f.end, f.message


def _before(a: types.Position, b: types.Position) -> bool:
    return (a.line, a.character) < (b.line, b.character)


def _overlaps(a: types.Range, b: types.Range) -> bool:
    """Whether two ranges touch (an empty range at a finding's edge counts)."""
    return not _before(a.end, b.start) and not _before(b.end, a.start)


def create() -> NanlintServer:
    server = NanlintServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: NanlintServer, params: types.InitializeParams) -> None:
        ls.settings = analysis.Settings.from_client(params.initialization_options)
        documents.adopt(ls.workspace)  # lines broken as the protocol breaks them
        analysis.warm()  # once: every worker forked later starts warm

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: NanlintServer, params: types.DidChangeConfigurationParams) -> None:
        if isinstance(params.settings, dict) and params.settings:
            ls.settings = analysis.Settings.from_client(params.settings)
            ls.shown_errors.clear()
            ls.relint_all()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: NanlintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: NanlintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, ls.debounce(params.text_document.uri))

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: NanlintServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.forget(params.text_document.uri)  # the config next to it may have changed too
        ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: NanlintServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.cancel(uri)
        ls.forget(uri)
        ls.last_edit.pop(uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=KINDS))
    async def code_action(ls: NanlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return await ls.answer(ls.code_actions, params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: NanlintServer, params: types.HoverParams) -> types.Hover | None:
        return await ls.answer(ls.hover, params)

    return server


class _QuietRequestErrors(logging.Filter):
    """pygls logs each request that fails, with its traceback, at error level; the
    one-line errors of :meth:`NanlintServer.answer` are the answer, logged at debug level only."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, JsonRpcException) or log.isEnabledFor(logging.DEBUG)


def serve() -> None:
    logging.basicConfig(level=logging.WARNING, format="nanlint server: %(levelname)s: %(message)s")
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_QuietRequestErrors())
    create().start_io()
