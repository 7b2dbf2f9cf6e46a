#!/usr/bin/env python3
"""How long `nanlint server` takes to answer an editor, measured with a real LSP client
(pytest-lsp's): start + initialize, then per file the time from didOpen to its
diagnostics, from an edit after a quiet spell to its diagnostics (not debounced), and from
the last of a burst of five edits 50 ms apart to its diagnostics (the 250 ms debounce
included: only the burst's last version is analysed).

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
DEFAULT = ["examples/torch_losses.py", "examples/mnist_softmax_tf1.py", "nanlint/rules/_gradient_traps.py"]


async def measure(files: list[Path]) -> None:
    client = make_test_lsp_client()
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    start = time.perf_counter()
    await client.start_io(sys.executable, "-m", "nanlint", "server", env=env)
    await client.initialize_session(types.InitializeParams(capabilities=client_capabilities("visual-studio-code"),
                                                           root_uri=ROOT.as_uri()))
    print(f"start + initialize: {(time.perf_counter() - start) * 1000:.0f} ms")
    for path in files:
        text, uri = path.read_text(), path.resolve().as_uri()
        start = time.perf_counter()
        client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, text)))
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        opened = time.perf_counter() - start
        start = time.perf_counter()
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=2, uri=uri),
            [types.TextDocumentContentChangeWholeDocument(text=text + "\n")]))
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        changed = time.perf_counter() - start
        await asyncio.sleep(0.5)  # a quiet spell: the burst below starts as typing does
        for version in range(3, 8):
            client.text_document_did_change(types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(version=version, uri=uri),
                [types.TextDocumentContentChangeWholeDocument(text=text + "\n" * version)]))
            start = time.perf_counter()
            if version < 7:
                await asyncio.sleep(0.05)
        while (await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)).version != 7:
            pass
        typed = time.perf_counter() - start
        print(f"{path}: {len(text.splitlines())} lines, {len(client.diagnostics[uri])} diagnostics; "
              f"open {opened * 1000:.0f} ms, change {changed * 1000:.0f} ms, "
              f"typing {typed * 1000:.0f} ms (after the last edit of a burst, debounce included)")
    await client.shutdown_session()
    await client.stop()


if __name__ == "__main__":
    asyncio.run(measure([Path(p) for p in sys.argv[1:]] or [ROOT / p for p in DEFAULT]))
