"""libcst's code generation, without its per-node context managers: a node's code
(:func:`code_of`, what ``Module.code_for_node`` gives) and where every node is
(:func:`positions`, :func:`unit_positions`, what ``PositionProvider`` gives).

libcst generates code by calling each node's ``_codegen_impl`` with a state that
collects tokens; 63 kinds of node wrap their own tokens in
``with state.record_syntactic_position(node): ...``, a generator-based context manager
that costs more than the node's code itself (a third of a positions pass, and of a
plain ``code_for_node``, measured on a module of 4,000 findings).  The states here are
libcst's, with that context manager a small object, and the positions kept as
``(line, column, line, column)`` tuples until a caller asks for a node's ``CodeRange``
(a file's findings ask for a few nodes of a map of every node).  The answers are
libcst's own: ``tests/test_speed.py`` compares them node for node.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Iterator

import libcst as cst

_NEWLINE = re.compile(r"\r\n?|\n")  # libcst.metadata.position_provider.NEWLINE_RE


def code_of(module: cst.Module, node: cst.CSTNode) -> str:
    """``module.code_for_node(node)``: the code of ``node`` in ``module``'s indentation and
    newlines."""
    try:
        state = _states()[0](default_indent=module.default_indent, default_newline=module.default_newline)
        node._codegen(state)
    except Exception:  # noqa: BLE001 - a libcst without these internals: the public way
        return module.code_for_node(node)
    return "".join(state.tokens)


def positions(module: cst.Module) -> Mapping:
    """``PositionProvider``'s node -> CodeRange mapping for ``module``."""
    try:
        state = _states()[1](module.default_indent, module.default_newline)
        module._codegen(state)
    except Exception:  # noqa: BLE001 - a libcst without these internals: the public way
        from libcst.metadata import MetadataWrapper, PositionProvider

        return MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return Spans(state.computed)


def unit_positions(module: cst.Module, stmt: cst.CSTNode, indents: tuple[str, ...]) -> Spans | None:
    """:func:`positions` of the nodes of one statement of ``module``, generated alone inside
    the blocks whose indentations are ``indents`` (so its columns are the file's), its first
    line (its leading comments and decorators included) counted as line 1; None with a
    libcst without these internals."""
    try:
        state = _states()[1](module.default_indent, module.default_newline, indents)
        stmt._codegen(state)
    except Exception:  # noqa: BLE001 - the caller falls back to the whole module's
        return None
    return Spans(state.computed)


class Spans(Mapping):
    """node -> ``CodeRange``, each built when asked for from the ``(line, column, line,
    column)`` the code generation recorded, moved ``shift`` lines down."""

    __slots__ = ("_raw", "_shift")

    def __init__(self, raw: dict, shift: int = 0) -> None:
        self._raw = raw
        self._shift = shift

    def __getitem__(self, node: cst.CSTNode):
        a, b, c, d = self._raw[node]
        position, code_range = _ranges()
        shift = self._shift
        return code_range(position(a + shift, b), position(c + shift, d))

    def __contains__(self, node: object) -> bool:
        return node in self._raw

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def moved(self, shift: int) -> Spans:
        return Spans(self._raw, self._shift + shift)


@functools.lru_cache(maxsize=None)
def _ranges():
    from libcst.metadata import CodePosition, CodeRange

    return CodePosition, CodeRange


@functools.lru_cache(maxsize=None)
def _states():
    """The two codegen states (defined on first use: subclassing libcst's loads it, and
    nanlint loads libcst only when it parses)."""
    from libcst._nodes.internal import CodegenState

    class _Quiet:
        __slots__ = ()

        def __enter__(self) -> None:
            return None

        def __exit__(self, *exc) -> bool:
            return False

    quiet = _Quiet()

    class PlainState(CodegenState):
        """``Module.code_for_node``'s state; its syntactic positions are recorded nowhere."""

        __slots__ = ()

        def record_syntactic_position(self, node, *, start_node=None, end_node=None):
            return quiet

    class _Record:
        """``PositionProvidingCodegenState.record_syntactic_position``, as an object."""

        __slots__ = ("state", "node", "start_node", "end_node", "line", "column")

        def __init__(self, state, node, start_node, end_node) -> None:
            self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

        def __enter__(self) -> None:
            self.line, self.column = self.state.line, self.state.column

        def __exit__(self, *exc) -> bool:
            state = self.state
            computed = state.computed
            a, b = computed[self.start_node][:2] if self.start_node is not None else (self.line, self.column)
            c, d = computed[self.end_node][2:] if self.end_node is not None else (state.line, state.column)
            computed[self.node] = (a, b, c, d)
            return False

    class PositionState(CodegenState):
        """``PositionProvidingCodegenState``: the line and column after each token, each
        node's span when its code is done (unless its syntactic one is recorded already)."""

        __slots__ = ("line", "column", "stack", "computed")

        def __init__(self, default_indent: str, default_newline: str, indents: tuple[str, ...] = ()) -> None:
            super().__init__(default_indent=default_indent, default_newline=default_newline)
            self.indent_tokens = list(indents)
            self.line, self.column = 1, 0
            self.stack: list[tuple[int, int]] = []
            self.computed: dict = {}

        def _advance(self, value: str) -> None:
            if "\n" in value or "\r" in value:
                segments = _NEWLINE.split(value)
                self.line += len(segments) - 1
                self.column = len(segments[-1])
            else:
                self.column += len(value)

        def add_indent_tokens(self) -> None:
            self.tokens.extend(self.indent_tokens)
            for token in self.indent_tokens:
                self._advance(token)

        def add_token(self, value: str) -> None:
            self.tokens.append(value)
            self._advance(value)

        def before_codegen(self, node) -> None:
            self.stack.append((self.line, self.column))

        def after_codegen(self, node) -> None:
            line, column = self.stack.pop()
            if node not in self.computed:
                self.computed[node] = (line, column, self.line, self.column)

        def record_syntactic_position(self, node, *, start_node=None, end_node=None):
            return _Record(self, node, start_node, end_node)

    return PlainState, PositionState
