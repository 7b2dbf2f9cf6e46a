"""CPython's syntax check of a file, and the libcst parse after it.

:func:`precheck` decodes a source and compiles it with CPython's parser (a large
file chunk by chunk, :mod:`nanlint.source.chunks`); :func:`parse` parses it with libcst
once its nesting is within what libcst can take; :func:`parse_error_message` words
either parser's error as a NAN001 finding.
"""

from __future__ import annotations

import ast
import copy
import re
import sys
import warnings
from typing import NamedTuple

import libcst as cst

from nanlint.source import chunks as _chunks
from nanlint.source import large as _large
from nanlint.source import newer
from nanlint.source.ast_tree import ast_depth, compile_tree
from nanlint.source.walk import parse as fast_parse

MAX_DEPTH = 1000  # expression nesting nanlint analyses (CPython itself stops near 3000)
_MAX_BRACKETS = 200  # CPython's limit on nested brackets; libcst's native parser overflows its stack far past it


class NestingTooDeep(Exception):
    """The source is nested too deeply to analyse; reported as NAN001."""


class Checked(NamedTuple):
    """What :func:`precheck` learnt of a source."""

    tree: ast.Module | None  # CPython's tree; None when CPython rejected the source
    rejected: SyntaxError | None  # why (it may be syntax newer than this interpreter)
    text: str  # the decoded source


def precheck(source: bytes | str) -> Checked:
    """Decode ``source`` and parse it with CPython's parser.

    CPython's parser goes first: it is cheap, it fails safely where libcst's native
    parser would overflow the C stack (brackets nested thousands deep kill the
    process) or take minutes (chains nested thousands deep), and it rejects what
    libcst accepts but no Python 3 runs (``except E, e:``).  Syntax newer than the
    running interpreter (PEP 695 ``type``/generics, PEP 701 f-strings) is rejected
    here; when libcst reads it, the tree is CPython's of the text with that syntax blanked
    (:mod:`nanlint.source.newer`: every other node where it is in the file), and where that
    cannot be done :func:`parse` still accepts the file for libcst's analysis.  Raises
    SyntaxError, UnicodeDecodeError (CPython lets undecodable bytes in comments
    through; Python refuses to run them) or NestingTooDeep when the file cannot be
    analysed at all."""
    import warnings

    if isinstance(source, str):
        text = source
    else:
        import io
        import tokenize

        text = source.decode(tokenize.detect_encoding(io.BytesIO(source).readline)[0])
    try:
        with warnings.catch_warnings():  # "invalid escape sequence" and the like: not ours to print
            warnings.simplefilter("ignore")
            if len(source) > _large.LARGE:  # never the whole file's tree: chunk by chunk (nanlint.source.chunks)
                tree = _chunks.compile_large(text, source=source if isinstance(source, bytes) else None)
            else:
                tree = compile_tree(source, kept=True)
        return Checked(tree, None, text)
    except SyntaxError as err:
        if "too many nested" in (err.msg or "") or _bracket_depth(source) > _MAX_BRACKETS:
            raise
        tree = _newer_blanked(source, text, err)
        # kept without its traceback: its frames (and their callers') would be a cycle with it
        return Checked(tree, None, text) if tree is not None else Checked(None, err.with_traceback(None), text)
    except (RecursionError, MemoryError):
        raise NestingTooDeep("expressions nested too deeply for the Python parser") from None
    except ValueError as err:  # "source code string cannot contain null bytes"
        raise SyntaxError(str(err)) from None


def parse(source: bytes | str, checked: Checked | None = None) -> cst.Module:
    """The libcst tree of ``source``, after CPython's own parser accepted it
    (:func:`precheck`, or its result ``checked``) and its nesting is within
    what libcst can take."""

    tree, rejected, text = checked if checked is not None else precheck(source)
    if tree is not None:
        depth = ast_depth(tree, MAX_DEPTH, text)
        if depth > MAX_DEPTH:
            raise NestingTooDeep(f"expressions nested more than {MAX_DEPTH} deep")
    if rejected is not None and not _may_be_newer(rejected, text):
        raise copy.copy(rejected)  # without libcst's parse of the whole file (34 s for 2 MB)
    module = fast_parse(source)
    if rejected is not None and not _newer_syntax(module, rejected):
        raise copy.copy(rejected)  # a copy: raised, the error would hold the frames holding ``checked``
    return module


def _newer_blanked(source: bytes | str, text: str, err: SyntaxError) -> ast.Module | None:
    """CPython's tree of ``text`` with the syntax newer than the running interpreter blanked
    (:func:`nanlint.source.newer.blanked`), when that is why CPython rejected it; else None.
    A large file is left to the caller (:func:`parse` takes it whole or not at all)."""
    if len(source) > _large.LARGE or not _may_be_newer(err, text):
        return None
    try:
        module = fast_parse(source)
        if not _newer_syntax(module, err):
            return None
        text_of_module = newer.blanked(module, text)
        if text_of_module is None:
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return compile_tree(text_of_module)
    except Exception:  # noqa: BLE001 - libcst's parse or the blanking failed: the rejection stands
        return None


# where a PEP 695 statement can start: ``type X = ...``, ``def f[T](...)``, ``class C[T]``
_PEP695 = re.compile(r"^[ \t]*(?:type[ \t]+[A-Za-z_]\w*[ \t]*[\[=]|(?:async[ \t]+)?def[ \t]+[A-Za-z_]\w*[ \t]*\[|"
                     r"class[ \t]+[A-Za-z_]\w*[ \t]*\[)", re.MULTILINE)


def _may_be_newer(err: SyntaxError, text: str) -> bool:
    """Whether CPython's rejection may be of syntax newer than itself that libcst reads
    (what :func:`_newer_syntax` looks for): an f-string error, or a file with a line where
    a PEP 695 statement can start; a scan of the text, no parse."""
    if sys.version_info >= (3, 12):
        return False
    return "f-string" in (err.msg or "") or _PEP695.search(text) is not None


def _bracket_depth(source: bytes | str) -> int:
    """A conservative upper bound of the bracket nesting (strings and comments included)."""
    data = source.encode("utf-8", "surrogateescape") if isinstance(source, str) else source
    depth = deepest = 0
    for byte in data:
        if byte in b"([{":
            depth += 1
            if depth > deepest:
                deepest = depth
        elif byte in b")]}" and depth:
            depth -= 1
    return deepest


def _newer_syntax(module: cst.Module, err: SyntaxError) -> bool:
    """Whether CPython rejected ``module`` only for syntax newer than itself."""
    if sys.version_info >= (3, 12):
        return False
    if "f-string" in (err.msg or ""):
        return True  # PEP 701 (3.12): quotes and backslashes inside replacement fields
    newer = tuple(t for t in (getattr(cst, n, None) for n in ("TypeAlias", "TypeParameters")) if t)

    class Finder(cst.CSTVisitor):
        found = False

        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, newer):
                Finder.found = True
            return not Finder.found

    try:
        module.visit(Finder())
    except RecursionError:
        return False
    return Finder.found


_PY2 = re.compile(r"^\s*(print\s+[^\s(=]|exec\s+[\"'a-zA-Z])|except\s+[\w.]+\s*,\s*\w+\s*:|^\s*raise\s+[\w.]+\s*,")


def parse_error_message(exc: Exception) -> tuple[str, tuple[int, int]]:
    source = getattr(exc, "_source", None)
    if isinstance(source, bytes) and b"\x00" in source and not source.startswith((b"\xff\xfe", b"\xfe\xff")):
        # what CPython says first is about the encoding ("invalid or missing encoding declaration")
        return "not a text file: it contains NUL bytes (a binary file named .py?)", (1, 1)
    if isinstance(exc, cst.ParserSyntaxError):
        message = exc.message.strip().splitlines()[0] if exc.message.strip() else "invalid syntax"
        message = re.sub(r"^parser error: error at \d+:\d+: ", "", message)
        if message.startswith("expected one of"):
            message = "invalid syntax"
        python_reason = _python_reason(getattr(exc, "_source", None))
        if python_reason:
            message = python_reason
        elif _python_accepts(getattr(exc, "_source", None)):
            message = f"libcst cannot parse this file, though Python accepts it ({message})"
        line, col = exc.raw_line, exc.raw_column + 1
        hint = ""
        lines = getattr(exc, "_lines", None) or []
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        if _PY2.search(text):
            hint = " (Python 2 syntax?)"
        return f"SyntaxError: {message}{hint}", (line, max(col, 1))
    if isinstance(exc, UnicodeDecodeError):
        return f"cannot decode source: {exc.reason} at byte {exc.start} (add a PEP 263 coding cookie?)", (1, 1)
    if isinstance(exc, (RecursionError, NestingTooDeep)):
        detail = str(exc) if isinstance(exc, NestingTooDeep) else "expressions nested too deeply"
        return f"cannot analyse: {detail} (nanlint's limit, not a Python error)", (1, 1)
    if isinstance(exc, SyntaxError):
        message = (exc.msg or "invalid syntax").splitlines()[0] if exc.msg else "invalid syntax"
        text = (exc.text or "")
        hint = ""
        if _PY2.search(text) and "Python 2" not in message:
            hint = " (Python 2 syntax?)"
        line = exc.lineno or 1
        col = exc.offset or 1
        return f"SyntaxError: {message}{hint}", (max(line, 1), max(col, 1))
    return f"{type(exc).__name__}: {exc}".splitlines()[0], (1, 1)


def _python_accepts(source) -> bool:
    if source is None:
        return False
    try:
        compile_tree(source)
    except BaseException:  # noqa: BLE001
        return False
    return True


def _python_reason(source) -> str | None:
    """CPython's own wording for a syntax error (e.g. "Missing parentheses in call to 'print'")."""
    if source is None:
        return None
    try:
        compile_tree(source)
    except SyntaxError as err:
        return err.msg
    except Exception:  # noqa: BLE001
        return None
    return None
