"""libcst's nodes made from CPython's tree, without libcst's parser.

Detection reads libcst's node types, but it reads no whitespace, comment or parenthesis
of them: those are the concrete syntax a *fix* must keep.  libcst's parser costs about
five times CPython's, and CPython's tree of every file is there already (the syntax
check's).  :func:`convert` builds the same statements and expressions from that tree,
with libcst's default formatting, at a fraction of the parse, so that a file's rules can
run before (and, when they find nothing, instead of) libcst's parse.  The engine parses
with libcst only a file where that run finds something (``nanlint.lint.engine``): the
findings, messages and fixes a user sees always come from the user's own concrete tree.

What differs from libcst's parse of the same text is formatting alone: no comments, no
blank lines, no parentheses but those precedence needs, default whitespace (every comma but a
sequence's last is a node of its own, as libcst's parse has it, which a fix's translation
pairs with the user's: :func:`nanlint.fix.translate.pair`); a string is its value's ``repr`` (an
implicit concatenation is one string); every small statement is a line of its own; ``else:
if`` is read as ``elif``.  Where each node came from is kept (:class:`Spans`): a node's
lines are the file's, its columns CPython's (UTF-8 bytes), which order and place nodes
within the file as libcst's would.  Syntax it does not build (PEP 695, a string inside an
f-string's expression that would need the f-string's own quotes) raises
:class:`Unsupported`, and the caller parses with libcst as before.
"""

from __future__ import annotations

import ast

import libcst as cst

from nanlint.source.ast_expressions import ATOM, NAMED, TEST, YIELD, Expressions, Unsupported, commas, methods
from nanlint.source import noqa, quoting
from nanlint.source.codegen import _ranges, code_of
from nanlint.source.make import M
from nanlint.source.walk import building, is_node, rebuilt

__all__ = ["Unsupported", "Spans", "convert"]


_UNREAD = object()  # Spans.chars: the caller has not read where the tokens start


def _span(node: ast.AST) -> tuple[int, int, int, int]:
    return node.lineno, node.col_offset, node.end_lineno, node.end_col_offset  # type: ignore[attr-defined, return-value]


class _At:
    """Where a node made from the tokens is (a comment): as CPython's nodes say it."""

    __slots__ = ("lineno", "col_offset", "end_lineno", "end_col_offset")

    def __init__(self, row: int, start: int, end: int) -> None:
        self.lineno = self.end_lineno = row
        self.col_offset, self.end_col_offset = start, end


class Spans:
    """``node -> CodeRange`` for a converted module: the span of the CPython node each
    libcst node was made from (lines 1-based, columns 0-based UTF-8 bytes, as CPython's);
    a node made without one (an operator, a block) takes its nearest ancestor's.
    ``chars`` and ``code`` answer as libcst's parse of ``text`` would: a node's place in
    characters, and its code as written (:mod:`nanlint.source.quoting`)."""

    def __init__(self, spans: dict[int, ast.AST], parent, text: str | None = None) -> None:
        self._spans = spans
        self._parent = parent
        self._made: dict[int, object] = {}
        self._source = text
        self._text: quoting.Text | None = None
        # (row, node) of the nodes made from the tokens (directives()), which libcst's parse pairs by row
        self.comments: list[tuple[int, object]] = []
        self._directives: dict | None = None

    def _find(self, node) -> tuple[int, int, int, int] | None:
        n = node
        while n is not None:
            made_from = self._spans.get(id(n))
            if made_from is not None:
                return _span(made_from)
            n = self._parent(n)
        return None

    def __getitem__(self, node):
        made = self._made.get(id(node))
        if made is None:
            span = self._find(node)
            if span is None:
                raise KeyError(node)
            position, code_range = _ranges()
            made = self._made[id(node)] = code_range(position(span[0], span[1]), position(span[2], span[3]))
        return made

    # --- as the user wrote it --------------------------------------------------------
    @property
    def text(self) -> quoting.Text:
        if self._text is None:
            if self._source is None:
                raise ValueError("Spans made without the source text")
            self._text = quoting.Text(self._source)
        return self._text

    def chars(self, node, first=_UNREAD) -> tuple[tuple[int, int], tuple[int, int]]:
        """``node``'s start and end as (line, character column), libcst's syntactic
        position: without the node's own parentheses, which CPython gives a generator
        expression (or a call's, to its only argument), and with those of a positional
        argument's value, which libcst's argument holds.  ``first``: its
        :meth:`_tokens_from`, when the caller has it."""
        span = self._find(node)
        if span is None:
            raise KeyError(node)
        text = self.text
        start, end = (span[0], text.column(span[0], span[1])), (span[2], text.column(span[2], span[3]))
        positional = isinstance(node, cst.Arg) and node.keyword is None and not node.star
        if isinstance(node, cst.GeneratorExp) or positional and isinstance(node.value, cst.GeneratorExp) \
                and self._sole_argument(node.value):
            first = self._tokens_from(node) if first is _UNREAD else first
            if first is not None:
                start, end = text.inside_parens(start, end, first)
        elif isinstance(node, cst.Tuple) and node.lpar:  # CPython's span holds its parentheses
            first = self._tokens_from(node) if first is _UNREAD else first
            if first is not None and text.line(start[0])[start[1]:start[1] + 1] == "(":
                start, end = text.inside_parens(start, end, first)
        elif positional and hasattr(node.value, "lpar"):
            first = self._tokens_from(node) if first is _UNREAD else first
            if first is not None:
                start, end = text.own_parens(start, end, first, self._sole_argument(node.value))
        return start, end

    def code(self, node) -> str:
        """``node``'s code as libcst's ``code_for_node`` gives it in libcst's parse of the
        source: as written, with its own parentheses, continuation lines less the block's
        indentation."""
        if id(node) not in self._spans:  # a node a rule made, or one CPython has none for
            # libcst's default formatting, with the code of each node it holds from the source as written
            try:
                return code_of(cst.Module([]), self._verbatim(node))
            except cst.CSTValidationError:  # a stand-in the node's own checks refuse: as it is
                return code_of(cst.Module([]), node)
        first = self._tokens_from(node)
        start, end = self.chars(node, first)
        text = self.text
        if isinstance(node, cst.Name) and text.between(start, end) != node.value:
            return node.value  # an attribute's, a def's, a keyword's name: it has its parent's span
        if first is None:  # in an f-string: as written, no more
            return text.between(start, end)
        if isinstance(node, cst.Arg):  # an argument's code runs through its comma, to the next token
            end = text.next_token(end, first)
        elif hasattr(node, "lpar") and not self._a_name_only(node):
            start, end = text.own_parens(start, end, first, self._sole_argument(node))
        return text.code(start, end, text.indent(first[0]), first)

    def _verbatim(self, node):
        """``node`` (one a rule made) with each node under it that came from the source standing
        for its code as written (a name whose value is that code: libcst writes it as it is),
        as libcst's code of the same node made over its parse would read. A node that carries
        its own comma (an argument) is rebuilt, not replaced: its holder writes the comma."""
        return rebuilt(node, self._stand_in)

    def _stand_in(self, node):
        if not is_node(type(node)):
            return node
        if id(node) in self._spans and not hasattr(node, "comma") and self._tokens_from(node) is not None:
            return _written(self.code(node))
        return self._verbatim(node)

    def directives(self) -> dict:
        """Row -> the ``# noqa`` directive on it (:func:`nanlint.source.noqa.from_tokens`): its
        comment and line are nodes made from the tokens, placed here (``comments``)."""
        if self._directives is None:
            self._directives = noqa.from_tokens(self._source, self.text.line, self._place)  # type: ignore[arg-type]
        return self._directives

    def _place(self, node, row: int, start: int, end: int) -> None:
        line = self.text.line(row)
        self._spans[id(node)] = _At(row, *(len(line[:c].encode("utf-8", "surrogatepass")) for c in (start, end)))
        self.comments.append((row, node))

    def comment_on(self, node) -> tuple[bool, str | None]:
        """(known, the comment on the line ``node`` starts on): read from the tokens of the
        statement holding it (a converted module holds no comment); not known inside an
        f-string."""
        first = self._tokens_from(node)
        if first is None:
            return False, None
        return True, self.text.comment(self.chars(node, first)[0][0], first)

    def _a_name_only(self, node) -> bool:
        """A name written between its parent's parentheses, never its own: a parameter's
        (``def f(self)``), an import's (``from m import (a)``)."""
        parent = self._parent(node)
        return isinstance(parent, cst.ImportAlias) or isinstance(parent, cst.Param) and parent.name is node

    def _tokens_from(self, node) -> tuple[int, int] | None:
        """Where the tokens around ``node`` can be read from (line, character column): the
        start of the statement holding it (a small one, or a compound one's header), or of
        the decorator it is in (a ``def``'s span begins after its decorators); None inside
        an f-string (one token to CPython's tokenizer before 3.12) or outside statements."""
        n = node
        while n is not None:
            if isinstance(n, cst.FormattedString) and n is not node:
                return None
            if isinstance(n, (cst.BaseSmallStatement, cst.BaseCompoundStatement, cst.Decorator)):
                made_from = self._spans.get(id(n))
                return None if made_from is None else \
                    (made_from.lineno, self.text.column(made_from.lineno, made_from.col_offset))
            n = self._parent(n)
        return None

    def _sole_argument(self, node) -> bool:
        """Whether ``node`` is written right inside its parent's parentheses: the only
        argument of a call, the only base of a class."""
        arg = self._parent(node)
        if not isinstance(arg, cst.Arg) or arg.keyword is not None or arg.star:
            return False
        owner = self._parent(arg)
        if isinstance(owner, cst.Call):
            return len(owner.args) == 1
        if isinstance(owner, cst.ClassDef):
            return len(owner.bases) + len(owner.keywords) == 1
        return False


def _written(code: str):
    """A name whose value is ``code``: libcst writes it as it is (made without the name check)."""
    made = object.__new__(cst.Name)
    for field, value in (("value", code), ("lpar", ()), ("rpar", ())):
        object.__setattr__(made, field, value)
    return made


# CPython's statement type -> the Converter method that builds it (plain functions: see
# ast_expressions._EXPRESSIONS)
_STATEMENTS = (
    (ast.Expr, "expr_stmt"), (ast.Assign, "assign"), (ast.AugAssign, "augassign"), (ast.AnnAssign, "annassign"),
    (ast.Return, "return_"), (ast.Pass, "pass_"), (ast.Break, "break_"), (ast.Continue, "continue_"),
    (ast.Delete, "delete"), (ast.Global, "global_"), (ast.Nonlocal, "nonlocal_"), (ast.Import, "import_"),
    (ast.ImportFrom, "importfrom"), (ast.Raise, "raise_"), (ast.Assert, "assert_"),
    (ast.FunctionDef, "functiondef"), (ast.AsyncFunctionDef, "functiondef"), (ast.ClassDef, "classdef"),
    (ast.If, "if_"), (ast.For, "for_"), (ast.AsyncFor, "for_"), (ast.While, "while_"), (ast.With, "with_"),
    (ast.AsyncWith, "with_"), (ast.Try, "try_"),
    *(((ast.TryStar, "try_"),) if hasattr(ast, "TryStar") else ()),
    *(((ast.Match, "match"),) if hasattr(ast, "Match") else ()),
    *(((ast.TypeAlias, "pass_"),) if hasattr(ast, "TypeAlias") else ()),
)


class Converter(Expressions):
    """Builds the statements, and the module."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self._stmt = methods(type(self), _STATEMENTS)

    # --- statements --------------------------------------------------------------
    def s(self, node):
        """A statement: a compound one, or a small one on a line of its own."""
        try:
            made = self._stmt[type(node)](self, node)
        except KeyError:
            raise Unsupported(type(node).__name__) from None
        self.at(made, node)
        if isinstance(made, cst.BaseSmallStatement):
            made = self.at(M.SimpleStatementLine([made]), node)
        return made

    def block(self, body):
        return M.IndentedBlock([self.s(st) for st in body])

    def pass_(self, node):
        return M.Pass()

    def break_(self, node):
        return M.Break()

    def continue_(self, node):
        return M.Continue()

    def expr_stmt(self, node):
        return M.Expr(self.p(node.value, YIELD))

    def assign(self, node):
        return M.Assign([self.at(M.AssignTarget(self.p(t, TEST)), t)
                           for t in node.targets], self.p(node.value, YIELD))

    def augassign(self, node):
        return M.AugAssign(self.e(node.target), self._augmented[type(node.op)], self.p(node.value, YIELD))

    def annassign(self, node):
        return M.AnnAssign(self.e(node.target), self.at(M.Annotation(self.p(node.annotation, TEST)), node.annotation),
                             self.opt(node.value, YIELD))

    def return_(self, node):
        return M.Return(self.opt(node.value))

    def delete(self, node):
        targets = node.targets
        target = self.e(targets[0]) if len(targets) == 1 else \
            M.Tuple(commas([self.at(M.Element(self.e(t)), t) for t in targets]), lpar=[], rpar=[])
        return M.Del(target)

    def global_(self, node):
        return M.Global(commas([M.NameItem(M.Name(n)) for n in node.names]))

    def nonlocal_(self, node):
        return M.Nonlocal(commas([M.NameItem(M.Name(n)) for n in node.names]))

    @staticmethod
    def dotted(name: str):
        parts = name.split(".")
        made = M.Name(parts[0])
        for part in parts[1:]:
            made = M.Attribute(made, M.Name(part))
        return made

    def alias(self, a):
        asname = M.AsName(M.Name(a.asname)) if a.asname else None
        return self.at(M.ImportAlias(self.dotted(a.name), asname), a)

    def import_(self, node):
        return M.Import(commas([self.alias(a) for a in node.names]))

    def importfrom(self, node):
        module = self.dotted(node.module) if node.module else None
        if len(node.names) == 1 and node.names[0].name == "*":
            names = M.ImportStar()
        else:
            names = commas([self.alias(a) for a in node.names])
        return M.ImportFrom(module, names, relative=[M.Dot()] * (node.level or 0))

    def raise_(self, node):
        cause = self.at(M.From(self.p(node.cause, TEST)), node.cause) if node.cause is not None else None
        return M.Raise(self.opt(node.exc), cause)

    def assert_(self, node):
        return M.Assert(self.p(node.test, TEST), self.opt(node.msg))

    def decorators(self, node):
        return [self.at(M.Decorator(self.p(d, NAMED)), d) for d in node.decorator_list]

    # Type parameters (``def f[T]``, PEP 695, CPython 3.12) are left out, and a ``type`` statement
    # is a ``pass``: what the syntax check blanks on an older CPython (nanlint.source.newer);
    # an annotation holds no hazard.
    def functiondef(self, node):
        returns = self.at(M.Annotation(self.p(node.returns, TEST)), node.returns) if node.returns else None
        return M.FunctionDef(self.at(M.Name(node.name), node), self.parameters(node.args, node),
                               self.block(node.body), self.decorators(node), returns,
                               asynchronous=M.Asynchronous() if isinstance(node, ast.AsyncFunctionDef) else None)

    def classdef(self, node):
        return M.ClassDef(self.at(M.Name(node.name), node), self.block(node.body),
                            [self.arg(b) for b in node.bases], [self.keyword(k) for k in node.keywords],
                            self.decorators(node))

    def orelse(self, node, body):
        if not body:
            return None
        return self.at(M.Else(self.block(body)), body[0])

    def if_(self, node):
        orelse = node.orelse
        if len(orelse) == 1 and isinstance(orelse[0], ast.If) and self._elif(orelse[0]):
            other = self.at(self.if_(orelse[0]), orelse[0])
        else:
            other = self.orelse(node, orelse)
        return M.If(self.p(node.test, NAMED), self.block(node.body), other)

    def _elif(self, node) -> bool:
        """Whether an ``if`` alone in an ``else`` was written ``elif`` (its line starts so)."""
        try:
            return self.between(node.lineno, node.col_offset, node.lineno, node.col_offset + 4) == b"elif"
        except IndexError:
            return False

    def for_(self, node):
        return M.For(self.p(node.target, TEST), self.p(node.iter, TEST), self.block(node.body), self.orelse(node, node.orelse),
                       asynchronous=M.Asynchronous() if isinstance(node, ast.AsyncFor) else None)

    def while_(self, node):
        return M.While(self.p(node.test, NAMED), self.block(node.body), self.orelse(node, node.orelse))

    def with_(self, node):
        items = []
        for item in node.items:
            asname = self.at(M.AsName(self.e(item.optional_vars)), item.optional_vars) \
                if item.optional_vars is not None else None
            items.append(self.at(M.WithItem(self.p(item.context_expr, TEST), asname), item.context_expr))
        return M.With(commas(items), self.block(node.body),
                        asynchronous=M.Asynchronous() if isinstance(node, ast.AsyncWith) else None)

    def try_(self, node):
        star = hasattr(ast, "TryStar") and isinstance(node, ast.TryStar)
        handler = cst.ExceptStarHandler if star else cst.ExceptHandler
        handlers = []
        for h in node.handlers:
            name = M.AsName(M.Name(h.name)) if h.name else None
            handlers.append(self.at(handler(self.block(h.body), self.opt(h.type), name), h))
        final = self.at(M.Finally(self.block(node.finalbody)), node.finalbody[0]) if node.finalbody else None
        kind = cst.TryStar if star else cst.Try
        return kind(self.block(node.body), handlers, self.orelse(node, node.orelse), final)

    def match(self, node):
        space, none = M.SimpleWhitespace(" "), M.SimpleWhitespace("")
        cases = [self.at(M.MatchCase(self.pattern(c.pattern), self.block(c.body), self.opt(c.guard, NAMED),
                                       whitespace_after_case=space, whitespace_before_if=space,
                                       whitespace_after_if=space, whitespace_before_colon=none), c.pattern)
                 for c in node.cases]
        return M.Match(self.p(node.subject, NAMED), cases)

    def pattern(self, node):
        kind = type(node)
        if kind is ast.MatchValue:
            made = M.MatchValue(self.e(node.value))
        elif kind is ast.MatchSingleton:
            made = M.MatchSingleton(M.Name(repr(node.value)))
        elif kind is ast.MatchSequence:
            elements = [self.pattern(p) if isinstance(p, ast.MatchStar) else
                        self.at(M.MatchSequenceElement(self.pattern(p)), p) for p in node.patterns]
            opening = self.between(node.lineno, node.col_offset, node.lineno, node.col_offset + 1)
            made = M.MatchList(elements, M.LeftSquareBracket(), M.RightSquareBracket()) if opening == b"[" \
                else M.MatchTuple(elements)
        elif kind is ast.MatchStar:
            made = M.MatchStar(M.Name(node.name) if node.name else None)
        elif kind is ast.MatchMapping:
            elements = [M.MatchMappingElement(self.p(k, ATOM), self.pattern(p)) for k, p in zip(node.keys, node.patterns)]
            made = M.MatchMapping(elements, rest=M.Name(node.rest) if node.rest else None)
        elif kind is ast.MatchClass:
            made = M.MatchClass(self.p(node.cls, ATOM), [M.MatchSequenceElement(self.pattern(p)) for p in node.patterns],
                                  [M.MatchKeywordElement(M.Name(k), self.pattern(p))
                                   for k, p in zip(node.kwd_attrs, node.kwd_patterns)])
        elif kind is ast.MatchAs:
            inner = self.pattern(node.pattern) if node.pattern is not None else None
            if inner is not None and isinstance(node.pattern, (ast.MatchAs, ast.MatchOr)):
                del self.spans[id(inner)]  # dropped for its copy in parentheses
                inner = inner.with_changes(lpar=[M.LeftParen()], rpar=[M.RightParen()])
            made = M.MatchAs(inner, M.Name(node.name) if node.name else None)
        elif kind is ast.MatchOr:
            made = M.MatchOr([M.MatchOrElement(self.pattern(p)) for p in node.patterns])
        else:
            raise Unsupported(kind.__name__)
        return self.at(made, node)

    def module(self, tree: ast.Module) -> cst.Module:
        indent = self.default_indent(tree)
        body = [self.s(st) for st in tree.body]
        return M.Module(body, default_indent=indent) if indent is not None else M.Module(body)

    def default_indent(self, tree: ast.Module) -> str | None:
        """The indentation of the file's first indented block, as libcst's parse finds it (a
        fix may lay code out by it); None when there is none (libcst's default, four spaces)."""
        for st in tree.body:
            body = getattr(st, "body", None)
            if type(body) is not list or not body:
                continue
            first = body[0]
            decorators = getattr(first, "decorator_list", ())
            line = decorators[0].lineno if decorators else first.lineno
            text = self.lines[line - 1] if line > st.lineno else b""
            width = len(text) - len(text.lstrip(b" \t"))
            if width and (decorators or width == first.col_offset):  # the block's first line, not a suite's
                return text[:width].decode("ascii", "replace")
        return None


def convert(tree: ast.Module, text: str) -> tuple[cst.Module, dict[int, ast.AST]]:
    """libcst's module for CPython's ``tree`` of ``text``, and where each node came from
    (``id(node) -> the CPython node``, whose position :class:`Spans` reads).  Raises
    :class:`Unsupported` for syntax it does not build, and ``RecursionError`` for nesting
    deeper than the interpreter's stack."""
    converter = Converter(text)
    with building():
        return converter.module(tree), converter.spans
