"""The language server, end to end: pytest-lsp starts ``nanlint server`` as a subprocess
and drives it as an editor would (open, change, code actions, hover, settings)."""

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")

from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ENV = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
HAZARD = "import torch\nimport torch.nn.functional as F\n\n\ndef loss(z):\n    return torch.log(F.softmax(z, dim=1))\n"
SIGMOID = "import torch\n\n\ndef loss(z):\n    return torch.log(torch.sigmoid(z))\n"
CROSS = "import tensorflow as tf\n\n\ndef f(z):\n    p = tf.nn.softmax(z)\n    return tf.math.log(p)\n"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "nanlint", "server"],
                                              server_env=ENV))
async def client(lsp_client: LanguageClient, tmp_path):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=tmp_path.as_uri(),
        initialization_options={"settings": {"extendSelect": ["NAN109"]}}))
    yield
    await lsp_client.shutdown_session()


def _offset(lines: list[str], pos: types.Position) -> int:
    # the tests' text is ASCII: UTF-16 units are characters
    return sum(len(line) for line in lines[:pos.line]) + pos.character


def apply_edits(text: str, edits) -> str:
    lines = text.splitlines(keepends=True)
    spans = sorted(((_offset(lines, e.range.start), _offset(lines, e.range.end), e.new_text) for e in edits),
                   reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def edits_of(action: types.CodeAction) -> list[types.TextEdit]:
    [change] = action.edit.document_changes
    return list(change.edits)


async def open_doc(client: LanguageClient, path: Path, text: str) -> list[types.Diagnostic]:
    path.write_text(text)
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return client.diagnostics[uri]


async def actions(client, path, line, only=None):
    rng = types.Range(types.Position(line, 0), types.Position(line, 0))
    return await client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(path.as_uri()), rng, types.CodeActionContext(diagnostics=[], only=only)))


def cli_fix(path: Path, *args) -> str:
    subprocess.run([sys.executable, "-m", "nanlint", "--isolated", "--fix", *args, str(path)], env=ENV,
                   capture_output=True, check=False, cwd=path.parent)
    return path.read_text()


@pytest.mark.asyncio
async def test_open_file_with_hazard_gives_diagnostic(client: LanguageClient, tmp_path):
    [diag] = await open_doc(client, tmp_path / "train.py", HAZARD)
    assert diag.code == "NAN101" and diag.source == "nanlint"
    assert diag.severity == types.DiagnosticSeverity.Warning
    assert (diag.range.start.line, diag.range.start.character) == (5, 11)
    assert (diag.range.end.line, diag.range.end.character) == (5, 41)
    assert "safe fix" in diag.message


@pytest.mark.asyncio
async def test_safe_fix_action_edit_matches_cli_fix(client: LanguageClient, tmp_path):
    path = tmp_path / "train.py"
    await open_doc(client, path, HAZARD)
    found = await actions(client, path, 5)
    [fix] = [a for a in found if a.kind == types.CodeActionKind.QuickFix and "safe fix" in a.title]
    assert fix.title.startswith("NAN101:") and fix.is_preferred
    after = apply_edits(HAZARD, edits_of(fix))
    [fix_all] = [a for a in found if a.kind == "source.fixAll.nanlint"]
    assert fix_all.title == "Fix all nanlint safe fixes"
    assert apply_edits(HAZARD, edits_of(fix_all)) == after
    assert after == cli_fix(path)  # the file on disk, fixed by the command line
    assert "F.log_softmax(z, dim=1)" in after


@pytest.mark.asyncio
async def test_unsafe_fix_is_offered_labelled_and_never_in_fix_all(client: LanguageClient, tmp_path):
    path = tmp_path / "cross.py"
    await open_doc(client, path, CROSS)
    found = await actions(client, path, 5)
    [unsafe] = [a for a in found if "(unsafe fix)" in a.title]
    assert not unsafe.is_preferred
    after = apply_edits(CROSS, edits_of(unsafe))
    assert "tf.nn.log_softmax(z)" in after and after == cli_fix(path, "--unsafe-fixes")
    on_save = await actions(client, path, 5, only=["source.fixAll"])  # what an editor runs on save
    assert not on_save
    assert not await actions(client, path, 5, only=["source.nanlint.fixAllUnsafe"])  # unsafeFixes is off
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"nanlint": {"unsafeFixes": True}}))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert not await actions(client, path, 5, only=["source.fixAll"])  # still never on save
    [everything] = await actions(client, path, 5, only=["source.nanlint.fixAllUnsafe"])
    assert apply_edits(CROSS, edits_of(everything)) == after


@pytest.mark.asyncio
async def test_noqa_action_silences_the_finding(client: LanguageClient, tmp_path):
    path = tmp_path / "train.py"
    await open_doc(client, path, HAZARD)
    [noqa] = [a for a in await actions(client, path, 5) if "# noqa" in a.title]
    text = apply_edits(HAZARD, edits_of(noqa))
    assert text.splitlines()[5] == "    return torch.log(F.softmax(z, dim=1))  # noqa: NAN101"
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version=2, uri=path.as_uri()),
        [types.TextDocumentContentChangeWholeDocument(text=text)]))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert list(client.diagnostics[path.as_uri()]) == []


@pytest.mark.asyncio
async def test_changes_are_debounced_and_linted_from_memory(client: LanguageClient, tmp_path):
    path = tmp_path / "train.py"
    await open_doc(client, path, "import torch\n")
    uri = path.as_uri()
    for version in range(2, 7):  # typing: only the last text is linted
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=version, uri=uri),
            [types.TextDocumentContentChangeWholeDocument(text=HAZARD[: 40 + version])]))
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version=7, uri=uri), [types.TextDocumentContentChangeWholeDocument(text=HAZARD)]))
    published = []
    while not published or published[-1] != 7:
        params = await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        published.append(params.version)
    # the first edit after the quiet spell is analysed at once (published if it is done
    # before the next comes); the burst after it waits, and only its last text is linted
    assert set(published) <= {2, 7}, published
    assert [d.code for d in client.diagnostics[uri]] == ["NAN101"]
    assert path.read_text() == "import torch\n"  # the disk was not read


def test_an_edit_after_a_quiet_spell_is_not_debounced(monkeypatch):
    """The first edit after a quiet spell is analysed at once; edits closer together than
    the debounce wait for it (the test above: only the last of a burst is published)."""
    from nanlint.server import lsp

    now = [100.0]
    monkeypatch.setattr(lsp.time, "monotonic", lambda: now[0])
    server = lsp.NanlintServer()
    assert server.debounce("file:///a.py") == 0.0  # the first edit
    now[0] += 0.05
    assert server.debounce("file:///a.py") == lsp.DEBOUNCE_S  # typing
    assert server.debounce("file:///b.py") == 0.0  # another document is not typing
    now[0] += lsp.DEBOUNCE_S + 0.01
    assert server.debounce("file:///a.py") == 0.0  # a pause, then an edit


@pytest.mark.asyncio
async def test_broken_file_gives_nan001_and_server_lives_on(client: LanguageClient, tmp_path):
    [diag] = await open_doc(client, tmp_path / "broken.py", "import torch\ndef f(:\n    pass\n")
    assert diag.code == "NAN001" and diag.severity == types.DiagnosticSeverity.Error
    assert (diag.range.start.line, diag.range.start.character) == (1, 6)
    assert not await actions(client, tmp_path / "broken.py", 1)
    [diag] = await open_doc(client, tmp_path / "ok.py", HAZARD)  # still serving
    assert diag.code == "NAN101"


@pytest.mark.asyncio
async def test_hover_shows_the_rule_page(client: LanguageClient, tmp_path):
    path = tmp_path / "train.py"
    await open_doc(client, path, HAZARD)
    hover = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(path.as_uri()), types.Position(5, 20)))
    assert hover.contents.kind == types.MarkupKind.Markdown
    assert hover.contents.value.startswith("# NAN101 log-softmax")
    nothing = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(path.as_uri()), types.Position(0, 0)))
    assert nothing is None


@pytest.mark.asyncio
async def test_settings_from_client_and_project_config(client: LanguageClient, tmp_path):
    # initializationOptions extendSelect NAN109: the opt-in rule reports
    diags = await open_doc(client, tmp_path / "a.py", "import torch\n\ny = torch.log(w)\n")
    assert [d.code for d in diags] == ["NAN109"]
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"nanlint": {"ignore": ["NAN101"]}}))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert list(client.diagnostics[(tmp_path / "a.py").as_uri()]) == []  # NAN109 no longer selected
    # the project's configuration is read as the CLI reads it: excluded and per-file-ignored files
    (tmp_path / "pyproject.toml").write_text('[tool.nanlint]\nextend-exclude = ["vendor"]\n'
                                             'per-file-ignores = { "tests/*" = ["NAN102"] }\n')
    (tmp_path / "vendor").mkdir()
    (tmp_path / "tests").mkdir()
    assert not await open_doc(client, tmp_path / "vendor" / "v.py", SIGMOID)
    assert not await open_doc(client, tmp_path / "tests" / "t.py", SIGMOID)
    diags = await open_doc(client, tmp_path / "b.py", SIGMOID)
    assert [d.code for d in diags] == ["NAN102"]


@pytest.mark.asyncio
async def test_bad_selector_setting_is_shown_not_crashed(client: LanguageClient, tmp_path):
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"nanlint": {"select": ["log-softmx"]}}))
    await open_doc(client, tmp_path / "a.py", HAZARD)
    await asyncio.sleep(0.2)
    assert any("did you mean 'log-softmax'?" in m.message for m in client.messages)


def test_server_without_pygls_is_one_line_with_the_install_command(tmp_path):
    code = "import sys; sys.modules['pygls'] = None; from nanlint.cli import main; sys.exit(main(['server']))"
    proc = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert proc.stderr.startswith("nanlint: error: `nanlint server` needs pygls")
    assert proc.stderr.rstrip().endswith("python3 -m pip install 'pygls>=2.1,<3' lsprotocol")


@pytest.mark.asyncio
@pytest.mark.parametrize("exists", [False, True])
async def test_request_on_an_unopened_document_is_a_one_line_error(client: LanguageClient, tmp_path, exists):
    """A code action or hover for a URI the editor never opened: an LSP error with one line
    of message, no Python traceback in it (issue 23); the server goes on."""
    path = tmp_path / "never_opened.py"
    if exists:
        path.write_text(HAZARD)
    for request in (actions(client, path, 5),
                    client.text_document_hover_async(types.HoverParams(
                        types.TextDocumentIdentifier(path.as_uri()), types.Position(5, 12)))):
        with pytest.raises(Exception) as caught:
            await request
        error = caught.value
        text = str(error)
        assert "Traceback" not in text and "File \"" not in text and "\n" not in text.strip(), text
        assert "traceback" not in repr(getattr(error, "data", None) or ""), error.data
        assert "not open" in text, text
    [diag] = await open_doc(client, tmp_path / "train.py", HAZARD)  # still serving
    assert diag.code == "NAN101"


# --- issue 22: the server never blocks -------------------------------------------------------------

SLOW = 3000  # functions, each one finding: several seconds of analysis


def slow_text(n: int = SLOW) -> str:
    return "import torch\n" + "".join(f"\n\ndef f{i}(x):\n    return torch.log(1 + torch.exp(x))\n" for i in range(n))


def record_diagnostics(client: LanguageClient) -> list[types.PublishDiagnosticsParams]:
    """Every publishDiagnostics the client gets, in order (``client.diagnostics`` keeps the last)."""
    seen: list[types.PublishDiagnosticsParams] = []
    features = client.protocol.fm.features
    keep = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def recording(params):
        seen.append(params)
        return keep(params)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = recording
    return seen


async def published(seen, uri: str, version: int | None = None, timeout: float = 120.0):
    """The first diagnostics published for ``uri`` (at ``version``); a generous bound only."""
    for _ in range(int(timeout / 0.05)):
        for params in seen:
            if params.uri == uri and (version is None or params.version == version):
                return params
        await asyncio.sleep(0.05)
    raise AssertionError(f"no diagnostics for {uri} (version {version}) in {timeout} s: {seen}")


def open_text(client: LanguageClient, path: Path, text: str, version: int = 1) -> str:
    path.write_text(text)
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=path.as_uri(), language_id="python", version=version, text=text)))
    return path.as_uri()


@pytest.mark.asyncio
async def test_a_slow_document_does_not_delay_another(client: LanguageClient, tmp_path):
    """While a big document is analysed, a small one opened after it gets its diagnostics
    first, and hover and code actions on it are answered (the big one still unpublished)."""
    seen = record_diagnostics(client)
    big = open_text(client, tmp_path / "big.py", slow_text())
    small_path = tmp_path / "small.py"
    small = open_text(client, small_path, HAZARD)
    [diag] = (await published(seen, small)).diagnostics
    assert diag.code == "NAN101"
    assert big not in [p.uri for p in seen], "the big document was published before the small one"
    hover = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(small), types.Position(5, 20)))
    assert hover.contents.value.startswith("# NAN101 log-softmax")
    found = await actions(client, small_path, 5)
    assert any(a.kind == "source.fixAll.nanlint" for a in found)
    assert big not in [p.uri for p in seen], "hover and code actions waited for the big document"
    assert len((await published(seen, big)).diagnostics) == SLOW  # and the big one is done too


@pytest.mark.asyncio
async def test_only_the_latest_version_is_published(client: LanguageClient, tmp_path):
    """Edits that arrive while an older version is analysed: that older analysis is dropped,
    and only the latest version's diagnostics are published."""
    seen = record_diagnostics(client)
    uri = open_text(client, tmp_path / "edited.py", slow_text())
    await asyncio.sleep(0.5)  # version 1 is being analysed
    for version, text in ((2, slow_text(SLOW + 1)), (3, HAZARD)):
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=version, uri=uri),
            [types.TextDocumentContentChangeWholeDocument(text=text)]))
    latest = await published(seen, uri, version=3)
    assert [d.code for d in latest.diagnostics] == ["NAN101"]
    await asyncio.sleep(1.0)  # room for a stale result to (wrongly) arrive late
    assert [p.version for p in seen if p.uri == uri] == [3]
    assert [d.code for d in client.diagnostics[uri]] == ["NAN101"]


class _Wire:
    """A transport that keeps what the server writes."""

    def __init__(self) -> None:
        self.written = b""

    def write(self, data: bytes) -> None:
        self.written += data

    def messages(self) -> list[dict]:
        import json

        out, data = [], self.written
        while data:
            head, _, rest = data.partition(b"\r\n\r\n")
            length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
            out.append(json.loads(rest[:length]))
            data = rest[length:]
        return out


def test_diagnostics_split_the_document_once_and_count_columns_in_utf16(tmp_path):
    """Publishing N findings reads the document's lines once (pygls splits the whole text at each
    read: per finding, 8,000 findings took twice as long to publish as to analyse), and a column
    after a non-BMP character is in the client's UTF-16 units."""
    from pygls.workspace import TextDocument

    from nanlint.findings import Finding
    from nanlint.server.lsp import NanlintServer

    reads = []

    class Counting(TextDocument):
        @property
        def lines(self):
            reads.append(1)
            return super().lines

    n = 300
    text = "s = '\U0001F600'; y = torch.log(torch.softmax(x, 1))\n" * n
    doc = Counting(uri=(tmp_path / "m.py").as_uri(), source=text)
    col = text.index("torch.log") + 1  # 1-based, in code points
    findings = [Finding(path="m.py", start=(row, col), end=(row, col + 9), code="NAN101", name="log-softmax",
                        message="m") for row in range(1, n + 1)]
    server, wire = NanlintServer(), _Wire()
    server.protocol.set_writer(wire)
    server.publish(doc, doc.uri, 4, findings)
    assert len(reads) == 1
    [sent] = wire.messages()
    diags = sent["params"]["diagnostics"]
    assert [d["range"]["start"]["line"] for d in diags] == list(range(n))
    assert {(d["range"]["start"]["character"], d["range"]["end"]["character"]) for d in diags} == {(col, col + 9)}


def test_published_diagnostics_are_what_lsprotocol_s_objects_give(tmp_path):
    """The notification the server writes itself (nanlint.server.wire) reads, field by field, as
    pygls's serialization of the same diagnostics as lsprotocol objects: ranges in UTF-16
    units, messages with quotes, backslashes and non-ASCII text, a fix's text, NAN001's severity."""
    from pygls.workspace import TextDocument

    from nanlint.findings import Edit, Finding
    from nanlint.server.lsp import NanlintServer

    text = "s = '\U0001F600'; y = torch.log(torch.softmax(x, 1))\nz = 'é'  # \u2028 ok\n\nbad(\n"
    doc = TextDocument(uri=(tmp_path / "m é.py").as_uri(), source=text)
    col = text.index("torch.log") + 1
    findings = [
        Finding(path="m.py", start=(1, col), end=(1, col + 9), code="NAN101", name="log-softmax",
                message='log of `softmax` is "-inf"', fix_applicability="safe", fix_message="Use log_softmax",
                edits=[Edit("x", (1, col), (1, col + 1))]),
        Finding(path="m.py", start=(2, 5), end=(2, 8), code="NAN105", name="absorbed-epsilon",
                message="é \\ ü \u2028 \U0001F600", fix_applicability="unsafe", fix_message="x", edits_omitted=True),
        Finding(path="m.py", start=(4, 1), end=(9, 1), code="NAN001", name="parse-error", message="cannot parse"),
        Finding(path="m.py", start=(1, 1), end=(1, 2), code="NAN201", name="single-where", message="m", may=True,
                fix_applicability="display-only", fix_message="shown only"),
    ]
    server, wire = NanlintServer(), _Wire()
    server.protocol.set_writer(wire)
    for version in (7, None):
        server.publish(doc, doc.uri, version, findings)
    converter = server.protocol._converter
    objects = [server.diagnostic(doc, f, doc.lines) for f in findings]  # what a code action names
    expected = [converter.unstructure(types.PublishDiagnosticsNotification(
        params=types.PublishDiagnosticsParams(doc.uri, objects, version))) for version in (7, None)]
    assert wire.messages() == expected
    assert wire.written.isascii()  # Content-Length counts its characters: bytes


@pytest.mark.asyncio
async def test_an_edit_of_a_large_document_is_answered_from_what_it_touched(client: LanguageClient, tmp_path):
    """A document of INCREMENTAL_MIN characters or more: an edit's diagnostics come first from
    the statements it touched (nanlint.lint.incremental), then from the whole document's
    analysis of the same version, once edits stop; both the same here."""
    from nanlint.server.lsp import INCREMENTAL_MIN

    seen = record_diagnostics(client)
    n = INCREMENTAL_MIN // 30 + 1
    text = "import torch\nimport torch.nn.functional as F\n\n\n" + \
        "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(n))
    assert len(text) >= INCREMENTAL_MIN
    uri = open_text(client, tmp_path / "large.py", text)
    assert not (await published(seen, uri, 1)).diagnostics
    lines = text.splitlines(keepends=True)
    middle = 4 + 4 * (n // 2)
    new = "".join(lines[:middle]) + "def loss(z):\n    return torch.log(F.softmax(z, dim=1))\n\n\n" + \
        "".join(lines[middle:])
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version=2, uri=uri), [types.TextDocumentContentChangeWholeDocument(text=new)]))
    first = await published(seen, uri, 2)
    [diag] = first.diagnostics
    assert diag.code == "NAN101" and diag.range.start.line == middle + 1
    for _ in range(2400):  # the whole document's analysis, after the quiet spell
        both = [p for p in seen if p.uri == uri and p.version == 2]
        if len(both) == 2:
            break
        await asyncio.sleep(0.05)
    assert len(both) == 2, "the edit's analysis was not followed by the whole document's"
    assert both[1].diagnostics == first.diagnostics


@pytest.mark.asyncio
async def test_a_background_analysis_runs_at_a_lower_priority():
    """The whole document's analysis after an edit's runs niced (worker.run(nice=)), so the
    analyses of the edits that come meanwhile get the CPU first."""
    from nanlint.server import worker

    if not worker.CAN_FORK:
        pytest.skip("no fork: the call runs in a thread of the server")
    base = os.nice(0)
    assert await worker.run(os.nice, 0).future == base
    assert await worker.run(os.nice, 0, nice=5).future == min(base + 5, 19)


@pytest.mark.asyncio
async def test_quick_fixes_in_a_large_document_are_those_of_a_small_one(client: LanguageClient, tmp_path):
    """In a large document the quick fix's edits and the noqa line come from the statement
    around the finding (lint/incremental.around, statement_rows), not the whole document:
    the same actions as for the function alone in a small document, on its lines."""
    from nanlint.server.lsp import INCREMENTAL_MIN

    n = INCREMENTAL_MIN // 30 + 1
    head, hazard = HAZARD.split("\n\n\n", 1)  # the imports; the function
    filler = [f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(n)]
    text = head + "\n\n\n" + "".join(filler[:n // 2]) + hazard + "\n\n" + "".join(filler[n // 2:])
    [diag] = await open_doc(client, tmp_path / "large.py", text)
    row = diag.range.start.line
    assert text.splitlines()[row].strip() == "return torch.log(F.softmax(z, dim=1))"
    [small] = await open_doc(client, tmp_path / "small.py", HAZARD)
    large_actions = await actions(client, tmp_path / "large.py", row)
    small_actions = await actions(client, tmp_path / "small.py", small.range.start.line)
    assert [a.title for a in large_actions] == [a.title for a in small_actions]
    for big, little in zip(large_actions, small_actions):
        if big.kind == types.CodeActionKind.QuickFix:
            [edit] = edits_of(big)
            [other] = edits_of(little)
            assert edit.new_text == other.new_text
            assert edit.range.start.line - other.range.start.line == row - small.range.start.line


@pytest.mark.asyncio
@pytest.mark.parametrize("separator", ["\x0c", "\u2028", "\x1c"])
async def test_a_form_feed_or_unicode_separator_is_not_a_line_break(client: LanguageClient, tmp_path, separator):
    """The protocol breaks lines at \\n, \\r\\n and \\r only, as CPython does; pygls's documents
    split with ``str.splitlines``, which also breaks at a form feed (PEP 8's page break), \\x1c
    to \\x1e, \\x85, \\u2028 and \\u2029. An incremental change below such a character was
    applied a line off (the server's text was no longer the editor's), and every diagnostic
    after it was shown a line off."""
    text = f"import torch  # {separator} page\n\n\ndef f(z):\n    return 1\n"
    path = tmp_path / "feed.py"
    assert not await open_doc(client, path, text)
    uri = path.as_uri()
    # the editor replaces `1` on line 4 (0-based) with a hazard
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version=2, uri=uri),
        [types.TextDocumentContentChangePartial(range=types.Range(types.Position(4, 11), types.Position(4, 12)),
                                                text="torch.log(torch.sigmoid(z))")]))
    for _ in range(50):
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        if client.diagnostics[uri]:
            break
    [d] = client.diagnostics[uri]
    assert d.code == "NAN102" and d.range.start.line == 4 and d.range.start.character == 11
