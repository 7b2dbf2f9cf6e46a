"""Fixes found on the module made of CPython's tree, moved onto libcst's parse of the file.

The rules run once per file, on the module :mod:`nanlint.source.from_ast` makes of CPython's
tree: its nodes hold libcst's default formatting, not the user's. A fix is a set of node
replacements built from those nodes. To rewrite the user's text, each is moved onto libcst's
own parse of the same source:

* :func:`pair` walks the two trees side by side, field by field (formatting fields aside:
  whitespace, parentheses, commas, comments) and maps each converted node to the parsed node
  in its place, and the conversion's commas and parentheses to the user's where both have
  them (a fix that copies one, ``comma=a.comma``, ``lpar=old.lpar``, writes the user's). Where
  the two differ in shape (``a; b`` on one line, a one-line suite, an implicit string
  concatenation) the subtree is left unpaired;
* while the rules run, :func:`recording` notes every node a rule derives from another with
  libcst's ``with_changes``, ``deep_replace``, ``deep_clone`` or a transformer's ``visit``;
* :class:`Translator` rebuilds a fix's new nodes over the parsed tree: a converted node is its
  pair, a derived node is the same derivation replayed on the translated base (so it keeps the
  user's formatting, as a rule running on libcst's parse would have; a ``deep_replace`` and a
  ``fixes.replaced`` too, made again on the translated base), any other new node is
  itself with its children translated (a transformer's copy too, its base checked as below).
  A converted node with no pair raises :class:`Unpaired`, and so does a converted node the fix
  carries, derives from or replaces, or its parent, when the user did not write it as libcst's
  default formatting writes it (the rule may have read its formatting): the caller then lints
  the file on libcst's parse, as before.
"""

from __future__ import annotations

import contextlib
import functools
import io
import keyword
import tokenize

import libcst as cst

from nanlint.source.positions import Positions
from nanlint.source.noqa import directives
from nanlint.source.codegen import code_of
from nanlint.source.make import formatting
from nanlint.source.walk import Parents, child_fields, empty_module, is_node, node_types, rebuilt
from nanlint.fix import fixes
from nanlint.source.lines import split_lines

_DERIVING = ("with_changes", "deep_replace", "deep_clone", "visit")
_RECORD: list[dict | None] = [None]  # the derivations being recorded (None: not recording)


class Unpaired(Exception):
    """A fix touches a converted node that has no twin in libcst's parse."""


@functools.lru_cache(maxsize=None)
def _originals() -> dict:
    """libcst's deriving methods, wrapped once (on first use: importing nanlint loads no
    libcst) so that a derivation is noted while :func:`recording` is on."""
    originals = {name: getattr(cst.CSTNode, name) for name in _DERIVING}

    def wrap(name, method):
        def deriving(self, *args, **kwargs):
            made = method(self, *args, **kwargs)
            record = _RECORD[0]
            # a visit by a read-only visitor gives the node back, ``x.deep_replace(x, y)`` gives ``y``
            # (and its transformer's visit of ``x`` too): nodes that were there before, not derived
            if record is not None and made is not self and id(made) not in record and \
                    not any(made is a for a in args) and not any(made is v for v in kwargs.values()) and \
                    not (name == "visit" and args and made is getattr(args[0], "new_node", None)):
                record[id(made)] = (made, name, self, args, kwargs)  # holds ``made``: its id stays its own
            return made
        deriving.__doc__ = method.__doc__
        return deriving

    for name, method in originals.items():
        setattr(cst.CSTNode, name, wrap(name, method))
    return originals


@contextlib.contextmanager
def recording():
    """Note, while the rules run, every node derived from another (``id(made) -> (made,
    method, base, args, kwargs)``); yields that record."""
    _originals()
    outer = _RECORD[0]
    record: dict = {}
    _RECORD[0] = record
    try:
        yield record
    finally:
        _RECORD[0] = outer


def pair(converted: cst.Module, spans: dict, parsed: cst.Module) -> dict[int, cst.CSTNode]:
    """``id(converted node) -> its twin in parsed`` for every node of ``converted`` made from
    CPython's tree (its id in ``spans``) whose place in ``parsed`` holds a node of the same
    shape."""
    out: dict[int, cst.CSTNode] = {}
    stack = [(converted, parsed)]
    while stack:
        a, b = stack.pop()
        if type(a) is not type(b):
            if type(a) is cst.IndentedBlock and type(b) is cst.SimpleStatementSuite:  # ``if t: return x``
                stack.extend(_paired(_units(a.body), list(b.body)))
            continue
        if id(a) in spans:
            out[id(a)] = b
            comma = getattr(a, "comma", None)
            if type(comma) is cst.Comma and type(getattr(b, "comma", None)) is cst.Comma:
                out[id(comma)] = b.comma  # the conversion's own (ast_expressions.commas): the user's
            lpar = getattr(a, "lpar", None)
            if type(lpar) in (list, tuple) and lpar and type(b.lpar) in (list, tuple) and len(lpar) == len(b.lpar) \
                    and lpar is not formatting(type(a)).get("lpar"):
                # parentheses precedence needs, written so by the user (a statement's are not a list;
                # a pair the conversion's makers share between nodes, a match tuple's, is no one's)
                out.update(zip(map(id, lpar), b.lpar))
                out.update(zip(map(id, a.rpar), b.rpar))
        for name in child_fields(type(a)):
            x, y = getattr(a, name), getattr(b, name)
            if type(x) in (list, tuple):
                if type(y) not in (list, tuple):
                    continue
                if name == "body" and len(x) != len(y):
                    stack.extend(_statements(x, y))
                elif len(x) == len(y):
                    stack.extend((p, q) for p, q in zip(x, y) if is_node(type(p)))
            elif is_node(type(x)):
                stack.append((x, y))
    return out


def _statements(made: list, parsed: list) -> list[tuple]:
    """A body whose small statements libcst groups on fewer lines (``a = 1; b = 2``): its
    statements paired one by one, the lines themselves left unpaired."""
    return _paired(_units(made), _units(parsed))


def _units(body) -> list:
    """A body's statements, the small ones out of their lines."""
    out = []
    for st in body:
        out.extend(st.body if type(st) is cst.SimpleStatementLine else [st])
    return out


def _paired(first: list, second: list) -> list[tuple]:
    return list(zip(first, second)) if len(first) == len(second) else []


# what holds statements: its code is whole blocks, whose layout a fix never reads
_BLOCKS = ("Module", "IndentedBlock", "SimpleStatementLine", "SimpleStatementSuite", "FunctionDef", "ClassDef",
           "If", "Else", "For", "While", "With", "Try", "ExceptHandler", "Finally")


# operators, whose spacing libcst keeps on the operator node: no rule reads it or moves it
_OPERATORS = frozenset("+ - * / // % ** @ << >> & | ^ ~ < > <= >= == != = -> := not and or in is".split())


def _alike_but_operators(made: str, written: str, nested: int = 0) -> bool:
    """Whether two codes of one node hold the same tokens with the same text between them
    (spaces, line breaks, comments), except next to an operator (``y_*tf.log(p)``,
    ``y_ * tf.log(p)`` and ``y_ *\n tf.log(p)``), next to a comma (``f(a,b)``, ``f(a , b)``,
    ``f(a,\n b)``: the conversion's commas are paired with the user's, so a fix that carries
    one writes the user's), and what lies just inside brackets (``f( x )``, ``( a + b)``,
    ``f(  # c\n x)``: a call's own, or parentheses paired with the user's).
    The layout a fix takes from the call it replaces (``fixes.restyle``) is
    read from the user's twin when the fix is applied, not from the converted node.
    ``nested``: the text inside that many call parentheses, subscript or display brackets may
    differ too (``f(a,\n b)``, in a node a fix carries whole, 1: a rule that reads a part of it
    carries that part, which is compared on its own; a carried node's parent, 2: what lies
    between its arguments is not); parentheses that only group (a node's own, which a rule may
    keep: ``fixes.keep_parens``) do not count."""
    a, b = _gaps(made), _gaps(written)
    if a is None or b is None or len(a) != len(b):
        return False
    brackets: list[bool] = []  # the open brackets, each: whether what is inside it may differ
    padded = False  # the previous token opened a bracket
    for i, ((tok, gap), (tok2, gap2)) in enumerate(zip(a, b)):
        if tok != tok2:
            return False
        inside = nested and sum(brackets) >= nested
        # just inside brackets: a call's own (``f( x )``; no rule reads it, a fix that keeps the
        # call keeps the user's), or a group's parentheses, paired with the user's
        padding = padded
        padded = False
        if tok in _OPENING:
            brackets.append(tok != "(" or i > 0 and _ends_operand(a[i - 1][0]))  # a call's, not a group's
            padded = True
        elif tok in _CLOSING and brackets:
            brackets.pop()
            padding = True
        if gap == gap2 or inside or padding:
            continue
        if i > 0 and a[i - 1][0] in _OPERATORS:  # after an operator: the operator's
            continue
        if tok == "," or i > 0 and a[i - 1][0] == ",":  # a comma's: carried as the user's (paired)
            continue
        if tok in _OPERATORS and i > 0 and _ends_operand(a[i - 1][0]):  # before a binary one: the operator's
            continue
        return False  # before a unary operator, or between other tokens: its holder's
    return True


# formatting nodes :func:`pair` pairs (by name: naming libcst's types here would load it with
# this module): a fix that carries one carries the user's
_PAIRED_FORMATTING = frozenset({"Comma", "LeftParen", "RightParen"})


def _deep_replacement(derived):
    """The transformer of libcst's ``deep_replace`` that made a derived node (noted as a
    ``visit``), None for another derivation."""
    args = derived[3]
    visitor = args[0] if len(args) == 1 else None
    return visitor if type(visitor).__name__ == "_ChildReplacementTransformer" and \
        hasattr(visitor, "old_node") and hasattr(visitor, "new_node") else None


def _mapping(derived) -> dict:
    """The replacements of the :func:`fixes.replaced` run that made a derived node; empty for
    another derivation."""
    args = derived[3]
    return (fixes.replacements_of(args[0]) if derived[1] == "visit" and len(args) == 1 else None) or {}


_OPENING, _CLOSING = frozenset("([{"), frozenset(")]}")


def _holed(node):
    """``node`` with its code left out, what holds it kept: an expression is ``_``, an
    argument or element its value (its keyword, star and comma stay); None for another node
    (a carried child, left out of its parent's code: :meth:`Translator._formatted_alike`)."""
    if isinstance(node, cst.BaseExpression):
        return cst.Name("_")
    value = getattr(node, "value", None)
    return node.with_changes(value=cst.Name("_")) if isinstance(value, cst.BaseExpression) else None


def _ends_operand(tok: str) -> bool:
    """Whether a token can end an operand (a name, a number, a string, a closing bracket):
    an operator after it is binary, and the space before that operator is the operator's."""
    return tok in (")", "]", "}") or (tok[:1].isalnum() or tok[:1] in "_'\"" or not tok.isascii()) and \
        tok not in _OPERATORS and (not keyword.iskeyword(tok) or tok in ("True", "False", "None"))


def _gaps(code: str) -> list[tuple[str, str]] | None:
    """``code``'s significant tokens, each with the text before it (from the previous one's
    end: spaces, line breaks, comments); None where it does not tokenize."""
    lines = split_lines(code, keepends=True)
    out: list[tuple[str, str]] = []
    end = (1, 0)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type in _LAYOUT:
                continue
            (r1, c1), (r2, c2) = end, tok.start
            gap = lines[r1 - 1][c1:c2] if r1 == r2 else \
                lines[r1 - 1][c1:] + "".join(lines[r1:r2 - 1]) + lines[r2 - 1][:c2]
            out.append((tok.string, gap))
            end = tok.end
    except (tokenize.TokenError, SyntaxError, IndexError):
        return None
    return out


_LAYOUT = frozenset({tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT,
                     tokenize.ENDMARKER})


class Translator:
    """Rebuilds nodes a rule made over the converted module as nodes over libcst's parse."""

    def __init__(self, twins: dict[int, cst.CSTNode], spans: dict, record: dict, parent) -> None:
        self.twins, self.spans, self.record, self.parent = twins, spans, record, parent
        self._done: dict[int, object] = {}
        self._carried: list = []  # the converted nodes the fix being moved carries or derives from
        self.exact: set[int] = set()  # nodes made from the tokens as written: their twins are alike
        self._replays: set[int] = set()  # fixes.replaced copies made again of the twin (_replayed)

    def fix(self, fix: fixes.Fix) -> fixes.Fix:
        """``fix`` with its replacements over the parsed tree (raises :class:`Unpaired`)."""
        replacements = []
        self._carried = []
        for old, new in fix.replacements:
            twin = self.twins.get(id(old))
            if twin is None:
                raise Unpaired(type(old).__name__)
            made = self.value(new)
            derived = self.record.get(id(new))
            if id(new) not in self._replays or derived[2] is not old:  # type: ignore[index]
                # (a copy of ``old`` with nodes replaced inside it is made again of the twin,
                # as the user wrote it: nothing of ``old``'s formatting goes into the fix)
                self._formatted_alike(old, operators=True, nested=1)
            replacements.append((twin, made))
        for node in self._carried:
            if type(node).__name__ in _PAIRED_FORMATTING:
                continue  # the user's, as written: nothing of a comma or a parenthesis is read but its place
            self._formatted_alike(node, operators=True, nested=1)
            parent = self.parent(node)
            if parent is not None and not isinstance(parent, node_types(*_BLOCKS)) and id(parent) in self.twins:
                self._formatted_alike(parent, operators=True, own_parens=False, nested=2, hole=node)
        return fixes.Fix(fix.applicability, fix.message, replacements, list(fix.imports))

    def _formatted_alike(self, node, operators: bool = False, own_parens: bool = True, nested: int = 0,
                         hole=None) -> None:
        """Raise :class:`Unpaired` unless the user wrote ``node`` as libcst's default formatting
        writes the converted node: a rule building the fix may have read the converted node's
        formatting (a comma, a parenthesis, a line break, a comment) where the user's twin has
        other. Asked of the replaced node, of every converted node the fix carries or derives
        from, and of that node's parent.  ``operators``: the layout next to an operator, a comma
        or just inside a bracket may differ (:func:`_alike_but_operators`): no rule reads it, the
        conversion's commas and parentheses are paired with the user's, and the fix writes the
        user's twin, not that node.  A node a
        transformer copied (its formatting written as it is) must be alike in full.
        ``own_parens``: whether the node's own parentheses count (a carried node's parent's do
        not: ``(a / (b - 1))``, where a fix replaces ``(b - 1)``, reads nothing of them).
        ``nested``: what lies inside that many brackets may differ (:func:`_alike_but_operators`).
        ``hole``: a child left out of both codes (a carried node, in its parent: compared on its own)."""
        if id(node) in self.exact:
            return
        twin = self.twins[id(node)]
        # a default comma libcst writes after it in place (asked of the node itself: the copies
        # below are in no parent); the conversion leaves one only in a match pattern (arguments,
        # elements, parameters have their own: ``ast_expressions.commas``)
        default_comma = getattr(node, "comma", None) is cst.MaybeSentinel.DEFAULT and not self._last(node)
        if hole is not None and id(hole) in self.twins:
            filled, twin_filled = _holed(hole), _holed(self.twins[id(hole)])
            if filled is not None and twin_filled is not None:
                node, twin = node.deep_replace(hole, filled), twin.deep_replace(self.twins[id(hole)], twin_filled)
        if not own_parens and getattr(twin, "lpar", None) and len(twin.lpar) != len(node.lpar):
            node, twin = node.with_changes(lpar=[], rpar=[]), twin.with_changes(lpar=[], rpar=[])
        code = code_of(empty_module(), node) + (", " if default_comma else "")
        written = code_of(empty_module(), twin)
        if written != code and not (operators and _alike_but_operators(code, written, nested)):
            raise Unpaired(f"{type(node).__name__} formatted")

    def _last(self, node) -> bool:
        """Whether ``node`` is the last of the sequence that holds it (an argument list)."""
        parent = self.parent(node)
        if parent is None:
            return True
        for name in child_fields(type(parent)):
            value = getattr(parent, name)
            if type(value) in (list, tuple) and any(v is node for v in value):
                return value[-1] is node
        return True

    def value(self, value):
        kind = type(value)
        if kind is list or kind is tuple:
            items = [self.value(v) for v in value]
            return value if all(p is q for p, q in zip(items, value)) else kind(items)
        if isinstance(value, cst.FlattenSentinel):
            return cst.FlattenSentinel([self.node(n) for n in value.nodes])
        return self.node(value) if is_node(kind) else value

    def node(self, node):
        key = id(node)
        done = self._done.get(key)
        if done is not None:
            return done
        twin = self.twins.get(key)
        if twin is not None:
            self._carried.append(node)
            return twin
        derived = self.record.get(key)
        replay = self._replayed(derived) if derived is not None and derived[1] == "visit" else None
        if replay is not None:
            made = replay
            self._replays.add(key)
        elif derived is not None and derived[1] == "visit" and (replacer := _deep_replacement(derived)) is not None:
            # ``base.deep_replace(old, new)`` (a copy of every node on the way, each noted as a visit):
            # the same replacement made in the translated base, which keeps the user's formatting
            old = replacer.old_node  # replaced: not carried into the fix
            twin = self.twins.get(id(old))
            made = _originals()["deep_replace"](self.node(derived[2]), twin if twin is not None else self.node(old),
                                                self.value(replacer.new_node))
            self._replays.add(key)
        elif derived is not None and derived[1] == "visit" and id(derived[2]) in _mapping(derived):
            made = self._rebuilt(node)  # a replacement :func:`fixes.replaced` put in: the rule's own node
        elif derived is not None and derived[1] == "visit":
            # a transformer's copy of ``base`` (its changes keyed by the converted nodes' ids, which
            # it cannot find again in the twin): as written only where the user wrote it alike
            base = derived[2]
            if id(base) in self.twins:
                self._formatted_alike(base)
            made = self._rebuilt(node)
        elif derived is not None:
            _, method, base, args, kwargs = derived
            made = _originals()[method](self.node(base), *[self.value(a) for a in args],
                                        **{k: self.value(v) for k, v in kwargs.items()})
        elif key in self.spans:
            raise Unpaired(type(node).__name__)
        else:  # a node the rule built
            made = self._rebuilt(node)
        self._done[key] = made
        return made

    def _replayed(self, derived):
        """The copy :func:`fixes.replaced` made of a converted node (a rule replacing nodes
        inside it), made again of its twin with the replaced nodes' twins: everything else as
        the user wrote it, and each replacement ``restyle``d by the twin it replaces, as when
        the fix applies. None for another transformer, for a replacement itself (the
        transformer's visit of a replaced node gives its new node), or where a node has no twin."""
        base, mapping = derived[2], _mapping(derived)
        if not mapping or id(base) in mapping or id(base) not in self.twins or any(k not in self.twins for k in mapping):
            return None
        return fixes.replaced(self.twins[id(base)], {id(self.twins[k]): self.value(v) for k, v in mapping.items()})

    def _rebuilt(self, node):
        """``node`` itself, over its children translated (formatting nodes too: a rule may
        have put a converted node in any field)."""
        return rebuilt(node, self.value, formatting=True)


class Parsed:
    """libcst's parse of a file whose rules ran on the module made of CPython's tree: where its
    nodes are (``positions``, ``parent``), and the fixes found there moved onto it
    (:meth:`fix`)."""

    def __init__(self, module: cst.Module, text: str, statements, converted: cst.Module, spans: dict,
                 record: dict, converted_parent, comments: list | None = None) -> None:
        self.module = module
        self.parent = Parents(module)  # node -> parent, made on first use (not a bound method: no cycle)
        self.positions = Positions(module, text, self.parent, statements)
        self._indent = module.default_indent == converted.default_indent
        twins = pair(converted, spans, module)
        self._translator = Translator(twins, spans, record, converted_parent)
        if comments:  # directives read from the tokens (NAN002's): their twins are libcst's, by row
            found = directives(module, self.positions)
            for row, node in comments:
                d = found.get(row)
                if d is not None:
                    twin = d.comment if isinstance(node, cst.Comment) else d.parent
                    twins[id(node)] = twin  # type: ignore[assignment]
                    self._translator.exact.add(id(node))

    def fix(self, fix: fixes.Fix) -> fixes.Fix:
        """``fix`` over this tree (raises :class:`Unpaired`; so does a file indented otherwise
        than the converted module, whose indentation a fix may have read)."""
        if not self._indent:
            raise Unpaired("indentation")
        return self._translator.fix(fix)
