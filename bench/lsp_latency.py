#!/usr/bin/env python3
"""How long `nanlint server` takes to answer an editor, measured with a real LSP client
(pytest-lsp's): start + initialize, then per file the time from didOpen to its
diagnostics, from an edit in the middle of the document after a quiet spell to its
diagnostics (not debounced), and from the last of a burst of five edits 50 ms apart (typing
a comment there) to its diagnostics (the 250 ms debounce included: only the burst's last
version is analysed).  A large document's edit is answered from the statements it touched
first; the time to the whole document's analysis published after the burst is printed too.

    python bench/lsp_latency.py [FILE]...   # default: two examples and one large module
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from lsprotocol import types
from pytest_lsp import client_capabilities, make_test_lsp_client

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
try:  # a checkout before incremental edits has no second publish to wait for
    from nanlint.server.lsp import EXACT_DELAY_S, INCREMENTAL_MIN  # noqa: E402
except ImportError:
    EXACT_DELAY_S, INCREMENTAL_MIN = 0.0, float("inf")
DEFAULT = ["examples/torch_losses.py", "examples/mnist_softmax_tf1.py", "nanlint/rules/_gradient_traps.py"]


async def measure(files: list[Path]) -> None:
    client = make_test_lsp_client()
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    start = time.perf_counter()
    # in the checkout: ``-m`` puts the working directory first on the path, before PYTHONPATH (run from
    # another checkout, its nanlint would serve)
    await client.start_io(sys.executable, "-m", "nanlint", "server", env=env, cwd=str(ROOT))
    await client.initialize_session(types.InitializeParams(capabilities=client_capabilities("visual-studio-code"),
                                                           root_uri=ROOT.as_uri()))
    print(f"start + initialize: {(time.perf_counter() - start) * 1000:.0f} ms")
    for path in files:
        text, uri = path.read_text(), path.resolve().as_uri()
        start = time.perf_counter()
        client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, text)))
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        opened = time.perf_counter() - start
        lines = text.splitlines(keepends=True)
        middle = len(lines) // 2

        def typed(k: int) -> str:  # a comment line typed above the middle line
            return "".join(lines[:middle]) + "#" + " edited"[:k] + "\n" + "".join(lines[middle:])

        start = time.perf_counter()
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=2, uri=uri),
            [types.TextDocumentContentChangeWholeDocument(text=typed(1))]))
        await until(client, uri, 2)
        changed = time.perf_counter() - start
        await asyncio.sleep(0.5)  # a quiet spell: the burst below starts as typing does
        for version in range(3, 8):
            client.text_document_did_change(types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(version=version, uri=uri),
                [types.TextDocumentContentChangeWholeDocument(text=typed(version))]))
            start = time.perf_counter()
            if version < 7:
                await asyncio.sleep(0.05)
        await until(client, uri, 7)
        burst = time.perf_counter() - start
        diagnostics = len(client.diagnostics[uri])
        whole = ""
        if len(text) >= INCREMENTAL_MIN:  # a large document: the whole analysis of the same version follows
            wait = 3 * opened + EXACT_DELAY_S + 10  # past it, the burst's publish was already the whole analysis
            try:
                await asyncio.wait_for(until(client, uri, 7), wait)
                whole = f", whole document {(time.perf_counter() - start) * 1000:.0f} ms after the burst"
            except asyncio.TimeoutError:
                whole = f", none else in {wait:.0f} s (the burst's was the whole document's analysis)"
        fix = ""
        fixable = [d for d in client.diagnostics[uri] if (d.data or {}).get("fix") in ("safe", "unsafe")]
        if fixable:  # the quick fixes of the finding nearest the middle: their edits are built on request
            near = min(fixable, key=lambda d: abs(d.range.start.line - middle))
            start = time.perf_counter()
            found = await client.text_document_code_action_async(types.CodeActionParams(
                types.TextDocumentIdentifier(uri), near.range,
                types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.QuickFix])))
            edits = sum(1 for a in found if a.edit is not None and "disable" not in a.title)
            fix = f", quick fix {(time.perf_counter() - start) * 1000:.0f} ms ({edits} with edits)"
        print(f"{path}: {len(lines)} lines, {diagnostics} diagnostics; "
              f"open {opened * 1000:.0f} ms, edit {changed * 1000:.0f} ms, "
              f"typing {burst * 1000:.0f} ms (after the last edit of a burst, debounce included){whole}{fix}")
    await client.shutdown_session()
    await client.stop()


async def until(client, uri: str, version: int) -> None:
    """The next diagnostics published for ``uri`` at ``version``."""
    while (await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)).version != version:
        pass


if __name__ == "__main__":
    asyncio.run(measure([Path(p) for p in sys.argv[1:]] or [ROOT / p for p in DEFAULT]))
