"""A file as the zero rules' site check reads it (:mod:`nanlint.zero_sites`): its bindings,
statement by statement; the lines holding ``/``, ``**`` and expression-level bindings;
the arguments at the call sites of its functions; read once per file and shared by the
rules asking about it, and the trees of the project modules it imports, per process.
"""

from __future__ import annotations

import ast
import bisect
import re
from pathlib import Path

from nanlint.syntax_sites import calls, on_lines

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
# the tokens the search reads lines by (found with str.find: a regex alternation costs
# several times more): a division (not a floor's //), a power, a binding in an expression
_TOKENS = {"div": ("/",), "pow": ("**",), "bind": (":=", "for")}
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
MAX_TREES = 32  # project modules' files kept at once (their answers are kept apart)
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
        self.tree, self.text = tree, text
        self._lines: dict[str, list[int]] | None = None
        self._bindings: Bindings | None = None
        self._sites: dict[str, list[tuple[int | str, ast.AST]]] = {}

    def lines(self, *kinds: str) -> list[int]:
        """The lines holding a token of one of ``kinds`` (``div``, ``pow``, ``bind``), sorted."""
        if self._lines is None:
            self._lines = {}
            text = self.text
            if "\r" in text:  # CPython's lines end at \r too
                text = self.text = text.replace("\r\n", "\n").replace("\r", "\n")
            self._breaks = [m.start() for m in re.finditer("\n", text)]
        for kind in kinds:
            if kind not in self._lines:
                self._lines[kind] = sorted({bisect.bisect_left(self._breaks, i) + 1 for i in self._find(kind)})
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
                elif not word or ((i == 0 or text[i - 1] not in _WORD) and text[i + n:i + n + 1] not in _WORD):
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
        out: list[ast.AST] = []
        kinds = ("div",) * divide + ("pow",) * (power is not None)
        for part in on_lines(self.tree, self.lines(*kinds)):
            for n in ast.walk(part):
                k = type(n)
                if k is ast.BinOp:
                    if divide and type(n.op) is ast.Div:
                        out.append(n.right)
                    elif power is not None and type(n.op) is ast.Pow and power(n.right):
                        out.append(n.left)
                elif k is ast.AugAssign and divide and type(n.op) is ast.Div:
                    out.append(n.value)
        return out


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
        stack: list[tuple[str, ast.stmt]] = [("", s) for s in f.tree.body]
        while stack:
            owner, n = stack.pop()
            k = type(n)
            if k in _DEFS or k is ast.ClassDef:
                stack.extend((n.name, s) for s in n.body)
                if k is ast.ClassDef:
                    self.methods.setdefault(n.name, []).extend(m.name for m in n.body if type(m) in _DEFS)
                else:
                    self._def(n)
                continue
            if k is ast.Assign:
                for target in n.targets:
                    self._bind(target, n.value)
            elif k in (ast.AugAssign, ast.AnnAssign) and n.value is not None:
                self._bind(n.target, n.value)
            elif k in (ast.For, ast.AsyncFor):
                self._bind(n.target, n.iter)
            elif k in (ast.With, ast.AsyncWith):
                for item in n.items:
                    if item.optional_vars is not None:
                        self._bind(item.optional_vars, item.context_expr)
            elif k is ast.Return and n.value is not None and owner:
                self.returns.setdefault(owner, []).append(n.value)
            elif k is ast.Expr and type(n.value) in (ast.Yield, ast.YieldFrom) and n.value.value is not None \
                    and owner:
                self.returns.setdefault(owner, []).append(n.value.value)
            elif k is ast.Import:
                self.modules.update((a.asname or a.name).split(".")[0] for a in n.names)
            elif k is ast.ImportFrom:
                for a in n.names:
                    if a.name != "*":
                        self.imported[a.asname or a.name] = (n.level, n.module, a.name)
            for field in ("body", "orelse", "finalbody"):
                stack.extend((owner, s) for s in getattr(n, field, None) or ())
            for group in ("handlers", "cases"):
                for h in getattr(n, group, None) or ():
                    stack.extend((owner, s) for s in h.body)
        # bindings inside expressions: only on the lines that can hold one
        for part in on_lines(f.tree, f.lines("bind")):
            for n in ast.walk(part):
                k = type(n)
                if k is ast.NamedExpr:
                    self._bind(n.target, n.value)
                elif k is ast.comprehension:
                    self._bind(n.target, n.iter)

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
        if type(target) is ast.Name:
            self.flows.setdefault(("name", target.id), []).append(value)
            return
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
