"""Fixes: what a rule proposes, and how the engine applies it to a module.

A fix is a set of node replacements on the parsed module plus imports to add.
Applicability follows ruff: ``safe`` fixes keep the value on finite inputs and
are applied by ``--fix``; ``unsafe`` ones may change results or structure and
need ``--unsafe-fixes``; ``display-only`` ones are shown, never applied.
"""

from __future__ import annotations

import functools

from dataclasses import dataclass, field
from typing import Sequence

import libcst as cst

from nanlint.source.lines import LINES
from nanlint.source.codegen import code_of
from nanlint.source.walk import empty_module, node_types
from nanlint.findings import APPLICABILITIES, DISPLAY_ONLY, SAFE, UNSAFE, allowed  # noqa: F401 - rules spell fixes.SAFE


@dataclass(frozen=True)
class Import:
    """``import module as alias`` (alias None: ``import module``); written as
    ``from parent import name`` when the alias is the module's last part."""

    module: str
    alias: str | None

    @property
    def bound_name(self) -> str:
        return self.alias if self.alias is not None else self.module.split(".")[0]

    def statement(self) -> cst.SimpleStatementLine:
        if self.alias is not None and "." in self.module and self.module.rsplit(".", 1)[1] == self.alias:
            parent, name = self.module.rsplit(".", 1)
            return cst.parse_statement(f"from {parent} import {name}\n")  # type: ignore[return-value]
        if self.alias is None:
            return cst.parse_statement(f"import {self.module}\n")  # type: ignore[return-value]
        return cst.parse_statement(f"import {self.module} as {self.alias}\n")  # type: ignore[return-value]


@dataclass(eq=False)
class Fix:
    applicability: str
    message: str
    replacements: list[tuple[cst.CSTNode, cst.CSTNode]] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.applicability not in APPLICABILITIES:
            raise ValueError(self.applicability)

    @property
    def applies_automatically(self) -> bool:
        return self.applicability != DISPLAY_ONLY and bool(self.replacements)



# --- building expressions -------------------------------------------------------------
_ATOMIC = ('Name', 'Attribute', 'Call', 'Subscript', 'Integer', 'Float', 'SimpleString', 'ConcatenatedString', 'FormattedString', 'List', 'Tuple', 'Dict', 'Set', 'ListComp', 'SetComp', 'DictComp', 'GeneratorExp')  # libcst class names (node_types)


def is_atomic(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, node_types(*_ATOMIC)) or bool(getattr(expr, "lpar", ()))


def parenthesize(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr`` wrapped in parentheses unless it binds tighter than any operator."""
    if is_atomic(expr):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def negate(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``-expr``; ``-(-y)`` becomes ``y``."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) and not expr.lpar:
        return expr.expression
    return cst.UnaryOperation(cst.Minus(), parenthesize(expr))


def spelled(spelling: str) -> cst.BaseExpression:
    """``"tf.nn.log_softmax"`` as a Name/Attribute chain."""
    parts = spelling.split(".")
    expr: cst.BaseExpression = cst.Name(parts[0])
    for part in parts[1:]:
        expr = cst.Attribute(expr, cst.Name(part))
    return expr


def call(func: cst.BaseExpression | str, args: Sequence[cst.Arg]) -> cst.Call:
    if isinstance(func, str):
        func = spelled(func)
    return cst.Call(func, list(args))


def arg(value: cst.BaseExpression, keyword: str | None = None) -> cst.Arg:
    if keyword is None:
        return cst.Arg(value)
    return cst.Arg(value, keyword=cst.Name(keyword),
                   equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))


def keep_parens(old: cst.CSTNode, new: cst.CSTNode) -> cst.CSTNode:
    """Give ``new`` the parentheses ``old`` had."""
    lpar = getattr(old, "lpar", None)
    if lpar and hasattr(new, "lpar") and not getattr(new, "lpar"):
        return new.with_changes(lpar=lpar, rpar=old.rpar)  # type: ignore[attr-defined]
    return new


def _multiline(node: cst.CSTNode) -> bool:
    return "\n" in code_of(empty_module(), node)


def keep_layout(old: cst.CSTNode, new: cst.CSTNode) -> cst.CSTNode:
    """Give a new call the line breaks and indentation of the call it replaces: after
    ``(``, between arguments and before ``)``, so that a multi-line
    ``log1p(\n    exp(\n        x\n    )\n)`` becomes ``softplus(\n    x\n)``, not one
    long line; each argument's own continuation lines move with it.  A one-line replaced
    call, or a new call the rule laid out itself, is left as it is."""
    if not (isinstance(old, cst.Call) and isinstance(new, cst.Call) and old.args and new.args) \
            or not _multiline(old) or isinstance(new.whitespace_before_args, cst.ParenthesizedWhitespace):
        return new
    first = old.whitespace_before_args
    indent = first.last_line if isinstance(first, cst.ParenthesizedWhitespace) else None
    args = list(new.args)
    for i, a in enumerate(args[:-1]):  # between arguments
        comma = a.comma
        if isinstance(comma, cst.Comma) and isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace):
            if indent is not None:  # broken as the argument came: line it up with the first
                args[i] = a.with_changes(comma=comma.with_changes(
                    whitespace_after=comma.whitespace_after.with_changes(last_line=indent)))
        elif len(args) == len(old.args):
            args[i] = a.with_changes(comma=old.args[i].comma, whitespace_after_arg=old.args[i].whitespace_after_arg)
    old_last = old.args[-1]  # before ``)``: as the replaced call closed
    args[-1] = args[-1].with_changes(comma=old_last.comma, whitespace_after_arg=old_last.whitespace_after_arg)
    laid = new.with_changes(args=args, whitespace_before_args=first)
    return laid.with_changes(args=[_reindent(a, _indent_at(laid, i), _origin_indent(old, a.value))
                                   for i, a in enumerate(laid.args)])


def _indent_at(call: cst.Call, index: int) -> int | None:
    """The indentation of argument ``index`` of ``call`` when it starts a line, else None."""
    if index == 0:
        ws = call.whitespace_before_args
    else:
        comma = call.args[index - 1].comma
        ws = comma.whitespace_after if isinstance(comma, cst.Comma) else None
    if isinstance(ws, cst.ParenthesizedWhitespace):
        return len(ws.last_line.value)
    return None


def _origin_indent(old: cst.CSTNode, value: cst.CSTNode) -> int | None:
    """Where ``value`` started its line in ``old`` (as an argument of some call there)."""
    found: list[int | None] = []

    class Finder(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if found:
                return False
            if isinstance(node, cst.Call):
                for i, a in enumerate(node.args):
                    if a.value is value:
                        found.append(_indent_at(node, i))
                        return False
            return True

    old.visit(Finder())
    return found[0] if found else None


@functools.lru_cache(maxsize=None)
def _shift_class() -> type:
    """The transformer below (a libcst base class: defined on first use, so that importing
    nanlint does not load libcst)."""

    class _Shift(cst.CSTTransformer):
        """Move every continuation line of an expression ``delta`` columns left (or right)."""

        def __init__(self, delta: int) -> None:
            self.delta = delta

        def leave_ParenthesizedWhitespace(self, original_node, updated_node):  # noqa: N802 - libcst's name
            line = updated_node.last_line.value
            if self.delta > 0:
                cut = len(line) - len(line.lstrip(" "))
                line = line[min(self.delta, cut):]
            else:
                line = " " * -self.delta + line
            return updated_node.with_changes(last_line=cst.SimpleWhitespace(line))

    return _Shift


def _reindent(arg: cst.Arg, now: int | None, was: int | None) -> cst.Arg:
    """``arg`` with its continuation lines moved as far as its first line moved."""
    if now is None or was is None or now == was or not _multiline(arg.value):
        return arg
    return arg.with_changes(value=arg.value.visit(_shift_class()(was - now)))


def restyle(old: cst.CSTNode, new: cst.CSTNode) -> cst.CSTNode:
    """``new`` as it replaces ``old``: ``old``'s parentheses and (for a call) its layout."""
    return keep_parens(old, keep_layout(old, new))


def replacement_code(module: cst.Module, old: cst.CSTNode, new: cst.CSTNode, parent) -> str:
    """The text of ``new`` as it replaces ``old``'s span (an edit): ``restyle``d, or, for a
    statement replaced by several (a ``FlattenSentinel``), their lines at ``old``'s
    indentation; the span is the statement's own, its comment and newline stay after it.
    ``parent``: node -> parent node."""
    if not isinstance(new, cst.FlattenSentinel):
        return code_of(module, restyle(old, new))
    indent, node = "", parent(old)
    while node is not None:
        if isinstance(node, cst.IndentedBlock):
            indent = (node.indent if node.indent is not None else module.default_indent) + indent
        node = parent(node)
    *before, last = new.nodes
    head = "".join(code_of(module, s.with_changes(leading_lines=())) + indent for s in before)
    return head + "; ".join(code_of(module, s.with_changes(semicolon=cst.MaybeSentinel.DEFAULT))
                            for s in last.body)


# --- applying -----------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _replace_class() -> type:
    """The transformer below, defined on first use (see :func:`_shift_class`)."""

    class _Replace(cst.CSTTransformer):
        def __init__(self, mapping: dict[int, cst.CSTNode]) -> None:
            self.mapping = mapping

        def on_visit(self, node: cst.CSTNode) -> bool:
            return id(node) not in self.mapping  # don't descend into replaced subtrees

        def on_leave(self, original_node, updated_node):  # type: ignore[override]
            new = self.mapping.get(id(original_node))
            return restyle(original_node, new) if new is not None else updated_node

    return _Replace


def replaced(tree: cst.CSTNode, mapping: dict[int, cst.CSTNode]) -> cst.CSTNode:
    """``tree`` with each node whose id is a key of ``mapping`` replaced (``restyle``d)."""
    return tree.visit(_replace_class()(mapping))  # type: ignore[return-value]


def replacements_of(visitor) -> dict[int, cst.CSTNode] | None:
    """The mapping of a transformer :func:`replaced` ran (which a fix moved onto another tree
    runs again there, nodes translated); None for any other visitor."""
    return visitor.mapping if isinstance(visitor, _replace_class()) else None


def apply_text(text: str, edits) -> str:
    """``text`` with ``edits`` (``findings.Edit``: 1-based rows and columns, in characters)
    applied, the last first; a row past the end is the end."""
    lines = LINES.findall(text)
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln))

    def offset(pos: tuple[int, int]) -> int:
        row, col = pos
        return len(text) if row > len(lines) else starts[row - 1] + col - 1

    for e in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        text = text[:offset(e.start)] + e.content + text[offset(e.end):]
    return text


def apply(module: cst.Module, fixes: Sequence[Fix]) -> cst.Module:
    mapping: dict[int, cst.CSTNode] = {}
    imports: list[Import] = []
    for fix in fixes:
        for old, new in fix.replacements:
            mapping[id(old)] = new
        for imp in fix.imports:
            if imp not in imports:
                imports.append(imp)
    new_module = replaced(module, mapping) if mapping else module
    if imports:
        new_module = add_imports(new_module, imports)
    return new_module  # type: ignore[return-value]


def import_insert_index(module: cst.Module) -> int:
    """Index in ``module.body`` after the docstring, ``__future__`` and the last top-level import."""
    index = 0
    for i, stmt in enumerate(module.body):
        if not isinstance(stmt, cst.SimpleStatementLine):
            break
        first = stmt.body[0] if stmt.body else None
        if isinstance(first, (cst.Import, cst.ImportFrom)):
            index = i + 1
        elif i == 0 and isinstance(first, cst.Expr) and isinstance(first.value, (cst.SimpleString, cst.ConcatenatedString)):
            index = 1
        else:
            break
    return index


def add_imports(module: cst.Module, imports: Sequence[Import]) -> cst.Module:
    index = import_insert_index(module)
    body = list(module.body)
    body[index:index] = [imp.statement() for imp in imports]
    return module.with_changes(body=body)
