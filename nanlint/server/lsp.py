"""``nanlint server``: the Language Server Protocol over stdio, on pygls.

* diagnostics on open, change (debounced) and save, from the editor's text;
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
from pathlib import Path

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from nanlint import __version__
from nanlint.lint import catalogue
from nanlint.findings import Finding
from nanlint.fix.fixes import DISPLAY_ONLY, SAFE
from nanlint.server import analysis

DEBOUNCE_S = 0.25
SOURCE = "nanlint"
FIX_ALL = "source.fixAll.nanlint"
FIX_ALL_UNSAFE = "source.nanlint.fixAllUnsafe"
KINDS = [types.CodeActionKind.QuickFix, FIX_ALL, FIX_ALL_UNSAFE]
log = logging.getLogger("nanlint.server")


class NanlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("nanlint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.settings = analysis.Settings()
        self.analyses: dict[str, tuple[int | None, analysis.Analysis]] = {}  # uri -> (version, analysis)
        self.pending: dict[str, asyncio.TimerHandle] = {}
        self.shown_errors: set[str] = set()

    # --- documents -> analyses ------------------------------------------------------------
    def path_of(self, uri: str) -> Path:
        path = to_fs_path(uri) if uri.startswith("file:") else None
        if path is None:  # an unsaved buffer: lint it as a file in the workspace root
            root = self.workspace.root_path or str(Path.cwd())
            return Path(root) / "untitled.py"
        return Path(path)

    def analyse(self, uri: str) -> analysis.Analysis | None:
        doc = self.workspace.get_text_document(uri)
        path = self.path_of(uri)
        if path.suffix == ".ipynb" or (path.suffix not in (".py", ".pyi") and doc.language_id != "python"):
            return None  # notebooks are linted by the command line (cells); other languages not at all
        cached = self.analyses.get(uri)
        if cached is not None and cached[0] == doc.version and doc.version is not None:
            return cached[1]
        result = analysis.analyse(path, doc.source, self.settings)
        self.analyses[uri] = (doc.version, result)
        if result.error and result.error not in self.shown_errors:
            self.shown_errors.add(result.error)
            self.window_show_message(types.ShowMessageParams(types.MessageType.Error,
                                                             f"nanlint: error: {result.error}"))
        return result

    def publish(self, uri: str) -> None:
        self.pending.pop(uri, None)
        if uri not in self.workspace.text_documents:
            return
        found = self.analyse(uri)
        doc = self.workspace.get_text_document(uri)
        diagnostics = [self.diagnostic(doc, f) for f in found.findings] if found is not None else []
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, diagnostics, doc.version))

    def schedule(self, uri: str) -> None:
        handle = self.pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        self.pending[uri] = asyncio.get_running_loop().call_later(DEBOUNCE_S, self.publish, uri)

    def relint_all(self) -> None:
        self.analyses.clear()
        for uri in list(self.workspace.text_documents):
            self.publish(uri)

    # --- conversions ---------------------------------------------------------------------------
    @staticmethod
    def range_of(doc, start: tuple[int, int], end: tuple[int, int]) -> types.Range:
        """nanlint's 1-based (row, code point column) -> the client's position units."""
        lines = doc.lines

        def server(pos):
            row, col = max(pos[0] - 1, 0), max(pos[1] - 1, 0)
            if row >= len(lines):
                return ServerTextPosition(len(lines), 0)
            return ServerTextPosition(row, min(col, len(lines[row].rstrip("\r\n"))))

        return doc.range_to_client_units(ServerTextRange(server(start), server(end)))

    def diagnostic(self, doc, f: Finding) -> types.Diagnostic:
        fix = f"; {f.fix_applicability} fix: {f.fix_message}" if f.edits and f.fix_message else ""
        return types.Diagnostic(
            range=self.range_of(doc, f.start, f.end),
            message=f"{f.message}{fix}",
            severity=types.DiagnosticSeverity.Error if f.code == "NAN001" else types.DiagnosticSeverity.Warning,
            code=f.code,
            source=SOURCE,
            data={"name": f.name, "fix": f.fix_applicability},
        )

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
    def answer(self, handler, params):
        """``handler(params)``, failing as an LSP error of one line: the editor shows the
        message; the Python traceback of an unexpected error is logged at debug level only."""
        uri = params.text_document.uri
        if uri not in self.workspace.text_documents:
            raise JsonRpcInvalidParams(f"nanlint: {uri} is not open (send textDocument/didOpen first)")
        try:
            return handler(params)
        except JsonRpcException:
            raise
        except Exception as exc:  # noqa: BLE001 - a bug: one line to the editor, the trace to the debug log
            log.debug("request on %s failed", uri, exc_info=True)
            raise JsonRpcInternalError(f"nanlint: internal error on {uri}: "
                                       f"{' '.join(f'{type(exc).__name__}: {exc}'.split())[:300]}") from None

    # --- code actions ---------------------------------------------------------------------------
    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        found = self.analyse(uri)
        if found is None or found.excluded:
            return []
        doc = self.workspace.get_text_document(uri)
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
            for f in in_range:
                diag = self.diagnostic(doc, f)
                if f.edits and f.fix_applicability != DISPLAY_ONLY:
                    edits = [types.TextEdit(self.range_of(doc, e.start, e.end), e.content) for e in f.edits]
                    actions.append(types.CodeAction(
                        title=f"{f.code}: {f.fix_message or 'fix'} ({f.fix_applicability} fix)",
                        kind=types.CodeActionKind.QuickFix, diagnostics=[diag],
                        is_preferred=f.fix_applicability == SAFE, edit=self.edit(doc, edits)))
                if f.code != "NAN001":
                    line = analysis.noqa_line(doc.source, f.noqa_row, f.code)
                    if line is not None:
                        row = f.noqa_row - 1
                        old = doc.lines[row].rstrip("\r\n")
                        rng = doc.range_to_client_units(ServerTextRange(ServerTextPosition(row, 0),
                                                                        ServerTextPosition(row, len(old))))
                        actions.append(types.CodeAction(
                            title=f"{f.code}: disable for this line (# noqa: {f.code})",
                            kind=types.CodeActionKind.QuickFix, diagnostics=[diag],
                            edit=self.edit(doc, [types.TextEdit(rng, line)])))
        if wanted(FIX_ALL) and any(f.fixable(False) for f in found.findings):
            fixed = analysis.fix_all(found.path, doc.source, self.settings)
            if fixed is not None:
                actions.append(types.CodeAction(title="Fix all nanlint safe fixes",
                                                kind=FIX_ALL, edit=self.whole(doc, fixed)))
        if wanted(FIX_ALL_UNSAFE) and only and found.unsafe \
                and any(f.fixable(True) and not f.fixable(False) for f in found.findings):
            fixed = analysis.fix_all(found.path, doc.source, self.settings, unsafe=True)
            if fixed is not None:
                actions.append(types.CodeAction(title="Fix all nanlint fixes, including unsafe ones",
                                                kind=FIX_ALL_UNSAFE,
                                                edit=self.whole(doc, fixed)))
        return actions

    def hover(self, params: types.HoverParams) -> types.Hover | None:
        found = self.analyse(params.text_document.uri)
        if found is None:
            return None
        doc = self.workspace.get_text_document(params.text_document.uri)
        point = types.Range(params.position, params.position)
        for f in found.findings:
            rng = self.range_of(doc, f.start, f.end)
            if _overlaps(rng, point):
                page = catalogue.pages().get(f.code)
                text = page.text if page is not None else f"**{f.code} {f.name}**: {f.message}"
                return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, text), rng)
        return None


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

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: NanlintServer, params: types.DidChangeConfigurationParams) -> None:
        if isinstance(params.settings, dict) and params.settings:
            ls.settings = analysis.Settings.from_client(params.settings)
            ls.shown_errors.clear()
            ls.relint_all()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: NanlintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: NanlintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: NanlintServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.analyses.pop(params.text_document.uri, None)  # the config next to it may have changed too
        ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: NanlintServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        handle = ls.pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        ls.analyses.pop(uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=KINDS))
    def code_action(ls: NanlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return ls.answer(ls.code_actions, params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: NanlintServer, params: types.HoverParams) -> types.Hover | None:
        return ls.answer(ls.hover, params)

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
