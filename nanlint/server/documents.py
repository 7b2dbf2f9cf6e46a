"""The documents the server holds, with the protocol's lines.

The Language Server Protocol breaks lines at ``\\n``, ``\\r\\n`` and ``\\r`` only, as CPython
does (``nanlint.source.lines``). pygls's ``TextDocument`` splits its text with
``str.splitlines``, which also breaks at a form feed (PEP 8's page break), ``\\v``, ``\\x1c`` to
``\\x1e``, ``\\x85``, ``\\u2028`` and ``\\u2029``; every position it reads goes through those lines.
In a document holding one of them, an incremental change below it was applied a line off (the
server's text was no longer the editor's) and each diagnostic after it was shown a line off.
The workspace pygls makes at ``initialize`` is adopted here, so that its documents split as the
protocol does."""

from __future__ import annotations

from typing import Sequence

from pygls.workspace import TextDocument, Workspace

from nanlint.source.lines import split_lines


class Document(TextDocument):
    """A text document whose lines are the protocol's."""

    @property
    def lines(self) -> Sequence[str]:
        return tuple(split_lines(self.source, keepends=True))


class Documents(Workspace):
    """A workspace whose text documents (notebook cells too) are :class:`Document` s."""

    def _create_text_document(self, doc_uri: str, source: str | None = None, version: int | None = None,
                              language_id: str | None = None) -> TextDocument:
        return Document(doc_uri, source=source, version=version, language_id=language_id,
                        sync_kind=self._sync_kind, position_codec=self._position_codec)


def adopt(workspace: Workspace) -> None:
    """Make the workspace pygls created at ``initialize`` (before any document is opened) a
    :class:`Documents`: pygls builds it itself, with no hook for the class."""
    if not isinstance(workspace, Documents):
        workspace.__class__ = Documents
