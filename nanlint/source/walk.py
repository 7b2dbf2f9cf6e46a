"""A fast read-only traversal for ``libcst.CSTVisitor`` subclasses.

libcst's ``node.visit(visitor)`` rebuilds every node it passes (it is shared
with transformers): on real ML code walking the tree that way costs about as
much as parsing it.  :class:`FastVisitor` keeps the visitor API -- ``visit_X``
(returning ``False`` skips the children), ``leave_X``, and ``child.visit(self)``
from inside a ``visit_X`` -- but walks the children itself, in libcst's own
order, and skips the fields that hold only formatting (whitespace, parentheses,
commas), which no analysis visits.

Subclass it (``class Index(FastVisitor)``) and start with ``walk(node)``; inside a
``visit_X``, ``self.walk(child)``.  It is not a ``cst.CSTVisitor`` (so that defining one does
not load libcst); ``visit_X_attr`` attribute hooks are not supported (nothing in nanlint uses
them).
"""

from __future__ import annotations

import bisect
import contextlib
import dataclasses
import functools
import gc

import libcst as cst

from nanlint.source import ast_tree

_FORMATTING = frozenset({
    "lpar", "rpar", "leading_lines", "lines_after_decorators", "header", "footer", "semicolon", "comma",
    "trailing_whitespace", "newline", "footer_whitespace",
})

_PLANS: dict[type, dict[type, tuple]] = {}  # visitor class -> node type -> (visit, leave, fields)
_FIELDS: dict[type, tuple[str, ...]] = {}


def child_fields(node_type: type) -> tuple[str, ...]:
    """The fields of ``node_type`` that can hold syntax nodes, in libcst's visiting order."""
    fields = _FIELDS.get(node_type)
    if fields is None:
        names = [f.name for f in dataclasses.fields(node_type)]
        known = set(names)
        code = getattr(node_type._visit_and_replace_children, "__code__", None)
        # libcst passes each field's name to visit_required/visit_sequence/... in
        # visiting order, so the code's string constants list them in that order.
        ordered: list[str] = []
        for const in (code.co_consts if code is not None else ()):
            if isinstance(const, str) and const in known and const not in ordered:
                ordered.append(const)
        ordered += [n for n in names if n not in ordered]
        fields = tuple(n for n in ordered if n not in _FORMATTING and not n.startswith("whitespace"))
        _FIELDS[node_type] = fields
    return fields


_NODE_TYPES: dict[type, bool] = {}


def is_node(kind: type) -> bool:
    """``issubclass(kind, CSTNode)``, memoized (CSTNode is an ABC: ``isinstance(x, CSTNode)``
    runs its Python ``__instancecheck__``, millions of times a corpus)."""
    known = _NODE_TYPES.get(kind)
    if known is None:
        known = _NODE_TYPES[kind] = isinstance(kind, type) and issubclass(kind, cst.CSTNode)
    return known


class FastVisitor:
    """Replaces libcst's rebuilding traversal for a read-only visitor."""

    def walk(self, node: cst.CSTNode) -> None:
        """Visit ``node`` and what it holds: ``visit_X``, the children, ``leave_X``."""
        self._plans = _PLANS.setdefault(type(self), {})
        self._walk(node)

    def _plan(self, kind: type) -> tuple:
        """``kind``'s plan for this visitor: (visit_X, leave_X, its child fields), or
        :data:`_INERT` for a value the walk has nothing to do with: not a node (a string,
        ``None``, a sentinel), or a node with neither hook whose fields hold no node (a name,
        a number, an operator: a third of a tree, skipped without a call)."""
        if not is_node(kind):
            plan = _INERT
        else:
            name = kind.__name__
            visit, leave = getattr(type(self), f"visit_{name}", None), getattr(type(self), f"leave_{name}", None)
            plan = _INERT if visit is None and leave is None and holds_no_node(kind) else \
                (visit, leave, child_fields(kind))
        self._plans[kind] = plan
        return plan

    def _walk(self, node: cst.CSTNode) -> None:
        # every node of a file comes through here (the Index's walk): no tuple key, no call
        # for a child with nothing to visit
        plans = self._plans
        plan = plans.get(type(node)) or self._plan(type(node))
        if plan is _INERT:
            return
        visit, leave, fields = plan
        if visit is None or visit(self, node) is not False:
            walk = self._walk
            for name in fields:
                value = getattr(node, name)
                kind = type(value)
                if kind is tuple or kind is list:
                    for child in value:
                        if (plans.get(type(child)) or self._plan(type(child))) is not _INERT:
                            walk(child)
                elif (plans.get(kind) or self._plan(kind)) is not _INERT:
                    walk(value)
        if leave is not None:
            leave(self, node)


_INERT = ("inert",)  # FastVisitor's plan for a value it does nothing with (truthy: ``get() or _plan()``)
_HOLDS_NO_NODE: dict[type, bool] = {}


def holds_no_node(kind: type) -> bool:
    """Whether none of ``kind``'s :func:`child_fields` can hold a node: each is typed ``str``
    (a name's, a number's, a string's value), or there are none (an operator)."""
    known = _HOLDS_NO_NODE.get(kind)
    if known is None:
        types = {f.name: f.type for f in dataclasses.fields(kind)}
        known = _HOLDS_NO_NODE[kind] = all(types.get(name) is str for name in child_fields(kind))
    return known


class _Names(FastVisitor):
    def __init__(self) -> None:
        self.found: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.found.add(node.value)


def names_in(node: cst.CSTNode) -> set[str]:
    """Every name written under ``node`` (read, bound, attribute and keyword names alike)."""
    collector = _Names()
    collector.walk(node)
    return collector.found


_ALL_FIELDS: dict[type, tuple[str, ...]] = {}


def load_libcst() -> None:
    """Import libcst now (it is loaded on first use, ``nanlint/__init__.py``): a process about
    to fork workers that will parse does it once for them all."""
    cst.Module  # noqa: B018 - the first attribute read loads it


@functools.lru_cache(maxsize=None)
def empty_module() -> cst.Module:
    """An empty module, for ``codegen.code_of`` of a node outside any module."""
    return cst.Module([])


@functools.lru_cache(maxsize=None)
def node_types(*names: str) -> tuple[type, ...]:
    """libcst's node classes of these names, for ``isinstance``: a module-level tuple of them
    would load libcst with nanlint, which a run that parses nothing (a warm run, ``--version``)
    never needs (``nanlint/__init__.py`` loads it lazily)."""
    return tuple(getattr(cst, name) for name in names)


def _all_fields(node_type: type) -> tuple[str, ...]:
    """Every field of ``node_type`` (formatting ones included), remembered in ``_ALL_FIELDS``."""
    fields = _ALL_FIELDS[node_type] = tuple(f.name for f in dataclasses.fields(node_type))
    return fields


def rebuilt(node: cst.CSTNode, change, formatting: bool = False) -> cst.CSTNode:
    """``node`` with each value of its :func:`child_fields` (with ``formatting``, of every
    field), or each item of one that is a sequence, replaced by ``change(value)``; ``node``
    itself when ``change`` gives every value back."""
    fields = (_ALL_FIELDS.get(type(node)) or _all_fields(type(node))) if formatting else child_fields(type(node))
    changes = {}
    for name in fields:
        value = getattr(node, name)
        if type(value) in (list, tuple):
            made = [change(v) for v in value]
            if any(a is not b for a, b in zip(made, value)):
                changes[name] = type(value)(made)
        else:
            made = change(value)
            if made is not value:
                changes[name] = made
    return node.with_changes(**changes) if changes else node


def child_nodes(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The nodes ``node`` holds (formatting nodes included), as ``node.children`` would
    give, without libcst's rebuilding visit."""
    fields = _ALL_FIELDS.get(type(node)) or _all_fields(type(node))
    out = []
    for name in fields:
        value = getattr(node, name)
        kind = type(value)
        if kind is tuple or kind is list:
            out.extend(child for child in value if is_node(type(child)))
        elif is_node(kind):
            out.append(value)
    return out


def parents(root: cst.CSTNode, formatting: bool = True) -> dict[int, cst.CSTNode]:
    """``id(child) -> parent`` for every node under ``root`` (the children of
    :func:`child_nodes`, enumerated inline: this walks every node of a file).
    ``formatting=False``: not below the fields that hold only formatting
    (:func:`child_fields`), for a module whose formatting nobody reads (one made from
    CPython's tree, :mod:`nanlint.source.from_ast`, whose nodes share it)."""
    out: dict[int, cst.CSTNode] = {}
    stack = [root]
    known = _NODE_TYPES
    table, make = (_ALL_FIELDS, _all_fields) if formatting else (_FIELDS, child_fields)
    while stack:
        node = stack.pop()
        node_type = type(node)
        for name in table.get(node_type) or make(node_type):
            value = getattr(node, name)
            kind = type(value)
            if kind is tuple or kind is list:
                for child in value:
                    is_child = known.get(type(child))
                    if is_child or is_child is None and is_node(type(child)):
                        out[id(child)] = node
                        stack.append(child)
            else:
                is_child = known.get(kind)
                if is_child or is_child is None and is_node(kind):
                    out[id(value)] = node
                    stack.append(value)
    return out


class Parents:
    """``node -> parent`` in the tree under ``root`` (None for the root, or a node not in it).
    A callable of its own, not a method of the model that asks, so what keeps it (a
    :class:`nanlint.source.positions.Positions`) does not make a cycle with that model.

    ``spans`` (a module made from CPython's tree, ``id(node) -> the CPython node it was made
    from``): a node is looked up in the map of the top-level statement its place falls in,
    made when first asked, so a finding in one function does not map the whole file.  An
    operator or a bracket (:func:`shared_types`: the conversion makes one per module or per
    node class, shared by every place that has one), a node with no place, and a node outside
    the statement its place names are answered from the whole module's map, as without
    ``spans``, made on first use (:func:`parents`)."""

    __slots__ = ("_root", "_formatting", "_map", "_spans", "_part", "_walked", "_tops", "_starts")

    def __init__(self, root: cst.CSTNode, formatting: bool = True, spans: dict | None = None) -> None:
        self._root = root
        self._formatting = formatting
        self._map: dict[int, cst.CSTNode] | None = None
        self._spans = spans
        self._part: dict[int, cst.CSTNode] = {}  # the maps of the statements walked so far
        self._walked: set[int] = set()
        self._tops: set[int] | None = None  # ids of the top-level statements
        self._starts: list[tuple[int, int]] = []  # (line, column) where each top-level statement starts

    def __call__(self, node: cst.CSTNode) -> cst.CSTNode | None:
        found = self._map
        if node is self._root:
            return None
        if found is None and self._spans is not None and type(node) not in shared_types():
            got = self._part.get(id(node), _MISSING)
            if got is not _MISSING:
                return got  # type: ignore[return-value]
            if self._tops is None:
                self._index_statements()
            if id(node) in self._tops:  # type: ignore[operator]
                return self._root
            stmt = self._statement_at(node)
            if stmt is not None and id(stmt) not in self._walked:
                self._walked.add(id(stmt))
                self._part.update(parents(stmt, self._formatting))
                got = self._part.get(id(node), _MISSING)
                if got is not _MISSING:
                    return got  # type: ignore[return-value]
        if found is None:
            found = self._map = parents(self._root, self._formatting)
        return found.get(id(node))

    def _index_statements(self) -> None:
        body = getattr(self._root, "body", ())
        self._tops = {id(stmt) for stmt in body}
        starts = []
        for stmt in body:
            made_from = self._spans.get(id(stmt))  # type: ignore[union-attr]
            if made_from is None:
                starts = []  # a statement with no place: none can be told by its place
                break
            decorators = getattr(made_from, "decorator_list", None)
            first = decorators[0] if decorators else made_from
            starts.append((first.lineno, first.col_offset))
        self._starts = starts

    def _statement_at(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The top-level statement whose place holds ``node``'s start (None when unknown)."""
        made_from = self._spans.get(id(node))  # type: ignore[union-attr]
        if made_from is None or not self._starts:
            return None
        i = bisect.bisect_right(self._starts, (made_from.lineno, made_from.col_offset)) - 1
        return self._root.body[i] if i >= 0 else None  # type: ignore[attr-defined]


_MISSING = object()


@functools.lru_cache(maxsize=None)
def shared_types() -> frozenset[type]:
    """The node classes whose nodes a converted module shares between places: the operators
    (one of each per module), and a field's default (brackets, dots, colons: a default
    factory's node made once per node class, ``nanlint.source.make``, or libcst's own default)."""
    out: set[type] = set()
    bases = (cst.BaseBinaryOp, cst.BaseUnaryOp, cst.BaseCompOp, cst.BaseBooleanOp, cst.BaseAugOp)
    for kind in (k for k in vars(cst).values() if isinstance(k, type) and issubclass(k, cst.CSTNode)):
        if issubclass(kind, bases):
            out.add(kind)
        for f in dataclasses.fields(kind):
            if f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
                out.add(type(f.default_factory()))  # type: ignore[misc]
            elif isinstance(f.default, cst.CSTNode):  # one node, libcst's own default for every place
                out.add(type(f.default))
    return frozenset(out)


def parse(source: bytes | str) -> cst.Module:
    """``libcst.parse_module`` without re-validating every node it builds (:func:`building`)."""
    with building():
        return cst.parse_module(source)


@contextlib.contextmanager
def building():
    """While a whole tree is built from syntax Python accepted (libcst's parse of a file, or
    :mod:`nanlint.source.from_ast`'s module of CPython's tree): no node validation, no
    collector, and the tree kept out of the collector's scans afterwards (:func:`ast_tree.freeze_heap`).

    Each node is made through its dataclass constructor, whose ``__post_init__`` re-checks
    its invariants (whitespace patterns, balanced parentheses...); for a tree built from
    accepted syntax they hold by construction, and checking them is ~15% of libcst's parse
    and two thirds of the conversion.  Nodes built afterwards (a rule's fix) are still
    validated.  The cyclic collector is paused too: a tree is hundreds of thousands of new
    objects, none of them garbage yet, which it would otherwise scan again and again (half
    the conversion's time).  With ``ast_tree.FREEZE_TREES``, the finished tree moves to the
    collector's permanent generation, so the rules' own garbage does not rescan it: so does
    everything else alive then, so the builder must leave no reference cycle behind (one
    frozen is never freed; ``tests/test_from_ast.py`` checks the conversion's)."""
    from libcst._nodes import base

    original = base.CSTNode.__dict__.get("__post_init__")
    paused = gc.isenabled()
    if original is not None:
        base.CSTNode.__post_init__ = _no_validation  # type: ignore[method-assign]
    if paused:
        gc.disable()
    if ast_tree.FREEZE_TREES:
        gc.collect()  # the garbage made since the file's CPython tree, before freezing makes it permanent
    try:
        yield
    finally:
        if original is not None:
            base.CSTNode.__post_init__ = original  # type: ignore[method-assign]
        if paused:
            gc.enable()
    if ast_tree.FREEZE_TREES:
        gc.freeze()  # the collector never scans the tree; it is freed by reference counting


def _no_validation(self) -> None:
    pass
