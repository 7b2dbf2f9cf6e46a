"""A text's lines as CPython numbers them: broken at ``\\n``, ``\\r\\n`` and ``\\r`` only.

Every row nanlint reports is CPython's (and the Language Server Protocol's, which breaks lines
the same way). ``str.splitlines`` also breaks at a form feed (PEP 8's page break), ``\\v``,
``\\x1c`` to ``\\x1e``, ``\\x85``, ``\\u2028`` and ``\\u2029``: a module that maps a row to its
text with it reads the wrong line after one of them (``--add-noqa`` wrote the comment on the
line before the finding's, ``--format full`` showed another line and garbled its fix). Every
such mapping goes through here."""

from __future__ import annotations

import re

# a text's lines, each with its break; the last match is the empty rest after a final break
LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")
BREAK = re.compile(r"\r\n|\r|\n")
# what str.splitlines breaks a line at besides \n, \r\n and \r
_OTHER_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def split_lines(text: str, keepends: bool = False) -> list[str]:
    """``text.splitlines(keepends)`` with CPython's line breaks (``splitlines`` itself when the
    text holds no other character it breaks at: the common case, at C speed)."""
    if _OTHER_BREAKS.search(text) is None:
        return text.splitlines(keepends)
    out = LINES.findall(text)
    if out and out[-1] == "":
        out.pop()
    return out if keepends else [BREAK.sub("", line) for line in out]
