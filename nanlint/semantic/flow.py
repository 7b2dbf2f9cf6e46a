"""Reaching bindings: which assignments of a name a use can see.

One forward pass over a scope's statements (computed on first query, once per
scope), in the manner of pyright's code-flow analysis on a structured tree:
straight-line code rebinds, ``if``/``elif``/``else`` and ``match`` fork and
merge, a ``for``/``while`` body runs again with what it bound (the back edge,
iterated until nothing changes), ``break``/``continue`` carry their state to
the loop's exit/head, ``return``/``raise`` end a path, a ``try`` body may stop
anywhere (its handlers see every state of the body).  The state before each
statement is kept, so a use inside that statement asks which bindings reach it.

Bindings come from :mod:`nanlint.semantic.resolve` (one pass over the tree records each
binding with its statement); this module only orders them.
"""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from nanlint.semantic.resolve import Binding, Scope
from nanlint.source.walk import child_fields, is_node

_DEAD = None  # no path reaches here (after return/raise/break/continue)
_FAN = 64  # a large state is a two-level hash trie: _FAN nodes of _FAN leaves (dicts)
_SMALL = 32  # up to this many names a state is one dict, copied per binding (cheapest when small)
_EMPTY = (None,) * _FAN


class Env:
    """The bindings of each name at one point: name -> tuple[Binding, ...], never
    mutated once made.  A small state is a dict; past _SMALL names, binding a name
    copies one path of a trie (two tuples of _FAN and one small dict), not the whole
    state: a scope of n statements binding n names keeps n states in O(n) memory,
    where a dict per state kept O(n^2)."""

    __slots__ = ("small", "root")

    def __init__(self, small: dict | None = None, root: tuple | None = None) -> None:
        self.small = {} if small is None and root is None else small
        self.root = root

    def get(self, name: str, default=None):
        if self.small is not None:
            return self.small.get(name, default)
        h = hash(name)
        node = self.root[h % _FAN]  # type: ignore[index]
        leaf = node[(h // _FAN) % _FAN] if node is not None else None
        return leaf.get(name, default) if leaf is not None else default

    def trie(self) -> tuple:
        return self.root if self.root is not None else _bound_trie(_EMPTY, self.small.items())  # type: ignore[union-attr]

    def bound(self, pairs) -> "Env":
        pairs = list(pairs)
        if self.small is not None and len(self.small) + len(pairs) <= _SMALL:
            small = dict(self.small)
            small.update(pairs)
            return Env(small)
        return Env(root=_bound_trie(self.trie(), pairs))


def _bound_trie(trie: tuple, pairs) -> tuple:
    root = list(trie)
    nodes: dict[int, list] = {}
    for name, bindings in pairs:
        h = hash(name)
        i, j = h % _FAN, (h // _FAN) % _FAN
        node = nodes.get(i)
        if node is None:
            node = nodes[i] = list(root[i]) if root[i] is not None else [None] * _FAN
        leaf = node[j] = dict(node[j]) if node[j] is not None else {}
        leaf[name] = bindings
    for i, node in nodes.items():
        root[i] = tuple(node)
    return tuple(root)


def _merge(*envs: Env | None) -> Env | None:
    live = [e for e in envs if e is not None]
    if not live:
        return _DEAD
    first = live[0]
    if all(e is first for e in live[1:]):
        return first
    if all(e.small is not None for e in live):
        return Env(_merge_level([e.small for e in live], 0))
    return Env(root=_merge_level([e.trie() for e in live], 2))


def _merge_level(parts: list, depth: int):
    """Merge trie levels (depth 2: roots, 1: nodes, 0: leaves); a part shared by
    every state, or present in one only, is kept as it is."""
    live = [p for p in parts if p is not None]
    if not live:
        return None
    first = live[0]
    if all(p is first for p in live[1:]):
        return first
    if depth == 0:
        out: dict = dict(first)
        for e in live[1:]:
            if e is first:
                continue
            for name, bindings in e.items():
                have = out.get(name)
                if have is None:
                    out[name] = bindings
                elif have is not bindings:
                    out[name] = have + tuple(b for b in bindings if all(b is not h for h in have))
        # a name unbound on one path may be unbound at the merge: keep what the others bind
        return out
    if len(live) == 2:  # an ``if`` without ``else``, a loop's head: the common merge, column by column
        a, b = live
        return tuple(x if x is y else _merge_level([x, y], depth - 1) for x, y in zip(a, b))
    out = []
    for k in range(_FAN):  # a branch every state shares is kept without a call (most are)
        column = [p[k] for p in live]
        head = column[0]
        for q in column:
            if q is not head:
                out.append(_merge_level(column, depth - 1))
                break
        else:
            out.append(head)
    return tuple(out)


_NAME_FIELDS: dict[type, tuple[str, ...]] = {}  # ScopeFlow._names_in: a type -> the fields it walks


def _name_fields(kind: type) -> tuple[str, ...]:
    """The fields of a value of type ``kind`` that :meth:`ScopeFlow._names_in` walks: a
    node's children (:func:`child_fields`), none for a nested ``def``/``class`` (a scope of its
    own) or for what is not a node (a string, ``None``, a sentinel)."""
    fields = () if not is_node(kind) or kind is cst.FunctionDef or kind is cst.ClassDef else child_fields(kind)
    _NAME_FIELDS[kind] = fields
    return fields


class _Loop:
    def __init__(self) -> None:
        self.breaks: list[Env] = []
        self.continues: list[Env] = []


class ScopeFlow:
    """The state before each statement of one scope."""

    def __init__(self, scope: Scope, body: Iterable[cst.CSTNode], entry: Env) -> None:
        self.scope = scope
        self.before: dict[int, Env] = {}
        self._by_stmt: dict[int, list[tuple[str, Binding]]] = {}
        self.untracked: set[str] = set()  # names bound inside expressions (walrus), globals
        for name, bindings in scope.bindings.items():
            for b in bindings:
                if type(b.node) is cst.NamedExpr or type(b.node) is cst.Nonlocal:  # an ABC's miss is slow
                    self.untracked.add(name)
                self._by_stmt.setdefault(id(b.node), []).append((name, b))
        self.untracked |= scope.globals
        self.statement_of: dict[int, cst.CSTNode] = {}  # id(Name) -> the statement it is evaluated in
        self._seen: set[int] = set()
        self._loops: list[_Loop] = []
        self._block(body, entry)

    # --- queries ---------------------------------------------------------------
    def reaching(self, name: cst.Name) -> tuple[Binding, ...] | None:
        """The bindings of ``name`` that reach this use of it; None when unknown (not
        a use in this scope, dead code, or a name this pass does not order)."""
        if name.value in self.untracked:
            return None
        stmt = self.statement_of.get(id(name))
        if stmt is None:
            return None
        env = self.before.get(id(stmt))
        if env is None:
            return None
        return env.get(name.value, ())

    def same_values(self, use: cst.Name, names: Iterable[cst.Name]) -> bool:
        """Whether each of ``names`` (uses in this scope) is reached by the same bindings
        at the statement of ``use`` as where it is: its code, repeated there, reads the same
        value (``q = softmax(x); x = relu(x); log(q)``: ``x`` does not).  True when unknown."""
        stmt = self.statement_of.get(id(use))
        env = self.before.get(id(stmt)) if stmt is not None else None
        if env is None:
            return True
        for name in names:
            if name.value in self.untracked:
                return False
            here = self.reaching(name)
            if here is None:
                continue
            there = env.get(name.value, ())
            if len(here) != len(there) or any(all(b is not h for h in there) for b in here):
                return False
        return True

    # --- the pass ------------------------------------------------------------------
    def _bind(self, env: Env | None, node: cst.CSTNode) -> Env | None:
        if env is None:
            return None
        made = self._by_stmt.get(id(node))
        if not made:
            return env
        return env.bound((name, (binding,)) for name, binding in made)

    def _block(self, body: Iterable[cst.CSTNode], env: Env | None) -> Env | None:
        for stmt in body:
            env = self._stmt(stmt, env)
        return env

    def _suite(self, suite, env: Env | None) -> Env | None:
        if suite is None:
            return env
        return self._block(suite.body, env)

    def _names_in(self, node: cst.CSTNode, stmt: cst.CSTNode) -> None:
        """Record ``stmt`` as the statement of every name under ``node`` (not in nested
        ``def``/``class`` bodies, which are scopes of their own).  Every expression of a
        flowed scope comes through here: what a value's type holds is looked up once per type
        (:func:`_name_fields`), and anything but a node has none."""
        stack = [node]
        statement_of = self.statement_of
        plans = _NAME_FIELDS
        name_type = cst.Name
        while stack:
            n = stack.pop()
            kind = type(n)
            if kind is name_type:
                statement_of[id(n)] = stmt
                continue
            fields = plans.get(kind)
            if fields is None:
                fields = _name_fields(kind)
            for name in fields:
                value = getattr(n, name)
                if type(value) is tuple or type(value) is list:
                    stack.extend(value)
                else:
                    stack.append(value)

    def _header(self, stmt: cst.CSTNode) -> None:
        """The names a compound statement evaluates itself (an ``if`` test, a ``for``
        iterable, ``with`` items, decorators and defaults of a ``def``)."""
        parts: list = []
        if isinstance(stmt, (cst.If, cst.While)):
            parts = [stmt.test]
        elif isinstance(stmt, cst.For):
            parts = [stmt.iter, stmt.target]
        elif isinstance(stmt, cst.With):
            parts = list(stmt.items)
        elif isinstance(stmt, cst.FunctionDef):
            parts = list(stmt.decorators) + [stmt.params]
        elif isinstance(stmt, cst.ClassDef):
            parts = list(stmt.decorators) + list(stmt.bases) + list(stmt.keywords)
        elif isinstance(stmt, cst.Match):
            parts = [stmt.subject]
        for part in parts:
            self._names_in(part, stmt)

    def _stmt(self, stmt: cst.CSTNode, env: Env | None) -> Env | None:
        if env is not None:
            self.before[id(stmt)] = env
        # type(), not isinstance: libcst's classes are ABCs, whose misses are slow (these have no subclasses)
        simple = type(stmt) is cst.SimpleStatementLine or type(stmt) is cst.SimpleStatementSuite
        if id(stmt) not in self._seen:
            self._seen.add(id(stmt))
            if not simple:
                self._header(stmt)
            else:
                for small in stmt.body:
                    self._names_in(small, small)
        if simple:
            for small in stmt.body:
                if env is not None:
                    self.before[id(small)] = env
                env = self._bind(env, small)
                kind = type(small)
                if kind is cst.Return or kind is cst.Raise:
                    env = _DEAD
                elif kind is cst.Break and self._loops:
                    if env is not None:
                        self._loops[-1].breaks.append(env)
                    env = _DEAD
                elif kind is cst.Continue and self._loops:
                    if env is not None:
                        self._loops[-1].continues.append(env)
                    env = _DEAD
            return env
        if isinstance(stmt, cst.If):
            taken = self._suite(stmt.body, env)
            other = stmt.orelse
            if isinstance(other, cst.If):
                skipped = self._stmt(other, env)
            elif isinstance(other, cst.Else):
                skipped = self._suite(other.body, env)
            else:
                skipped = env
            return _merge(taken, skipped)
        if isinstance(stmt, (cst.For, cst.While)):
            return self._loop(stmt, env)
        if isinstance(stmt, cst.With):
            return self._suite(stmt.body, self._bind(env, stmt))
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            return self._bind(env, stmt)
        if isinstance(stmt, cst.Try) or type(stmt).__name__ == "TryStar":
            return self._try(stmt, env)
        if isinstance(stmt, cst.Match):
            outs = [env]
            for case in stmt.cases:
                outs.append(self._suite(case.body, self._bind_patterns(env, case)))
            return _merge(*outs)
        return env

    def _bind_patterns(self, env: Env | None, case) -> Env | None:
        if env is None:
            return None
        # names bound by a pattern (MatchAs) are recorded on the MatchAs node
        out = env
        stack = [case.pattern]
        while stack:
            node = stack.pop()
            out = self._bind(out, node)
            stack.extend(c for c in node.children if is_node(type(c)))
        return out

    def _loop(self, stmt, env: Env | None) -> Env | None:
        loop = _Loop()
        self._loops.append(loop)
        head = env
        for _ in range(4):  # a fixpoint: the sets only grow, and loop nests are shallow
            loop.breaks.clear()
            loop.continues.clear()
            start = self._bind(head, stmt) if isinstance(stmt, cst.For) else head
            body_out = self._suite(stmt.body, start)
            new_head = _merge(env, body_out, *loop.continues)
            if _same(new_head, head):
                break
            head = new_head
        self._loops.pop()
        if isinstance(stmt, cst.While) and head is not None:
            self.before[id(stmt)] = head  # the test is evaluated at the loop's head
        if stmt.orelse is not None:
            return _merge(self._suite(stmt.orelse.body, head), *loop.breaks)
        return _merge(head, *loop.breaks)

    def _try(self, stmt, env: Env | None) -> Env | None:
        states: list[Env | None] = [env]
        out = env
        for inner in stmt.body.body:
            out = self._stmt(inner, out)
            states.append(out)
        anywhere = _merge(*states)
        ends = []
        for handler in stmt.handlers:
            ends.append(self._suite(handler.body, self._bind(anywhere, handler)))
        ends.append(self._suite(stmt.orelse.body, out) if stmt.orelse is not None else out)
        joined = _merge(*ends)
        if stmt.finalbody is not None:
            # the finally block runs on every path, also those that raised
            final_in = _merge(joined, anywhere) if joined is not None else anywhere
            final_out = self._suite(stmt.finalbody.body, final_in)
            return final_out if joined is not None else _DEAD
        return joined


def _same(a: Env | None, b: Env | None) -> bool:
    if a is b:
        return True
    if a is None or b is None:
        return False
    if a.small is not None and b.small is not None:
        return _same_level(a.small, b.small, 0)
    return _same_level(a.trie(), b.trie(), 2)


def _same_level(a, b, depth: int) -> bool:
    if a is b:
        return True
    if a is None or b is None:
        return False
    if depth == 0:
        return a.keys() == b.keys() and all(
            len(a[k]) == len(b[k]) and all(x is y for x, y in zip(a[k], b[k])) for k in a)
    return all(_same_level(x, y, depth - 1) for x, y in zip(a, b))


def body_of(scope: Scope) -> tuple[list[cst.CSTNode], Env]:
    """A scope's statements and the state at its entry (parameters bound)."""
    node = scope.node
    if isinstance(node, cst.Module):
        return list(node.body), Env()
    entry: dict = {}
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        for name, bindings in scope.bindings.items():
            params = tuple(b for b in bindings if isinstance(b.node, cst.Param))
            if params:
                entry[name] = params
        body = node.body
        return list(body.body), Env().bound(entry.items())
    return [], Env()
