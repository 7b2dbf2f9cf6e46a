"""Where a large file's text can be cut between top-level statements, found without
parsing: a scanner of strings, comments, brackets, backslash continuations and
decorators aims the cuts (why a cut it finds is sound is :mod:`nanlint.source.chunks`'s
docstring: CPython's compile of each chunk proves it)."""

from __future__ import annotations

import bisect
import re

_CANDIDATE = re.compile(r"^(?=[^\s#)\]}\\])(?!(?:else|elif|except|finally)\b)", re.M)  # a line CPython
# indents at 0: not blank, a comment, a backslash (the next line's indentation counts), a closing bracket
_DEF = re.compile(r"(?:def|class|async)\b")
_EVENT = re.compile(r"[#'\"]")
COMMENT = re.compile(r"#[^\r\n]*")
_STRINGS = {
    "'''": re.compile(r"'''[^'\\]*(?:(?:\\[\s\S]|'(?!''))[^'\\]*)*'''"),
    '"""': re.compile(r'"""[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*"""'),
    "'": re.compile(r"'[^'\\\r\n]*(?:\\(?:\r\n|[\s\S])[^'\\\r\n]*)*'"),
    '"': re.compile(r'"[^"\\\r\n]*(?:\\(?:\r\n|[\s\S])[^"\\\r\n]*)*"'),
}
_BRACKET = re.compile(r"[()\[\]{}]")
NEWLINE = re.compile(r"\r\n|\r|\n")


def lines_in(text: str, a: int, b: int) -> int:
    """Line breaks in ``text[a:b]`` as CPython counts them (``\\r\\n``, ``\\r``, ``\\n``)."""
    return text.count("\n", a, b) + text.count("\r", a, b) - text.count("\r\n", a, b)


def bracket_delta(text: str, a: int, b: int) -> int:
    return (text.count("(", a, b) + text.count("[", a, b) + text.count("{", a, b)
            - text.count(")", a, b) - text.count("]", a, b) - text.count("}", a, b))


class Tokens:
    """The strings and comments of a text, found once from left to right: where
    they are (those spanning lines), and the brackets inside them."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0  # everything before is read
        self.spans: list[tuple[int, int]] = []  # strings spanning lines
        self.marks: list[int] = [0]  # positions after a string or comment with brackets in it
        self.sums: list[int] = [0]  # the bracket delta of those up to each mark
        self.broken = len(text) + 1  # where an unterminated string starts

    def read_to(self, p: int) -> None:
        text = self.text
        while self.pos < p:
            m = _EVENT.search(text, self.pos)
            if m is None or m.start() >= len(text):
                self.pos = len(text)
                return
            q = m.start()
            if q >= p and q > self.pos:
                self.pos = q
                return
            if text[q] == "#":
                end = COMMENT.match(text, q).end()  # type: ignore[union-attr]
            else:
                quote = text[q:q + 3] if text.startswith(text[q] * 3, q) else text[q]
                s = _STRINGS[quote].match(text, q)
                if s is None:
                    self.broken = q
                    self.pos = len(text)
                    return
                end = s.end()
                if NEWLINE.search(text, q, end):
                    self.spans.append((q, end))
            if _BRACKET.search(text, q, end):
                self.marks.append(end)
                self.sums.append(self.sums[-1] + bracket_delta(text, q, end))
            self.pos = end

    def inside(self, p: int) -> bool:
        """Whether line start ``p`` (read already) is within a string."""
        i = bisect.bisect_right(self.spans, (p, len(self.text) + 1)) - 1
        return i >= 0 and self.spans[i][0] < p < self.spans[i][1]

    def quoted(self, a: int, b: int) -> int:
        """The bracket delta of the strings and comments in ``[a, b)``, both outside them."""
        return self.sums[bisect.bisect_right(self.marks, b) - 1] - self.sums[bisect.bisect_right(self.marks, a) - 1]


def _after_backslash(text: str, p: int) -> bool:
    return text[max(0, p - 3):p].endswith(("\\\n", "\\\r", "\\\r\n"))


def _cut_ok(text: str, p: int, tokens: Tokens) -> bool:
    """The checks of a candidate line start ``p`` (at bracket depth 0, outside strings):
    not after a backslash continuation, not between a decorator and its def."""
    if _after_backslash(text, p):
        return False
    return not (_DEF.match(text, p) and _decorated(text, p, tokens))


def _decorated(text: str, p: int, tokens: Tokens, steps: int = 100_000) -> bool:
    """Whether the statement before ``p`` (a line start at depth 0) is a decorator:
    the last line before ``p`` that starts a statement in column 0 starts with ``@``.
    True when that is not found soon."""
    end, delta = p, 0  # the bracket delta of [end, p)
    for _ in range(steps):
        if end == 0:
            return False
        r = text.rfind("\n", 0, end - 1) + 1
        delta += bracket_delta(text, r, end) - tokens.quoted(r, end)
        end = r
        c = text[r:r + 1]
        if not c or c.isspace() or c == "#" or delta != 0 or tokens.inside(r) or _after_backslash(text, r):
            continue
        return c == "@"
    return True


def cuts(text: str, target: int, a: int = 0, b: int | None = None, tokens: Tokens | None = None) -> list[int]:
    """Positions in ``[a, b)`` where the text can be cut between top-level statements,
    about ``target`` characters apart (every one found when ``target`` is 0)."""
    b = len(text) if b is None else b
    tokens = tokens or Tokens(text)
    out: list[int] = []
    depth_at, depth = a, 0
    pos = a + max(target, 1)
    while pos < b:
        m = _CANDIDATE.search(text, pos, b)
        if m is None:
            break
        p = m.start()
        pos = p + 1
        tokens.read_to(p)
        if p >= tokens.broken:
            break
        if tokens.inside(p):
            continue
        depth += bracket_delta(text, depth_at, p)
        depth -= tokens.quoted(depth_at, p)
        depth_at = p
        if depth != 0 or not _cut_ok(text, p, tokens):
            continue
        out.append(p)
        pos = p + max(target, 1)
    return out


def line_starts(text: str, a: int, b: int, tokens: Tokens, skip_to):
    """The line starts ``p`` in ``(a, b)`` outside strings, each with the bracket depth there
    (brackets in strings and comments not counted), as ``(p, depth)``; ``skip_to(p)`` is
    asked first: a position to skip ahead to (that line is not given), or None."""
    depth_at, depth = a, 0
    pos = a
    while pos < b:
        nl = NEWLINE.search(text, pos, b)
        if nl is None:
            return
        p = pos = nl.end()
        if p >= b or tokens.inside(p):
            continue
        ahead = skip_to(p)
        if ahead is not None:
            pos = max(pos, ahead)
            continue
        depth += bracket_delta(text, depth_at, p) - tokens.quoted(depth_at, p)
        depth_at = p
        yield p, depth
