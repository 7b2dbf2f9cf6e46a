"""Diagnostics written as JSON by the server itself, each finding's constant part once.

pygls publishes ``lsprotocol`` objects: each ``Diagnostic`` (its range, positions, data) is
unstructured by cattrs, then the whole notification goes through ``json.dumps``. For a
document of 35,000 findings that was 0.4 s per edit, and building the objects 0.2 s more:
most of an edit's answer, though nearly every finding is the one the last analysis had (moved
by some lines at most). Here a finding's JSON is its range, written with ``%``, followed by
the rest of it (message, severity, code, source, data), ``json.dumps``'d once per distinct
text and remembered; :class:`Protocol` writes the body as pygls writes any message (the same
header and encoding). What a client reads is what the objects gave (``tests/test_server.py``
compares the two).
"""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Iterable

from pygls.protocol import LanguageServerProtocol

from nanlint.findings import Finding

SOURCE = "nanlint"
WARNING, ERROR = 2, 1  # lsprotocol's DiagnosticSeverity
PUBLISH = "textDocument/publishDiagnostics"
_RANGE = '{"range":{"start":{"line":%d,"character":%d},"end":{"line":%d,"character":%d}},'
_REST_MAX = 100_000  # distinct texts remembered; past that the memory starts again


class Written:
    """A message whose JSON text is written already (ASCII: ``json.dumps``' escapes)."""

    __slots__ = ("body",)

    def __init__(self, body: str) -> None:
        self.body = body


class Protocol(LanguageServerProtocol):
    """pygls's protocol, which also sends a :class:`Written` message as it is."""

    def send_written(self, message: Written) -> None:
        """``message`` on the transport, framed as pygls frames any (``_send_data``)."""
        if self.writer is None:
            return
        body = message.body
        if self._include_headers:
            body = f"Content-Length: {len(body)}\r\nContent-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n" \
                + body
        done = self.writer.write(body.encode(self.CHARSET))
        if inspect.isawaitable(done):
            asyncio.ensure_future(done)


def message(f: Finding) -> str:
    """What the editor shows for ``f``: its message, and its fix when it has edits."""
    fix = f"; {f.fix_applicability} fix: {f.fix_message}" if f.has_edits and f.fix_message else ""
    return f"{f.message}{fix}"


def rest(f: Finding) -> dict:
    """A finding's diagnostic but its range, as the client reads it."""
    return {"message": message(f), "severity": ERROR if f.code == "NAN001" else WARNING, "code": f.code,
            "source": SOURCE, "data": {"name": f.name, "fix": f.fix_applicability}}


class Diagnostics:
    """Writes the ``publishDiagnostics`` notification of a document's findings."""

    def __init__(self) -> None:
        self._rest: dict[tuple, str] = {}

    def _rest_of(self, f: Finding) -> str:
        key = (f.message, f.has_edits and f.fix_message, f.fix_applicability, f.code, f.name)
        text = self._rest.get(key)
        if text is None:
            if len(self._rest) >= _REST_MAX:
                self._rest.clear()
            text = self._rest[key] = json.dumps(rest(f))[1:]  # after its ``{``
        return text

    def notification(self, uri: str, version: int | None, spans: Iterable[tuple[Finding, tuple]]) -> Written:
        """``spans``: each finding with its range in the client's units, (line, character,
        end line, end character), 0-based."""
        rest_of, head = self._rest_of, _RANGE
        items = ",".join(head % span + rest_of(f) for f, span in spans)
        params = '{"uri":%s,%s"diagnostics":[%s]}' % (
            json.dumps(uri), "" if version is None else '"version":%d,' % version, items)
        return Written('{"method":"%s","jsonrpc":"2.0","params":%s}' % (PUBLISH, params))
