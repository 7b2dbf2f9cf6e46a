"""The expressions of :mod:`nanlint.source.from_ast`: libcst's expression nodes made from
CPython's, with the parentheses operator precedence needs (CPython's tree has none), and
where each came from."""

from __future__ import annotations

import ast
import functools
import re

import libcst as cst

from nanlint.source.make import M


class Unsupported(Exception):
    """A construct :func:`nanlint.source.from_ast.convert` does not build; parse with libcst instead."""


_BINOPS = {ast.Add: "Add", ast.Sub: "Subtract", ast.Mult: "Multiply", ast.Div: "Divide",
           ast.FloorDiv: "FloorDivide", ast.Mod: "Modulo", ast.Pow: "Power", ast.LShift: "LeftShift",
           ast.RShift: "RightShift", ast.BitOr: "BitOr", ast.BitXor: "BitXor", ast.BitAnd: "BitAnd",
           ast.MatMult: "MatrixMultiply"}
_UNARY = {ast.UAdd: "Plus", ast.USub: "Minus", ast.Not: "Not", ast.Invert: "BitInvert"}
_COMPARE = {ast.Eq: "Equal", ast.NotEq: "NotEqual", ast.Lt: "LessThan", ast.LtE: "LessThanEqual",
            ast.Gt: "GreaterThan", ast.GtE: "GreaterThanEqual", ast.Is: "Is", ast.IsNot: "IsNot",
            ast.In: "In", ast.NotIn: "NotIn"}
_CONVERSIONS = {115: "s", 114: "r", 97: "a"}

# operator precedence, as CPython's own unparser orders it: a child binding looser than its
# place needs parentheses (CPython's tree has none; libcst keeps them on the node)
NAMED, TUPLE, YIELD, TEST, OR, AND, NOT, CMP, BOR, BXOR, BAND, SHIFT, ARITH, TERM, FACTOR, POWER, AWAIT, ATOM = range(1, 19)
_BINARY_PRECEDENCE = {ast.BitOr: BOR, ast.BitXor: BXOR, ast.BitAnd: BAND, ast.LShift: SHIFT, ast.RShift: SHIFT,
                      ast.Add: ARITH, ast.Sub: ARITH, ast.Mult: TERM, ast.Div: TERM, ast.FloorDiv: TERM,
                      ast.Mod: TERM, ast.MatMult: TERM, ast.Pow: POWER}
_PRECEDENCE = {ast.NamedExpr: NAMED, ast.Yield: YIELD, ast.YieldFrom: YIELD, ast.IfExp: TEST, ast.Lambda: TEST,
               ast.Compare: CMP, ast.Await: AWAIT}


_LOOSE = frozenset({ast.BinOp, ast.BoolOp, ast.UnaryOp, *_PRECEDENCE})  # what binds looser than an atom


def _precedence(node) -> int:
    kind = type(node)
    if kind is ast.BinOp:
        return _BINARY_PRECEDENCE[type(node.op)]
    if kind is ast.BoolOp:
        return AND if isinstance(node.op, ast.And) else OR
    if kind is ast.UnaryOp:
        return NOT if isinstance(node.op, ast.Not) else FACTOR
    return _PRECEDENCE.get(kind, ATOM)


# CPython's node type -> the method that builds it. Kept as plain functions, called with the
# builder: a table of bound methods in the builder would be a reference cycle, which the
# collector never frees once ``walk.building`` has frozen it (a leak per file converted).
_EXPRESSIONS = (
    (ast.Name, "name"), (ast.Attribute, "attribute"), (ast.Call, "call"), (ast.Constant, "constant"),
    (ast.BinOp, "binop"), (ast.UnaryOp, "unaryop"), (ast.BoolOp, "boolop"), (ast.Compare, "compare"),
    (ast.Subscript, "subscript"), (ast.Tuple, "tuple"), (ast.List, "list"), (ast.Set, "set"), (ast.Dict, "dict"),
    (ast.IfExp, "ifexp"), (ast.Lambda, "lambda_"), (ast.ListComp, "listcomp"), (ast.SetComp, "setcomp"),
    (ast.GeneratorExp, "genexp"), (ast.DictComp, "dictcomp"), (ast.Starred, "starred"),
    (ast.NamedExpr, "namedexpr"), (ast.Await, "await_"), (ast.Yield, "yield_"), (ast.YieldFrom, "yieldfrom"),
    (ast.JoinedStr, "joinedstr"), (ast.Slice, "slice_"),
)


_COMMENT = re.compile(rb"#[^\n]*")
_SET_COMMA = object.__setattr__  # a made node is not yet shared: its comma is set in place


@functools.lru_cache(maxsize=None)
def _space():
    """The space after a made comma, one for every comma (made on first use: importing nanlint
    loads no libcst)."""
    return M.SimpleWhitespace(" ")


def commas(items: list) -> list:
    """``items`` (arguments, elements) each with a comma of its own but the last, as libcst's
    parse gives them: ``, `` as libcst's default writes it, one node per item, which
    :func:`nanlint.fix.translate.pair` pairs with the user's (a fix that carries a comma
    writes the user's)."""
    if len(items) > 1:
        comma, space = M.Comma, _space()
        for i in range(len(items) - 1):
            _SET_COMMA(items[i], "comma", comma(whitespace_after=space))
    return items


@functools.lru_cache(maxsize=None)
def methods(cls: type, table: tuple) -> dict:
    """``{node type: cls's function of that name}`` for a table of (type, method name)."""
    return {kind: getattr(cls, name) for kind, name in table}


class Expressions:
    """Builds expressions; :class:`nanlint.source.from_ast.Converter` adds the statements."""

    def __init__(self, text: str) -> None:
        self.spans: dict[int, ast.AST] = {}  # id(made) -> the CPython node it was made from
        self._lines: list[bytes] | None = None
        self._text = text
        self._fdepth = 0  # f-strings being built, one inside another's expression
        # operators carry only formatting: one instance of each serves the whole module
        self._plain = {kind: getattr(cst, name)() for kind, name in {**_BINOPS, **_UNARY, **_COMPARE}.items()}
        self._augmented = {kind: getattr(cst, name + "Assign")() for kind, name in _BINOPS.items()}
        self._expr = methods(type(self), _EXPRESSIONS)
        # ``f(x, dim=1)``, ``def f(x=1)``: a keyword's equal sign as PEP 8 writes it (libcst's default
        # spaces it), so that a fix's code reads as the user's
        self._tight = M.AssignEqual(M.SimpleWhitespace(""), M.SimpleWhitespace(""))

    # --- bookkeeping -------------------------------------------------------------
    def at(self, made, node):
        """``made``, noted as coming from CPython's ``node``."""
        self.spans[id(made)] = node  # its position is read when asked for (from_ast.Spans)
        return made

    @property
    def lines(self) -> list[bytes]:
        """The source's lines as bytes (CPython's columns count UTF-8 bytes), split once."""
        if self._lines is None:
            self._lines = self._text.encode("utf-8", "surrogatepass").splitlines()
        return self._lines

    def between(self, line: int, col: int, end_line: int, end_col: int) -> bytes:
        """The source bytes from one CPython position to another."""
        lines = self.lines
        if line == end_line:
            return lines[line - 1][col:end_col]
        return b"\n".join([lines[line - 1][col:], *lines[line:end_line - 1], lines[end_line - 1][:end_col]])

    def segment(self, node) -> str | None:
        """The source of a one-line node (a number), from its byte columns."""
        if node.lineno != node.end_lineno:
            return None
        try:
            return self.between(node.lineno, node.col_offset, node.lineno, node.end_col_offset).decode("utf-8")
        except (IndexError, UnicodeDecodeError):
            return None

    def trailing(self, items: list, last, node) -> list:
        """``items``, the last one with the comma the user wrote after it (``f(\n    a,\n)``,
        which CPython's tree does not hold), read between its CPython node ``last`` and the end
        of ``node``, the call or display holding it: a comma of its own, which a fix's
        translation pairs with the user's."""
        if last is None or last.end_lineno == node.end_lineno and node.end_col_offset - last.end_col_offset == 1:
            return items  # ``x)``: the closing bracket only
        text = self.between(last.end_lineno, last.end_col_offset, node.end_lineno, node.end_col_offset)
        if b"," in text and b"," in _COMMENT.sub(b"", text):
            _SET_COMMA(items[-1], "comma", M.Comma())
        return items

    # --- expressions -------------------------------------------------------------
    def e(self, node):
        try:
            made = self._expr[type(node)](self, node)
        except KeyError:
            raise Unsupported(type(node).__name__) from None
        return self.at(made, node)

    def p(self, node, need: int):
        """``node`` converted, in parentheses when it binds looser than ``need`` (:meth:`e`
        inlined: every expression of a file comes through here)."""
        kind = type(node)
        try:
            made = self._expr[kind](self, node)
        except KeyError:
            raise Unsupported(kind.__name__) from None
        if kind in _LOOSE and _precedence(node) < need:  # an atom never needs parentheses
            made = made.with_changes(lpar=[M.LeftParen()], rpar=[M.RightParen()])  # (the first one is dropped)
        self.spans[id(made)] = node
        return made

    def opt(self, node, need: int = TEST):
        return None if node is None else self.p(node, need)

    def name(self, node):
        return M.Name(node.id)

    def attribute(self, node):
        value = self.p(node.value, ATOM)
        return M.Attribute(value, self.at(M.Name(node.attr), node))

    def arg(self, node):
        if isinstance(node, ast.Starred):
            return self.at(M.Arg(self.p(node.value, BOR), star="*"), node)
        return self.at(M.Arg(self.p(node, NAMED)), node)

    def keyword(self, node):
        if node.arg is None:
            return self.at(M.Arg(self.p(node.value, BOR), star="**"), node)
        return self.at(M.Arg(self.p(node.value, TEST), keyword=self.at(M.Name(node.arg), node),
                               equal=self._tight), node)

    def call(self, node):
        func = self.p(node.func, ATOM)
        if node.keywords and node.args and _after(node.args[-1], node.keywords[0]):
            parts = sorted([*node.args, *node.keywords], key=lambda a: (a.lineno, a.col_offset))
            args = [self.keyword(a) if isinstance(a, ast.keyword) else self.arg(a) for a in parts]
        else:
            parts = None
            args = [self.arg(a) for a in node.args] + [self.keyword(k) for k in node.keywords]
        if args:
            last = parts[-1] if parts else node.keywords[-1] if node.keywords else node.args[-1]
            if type(last) is ast.GeneratorExp and len(args) == 1:
                last = None  # ``f(x for x in y)``: the call's parentheses are the generator's
            self.trailing(args, last, node)
        return M.Call(func, commas(args))

    def constant(self, node):
        value = node.value
        if value is None or value is True or value is False:
            return M.Name(repr(value))
        if value is Ellipsis:
            return M.Ellipsis()
        if isinstance(value, (str, bytes)):
            if not self._fdepth:
                written = self.segment(node)
                if written is not None and _one_literal(written):
                    return M.SimpleString(written)  # as the user wrote it: its quotes, prefix, escapes
            text = repr(value)
            # inside an f-string's expression (Python < 3.12): neither its quotes nor a backslash
            if self._fdepth and (self._fdepth > 1 or text[0] == '"' or "\\" in text):
                raise Unsupported("a string inside an f-string's expression")
            return M.SimpleString(("u" if node.kind == "u" else "") + text)
        text = self.segment(node)
        if isinstance(value, bool) or not isinstance(value, (int, float, complex)):
            raise Unsupported(type(value).__name__)
        kind = cst.Imaginary if isinstance(value, complex) else cst.Float if isinstance(value, float) else cst.Integer
        try:
            return kind(text if text is not None else repr(value))
        except cst.CSTValidationError:
            return kind(repr(value))

    def binop(self, node):
        op = type(node.op)
        if op is ast.Pow:  # right-associative, and its right operand may be a unary one
            left, right = self.p(node.left, AWAIT), self.p(node.right, FACTOR)
        else:
            level = _BINARY_PRECEDENCE[op]
            left, right = self.p(node.left, level), self.p(node.right, level + 1)
        return M.BinaryOperation(left, self._plain[op], right)

    def unaryop(self, node):
        return M.UnaryOperation(self._plain[type(node.op)], self.p(node.operand, _precedence(node)))

    def boolop(self, node):
        operator = cst.And if isinstance(node.op, ast.And) else cst.Or
        level = _precedence(node)
        values = node.values
        made = self.p(values[0], level + 1)  # CPython nests an ``and`` in an ``and`` only when written in parentheses
        for i, value in enumerate(values[1:], 2):  # left-associative, as libcst reads ``a and b and c``
            made = M.BooleanOperation(made, operator(), self.p(value, level + 1))
            if i < len(values):  # an inner one; the whole is noted by the caller, in parentheses if it needs them
                self.at(made, node)
        return made

    def compare(self, node):
        targets = [M.ComparisonTarget(self._plain[type(op)], self.p(c, CMP + 1))
                   for op, c in zip(node.ops, node.comparators)]
        return M.Comparison(self.p(node.left, CMP + 1), targets)

    def slice_(self, node):
        return M.Slice(self.opt(node.lower), self.opt(node.upper), self.opt(node.step))

    def subscript(self, node):
        value = self.p(node.value, ATOM)
        index = node.slice
        split = isinstance(index, ast.Tuple) and index.elts and not parenthesized(index, self)
        parts = index.elts if split else [index]
        elements = []
        for part in parts:
            if isinstance(part, ast.Slice):
                made = self.e(part)
            elif isinstance(part, ast.Starred):
                made = self.at(M.Index(self.p(part.value, BOR), star="*"), part)
            else:
                made = self.at(M.Index(self.p(part, TEST)), part)
            elements.append(self.at(M.SubscriptElement(made), part))
        if split and len(parts) == 1:  # ``x[a,]``: a tuple of one
            del self.spans[id(elements[0])]  # dropped for its copy with the comma
            elements[0] = self.at(elements[0].with_changes(comma=M.Comma()), parts[0])
        return M.Subscript(value, commas(elements))

    def element(self, node):
        if isinstance(node, ast.Starred):
            return self.at(M.StarredElement(self.p(node.value, BOR)), node)
        return self.at(M.Element(self.p(node, TEST)), node)

    def tuple(self, node):
        elements = [self.element(e) for e in node.elts]
        # parentheses of its own (libcst's default is one pair shared by every tuple made): a fix
        # that keeps them is given the user's (``translate.pair``)
        return M.Tuple(commas(self.trailing(elements, node.elts[-1], node) if elements else elements),
                       [M.LeftParen()], [M.RightParen()])

    def list(self, node):
        elements = [self.element(e) for e in node.elts]
        return M.List(commas(self.trailing(elements, node.elts[-1], node) if elements else elements))

    def set(self, node):
        elements = [self.element(e) for e in node.elts]
        return M.Set(commas(self.trailing(elements, node.elts[-1], node) if elements else elements))

    def dict(self, node):
        elements = []
        for key, value in zip(node.keys, node.values):
            if key is None:
                elements.append(self.at(M.StarredDictElement(self.p(value, BOR)), value))
            else:
                elements.append(self.at(M.DictElement(self.p(key, TEST), self.p(value, TEST)), key))
        return M.Dict(commas(self.trailing(elements, node.values[-1], node) if elements else elements))

    def ifexp(self, node):
        return M.IfExp(self.p(node.test, TEST + 1), self.p(node.body, TEST + 1), self.p(node.orelse, TEST))

    def parameters(self, args: ast.arguments, node) -> cst.Parameters:
        positional = [*args.posonlyargs, *args.args]
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)

        def param(a, default=None, star=""):
            annotation = self.at(M.Annotation(self.p(a.annotation, TEST)), a.annotation) if a.annotation else None
            equal = self._tight if default is not None and annotation is None else cst.MaybeSentinel.DEFAULT
            return self.at(M.Param(self.at(M.Name(a.arg), a), annotation, default=self.opt(default), star=star,
                                         equal=equal), a)

        made = [param(a, d) for a, d in zip(positional, defaults)]
        posonly = made[:len(args.posonlyargs)]
        kwonly = [param(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
        star_arg = param(args.vararg, star="*") if args.vararg else M.ParamStar() if kwonly else cst.MaybeSentinel.DEFAULT
        slash = M.ParamSlash() if posonly else cst.MaybeSentinel.DEFAULT
        star_kwarg = param(args.kwarg, star="**") if args.kwarg else None
        # each item's comma but the last one's, in the order libcst writes them
        commas([p for p in (*posonly, slash, *made[len(posonly):], star_arg, *kwonly, star_kwarg)
                if p is not None and p is not cst.MaybeSentinel.DEFAULT])
        return self.at(M.Parameters(params=made[len(posonly):], star_arg=star_arg, kwonly_params=kwonly,
                                    star_kwarg=star_kwarg, posonly_params=posonly, posonly_ind=slash), node)

    def lambda_(self, node):
        return M.Lambda(self.parameters(node.args, node), self.p(node.body, TEST))

    def comp_for(self, generators):
        inner = None
        for g in reversed(generators):
            ifs = [self.at(M.CompIf(self.p(test, OR)), test) for test in g.ifs]
            made = M.CompFor(self.p(g.target, TEST), self.p(g.iter, OR), ifs, inner,
                               asynchronous=M.Asynchronous() if g.is_async else None)
            inner = self.at(made, g.target)
        return inner

    def listcomp(self, node):
        return M.ListComp(self.p(node.elt, TEST), self.comp_for(node.generators))

    def setcomp(self, node):
        return M.SetComp(self.p(node.elt, TEST), self.comp_for(node.generators))

    def genexp(self, node):
        return M.GeneratorExp(self.p(node.elt, TEST), self.comp_for(node.generators),
                              [M.LeftParen()], [M.RightParen()])  # its own, as a tuple's

    def dictcomp(self, node):
        return M.DictComp(self.p(node.key, TEST), self.p(node.value, TEST), self.comp_for(node.generators))

    def starred(self, node):
        return M.StarredElement(self.p(node.value, BOR))

    def namedexpr(self, node):
        return M.NamedExpr(self.e(node.target), self.p(node.value, TEST))

    def await_(self, node):
        return M.Await(self.p(node.value, ATOM))

    def yield_(self, node):
        return M.Yield(self.opt(node.value))

    def yieldfrom(self, node):
        return M.Yield(self.at(M.From(self.p(node.value, TEST)), node.value))

    def joinedstr(self, node):
        # an f-string inside another's expression takes other quotes (Python < 3.12 needs them)
        self._fdepth += 1
        noted = len(self.spans)
        try:
            quote = '"' if self._fdepth == 1 else "'''"
            return M.FormattedString(self.fstring_parts(node.values, quote[0]), start="f" + quote, end=quote)
        except Unsupported:
            if self._fdepth > 1:
                raise
            # quotes this Python's f-string cannot hold again: the f-string is a string of spaces,
            # as the syntax check blanks one it cannot read (nanlint.source.newer); what its
            # expressions hold is not analysed. The nodes made meanwhile are dropped, and their places.
            for made in list(self.spans)[noted:]:
                del self.spans[made]
            return M.SimpleString('" "')
        finally:
            self._fdepth -= 1

    def fstring_parts(self, values, quote: str):
        parts = []
        for v in values:
            if isinstance(v, ast.Constant):
                text = repr(str(v.value).replace("{", "{{").replace("}", "}}"))
                # repr's escapes, with the quote of the f-string escaped when repr chose the other
                text = text[1:-1] if text[0] == quote else text[1:-1].replace(quote, "\\" + quote)
                if self._fdepth > 1 and "\\" in text:  # an f-string in another's expression: no backslash
                    raise Unsupported("an escape in an f-string inside another")
                parts.append(M.FormattedStringText(text))
            elif isinstance(v, ast.FormattedValue):
                spec = self.fstring_parts(v.format_spec.values, quote) if v.format_spec is not None else None
                parts.append(self.at(M.FormattedStringExpression(
                    self.p(v.value, OR), _CONVERSIONS.get(v.conversion), spec), v))
            else:
                raise Unsupported(type(v).__name__)
        return parts


_LITERAL = re.compile(r"""[rRbBuU]{0,2}('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")""")


def _one_literal(text: str) -> bool:
    """Whether ``text`` is one single-line string literal (not ``"a" "b"``, an implicit
    concatenation CPython gives as one constant): then it is the node's code as written."""
    return _LITERAL.fullmatch(text) is not None


def _after(a, b) -> bool:
    """Whether ``a`` comes after ``b`` in the source (a positional argument after a keyword)."""
    return (a.lineno, a.col_offset) > (b.lineno, b.col_offset)


def parenthesized(node: ast.Tuple, converter: Expressions) -> bool:
    """Whether a tuple subscript was written in parentheses (``x[(a, b)]``: one index), not
    only its first element (``x[(a) & b, :]``): more ``(`` open before the first element
    than ``)`` close between it and the next."""
    first = node.elts[0]
    end = node.elts[1] if len(node.elts) > 1 else None
    before = converter.between(node.lineno, node.col_offset, first.lineno, first.col_offset)
    after = converter.between(first.end_lineno, first.end_col_offset, *((end.lineno, end.col_offset) if end is not None
                                                                         else (node.end_lineno, node.end_col_offset)))
    return before.count(b"(") > after.split(b",", 1)[0].count(b")")
