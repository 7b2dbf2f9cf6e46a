"""The backward search of the zero rules' site check (:mod:`nanlint.analysis.gates.zero_sites`): from
the operands of a sink, through a file's bindings (:mod:`nanlint.analysis.gates.zero_files`) and the
project modules it imports, to a strong source of 0.  Each value is asked one question
(a mode): may it be 0 (``ZERO``), is it a mask this code selects (``MASK``, under a
reduction), is it a logit (``LOGIT``, under a softmax or sigmoid), does it take either
sign (``INDEFINITE``, under a clamp at 0), what does a called object compute (``OBJECT``).
"""

from __future__ import annotations

import ast
from pathlib import Path
from dataclasses import dataclass

from nanlint.analysis.evidence import LOGIT_NAME, PADDING_NAME
from nanlint.semantic import modules
from nanlint.analysis.gates import zero_files
from nanlint.analysis.gates.syntax_sites import callee, literal
from nanlint.analysis.gates.zero_files import File, parameters

@dataclass(frozen=True)
class Vocabulary:
    """The call names (last names of the framework tables' spellings) of each part."""

    sinks: frozenset[str]
    probability: frozenset[str]  # softmax/sigmoid: a source of a logit
    layers: frozenset[str]  # Softmax/Sigmoid layers: a source
    activations: frozenset[str]  # activation="softmax": a layer ending in a source
    rectified: frozenset[str]  # relu: a source wherever it is
    clips: frozenset[str]  # clip, maximum: a source with a 0 argument, of a value taking either sign
    maximum: frozenset[str]  # maximum(0, x): the clamped value may be the second argument
    subtract: frozenset[str]  # torch.sub(a, b): a - b
    reductions: frozenset[str]  # sum, mean, max, min: a count, or a reduced source
    exp: frozenset[str]  # for hand-written sigmoids and softmaxes
    divide: frozenset[str]  # torch.div(a, b): a / b
    layout: frozenset[str]  # reshape, cat, gather, casts: the value passes through
    affine: frozenset[str]  # matmul, Dense: a logit; NAN107's source with ``affine_source``
    prod: frozenset[str] = frozenset()  # prod, reduce_prod, cumprod: a product over an axis (of probabilities)
    # square, pow: with ``reductions``, a clamp at 0 of a sum of squared differences (0 where
    # the points coincide: NAN206's strong case, rules/_roots.clamped_distance)
    squares: frozenset[str] = frozenset()
    affine_source: bool = False  # an affine output is a source (a log of it is negative)
    products: bool = False  # a product with a source is one


_LOGIT, _PADDING = LOGIT_NAME, PADDING_NAME  # the names evidence.logit and evidence.weak_mask read
_LAYOUT_ATTRS = frozenset({"T", "mT", "H", "data", "real"})
_COMPARISONS = frozenset({"eq", "ne", "gt", "ge", "lt", "le", "equal", "not_equal", "greater",
                          "greater_equal", "less", "less_equal", "logical_and", "logical_or",
                          "logical_not", "isnan", "isinf", "isfinite", "isclose"})

_THROUGH = (ast.Subscript, ast.Starred, ast.NamedExpr, ast.Await, ast.IfExp)  # pass a value on unchanged
# what the search asks of a value
ZERO, MASK, LOGIT, OBJECT, INDEFINITE = "zero", "mask", "logit", "object", "indefinite"
# the layers a container calls in turn: its arguments named are layers
_CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict", "Model", "Functional", "SequentialCell"})
# modules followed from the file, and ``from .x import f`` hops in a package's __init__ (not
# counted as a level): as far as a file's cache key lists its dependencies (modules.dependencies)
MAX_DEPTH, MAX_REEXPORTS = modules.MAX_DEPTH, modules.MAX_REEXPORTS
_VALUES: dict[tuple, bool] = {}  # (module, name, question, ...) -> the answer, per process


def zero_literal(node: ast.AST) -> bool:
    """A constant at most 0, a list or tuple literal holding one, a tensor made of one."""
    if type(node) is ast.Call and node.args and type(node.args[0]) in (ast.List, ast.Tuple):
        node = node.args[0]  # torch.tensor([0., 1.])
    if type(node) in (ast.List, ast.Tuple):
        return any(zero_literal(e) for e in node.elts if type(e) is not ast.Starred)
    value = literal(node)  # type: ignore[arg-type]
    return value is not None and value <= 0


class Search:
    def __init__(self, f: File, vocab: Vocabulary, path: Path | None = None,
                 extra: tuple[str, ...] = (), depth: int = 0) -> None:
        self.f, self.v = f, vocab
        self.path, self.extra, self.depth = path, extra, depth
        self.b = f.bindings
        self.seen: set = set()
        self.work: list[tuple[ast.AST, str, bool]] = []  # (expression, what is asked, may its 0 literal count)

    def reaches(self, operands: list[tuple[ast.AST, bool]]) -> bool:
        self.work = [(o, ZERO, zero) for o, zero in operands]
        return self.run()

    def run(self) -> bool:
        while self.work:
            node, mode, zero = self.work.pop()
            if getattr(self, "_" + mode)(node, zero):
                return True
        return False

    # --- following names --------------------------------------------------------------
    def _push(self, node: ast.AST | None, mode: str, zero: bool = True) -> None:
        if node is not None:
            self.work.append((node, mode, zero))

    def _through(self, n: ast.AST, mode: str, zero: bool = True) -> None:
        """What ``n`` passes on unchanged: an element (``p[:, 0]``: no literal 0 of its own),
        a starred or assigned value, both branches of a conditional."""
        if type(n) is ast.IfExp:
            self._push(n.body, mode, zero)
            self._push(n.orelse, mode, zero)
        else:
            self._push(n.value, mode, zero and type(n) is not ast.Subscript)

    def _follow(self, kind: str, name: str, mode: str, params: bool = True) -> None:
        key = (mode, kind, name)
        if key in self.seen:
            return
        self.seen.add(key)
        values = self.b.flows.get((kind, name), ())
        for v in values:
            # a name bound to a literal 0 is a source only when that is its one binding in the file
            self._push(v, mode, len(values) == 1)
        if kind == "name" and params:
            for owner in self.b.params.get(name, ()):
                for where, arg in self.f.arguments(owner):
                    if name in parameters(self.b.defs[owner], where):
                        self._push(arg, mode, False)  # a constant passed in is no source (the rules' too)

    def _returns(self, name: str, mode: str) -> None:
        key = (mode, "call", name)
        if key in self.seen:
            return
        self.seen.add(key)
        for owner in [name, *self.b.methods.get(name, ())]:  # a class returns what its methods return
            for v in self.b.returns.get(owner, ()):
                self._push(v, mode, False)  # nor is a constant returned

    def _one(self, node: ast.AST) -> bool:
        """A literal 1, or a name some binding of which is one (``one - p``)."""
        if literal(node) == 1:  # type: ignore[arg-type]
            return True
        if type(node) is ast.Name:
            return any(literal(v) == 1 for v in self.b.flows.get(("name", node.id), ()))  # type: ignore[arg-type]
        return False

    def _exp(self, node: ast.AST) -> ast.Call | None:
        """The call of ``exp`` that ``node`` is (or a name bound to one is)."""
        if type(node) is ast.Call and callee(node.func) in self.v.exp:
            return node
        if type(node) is ast.Name:
            for v in self.b.flows.get(("name", node.id), ()):
                if type(v) is ast.Call and callee(v.func) in self.v.exp:
                    return v
        return None

    # --- the questions ----------------------------------------------------------------
    def _zero(self, n: ast.AST, zero: bool) -> bool:
        """May ``n`` be a strong source's value?"""
        if zero and zero_literal(n):
            return True
        k = type(n)
        if k is ast.Name:
            if n.id in self.b.imported:
                return self._elsewhere(n.id, ZERO, called=False)
            self._follow("name", n.id, ZERO)
        elif k is ast.Attribute:
            self._follow("attr", n.attr, ZERO)
            if n.attr in _LAYOUT_ATTRS:
                self._push(n.value, ZERO)
        elif k in _THROUGH:
            self._through(n, ZERO, zero)
        elif k in (ast.List, ast.Tuple, ast.Set):
            for e in n.elts:
                self._push(e, ZERO, zero)
        elif k is ast.UnaryOp:
            if type(n.op) in (ast.USub, ast.UAdd):
                self._push(n.operand, ZERO, zero)
        elif k is ast.BinOp:
            return self._binary(n, ZERO)
        elif k is ast.Call:
            return self._call(n)
        return False

    def _binary(self, n: ast.BinOp, mode: str) -> bool:
        op = type(n.op)
        if op is ast.Sub:
            if self._one(n.left):
                self._push(n.right, ZERO)  # 1 - p
        elif op is ast.Div:
            return self._hand_probability(n.left, n.right)
        elif op is ast.MatMult:
            return self.v.affine_source
        elif op is ast.Add and self.v.affine_source:
            self._push(n.left, ZERO)  # matmul(h, W) + b
            self._push(n.right, ZERO)
        elif op is ast.Mult and self.v.products:
            self._push(n.left, ZERO)
            self._push(n.right, ZERO)
        return False

    def _hand_probability(self, num: ast.AST, den: ast.AST) -> bool:
        """``1 / (1 + exp(-z))``, ``e / (1 + e)`` (of a logit), ``exp(z) / sum(exp(z))``."""
        if type(den) is ast.Name:
            for value in self.b.flows.get(("name", den.id), ()):
                if type(value) is ast.BinOp and type(value.op) is ast.Add:
                    den = value
                    break
        if type(den) is ast.BinOp and type(den.op) is ast.Add:
            for one, other in ((den.left, den.right), (den.right, den.left)):
                exp = self._exp(other)
                if literal(one) == 1 and exp is not None:  # type: ignore[arg-type]
                    self._exponent(exp)
            return False
        exp = self._exp(num)
        if exp is not None and any(type(c) is ast.Call and callee(c.func) in self.v.reductions for c in ast.walk(den)):
            self._exponent(exp)
        return False

    def _exponent(self, exp: ast.Call) -> None:
        """Ask whether the exponent of ``exp(z)`` (``-z``: the logit question reads past the
        minus) is a logit: its arguments, or the receiver of ``z.exp()``."""
        for a in [*exp.args, *(k.value for k in exp.keywords)]:
            self._push(a, LOGIT)
        if type(exp.func) is ast.Attribute:
            self._push(exp.func.value, LOGIT)

    def _call(self, n: ast.Call) -> bool:
        v = self.v
        func = n.func
        name = callee(func)
        arguments = [*n.args, *(k.value for k in n.keywords)]
        if any(type(a) is ast.Constant and a.value in v.activations for a in arguments):
            return True  # Dense(10, activation="softmax")
        if name is None:
            self._push(func, OBJECT)  # Dense(10, activation="softmax")(h), fs[0](x)
            return False
        receiver = func.value if type(func) is ast.Attribute else None
        if name in v.rectified or name in v.layers:
            return True
        if name in v.probability:  # softmax(logits): its argument must be a logit
            if not n.args and receiver is None:
                return True  # a layer made without its input (nn.Softmax(dim=1))
            for a in arguments[:1] or [receiver]:
                self._push(a, LOGIT)
            if receiver is not None:
                self._push(receiver, LOGIT)
            return False
        if name in v.clips:  # active at 0 on a value that goes negative (evidence.indefinite): a defensive clamp is weak
            if any(self._zeroish(a) for a in arguments):
                for a in [*n.args[:1], *(kw.value for kw in n.keywords if kw.arg in ("input", "x", "t", "a")),
                          receiver, *(n.args[1:2] if name in v.maximum else ())]:
                    self._push(a, INDEFINITE, False)
            return False
        if name in v.affine:
            return v.affine_source
        if name in v.prod:
            return True  # a product over an axis: of probabilities it underflows (zeros._unit_factors)
        if name in v.reductions:  # the reduced value: the first argument, or the receiver
            for a in [*n.args[:1], *(k.value for k in n.keywords if k.arg in ("input", "x", "input_tensor")), receiver]:
                self._push(a, MASK)
                self._push(a, ZERO, False)
            return False
        if name in v.divide and len(arguments) + (receiver is not None) >= 2:
            # a.div(b), or torch.div(a, b) (whose receiver is the module)
            num, den = (receiver, arguments[0]) if len(arguments) == 1 else arguments[:2]
            return self._hand_probability(num, den)
        if name in v.layout:
            for a in [*n.args, receiver]:
                self._push(a, ZERO, False)  # view(-1), gather(p, 0): a number is no value here
            return False
        if name in self.b.imported:
            return self._elsewhere(name, ZERO, called=True)  # display-only findings, pointing there
        if receiver is not None and self._module_attribute(func, ZERO):  # m.f(x), m a project module
            return True
        self._returns(name, ZERO)
        self._follow("attr" if receiver is not None else "name", name, OBJECT, params=False)
        return False

    def _elsewhere(self, name: str, mode: str, called: bool) -> bool:
        """The answer for a name imported from a module of the project, found there: what
        its function (or its class's methods) returns when ``called``, else its value."""
        if self.path is None or self.depth <= 0:
            return False
        level, module, original = self.b.imported[name]
        return module_value(self.path, level, module, original, mode, called, self.v, self.extra, self.depth, 0)

    def _module_attribute(self, func: ast.Attribute, mode: str) -> bool:
        """The answer for ``m.f(x)`` (``m.sub.f(x)``) where ``m`` is a module imported whole
        (``import pkg.m as m``, ``from . import m``), found in the project module, as the
        value flow follows it (``definitions.definition``)."""
        path: list[str] = []
        root = func.value
        while type(root) is ast.Attribute:
            path.insert(0, root.attr)  # type: ignore[attr-defined]
            root = root.value  # type: ignore[attr-defined]
        if type(root) is not ast.Name or self.path is None or self.depth <= 0:
            return False
        if root.id in self.b.imported:  # type: ignore[attr-defined]
            level, module, original = self.b.imported[root.id]  # type: ignore[attr-defined]
            parts = (module.split(".") if module else []) + [original] + path
        elif root.id in self.b.whole:  # type: ignore[attr-defined]
            level, parts = 0, self.b.whole[root.id].split(".") + path  # type: ignore[attr-defined]
        else:
            return False
        return module_value(self.path, level, ".".join(parts), func.attr, mode, True, self.v, self.extra,
                            self.depth, 0)

    def _zeroish(self, a: ast.AST) -> bool:
        """A clip bound that may be 0: the literal, or a name some binding of which is."""
        if literal(a) == 0:  # type: ignore[arg-type]
            return True
        if type(a) in (ast.Name, ast.Attribute):
            key = ("name", a.id) if type(a) is ast.Name else ("attr", a.attr)  # type: ignore[attr-defined]
            return any(literal(x) == 0 for x in self.b.flows.get(key, ()))  # type: ignore[arg-type]
        return False

    def _object(self, n: ast.AST, zero: bool) -> bool:
        """What a called object computes (a layer, a model, a function as a value): a
        source layer (``nn.Softmax(1)``, ``Dense(10, activation="sigmoid")``), a source
        function passed as a value (``act=F.relu``), in the layers of a container
        (``nn.Sequential(..., nn.Sigmoid())``), or what its class's methods return."""
        v = self.v
        k = type(n)
        if k is ast.Name:
            if n.id in v.rectified or n.id in v.probability:
                return True  # act=relu: the function as a value
            if n.id in self.b.imported:
                return self._elsewhere(n.id, ZERO, called=True)
            self._returns(n.id, ZERO)
            self._follow("name", n.id, OBJECT, params=False)
        elif k is ast.Attribute:
            if n.attr in v.rectified or n.attr in v.probability:
                return True  # activation=tf.nn.softmax
            self._returns(n.attr, ZERO)
            self._follow("attr", n.attr, OBJECT, params=False)
        elif k in (ast.List, ast.Tuple):
            for e in n.elts:
                self._push(e, OBJECT)
        elif k in (ast.Subscript, ast.Starred):
            self._push(n.value, OBJECT)  # self.layers[-1](x)
        elif k is ast.Call:
            name = callee(n.func)
            if name in v.layers:
                return True
            arguments = [*n.args, *(kw.value for kw in n.keywords)]
            for a in arguments:
                ka = type(a)
                if ka is ast.Constant and a.value in v.activations:
                    return True  # Dense(10, activation="softmax")
                if ka in (ast.Call, ast.List, ast.Tuple, ast.Starred) or \
                        (ka in (ast.Name, ast.Attribute) and (name in _CONTAINERS or
                                                             callee(a) in v.rectified | v.probability)):
                    self._push(a, OBJECT)  # its layers; a container's layers named
            if name in v.probability or name in v.rectified:
                return False  # a tensor (softmax(x)), not a layer: called, it is no value here
            self._push(n.func, OBJECT)  # act_layer(): what act_layer is bound to; a class's returns
        return False

    def _indefinite(self, n: ast.AST, zero: bool) -> bool:
        """Does the code show ``n`` taking either sign (``evidence.indefinite``): a difference,
        a negation, a matrix product, through names and returns?"""
        k = type(n)
        if k is ast.Name:
            self._follow("name", n.id, INDEFINITE)
        elif k is ast.Attribute:
            self._follow("attr", n.attr, INDEFINITE)
        elif k is ast.UnaryOp:
            return type(n.op) is ast.USub
        elif k is ast.BinOp:
            op = type(n.op)
            if op is ast.MatMult or (op is ast.Sub and literal(n.right) is None):  # type: ignore[arg-type]
                return True
            if op in (ast.Pow, ast.Mult):  # (a - b) ** 2, d * d: a squared difference
                self._push(n.left, INDEFINITE)
            if op in (ast.Add, ast.Sub):
                self._push(n.left, INDEFINITE)
                self._push(n.right, INDEFINITE)
        elif k in _THROUGH:
            self._through(n, INDEFINITE)
        elif k is ast.Call:
            name = callee(n.func)
            if name in self.v.affine or name in self.v.subtract:
                return True
            receiver = n.func.value if type(n.func) is ast.Attribute else None
            if name in self.v.layout:
                for a in [*n.args, receiver]:
                    self._push(a, INDEFINITE, False)
            elif self.v.squares and (name in self.v.squares or name in self.v.reductions):
                for a in [*n.args[:1], receiver]:  # sum(square(a - b)): a sum of squared differences
                    self._push(a, INDEFINITE, False)
            elif name in self.b.imported:
                return self._elsewhere(name, INDEFINITE, called=True)
            elif receiver is not None and self._module_attribute(n.func, INDEFINITE):
                return True
            elif name is not None:
                self._returns(name, INDEFINITE)
        return False

    def _mask(self, n: ast.AST, zero: bool) -> bool:
        """Is ``n`` a 0/1 mask this code selects by a fixed criterion (its count may be 0)?"""
        k = type(n)
        if k is ast.Name:
            if not _PADDING.search(n.id):
                self._follow("name", n.id, MASK, params=False)  # a mask passed in is weak
            return False
        if k is ast.Attribute:
            if not _PADDING.search(n.attr):
                self._follow("attr", n.attr, MASK, params=False)
            return False
        if k in (ast.Compare, ast.BoolOp) or (k is ast.BinOp and type(n.op) in (ast.BitAnd, ast.BitOr)) \
                or (k is ast.UnaryOp and type(n.op) in (ast.Invert, ast.Not)):
            return not any(type(x) is ast.Name and _PADDING.search(x.id) or
                           type(x) is ast.Attribute and _PADDING.search(x.attr) for x in ast.walk(n))
        if k in _THROUGH:
            self._through(n, MASK)
        elif k is ast.Call:
            name = callee(n.func)
            receiver = n.func.value if type(n.func) is ast.Attribute else None
            if name in _COMPARISONS:
                return True
            if name in self.v.layout or name in self.v.reductions:
                for a in [*n.args, receiver]:
                    self._push(a, MASK)
        return False

    def _logit(self, n: ast.AST, zero: bool) -> bool:
        """Does the code say ``n`` is a logit: named like one, or an affine output?"""
        k = type(n)
        if k is ast.Name:
            if _LOGIT.search(n.id):
                return True
            self._follow("name", n.id, LOGIT)
        elif k is ast.Attribute:
            if _LOGIT.search(n.attr):
                return True
            self._follow("attr", n.attr, LOGIT)
        elif k in _THROUGH:
            self._through(n, LOGIT)
        elif k is ast.UnaryOp:
            self._push(n.operand, LOGIT)
        elif k is ast.BinOp:
            op = type(n.op)
            if op is ast.MatMult:
                return True
            if op in (ast.Add, ast.Div):
                self._push(n.left, LOGIT)  # logits / temperature, matmul(h, W) + b
                if op is ast.Add:
                    self._push(n.right, LOGIT)
        elif k is ast.Call:
            name = callee(n.func)
            receiver = n.func.value if type(n.func) is ast.Attribute else None
            if name is None:
                return False
            if name in self.v.affine:
                return True
            if name in self.b.imported:
                return self._elsewhere(name, LOGIT, called=True)
            if receiver is not None and self._module_attribute(n.func, LOGIT):
                return True
            if name in self.v.layout:
                for a in [*n.args, receiver]:
                    self._push(a, LOGIT)
                return False
            self._returns(name, LOGIT)
        return False


def module_value(importer: Path, level: int, module: str | None, name: str, mode: str, called: bool,
                  vocab: Vocabulary, extra: tuple[str, ...], depth: int, hops: int) -> bool:
    target = modules.module_file(importer, level, module, name, extra)
    if target is None or target == importer:
        return False
    if target != modules.module_file(importer, level, module, None, extra):
        return False  # the name is a submodule (``from . import losses``): losses.f(x) is not this name's call
    try:
        st = target.stat()
    except OSError:
        return False
    key = (str(target), st.st_mtime_ns, st.st_size, name, mode, called, vocab, extra, depth)
    if key in _VALUES:
        return _VALUES[key]
    _VALUES[key] = False  # a cycle of imports answers no
    read = zero_files.module(target, st)
    answer = False
    if read is not None:
        search = Search(read, vocab, target, extra, depth - 1)
        if name in search.b.imported and hops < MAX_REEXPORTS:  # a package passing the name on
            lvl, mod, original = search.b.imported[name]
            answer = module_value(target, lvl, mod, original, mode, called, vocab, extra, depth, hops + 1)
        else:
            if called:
                search._returns(name, mode)
                search._follow("name", name, OBJECT, params=False)
            else:
                search._follow("name", name, mode, params=False)
            answer = search.run()
    _VALUES[key] = answer
    return answer
