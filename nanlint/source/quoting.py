"""A node's code as the user wrote it, read from the source by CPython's positions: what a
finding quotes (its message, its snippet) when it comes from a module made from CPython's
tree (:mod:`nanlint.source.from_ast`), whose nodes carry libcst's default formatting.

The answer is libcst's ``code_for_node`` of the same node in libcst's own parse: the text
between the node's first and last character, with the parentheses that are the node's own
(libcst's ``lpar``/``rpar``: a pair around the node that is not its parent's syntax, as a
call's around its only argument is), and the continuation lines of a node over several
lines without the indentation of the block it is in (libcst keeps that indentation in the
block, not in the node).  Columns here count characters; CPython's count UTF-8 bytes
(:meth:`Text.column` turns one into the other).
"""

from __future__ import annotations

import tokenize

from nanlint.source.lines import split_lines

_BLANK = " \t\f"
_SPACE = (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT)


class Text:
    """The lines of one source, for reading nodes' code out of it."""

    def __init__(self, text: str) -> None:
        self.lines = split_lines(text, keepends=True)
        self._ascii: dict[int, bool] = {}

    def line(self, row: int) -> str:
        return self.lines[row - 1] if 0 < row <= len(self.lines) else ""

    def column(self, row: int, byte_column: int) -> int:
        """The character column of CPython's ``byte_column`` on line ``row``."""
        ascii_ = self._ascii.get(row)
        if ascii_ is None:
            ascii_ = self._ascii[row] = self.line(row).isascii()
        if ascii_:
            return byte_column
        return len(self.line(row).encode("utf-8", "surrogatepass")[:byte_column].decode("utf-8", "replace"))

    def between(self, start: tuple[int, int], end: tuple[int, int]) -> str:
        """The text from ``start`` to ``end`` ((row, character column), the end excluded)."""
        (r1, c1), (r2, c2) = start, end
        if r1 == r2:
            return self.line(r1)[c1:c2]
        return self.line(r1)[c1:] + "".join(self.lines[r1:r2 - 1]) + self.line(r2)[:c2]

    def own_parens(self, start: tuple[int, int], end: tuple[int, int], statement: tuple[int, int],
                   parent_pair: bool) -> tuple[tuple[int, int], tuple[int, int]]:
        """``start``/``end`` widened to the parentheses around the node that are its own:
        every pair written right around it, less the outermost when ``parent_pair`` (its
        parent's syntax: a call's parentheses around its only argument).  ``statement``:
        where the statement holding the node begins (the text is tokenized from there, so
        that a parenthesis in a string or a comment is not one)."""
        before = self.line(start[0])[:start[1]].rstrip(_BLANK)
        after = self.line(end[0])[end[1]:].lstrip(_BLANK)
        if before and before[-1] != "(" or after.strip() and after[0] not in ")#\\":  # the common case: no tokens read
            return start, end
        opens: list[tuple[int, int]] = []  # the "(" right before the node, innermost last
        closes: list[tuple[int, int]] = []  # the ")" right after it, innermost first
        for tok in self._tokens(statement):
            kind, text, a, b = tok.type, tok.string, tok.start, tok.end
            if kind in _SPACE:
                continue
            if b <= start:
                if text == "(" and kind == tokenize.OP:
                    opens.append(a)
                else:
                    opens.clear()
            elif a >= end:
                if text == ")" and kind == tokenize.OP and len(closes) < len(opens):
                    closes.append(b)
                    continue
                break
        pairs = min(len(opens), len(closes)) - (1 if parent_pair else 0)
        if pairs <= 0:
            return start, end
        return opens[-pairs], closes[pairs - 1]

    def next_token(self, end: tuple[int, int], statement: tuple[int, int]) -> tuple[int, int]:
        """Where the first token at or after ``end`` begins (a comma, a comment or a line
        break is not one): the end of an argument's code, which runs through its comma and
        the whitespace after it (libcst's ``Arg``)."""
        for tok in self._tokens(statement):
            if tok.start >= end and tok.type not in _SPACE and tok.string != ",":
                return tok.start
        return end

    def comment(self, row: int, statement: tuple[int, int]) -> str | None:
        """The comment on line ``row`` (a real one, not ``#`` in a string), tokenized from
        ``statement``, the start of a statement at or before it."""
        for tok in self._tokens(statement):
            if tok.start[0] > row:
                break
            if tok.type == tokenize.COMMENT and tok.start[0] == row:
                return tok.string
        return None

    def _tokens(self, statement: tuple[int, int]):
        """The tokens from ``statement`` on, with the file's rows and columns; they end where
        the tokenizer fails (read from a statement's column, a later line may dedent to a
        level it never saw: past anything asked about here)."""
        row, col = statement
        first = self.line(row)[col:]
        rest = iter(self.lines[row:])

        def readline() -> str:
            nonlocal first
            if first is not None:
                line, first = first, None
                return line
            return next(rest, "")

        tokens = tokenize.generate_tokens(readline)
        while True:
            try:
                tok = next(tokens)
            except (StopIteration, tokenize.TokenError, SyntaxError):
                return
            if tok.start[0] == 1:  # the first line was read from the statement's column
                s = (row, tok.start[1] + col)
                e = (row + tok.end[0] - 1, tok.end[1] + (col if tok.end[0] == 1 else 0))
            else:
                s = (row + tok.start[0] - 1, tok.start[1])
                e = (row + tok.end[0] - 1, tok.end[1])
            yield tok._replace(start=s, end=e)

    def inside_parens(self, start: tuple[int, int], end: tuple[int, int],
                      statement: tuple[int, int]) -> tuple[tuple[int, int], tuple[int, int]]:
        """The first and last token's bounds within the parentheses that begin at ``start``
        and end at ``end`` (what CPython gives a call's only generator expression)."""
        first = last = None
        for tok in self._tokens(statement):
            if tok.type in _SPACE or tok.start <= start:
                continue
            if tok.end >= end:
                break
            first = first or tok.start
            last = tok.end
        return (first, last) if first is not None and last is not None else (start, end)

    def code(self, start: tuple[int, int], end: tuple[int, int], indent: str, statement: tuple[int, int]) -> str:
        """The text from ``start`` to ``end``, each continuation line less the block's
        ``indent`` (not a line inside a string, nor one after a backslash: libcst keeps those
        in the node)."""
        text = self.between(start, end)
        if not indent or "\n" not in text and "\r" not in text:
            return text
        in_string: set[int] = set()  # rows that begin inside a string token
        for tok in self._tokens(statement):
            if tok.start >= end:
                break
            if tok.type == tokenize.STRING or tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
                in_string.update(range(tok.start[0] + 1, tok.end[0] + 1))
        rows = split_lines(text, keepends=True)
        out = [rows[0]]
        for row, (prev, line) in enumerate(zip(rows, rows[1:]), start=start[0] + 1):
            if line.startswith(indent) and row not in in_string and not prev.rstrip("\r\n").endswith("\\"):
                line = line[len(indent):]
            out.append(line)
        return "".join(out)

    def indent(self, row: int) -> str:
        """The indentation of line ``row``."""
        line = self.line(row)
        return line[:len(line) - len(line.lstrip(_BLANK))]
