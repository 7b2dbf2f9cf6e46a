"""The semantic model of one file, read-only to rules: op calls in the canonical
vocabulary, the names and values behind them (:mod:`nanlint.semantic.reach`), parents
and positions. Reporting and fix spelling are the rule context's
(:mod:`nanlint.rules.context`, :mod:`nanlint.fix.spelling`)."""

from __future__ import annotations

import heapq
from typing import Iterator

import libcst as cst

from nanlint.source.codegen import code_of
from nanlint.source.walk import node_types
from nanlint.vocabulary import frameworks as fw_registry
from nanlint.vocabulary.ops import Fn
from nanlint.semantic import flow, handwritten, models
from nanlint.vocabulary import ops as o
from nanlint.semantic.reach import HANDWRITTEN, MODEL, Resolved, values, via_call
from nanlint.semantic.model import OpCall
from nanlint.semantic.resolve import Binding, Index, Scope
from nanlint.source.walk import Parents
from nanlint.source.positions import Positions
from nanlint.source.from_ast import Spans



# op -> libcst's operator class, by name (node_types: libcst is loaded only when a file is parsed)
_COMPARISONS = {"equal": "Equal", "not_equal": "NotEqual", "greater": "GreaterThan",
                "greater_equal": "GreaterThanEqual", "less": "LessThan", "less_equal": "LessThanEqual"}
_OPERATORS = {"add": "Add", "subtract": "Subtract", "multiply": "Multiply", "divide": "Divide"}


class FileContext:
    def __init__(self, module: cst.Module, path: str = "<string>", settings: dict | None = None,
                 rows: list[int] | None = None, text: str | None = None, tree=None,
                 spans: dict | None = None) -> None:
        self.module = module
        # a module made from CPython's tree (nanlint.source.from_ast): where each node came from
        self._spans = spans
        self._text = text  # the source ``module`` was parsed from, when the caller has it
        self._tree = tree  # CPython's tree of that source, when the caller has it (the syntax check's)
        self._parents = Parents(module, formatting=spans is None, spans=spans)  # node -> parent, made when asked
        self.path = path
        self.index = Index(module)
        self.settings = settings or {}
        self._memo: dict[str, object] = {}
        self._methods = tuple(fw for fw in fw_registry.method_frameworks()
                              if any(root in self.index.imported_roots for root in fw.roots))
        self._op_cache: dict[int, OpCall | None] = {}
        self._by_op: dict[str, list[tuple[int, OpCall]]] | None = None  # op -> (place, call), in order (calls())
        self._following_returns: set[int] = set()  # functions whose returns op_of is inside
        # a large file parsed reduced (nanlint.source.large): line in ``module`` - 1 -> line in the file
        self.rows: list[int] | None = rows

    def memo(self, key: str, compute):
        """A per-file value another module derives from this model, computed once:
        ``key`` names the asking module and its question (``"gradients.attribute_refs"``)."""
        try:
            return self._memo[key]
        except KeyError:
            value = self._memo[key] = compute()
            return value

    @property
    def converted(self) -> bool:
        """Whether the module was made from CPython's tree (:mod:`nanlint.source.from_ast`):
        its nodes hold libcst's default formatting, their places and code are the source's."""
        return self._spans is not None

    @property
    def origins(self) -> dict | None:
        """For a converted module: ``id(node) -> the CPython node it was made from``."""
        return self._spans

    @property
    def text(self) -> str:
        """The module's source: the text it was parsed from, else its code (regenerated
        once: libcst's codegen of a whole module costs as much as its parse)."""
        if self._text is None:
            self._text = self.module.code
        return self._text

    def code(self, node: cst.CSTNode) -> str:
        """``node``'s code as written (a converted module's nodes hold libcst's default
        formatting: their code is read from the source, :meth:`Spans.code`)."""
        if self.converted:
            return self.positions.code(node)  # type: ignore[union-attr]
        return code_of(self.module, node)

    def short(self, node: cst.CSTNode, width: int = 40) -> str:
        """``node``'s code on one line, cut to ``width`` characters: for naming it in a message."""
        text = " ".join(self.code(node).split())
        return text if len(text) <= width else text[:width - 3] + "..."

    # --- ops ------------------------------------------------------------------------

    def uses_framework(self) -> bool:
        return bool(self.index.imported_roots & fw_registry.roots())

    def calls(self, *ops: str) -> Iterator[OpCall]:
        """Every call in the file that computes one of ``ops`` (all ops when none given), in
        the file's order."""
        by_op = self._by_op
        if by_op is None:  # each call resolved once, then grouped: the rules ask ~40 times a file
            by_op = self._by_op = {}
            for i, (node, scope) in enumerate(self.index.calls):
                call = self.op_call(node, scope)
                if call is not None:
                    by_op.setdefault(call.op, []).append((i, call))
        if len(ops) == 1:
            groups = [by_op.get(ops[0], ())]
        else:
            groups = list(by_op.values()) if not ops else [by_op[op] for op in set(ops) if op in by_op]
        for _, call in heapq.merge(*groups):  # each group in the file's order: merged by place
            yield call

    def op_call(self, node: cst.CSTNode, scope: Scope) -> OpCall | None:
        if type(node) is not cst.Call:  # not isinstance: an ABC's miss is slow (Call has no subclass)
            return None
        key = id(node)
        if key not in self._op_cache:
            self._op_cache[key] = self._op_call(node, scope)
        return self._op_cache[key]

    def _op_call(self, node: cst.Call, scope: Scope) -> OpCall | None:
        qualname = self.index.qualname(node.func, scope)
        if qualname is not None:
            entry = fw_registry.function_table().get(qualname)
            if entry is None:
                return None
            framework, f = entry
            f, args = _overload(f, node.args)
            if args is None:
                return None
            return OpCall(f.op, framework, f, node, scope, qualname, None, args)
        func = node.func
        if not isinstance(func, cst.Attribute) or not self._methods:
            return None
        receiver = func.value
        if isinstance(receiver, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString,
                                 cst.Integer, cst.Float, cst.List, cst.Dict, cst.Tuple)):
            return None
        if self.index.qualname(receiver, scope) is not None:  # np.log, math.exp, torch.x...
            return None
        for framework in self._methods:
            f = framework.methods.get(func.attr.value)
            if f is None:
                continue
            f, args = _overload(f, node.args)
            if args is None:
                return None
            return OpCall(f.op, framework, f, node, scope, None, receiver, args)
        return None

    # --- values (nanlint.semantic.reach, nanlint.semantic.flow) ---------------------------------------------
    def reaching(self, name: cst.Name, scope: Scope) -> tuple[tuple[Binding, ...], Scope] | None:
        """The bindings of ``name`` that reach this use of it, and the scope binding it:
        ordered by :mod:`nanlint.semantic.flow` when the use is in the binding scope (or a
        comprehension/lambda inside it), else every binding of the name."""
        found = self.index.lookup(name.value, scope)
        if found is None:
            return None
        bindings, where = found
        use = scope
        while use is not where and use.kind in ("comprehension", "lambda") and use.parent is not None:
            use = use.parent
        if use is not where or where.kind == "class":
            return tuple(bindings), where
        reached = self._flow(where).reaching(name)
        if reached is None:
            return tuple(bindings), where
        return reached, where

    def same_values_at(self, use: cst.Name, expr: cst.BaseExpression, scope: Scope) -> bool:
        """Whether ``expr`` (in ``scope``, where ``use`` is a use of a name too) would read
        the same values if its code were evaluated at ``use``'s statement: no name it reads
        from ``scope`` is rebound between (:meth:`flow.ScopeFlow.same_values`)."""
        names = [n for n in _names_read(expr)]
        if not names or scope.kind not in ("function", "module"):
            return True
        return self._flow(scope).same_values(use, names)

    def _flow(self, scope: Scope) -> "flow.ScopeFlow":
        flows = self.__dict__.setdefault("_flows", {})
        got = flows.get(id(scope))
        if got is None:
            body, entry = flow.body_of(scope)
            got = flows[id(scope)] = flow.ScopeFlow(scope, body, entry)
        return got

    def call_sites(self, fscope: Scope) -> list[tuple[cst.Call, Scope]]:
        """The calls in this file of the function whose scope is ``fscope``."""
        sites = self.__dict__.setdefault("_call_sites", None)
        if sites is None:
            sites = self._call_sites = {}
            for node, scope in self.index.calls:
                if isinstance(node.func, (cst.Name, cst.Attribute)):
                    found = self.index.function(node.func, scope)
                    if found is not None:
                        sites.setdefault(id(found[1]), []).append((node, scope))
        return sites.get(id(fscope), [])

    def values(self, expr: cst.BaseExpression, scope: Scope, shape: bool = False,
               calls: bool = True) -> list[Resolved]:
        """Every value ``expr`` may take here (:func:`nanlint.semantic.reach.values`); memoized per
        expression (rules ask the same names again and again).  Do not mutate the result."""
        key = (id(expr), id(scope), shape, calls)
        memo = self.__dict__.setdefault("_values", {})
        got = memo.get(key)
        if got is None:
            got = memo[key] = (expr, values(self, expr, scope, shape=shape, calls=calls))
        return got[1]

    def resolve(self, expr: cst.BaseExpression, scope: Scope, depth: int = 4,
                functions: bool = False) -> Resolved:
        """Follow a name (or ``self.attr``) to the one value that reaches it (through
        rebinding, loops and branches, tuple unpacking); with ``functions``, also a
        call of the project's own function with a single ``return``.  When several
        values reach it, ``expr`` itself."""
        if not functions and isinstance(expr, cst.Call):
            return Resolved(expr, scope)
        found = values(self, expr, scope, depth=depth * 3, calls=functions)
        if len(found) != 1 or (not functions and via_call(found[0])):
            return Resolved(expr, scope)
        return found[0]

    def returns_of(self, call: cst.BaseExpression, scope: Scope) -> tuple[Scope, list[cst.Return]] | None:
        """For a call of the module's own function (``inference(x)``, ``self.model(x)``):
        the function's scope and its ``return`` statements, when every one returns a value."""
        if not isinstance(call, cst.Call):
            return None
        found = self.index.function(call.func, scope)
        if found is None:
            return None
        binding, fscope = found
        for d in binding.node.decorators:  # type: ignore[attr-defined]
            target = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
            qual = self.index.qualname(target, scope)  # @tf.function, @jax.jit keep the result
            if qual is None or qual.split(".")[0] not in fw_registry.roots():
                return None
        if not fscope.returns or any(r.value is None for r in fscope.returns):
            return None
        return fscope, list(fscope.returns)

    def op_of(self, expr: cst.BaseExpression | None, scope: Scope, *ops: str,
              follow: bool = True) -> tuple[OpCall, Resolved] | None:
        """The op call ``expr`` computes, if it is one of ``ops``: with ``follow``, every
        value reaching ``expr`` (:meth:`values`, through layout ops too) must be one."""
        if expr is None:
            return None
        first = None
        for r in self.values(expr, scope, shape=True) if follow else [Resolved(expr, scope)]:
            owner = r.ctx or self
            call = owner.op_call(r.expr, r.scope)
            if call is None and ops and (o.SIGMOID in ops or o.SOFTMAX in ops):  # 1 / (1 + exp(-z))
                made = handwritten.activation(owner, r.expr, r.scope, ops)
                if made is not None:
                    op, exp, node, logits = made
                    call = OpCall(op, exp.framework, exp.fn, node, r.scope, None, None, {"x": cst.Arg(logits)})
                    if op == o.SOFTMAX:  # its axis is in the sum: no in-place rewrite
                        r = Resolved(r.expr, r.scope, r.origins, r.via | {HANDWRITTEN}, r.ctx)
            if call is not None and call.op in models.LAYERS:  # a layer stands for its output
                act = models.activation(owner, call)
                call = None if act is None else OpCall(act, call.framework, call.fn, call.node, call.scope,
                                                       call.qualname, None, {})
                r = Resolved(r.expr, r.scope, r.origins, r.via | {MODEL}, r.ctx)
            if call is None or (ops and call.op not in ops):
                return None
            if first is None:
                first = (call, r)
        return first

    def arithmetic(self, expr: cst.BaseExpression, scope: Scope) -> cst.BaseExpression:
        """``expr`` with an arithmetic op written as a function or method (``torch.add(a, b)``,
        ``a.sub(b)``, ``tf.math.divide(a, b)``) as its operator (a new node over the same
        operands, for reading only); anything else as it is."""
        call = self.op_call(expr, scope) if isinstance(expr, cst.Call) else None
        if call is None or call.op not in _OPERATORS or call.x is None or not call.has("y"):
            return expr
        if any(a.keyword is not None and a.keyword.value in ("alpha", "rounding_mode") for a in call.node.args):
            return expr  # torch.add(a, b, alpha=2), div(..., rounding_mode=...): not the operator
        return cst.BinaryOperation(call.x, node_types(_OPERATORS[call.op])[0](), call.value("y"))  # type: ignore[arg-type]

    def condition(self, expr: cst.BaseExpression, scope: Scope) -> cst.BaseExpression:
        """A condition written with framework functions or methods (``tf.not_equal(x, 0.)``,
        ``x.gt(0)``, ``jnp.logical_and(a, b)``) as the operators it computes (a new node
        over the same operands, for reading only); anything else as it is."""
        call = self.op_call(expr, scope) if isinstance(expr, cst.Call) else None
        if call is None or call.x is None:
            return expr
        if call.op in _COMPARISONS and call.has("y"):
            return cst.Comparison(call.x, [cst.ComparisonTarget(node_types(_COMPARISONS[call.op])[0](), call.value("y"))])  # type: ignore[arg-type]
        if call.op in ("logical_and", "logical_or") and call.has("y"):
            operator = cst.BitAnd() if call.op == "logical_and" else cst.BitOr()
            return cst.BinaryOperation(call.x, operator, call.value("y"))  # type: ignore[arg-type]
        if call.op == "logical_not":
            return cst.UnaryOperation(cst.BitInvert(), call.x)
        return expr

    def line_of(self, node: cst.CSTNode) -> int:
        return self.positions[node].start.line

    def file_line(self, node: cst.CSTNode) -> int:
        """``node``'s line in the user's file, for messages: :meth:`line_of` mapped back
        through ``rows`` when only part of a large file was parsed."""
        line = self.line_of(node)
        return self.rows[line - 1] if self.rows is not None else line

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The node directly containing ``node`` (computed once per file, on first use)."""
        return self._parents(node)

    @property
    def positions(self) -> Positions | Spans:
        """``node -> CodeRange``, computed for the statement of the node asked about
        (:mod:`nanlint.source.positions`), not for the whole module."""
        pos = getattr(self, "_positions", None)
        if pos is None and self._spans is not None:
            pos = self._positions = Spans(self._spans, self._parents, self.text)
        if pos is None:
            pos = self._positions = Positions(self.module, self.text, self._parents,
                                              self._tree.body if self._tree is not None else None)
        return pos


def _overload(f: Fn, args) -> tuple[Fn, dict[str, cst.Arg] | None]:
    """The callable a call of ``f`` is, and its arguments by role: ``f.elementwise`` when
    what binds as the axis is a tensor (a float, a call, arithmetic of those: not an int,
    a name or an index, which may hold a dimension), or when only it fits the call."""
    bound = _bind_args(f, args)
    if f.choices is not None:
        return _chosen(f, bound, args)
    if f.elementwise is None:
        return f, bound
    axis = bound.get("axis") if bound is not None else None
    if bound is None or axis is not None and axis.keyword is None and _tensor_like(axis.value):
        other = _bind_args(f.elementwise, args)
        if other is not None:
            return f.elementwise, other
    return f, bound


def _chosen(f: Fn, bound: dict[str, cst.Arg] | None, args) -> tuple[Fn, dict[str, cst.Arg] | None]:
    """The choice a string literal makes (``reduce(x, 'b n d -> b n', 'sum')``: a sum),
    with its arguments by role; ``f`` itself (an op no rule asks about) for any other value."""
    role, table = f.choices  # type: ignore[misc]
    given = bound.get(role) if bound is not None else None
    if given is not None and isinstance(given.value, cst.SimpleString):
        chosen = dict(table).get(given.value.evaluated_value)  # type: ignore[arg-type]
        if chosen is not None:
            return chosen, _bind_args(chosen, args)
    return f, bound


_INT_CALLS = frozenset({"int", "len", "dim", "size", "numel", "ndimension", "index", "item"})


def _tensor_like(expr: cst.BaseExpression) -> bool:
    """A float, or a call or arithmetic holding one or a call that returns no int."""
    if isinstance(expr, cst.UnaryOperation):
        return _tensor_like(expr.expression)
    if isinstance(expr, cst.BinaryOperation):
        return _tensor_like(expr.left) or _tensor_like(expr.right)
    if isinstance(expr, cst.Call):
        name = expr.func.value if isinstance(expr.func, cst.Name) else \
            expr.func.attr.value if isinstance(expr.func, cst.Attribute) else None
        return name not in _INT_CALLS
    return isinstance(expr, cst.Float)


def _bind_args(f: Fn, args) -> dict[str, cst.Arg] | None:
    """Map roles to arguments; None when the call does not fit the signature."""
    out: dict[str, cst.Arg] = {}
    positional = 0
    for a in args:
        if a.star:  # *args / **kwargs: roles unknown
            continue
        if a.keyword is None:
            if positional >= len(f.params):
                if f.varargs:
                    positional += 1
                    continue
                return None
            role = f.params[positional][1]
            positional += 1
        else:
            role = f.role_of_keyword(a.keyword.value)
            if role is False:
                if f.varargs:
                    continue
                return None
        if role is not None:
            out[role] = a
    return out


def _names_read(expr: cst.CSTNode) -> Iterator[cst.Name]:
    """The names ``expr`` reads in its own scope (not inside a lambda or comprehension,
    not an attribute's or keyword's name)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name):
            yield node
        elif isinstance(node, (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
            continue
        elif isinstance(node, cst.Attribute):
            stack.append(node.value)
        elif isinstance(node, cst.Arg):
            stack.append(node.value)
        else:
            stack.extend(node.children)
