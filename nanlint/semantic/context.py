"""What a rule sees of one file: op calls in the canonical vocabulary, the names
behind them, fix spellings in the file's own aliases, and ``report``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

import libcst as cst

from nanlint.vocabulary import frameworks as fw_registry
from nanlint.fix import fixes
from nanlint.vocabulary.ops import Fn, Framework
from nanlint.semantic import flow, handwritten, models
from nanlint.vocabulary import ops as o
from nanlint.semantic.reach import HANDWRITTEN, MODEL, Origin, Resolved, origin_note, values, via_call  # noqa: F401 - re-exported for rules
from nanlint.semantic.resolve import Binding, Index, Scope

if TYPE_CHECKING:  # pragma: no cover
    from nanlint.rules.base import Rule


@dataclass(eq=False)
class OpCall:
    """A call of a framework op: ``tf.math.log(p)``, ``F.softmax(z, dim=1)`` or ``x.softmax(-1)``."""

    op: str
    framework: Framework
    fn: Fn
    node: cst.Call
    scope: Scope
    qualname: str | None  # None for tensor methods
    receiver: cst.BaseExpression | None  # the tensor of a method call (role x)
    args: dict[str, cst.Arg]  # role -> the Arg that supplies it (not for the receiver)

    @property
    def is_method(self) -> bool:
        return self.receiver is not None

    def value(self, role: str) -> cst.BaseExpression | None:
        if role == "x" and self.receiver is not None:
            return self.receiver
        a = self.args.get(role)
        return a.value if a is not None else None

    @property
    def x(self) -> cst.BaseExpression | None:
        return self.value("x")

    def has(self, role: str) -> bool:
        return self.value(role) is not None


@dataclass(eq=False)
class RawFinding:
    rule: "Rule"
    node: cst.CSTNode
    message: str
    fix: fixes.Fix | None = None
    code: str = ""
    name: str = ""


_COMPARISONS = {"equal": cst.Equal, "not_equal": cst.NotEqual, "greater": cst.GreaterThan,
                "greater_equal": cst.GreaterThanEqual, "less": cst.LessThan, "less_equal": cst.LessThanEqual}
_OPERATORS = {"add": cst.Add, "subtract": cst.Subtract, "multiply": cst.Multiply, "divide": cst.Divide}


class FileContext:
    def __init__(self, module: cst.Module, path: str = "<string>", settings: dict | None = None) -> None:
        self.module = module
        self.path = path
        self.index = Index(module)
        self.settings = settings or {}
        self.findings: list[RawFinding] = []
        self._rule: "Rule | None" = None
        self._methods = tuple(fw for fw in fw_registry.method_frameworks()
                              if any(root in self.index.imported_roots for root in fw.roots))
        self._op_cache: dict[int, OpCall | None] = {}
        self._following_returns: set[int] = set()  # functions whose returns op_of is inside
        # a large file parsed reduced (nanlint.source.large): line in ``module`` - 1 -> line in the file
        self.rows: list[int] | None = None

    # --- reporting --------------------------------------------------------------
    def report(self, node: cst.CSTNode, message: str, fix: fixes.Fix | None = None,
               rule: "Rule | None" = None) -> None:
        rule = rule or self._rule
        assert rule is not None
        self.findings.append(RawFinding(rule, node, message, fix, rule.code, rule.name))

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    # --- ops ------------------------------------------------------------------------
    def uses_framework(self) -> bool:
        return bool(self.index.imported_roots & fw_registry.roots())

    def calls(self, *ops: str) -> Iterator[OpCall]:
        """Every call in the file that computes one of ``ops`` (all ops when none given)."""
        for node, scope in self.index.calls:
            call = self.op_call(node, scope)
            if call is not None and (not ops or call.op in ops):
                yield call

    def op_call(self, node: cst.CSTNode, scope: Scope) -> OpCall | None:
        if not isinstance(node, cst.Call):
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
            args = _bind_args(f, node.args)
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
            args = _bind_args(f, node.args)
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
        return cst.BinaryOperation(call.x, _OPERATORS[call.op](), call.value("y"))  # type: ignore[arg-type]

    def condition(self, expr: cst.BaseExpression, scope: Scope) -> cst.BaseExpression:
        """A condition written with framework functions or methods (``tf.not_equal(x, 0.)``,
        ``x.gt(0)``, ``jnp.logical_and(a, b)``) as the operators it computes (a new node
        over the same operands, for reading only); anything else as it is."""
        call = self.op_call(expr, scope) if isinstance(expr, cst.Call) else None
        if call is None or call.x is None:
            return expr
        if call.op in _COMPARISONS and call.has("y"):
            return cst.Comparison(call.x, [cst.ComparisonTarget(_COMPARISONS[call.op](), call.value("y"))])  # type: ignore[arg-type]
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
        parents = getattr(self, "_parents", None)
        if parents is None:
            from nanlint.source.walk import parents as parent_map  # ~10x faster than a libcst visit

            parents = self._parents = parent_map(self.module)
        return parents.get(id(node))

    @property
    def positions(self):
        pos = getattr(self, "_positions", None)
        if pos is None:
            from nanlint.source.walk import positions  # PositionProvider without MetadataWrapper's extra visit

            pos = self._positions = positions(self.module)
        return pos

    # --- fix spelling -------------------------------------------------------------------
    def spell(self, framework: Framework, op: str, scope: Scope,
              prefer: tuple[cst.CSTNode, ...] = ()) -> tuple[cst.BaseExpression, Fn, list[fixes.Import]] | None:
        """How to write ``op`` of ``framework`` at ``scope`` with the file's own imports.

        Among the framework's targets for the op, choose a spelling through an
        import visible at ``scope``: the fewest attribute steps, then a name
        used in ``prefer`` (the code being replaced), then the shortest.  When no import can spell a target,
        return the first target with the import to add."""
        targets = framework.targets.get(op)
        if not targets:
            return None
        used = set()
        for node in prefer:
            used |= _names_in(node)
        best: tuple[tuple, str, str] | None = None
        visible = self.index.visible_imports(scope)
        for qual in targets:
            for local, bound in visible:
                if qual == bound:
                    text = local
                elif qual.startswith(bound + "."):
                    text = local + qual[len(bound):]
                else:
                    continue
                key = (text.count("."), local not in used, len(text), targets.index(qual))
                if best is None or key < best[0]:
                    best = (key, text, qual)
        if best is not None:
            return fixes.spelled(best[1]), framework.functions[best[2]], []
        for qual in targets:
            for module, alias in framework.import_aliases.items():
                if qual.startswith(module + "."):
                    imp = fixes.Import(module, alias)
                    if self.index.is_bound(imp.bound_name, scope):
                        continue
                    text = imp.bound_name + qual[len(module) if alias is not None else len(module.split(".")[0]):]
                    return fixes.spelled(text), framework.functions[qual], [imp]
        return None

    def carry_args(self, source: OpCall, target: Fn, roles: tuple[str, ...],
                   x: cst.BaseExpression | None = None) -> list[cst.Arg] | None:
        """Arguments for a call of ``target`` taking ``roles`` from ``source``.

        ``target`` is a function signature, or a method signature (whose
        receiver is not an argument) when ``target`` has no ``x`` parameter.
        Positional arguments stay positional where ``target`` has the role at the
        same position, otherwise they become keywords; the user's formatting of
        each argument is kept.  ``x`` replaces the main input.  A TF ``name=``
        is dropped.  Returns None when an argument has no place in ``target``.
        """
        out: list[cst.Arg] = []
        keyword_only = False

        def place(role: str, a: cst.Arg) -> bool:
            nonlocal keyword_only
            if not keyword_only and a.keyword is None and target.position_of(role) == len(out):
                out.append(a)
                return True
            keyword_only = True
            if a.keyword is not None and target.role_of_keyword(a.keyword.value) == role:
                out.append(a)  # the target takes the user's keyword as it is
                return True
            kw = target.keyword_for(role)
            if kw is None:
                return False
            out.append(a.with_changes(keyword=cst.Name(kw)) if a.keyword is not None
                       else fixes.arg(a.value, kw).with_changes(comma=a.comma))
            return True

        receiver_is_arg = target.position_of("x") is not None or target.keyword_for("x") is not None
        if source.is_method and receiver_is_arg:
            value = x if x is not None else source.receiver
            if not place("x", cst.Arg(value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))):
                return None
        for i, a in enumerate(source.node.args):
            role = _role_of(source.fn, a, i)
            if role is False:
                return None
            if role is None:
                if a.keyword is not None and a.keyword.value == "name":
                    continue
                return None
            if role not in roles:
                return None
            if role == "x":
                if not receiver_is_arg:
                    continue
                if x is not None:
                    a = a.with_changes(value=x)
            if not place(role, a):
                return None
        if out:
            last = out[-1]
            had_trailing = bool(source.node.args) and isinstance(source.node.args[-1].comma, cst.Comma)
            if not had_trailing:
                out[-1] = last.with_changes(comma=cst.MaybeSentinel.DEFAULT)
            for k in range(len(out) - 1):
                if not isinstance(out[k].comma, cst.Comma):
                    out[k] = out[k].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return out


def _role_of(f: Fn, a: cst.Arg, i: int) -> str | None | bool:
    if a.star:
        return False
    if a.keyword is not None:
        return f.role_of_keyword(a.keyword.value)
    if i < len(f.params):
        return f.params[i][1]
    return False


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


def _names_in(node: cst.CSTNode) -> set[str]:
    names: set[str] = set()

    class _V(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            names.add(n.value)

    node.visit(_V())
    return names
