"""A file as the zero rules' site check reads it (:mod:`nanlint.analysis.gates.zero_sites`): its bindings,
statement by statement; the lines holding ``/``, ``**`` and expression-level bindings;
the arguments at the call sites of its functions; read once per file and shared by the
rules asking about it, and the trees of the project modules it imports, per process.
"""

from __future__ import annotations

import ast
from pathlib import Path

from nanlint.analysis.gates.syntax_sites import calls, lines_of, on_lines, walk_lines, whole_word

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
# the statement lists a compound statement holds (handlers and cases: their bodies)
_COMPOUND = {ast.If: ("body", "orelse"), ast.For: ("body", "orelse"), ast.AsyncFor: ("body", "orelse"),
             ast.While: ("body", "orelse"), ast.With: ("body",), ast.AsyncWith: ("body",),
             ast.Try: ("body", "handlers", "orelse", "finalbody"), ast.Match: ("cases",)}
if hasattr(ast, "TryStar"):
    _COMPOUND[ast.TryStar] = ("body", "handlers", "orelse", "finalbody")
# the tokens the search reads lines by (found with str.find: a regex alternation costs
# several times more): a division (not a floor's //), a power, a binding in an expression
_TOKENS = {"div": ("/",), "pow": ("**",), "bind": (":=", "for")}
_UNPACKS = frozenset("([{,\n")  # what precedes ** when it unpacks (a power follows an operand)
MAX_TREES = 8  # project modules' files kept at once (their answers are kept apart)
_MODULES: dict[tuple, "File | None"] = {}
_LAST: list["File"] = []  # the file the rules are asking about now


def file(tree: ast.Module, text: str) -> "File":
    """The :class:`File` of ``tree``: the one the last rule built when it is the same tree."""
    if _LAST and _LAST[0].tree is tree:
        return _LAST[0]
    _LAST[:] = [File(tree, text)]
    return _LAST[0]


def module(path: Path, st) -> "File | None":
    """A project module's :class:`File` (None when it does not parse), per process."""
    key = (str(path), st.st_mtime_ns, st.st_size)
    if key not in _MODULES:
        if len(_MODULES) >= MAX_TREES:
            del _MODULES[next(iter(_MODULES))]  # the oldest
        try:
            text = path.read_bytes().decode("utf-8", "replace")
            _MODULES[key] = File(ast.parse(text), text)
        except (SyntaxError, ValueError, RecursionError, MemoryError, OSError):
            _MODULES[key] = None
    return _MODULES[key]


class File:
    def __init__(self, tree: ast.Module, text: str) -> None:
        self.tree = tree
        # CPython's lines end at \r too: with \n alone the lines found here are the tree's
        self.text = text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
        self._lines: dict[str, list[int]] = {}
        self._bindings: Bindings | None = None
        self._sites: dict[str, list[tuple[int | str, ast.AST]]] = {}
        self._operators: tuple[list[ast.AST], list[tuple[ast.AST, ast.AST]]] | None = None

    def lines(self, *kinds: str) -> list[int]:
        """The lines holding a token of one of ``kinds`` (``div``, ``pow``, ``bind``), sorted."""
        for kind in kinds:
            if kind not in self._lines:
                self._lines[kind] = lines_of(self.text, self._find(kind))
        if len(kinds) == 1:
            return self._lines[kinds[0]]
        return sorted(set().union(*(self._lines[k] for k in kinds)))

    def _find(self, kind: str):
        text, find = self.text, self.text.find
        for needle in _TOKENS[kind]:
            word, n = needle.isalpha(), len(needle)
            i = find(needle)
            while i >= 0:
                if kind == "div" and (text[i + 1:i + 2] == "/" or text[i - 1:i] == "/"):
                    pass  # a floor division
                elif kind == "pow" and _before(text, i) in _UNPACKS:
                    pass  # f(**kwargs), {**a}: an unpacking, no power
                elif not word or whole_word(text, i, n):
                    # a for binds only with an in after it on its line (English "for" does not)
                    if needle != "for" or find(" in", i, (find("\n", i) + 1 or len(text) + 1) - 1) >= 0:
                        yield i
                i = find(needle, i + n)

    def called(self, name: str) -> bool:
        """Whether ``name(`` is written more than at its def: some call of it may be in the file."""
        return self.text.count(name + "(") + self.text.count(name + " (") > 1

    @property
    def bindings(self) -> "Bindings":
        if self._bindings is None:
            self._bindings = Bindings(self)
        return self._bindings

    def arguments(self, owner: str) -> list[tuple[int | str, ast.AST]]:
        """(position counting a method's self, or keyword, -1: any; argument) at each call
        of the function ``owner``."""
        if owner not in self._sites:
            out: list[tuple[int | str, ast.AST]] = []
            if self.called(owner):
                for call, name in calls(self.tree, self.text, frozenset({owner})):
                    if name is None:
                        continue  # passed as a value (a callback): its arguments are not in sight
                    shift = 1 if type(call.func) is ast.Attribute else 0  # a method's self
                    out.extend((-1 if type(a) is ast.Starred else i + shift, a) for i, a in enumerate(call.args))
                    out.extend((-1 if k.arg is None else k.arg, k.value) for k in call.keywords)
            self._sites[owner] = out
        return self._sites[owner]

    def operators(self, divide: bool, power) -> list[ast.AST]:
        """The denominators of ``/`` (and ``/=``) when ``divide``, the bases of ``x ** p``
        for ``power(p)``."""
        if self._operators is None:
            divisions: list[ast.AST] = []
            powers: list[tuple[ast.AST, ast.AST]] = []
            lines = self.lines("div", "pow")
            for part in on_lines(self.tree, lines):
                for n in walk_lines(part, lines):
                    k = type(n)
                    if k is ast.BinOp:
                        op = type(n.op)
                        if op is ast.Div:
                            divisions.append(n.right)
                        elif op is ast.Pow:
                            powers.append((n.left, n.right))
                    elif k is ast.AugAssign and type(n.op) is ast.Div:
                        divisions.append(n.value)
            self._operators = (divisions, powers)
        divisions, powers = self._operators
        out = list(divisions) if divide else []
        if power is not None:
            out.extend(base for base, p in powers if power(p))
        return out


def _before(text: str, i: int) -> str:
    """The character before ``text[i]``, spaces skipped (a newline at the start)."""
    j = i - 1
    while j >= 0 and text[j] in " \t":
        j -= 1
    return text[j] if j >= 0 else "\n"


class Bindings:
    """The file's bindings, read statement by statement: what each name and attribute
    name is assigned, what each function and class returns, each function's parameters."""

    def __init__(self, f: File) -> None:
        self.flows: dict[tuple[str, str], list[ast.AST]] = {}  # ("name"|"attr", name) -> values
        self.returns: dict[str, list[ast.AST]] = {}  # def or class name -> its returns' values
        self.defs: dict[str, list[ast.arguments]] = {}  # def name -> the parameters of each def of it
        self.params: dict[str, set[str]] = {}  # parameter name -> the defs having it
        self.methods: dict[str, list[str]] = {}  # class name -> its methods' names
        # names imported from a module (``from .x import f``): (level, module, name there)
        self.imported: dict[str, tuple[int, str | None, str]] = {}
        self.modules: set[str] = set()  # names ``import`` binds (``np`` of ``import numpy as np``)
        self.whole: dict[str, str] = {}  # those names -> the module they read attributes of (``m`` -> ``pkg.m``)
        stack: list[tuple[str, ast.stmt]] = [("", s) for s in f.tree.body]
        flows, bind = self.flows, self._bind
        while stack:
            owner, n = stack.pop()
            k = type(n)
            if k is ast.Expr:
                v = n.value
                if type(v) in (ast.Yield, ast.YieldFrom) and v.value is not None and owner:
                    self.returns.setdefault(owner, []).append(v.value)
            elif k is ast.Assign:
                v = n.value
                for target in n.targets:
                    if type(target) is ast.Name:
                        key = ("name", target.id)
                        if key in flows:
                            flows[key].append(v)
                        else:
                            flows[key] = [v]
                    else:
                        bind(target, v)
            elif k is ast.Return:
                if n.value is not None and owner:
                    self.returns.setdefault(owner, []).append(n.value)
            elif k in _DEFS or k is ast.ClassDef:
                stack.extend((n.name, s) for s in n.body)
                if k is ast.ClassDef:
                    self.methods.setdefault(n.name, []).extend(m.name for m in n.body if type(m) in _DEFS)
                else:
                    self._def(n)
            elif k in (ast.AugAssign, ast.AnnAssign):
                if n.value is not None:
                    bind(n.target, n.value)
            elif k in _COMPOUND:
                if k in (ast.For, ast.AsyncFor):
                    bind(n.target, n.iter)
                elif k in (ast.With, ast.AsyncWith):
                    for item in n.items:
                        if item.optional_vars is not None:
                            bind(item.optional_vars, item.context_expr)
                for field in _COMPOUND[k]:
                    for h in getattr(n, field):
                        if type(h) in (ast.ExceptHandler, ast.match_case):
                            stack.extend((owner, s) for s in h.body)
                        else:
                            stack.append((owner, h))
            elif k is ast.Import:
                self.modules.update((a.asname or a.name).split(".")[0] for a in n.names)
                self.whole.update((a.asname, a.name) if a.asname else (a.name.split(".")[0],) * 2 for a in n.names)
            elif k is ast.ImportFrom:
                for a in n.names:
                    if a.name != "*":
                        self.imported[a.asname or a.name] = (n.level, n.module, a.name)
        # bindings inside expressions: only on the lines that can hold one
        lines = f.lines("bind")
        for part in on_lines(f.tree, lines):
            for n in walk_lines(part, lines):
                k = type(n)
                if k is ast.NamedExpr:
                    bind(n.target, n.value)
                elif k is ast.comprehension:
                    bind(n.target, n.iter)

    def _def(self, n: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.defs.setdefault(n.name, []).append(n.args)
        a = n.args
        for p in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
            if p is not None:
                self.params.setdefault(p.arg, set()).add(n.name)
        # a function or class as a default binds its parameter: act_layer=nn.Sigmoid
        for p, d in [*zip([*a.posonlyargs, *a.args][::-1], a.defaults[::-1]),
                     *((p, d) for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None)]:
            if type(d) in (ast.Name, ast.Attribute):
                self._bind(ast.Name(p.arg), d)

    def _bind(self, target: ast.AST, value: ast.AST) -> None:
        """Every name and attribute name ``target`` binds (``a, self.b = ...``: ``a`` and the
        attribute ``b``; ``x[i] = ...``: ``x``, which holds the value) is bound to ``value``.
        The object whose attribute is set, and an index, are read, not bound (as
        :func:`nanlint.analysis.gates.bindings.targets` reads them)."""
        k = type(target)
        if k is ast.Name:
            self.flows.setdefault(("name", target.id), []).append(value)
        elif k is ast.Attribute:
            self.flows.setdefault(("attr", target.attr), []).append(value)
        elif k in (ast.Tuple, ast.List):
            for e in target.elts:
                self._bind(e, value)
        elif k is ast.Starred or k is ast.Subscript:
            self._bind(target.value, value)
        else:
            for t in ast.walk(target):
                if type(t) is ast.Name:
                    self.flows.setdefault(("name", t.id), []).append(value)
                elif type(t) is ast.Attribute:
                    self.flows.setdefault(("attr", t.attr), []).append(value)


def parameters(defs: list[ast.arguments], where: int | str) -> set[str]:
    """The parameters an argument at position ``where`` (an index counting a method's
    self, a keyword, or -1: any) can bind, in any of the defs of that name."""
    out: set[str] = set()
    for a in defs:
        positional = [*a.posonlyargs, *a.args]
        every = [p.arg for p in [*positional, *a.kwonlyargs, a.vararg, a.kwarg] if p]
        if where == -1:
            out.update(every)
        elif isinstance(where, int):
            for i in (where, where - 1):  # a method called through its class, or a function
                if 0 <= i < len(positional):
                    out.add(positional[i].arg)
            if a.vararg is not None:
                out.add(a.vararg.arg)
        else:
            out.add(where if where in every else a.kwarg.arg if a.kwarg else where)
    return out
