"""The syntax check of a large file, a chunk of top-level statements at a time.

CPython's tree of a 10 MB module takes 1.3-1.6 GB (a node per literal, name and
call), more than nanlint's budget for the whole run.  Above ``large.LARGE`` bytes
the source is cut at top-level statement boundaries into chunks of about
``TARGET`` characters; each chunk is compiled with ``PyCF_ONLY_AST`` on its own,
what the site filter (:mod:`nanlint.semantic.sites`) and the reduction (:mod:`nanlint.source.large`)
need is taken from its tree, and the tree is dropped.  What is kept is a
:class:`Skeleton`: an ``ast.Module`` whose body holds only the nodes
``sites.scan`` reads (imports, assignments of dotted chains, string statements,
at every nesting level, with the file's line numbers), and, per top-level
statement, its lines, whether it imports and the names it binds.

Why a chunk compiles exactly when its part of the file does.  A cut is made only
before a line that starts in column 0 with neither whitespace, a comment, a
closing bracket, a backslash nor ``else``/``elif``/``except``/``finally``.  The
scanner below aims those cuts (strings, comments, brackets, backslash
continuations, decorators), but it is not what proves them: CPython's tokenizer
reads a chunk exactly as it reads the same bytes in the file, so a chunk that
compiles ends outside any string, bracket or continuation, after a complete
statement (a dangling decorator does not compile), and the line after the cut
can only start a new top-level statement.  A chunk that fails to compile is merged with the
next one (a misjudged cut); when that fails too, the rest of the file from the
chunk's start is compiled in one piece behind as many blank lines as come before
it, so a syntax error is CPython's own (message, line, column, text) as the whole
file's compile reports it.  With ``PyCF_ONLY_AST`` CPython checks the grammar
only (no symbol table, no ``return`` outside a function), which is why chunks are
independent.

One statement larger than a chunk (a table of weights in one dict display) is
compiled in slices when it is a list, tuple, set or dict display split over
lines: the statement is cut at line starts between the display's items (after
an item's comma), and each slice of items is compiled inside the statement's own
head and tail (``WEIGHTS = {`` ... ``}``).  It is accepted when every slice
compiles and, in every slice's tree, the same node type (List, Tuple, Set, Dict)
spans from the same opening bracket in the head to the same closing bracket in
the tail, and that display is the one the bracket the head leaves open opens
(the node there is of that bracket's kind and no child of it starts at the
bracket), every cut follows a comma, and no item of that display starts before
a cut and ends after it.  Every slice is then whole items of that one display:
not cuts inside the calls of two of its items, where ``f(a=1,`` + ``7)`` passes
slice by slice, nor ``[1, ], {1: 2,`` + ``3, ], {...`` (a tuple of displays that
also starts at the bracket), nor ``x[1:2,`` + ``x[1:2,`` + ``],`` (each slice's
subscript closed by the tail).  Items of a display are independent in the
grammar, so that proves what compiling the statement whole proves; anything
else (a call with 100,000 arguments, a huge function body, a display on one
line) is compiled whole, and its memory is what CPython's tree takes.
"""

from __future__ import annotations

import ast

from nanlint.source.ast_tree import ast_depth, chain_pairs, collector_paused, compile_tree, statements
from nanlint.source.cuts import COMMENT, Tokens, cuts, line_starts, lines_in
from nanlint.source import large as _large
from nanlint.source.body_cuts import BodySlices, accepted, body_cuts
from nanlint.source.large import Outline, outline
from nanlint.source.lines import split_lines

TARGET = 300_000  # characters per chunk: a tree of ~30-60 MB
BIG = 2  # times the target: a chunk (a statement) above that is split (compiled in slices) when it can be
_MERGES = 2  # chunks merged forward after a failed compile before compiling the rest whole


class Skeleton(ast.Module):
    """What :func:`compile_large` keeps of a large file's tree (see the module docstring)."""

    text: str
    pieces: list  # (start offset, end offset, first line, slices or None)
    firsts: list[int]  # per top-level statement: its first line (its decorators included)
    lasts: list[int]  # its last line
    imports: set[int]  # the indices of the imports
    binds: list  # the names it binds: () or a name or a tuple of names
    outlines: dict  # index -> the large.Outline of a def or class of large.LONG_LINES lines or more

    def nesting(self, limit: int) -> int:
        """The nesting depth of the file's tree (``ast_tree.ast_depth``), compiled again
        piece by piece: only a whole-file libcst parse asks for it."""

        deepest = 0
        for tree in self._trees():
            deepest = max(deepest, ast_depth(tree, limit))
            if deepest > limit:
                break
        return deepest

    def _trees(self):
        for start, end, first, slices in self.pieces:
            if slices is None:
                yield compile_tree(self.text[start:end])
            else:
                sources = slices.sources(self.text) if isinstance(slices, BodySlices) else \
                    _slice_sources(self.text, slices)
                for source in sources:
                    yield compile_tree(source)


def compile_large(text: str, target: int = TARGET, source: bytes | None = None) -> Skeleton:
    """The :class:`Skeleton` of ``text``, compiled in chunks; raises what
    ``compile(text, ..., PyCF_ONLY_AST)`` raises, with the same line numbers.

    The cyclic garbage collector is off meanwhile: each chunk's tree is tens of
    thousands of new containers, which trigger collections that walk every live
    object, again and again (5.6 of 8.9 CPU s on the 10 MB ``chain`` file of
    ``bench/large_file.py``); trees hold no cycles, reference counting frees them."""
    with collector_paused():
        return _compile_large(text, target, source)


def _compile_large(text: str, target: int, source: bytes | None) -> Skeleton:
    tokens = Tokens(text)
    bounds = [0] + cuts(text, target, tokens=tokens) + [len(text)]
    units: list = []  # (start, end, item cuts or None)
    for start, end in zip(bounds, bounds[1:]):
        units.extend(_pieces(text, start, end, target, tokens) if end - start > BIG * target else [(start, end, None)])
    skeleton = Skeleton(body=[], type_ignores=[])
    skeleton.text = text
    skeleton.pieces = []
    skeleton.firsts, skeleton.lasts, skeleton.imports, skeleton.binds = [], [], set(), []
    skeleton.outlines = {}
    line, at = 1, 0  # the line of offset ``at``
    i = 0
    while i < len(units):
        start, end, slices = units[i]
        line += lines_in(text, at, start)
        at = start
        if slices is not None and (_take_body(skeleton, text, slices, line) if isinstance(slices, BodySlices)
                                   else _take_sliced(skeleton, text, slices, line)):
            skeleton.pieces.append((start, end, line, slices))
            i += 1
            continue
        for merge in range(min(_MERGES, len(units) - 1 - i) + 1):  # a misjudged cut: merge forward
            end = units[i + merge][1]
            try:
                tree = compile_tree(text[start:end])
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue  # which error comes first, and where, is the rest's compile's to say
            _take(skeleton, tree, line - 1)
            skeleton.pieces.append((start, end, line, None))
            i += merge + 1
            break
        else:  # the rest whole, at its own lines: CPython's error as the file's compile reports it
            tree = compile_tree(_rest(text, start, line, source))
            _take(skeleton, tree, 0)
            skeleton.pieces.append((start, len(text), line, None))
            break
    return skeleton


_COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While,
             ast.With, ast.AsyncWith, ast.Try) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ()) \
    + ((ast.Match,) if hasattr(ast, "Match") else ())
_CHAINS = (ast.Name, ast.Attribute, ast.Tuple, ast.List)  # what ast_tree.chain_pairs reads as an alias


def _rest(text: str, start: int, line: int, source: bytes | None):
    """The file from ``start`` (line ``line``) on, behind blank lines: in the file's own
    bytes when it has them (CPython counts a syntax error's column in bytes there, in
    characters in a str), its coding cookie kept."""
    if source is None:
        return "\n" * (line - 1) + text[start:]
    if line == 1:
        return source
    import io
    import tokenize

    encoding = tokenize.detect_encoding(io.BytesIO(source).readline)[0]
    if encoding == "utf-8-sig":  # the BOM changes how CPython counts columns (in characters)
        return b"\xef\xbb\xbf" + b"\n" * (line - 1) + text[start:].encode("utf-8", "surrogateescape")
    cookie = f"# -*- coding: {encoding} -*-\n".encode() if encoding != "utf-8" else b"\n"
    return cookie + b"\n" * (line - 2) + text[start:].encode(encoding, "surrogateescape")


def _take(skeleton: Skeleton, tree: ast.Module, offset: int) -> None:
    """Record the top-level statements of one chunk's ``tree`` (its lines ``offset``
    below the file's) and the nodes ``sites.scan`` reads (``ast_tree.statements``:
    every statement at every nesting level)."""
    firsts, lasts, out_binds, body = skeleton.firsts, skeleton.lasts, skeleton.binds, skeleton.body
    Name, Assign = ast.Name, ast.Assign
    for stmt in tree.body:
        kind = type(stmt)
        if kind is Assign and len(stmt.targets) == 1 and type(stmt.targets[0]) is Name:  # the common case
            firsts.append(stmt.lineno + offset)
            lasts.append(stmt.end_lineno + offset)  # type: ignore[operator]
            out_binds.append(stmt.targets[0].id)  # type: ignore[attr-defined]
            if type(stmt.value) in _CHAINS:  # type: ignore[attr-defined]
                _scanned(stmt, body, offset)
            continue
        _record(skeleton, stmt, _large.first_line(stmt) + offset, (stmt.end_lineno or stmt.lineno) + offset)
        if isinstance(stmt, _COMPOUND):
            for node in statements([stmt]):
                _scanned(node, body, offset)
        else:
            _scanned(stmt, body, offset)


def _scanned(node: ast.stmt, body: list, offset: int) -> None:
    """Keep ``node`` in the skeleton's body when ``sites.scan`` reads it."""
    kind = type(node)
    if kind is ast.Import or kind is ast.ImportFrom:
        body.append(node)
    elif kind is ast.Assign or kind is ast.AnnAssign:
        value = node.value  # type: ignore[attr-defined]
        if type(value) in _CHAINS:
            pairs: list = []
            for target in (node.targets if kind is ast.Assign else [node.target]):  # type: ignore[attr-defined]
                chain_pairs(target, value, pairs)
            if pairs:
                body.append(node)
    elif kind is ast.Expr and type(node.value) is ast.Constant and type(node.value.value) is str:  # type: ignore
        body.append(ast.Expr(ast.Constant(""), lineno=node.lineno + offset, col_offset=node.col_offset,
                             end_lineno=node.end_lineno + offset,  # type: ignore[operator]
                             end_col_offset=node.end_col_offset))


def _record(skeleton: Skeleton, stmt: ast.stmt, first: int, last: int) -> None:
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        skeleton.imports.add(len(skeleton.firsts))
    elif last - first >= _large.LONG_LINES and isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        found = outline(stmt, first - _large.first_line(stmt))  # a long def is cut (nanlint.source.large)
        if found is not None:
            skeleton.outlines[len(skeleton.firsts)] = found
    skeleton.firsts.append(first)
    skeleton.lasts.append(last)
    skeleton.binds.append(_large.bound_names(stmt))


# --- one statement larger than a chunk ---------------------------------------------


def _pieces(text: str, start: int, end: int, target: int, tokens: Tokens) -> list:
    """A chunk larger than ``BIG`` as pieces: its top-level statements grouped up to
    ``target``, and each statement larger than ``BIG`` alone, with the cuts between
    its display's items (or None when it has none)."""
    starts = [start] + cuts(text, 0, start, end, tokens) + [end]
    out: list = []
    group = start
    for a, b in zip(starts, starts[1:]):
        if b - a > BIG * target:
            if group < a:
                out.append((group, a, None))
            out.append((a, b, _item_cuts(text, a, b, target, tokens) or body_cuts(text, a, b, target, tokens)))
            group = b
        elif b - group > target and group < a:
            out.append((group, a, None))
            group = a
    if group < end:
        out.append((group, end, None))
    return out


def _item_cuts(text: str, a: int, b: int, target: int, tokens: Tokens):
    """Line starts in the statement ``[a, b)`` at the bracket depth of its second line
    (the display the first line opens: ``W = [``, ``X = torch.tensor([``), each after a
    comma: the first as early as can be, then about ``target`` apart, the last as late as
    can be; (a, cuts, b), or None when there are not two."""
    out: list[int] = []
    level = None
    last = None  # the latest cut seen after the last one taken

    def skip_to(p: int) -> int | None:  # between cuts: skip to the next
        return min(out[-1] + target, b - target) - 1 if out and p < out[-1] + target and b - p > target else None

    for p, depth in line_starts(text, a, b, tokens, skip_to):
        if level is None:
            if depth < 1:
                return None
            level = depth
        if depth != level:
            continue
        if not _after_comma(text, a, p):
            continue
        if not out or p >= out[-1] + target:
            out.append(p)
            last = None
        else:
            last = p
    if last is not None:
        out.append(last)
    if len(out) < 2:
        return None
    return (a, out, b)


def _after_comma(text: str, a: int, p: int) -> bool:
    """Whether the code of the line before line start ``p`` ends with a comma."""
    code = text[max(a, p - 400):p]
    if "#" in code:
        code = COMMENT.sub("", code)  # a comment after the comma (or a # in a string: no cut)
    return code.rstrip().endswith(",")


def _slice_sources(text: str, slices):
    a, cut, b = slices
    head, tail = text[a:cut[0]], text[cut[-1]:b]
    for x, y in zip(cut, cut[1:]):
        yield head + text[x:y] + tail


_DISPLAYS = (ast.List, ast.Tuple, ast.Set, ast.Dict)
_SIMPLE = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)
_OPENED_BY = {"[": (ast.List,), "{": (ast.Dict, ast.Set), "(": (ast.Tuple,)}


def _take_sliced(skeleton: Skeleton, text: str, slices, first_line: int) -> bool:
    """Compile a big statement in slices (:func:`_item_cuts`) and record it; False
    when a slice does not compile or they do not all hold the same display between
    the same brackets (it is then compiled whole)."""
    a, cut, _ = slices
    head_lines = lines_in(text, a, cut[0])
    opener = _open_bracket(text[a:cut[0]])
    if opener is None or not all(_after_comma(text, a, c) for c in cut):
        return False
    shape = stmt = None
    end_line = 0
    for k, source in enumerate(_slice_sources(text, slices)):
        try:
            tree = compile_tree(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
        if len(tree.body) != 1 or type(tree.body[0]) not in _SIMPLE:
            return False  # a compound statement: its nested statements would not be read
        body_lines = lines_in(text, cut[k], cut[k + 1])
        tail_from = head_lines + body_lines + 1
        node = _holder(tree.body[0], head_lines, tail_from)
        if node is None or (node.lineno, node.col_offset) != opener[:2] or type(node) not in _OPENED_BY[opener[2]]:
            return False  # not the display the head's open bracket opens
        for c in ast.iter_child_nodes(node):
            first, last = getattr(c, "lineno", 0), getattr(c, "end_lineno", 0)
            if (first, c.col_offset if first else 0) == opener[:2] or first <= head_lines < last \
                    or first < tail_from <= last:
                return False  # a cut is not between the display's items: one starts before it and ends after
        this = (type(node), node.lineno, node.col_offset,
                node.end_lineno - head_lines - body_lines, node.end_col_offset)  # type: ignore[operator]
        if shape is None:
            shape, stmt = this, tree.body[0]
            targets = getattr(stmt, "targets", None) or [getattr(stmt, "target", None)]
            if any(isinstance(t, (ast.Tuple, ast.List, ast.Starred)) for t in targets):
                return False  # an unpacking: its targets pair with the items (sites' aliases)
            end_line = (stmt.end_lineno or stmt.lineno) - head_lines - body_lines  # a line of the tail
        elif this != shape:
            return False
        del tree
    tail_line = first_line + lines_in(text, a, cut[-1])
    _record(skeleton, stmt, first_line, tail_line + end_line - 1)  # type: ignore[arg-type]
    return True


def _take_body(skeleton: Skeleton, text: str, slices: BodySlices, first_line: int) -> bool:
    """Compile a big def or class a slice of its body at a time (:mod:`nanlint.source.body_cuts`)
    and record it, with its outline; False when a slice is not accepted (it is then compiled
    whole)."""
    offset, first, body, parts = first_line - 1, [], [], []
    head = None
    last = first_line
    for k, source in enumerate(slices.sources(text)):
        try:
            tree = compile_tree(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
        stmt = accepted(tree, k, slices, text, first)
        found = outline(stmt, offset) if stmt is not None else None
        if found is None:
            return False
        for node in statements([stmt]):  # type: ignore[list-item]
            _scanned(node, body, offset)
        head = head or found
        parts.extend(found.parts)
        last = found.last
        del tree, stmt
    assert head is not None
    skeleton.body.extend(body)
    skeleton.outlines[len(skeleton.firsts)] = Outline(head.first, head.head_last, last, head.name, head.reads,
                                                      head.indent, parts, is_class=head.is_class)
    skeleton.firsts.append(head.first)
    skeleton.lasts.append(last)
    skeleton.binds.append(head.name)
    return True


def _open_bracket(head: str) -> tuple[int, int, str] | None:
    """Where the innermost bracket left open at the end of ``head`` is: (line, column
    in UTF-8 bytes, as the tree counts it, the bracket)."""
    import io
    import tokenize

    stack: list[tuple[int, int]] = []
    lines = split_lines(head, keepends=True)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(head).readline):
            if tok.type == tokenize.OP and tok.string in "([{":
                row, col = tok.start
                stack.append((row, len(lines[row - 1][:col].encode("utf-8", "surrogateescape")), tok.string))
            elif tok.type == tokenize.OP and tok.string in ")]}" and stack:
                stack.pop()
    except (tokenize.TokenError, SyntaxError, IndexError):
        pass  # the end of the head, inside the brackets
    return stack[-1] if stack else None


def _holder(stmt: ast.stmt, head_lines: int, tail_from: int):
    """The innermost node of ``stmt`` that starts in the head (its first
    ``head_lines`` lines) and ends in the tail (from line ``tail_from``), when it is
    a display; else None."""
    node: ast.AST = stmt
    while True:
        for child in ast.iter_child_nodes(node):
            if getattr(child, "lineno", tail_from) <= head_lines and getattr(child, "end_lineno", 0) >= tail_from:
                node = child
                break
        else:
            return node if isinstance(node, _DISPLAYS) else None
