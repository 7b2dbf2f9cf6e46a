"""Scores filled where a mask says (``masked_fill(~m, fill)``, ``where(m, s, fill)``,
``s + (1 - m) * fill``) and whether the mask can empty a whole row: NAN402 reports the
fills with -inf that reach a softmax."""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from nanlint.vocabulary import ops as o
from nanlint.vocabulary.ops import Framework
from nanlint.rules.context import RuleContext
from nanlint.analysis.evidence import padding_mask
from nanlint.semantic.literals import number
from nanlint.semantic.reach import PARAM
from nanlint.semantic.resolve import Scope
from nanlint.rules._shapes import code

_CAUSAL_CALL = frozenset({"tril", "triu", "band_part", "tril_", "triu_"})
_CAUSAL_NAME = re.compile(r"causal|subsequent|look_?ahead|future|tril|triu|autoregressive", re.IGNORECASE)
# layout and dtype changes of a mask: the same positions
_LAYOUT = frozenset({"rearrange", "unsqueeze", "expand_dims", "bool", "float", "int", "long", "byte", "half", "to", "type",
                     "astype", "cast", "view", "reshape", "expand", "expand_as", "repeat", "tile", "broadcast_to",
                     "contiguous", "logical_not", "squeeze", "transpose", "permute", "repeat_interleave"})
_EXPAND = frozenset({"unsqueeze", "expand_dims"})


@dataclass(frozen=True)
class Fill:
    """A fill of scores with a constant where ``mask`` says: ``node`` is the fill value
    (what a fix replaces), ``scores`` what its dtype is taken from, ``additive`` for
    ``s + (1 - m) * fill`` (a product of the fill with the 0/1 mask)."""

    node: cst.BaseExpression
    scope: Scope
    mask: cst.BaseExpression
    scores: cst.BaseExpression | None
    framework: Framework | None
    additive: bool
    site: cst.CSTNode  # where the fill is written (the finding's line)
    log: bool = False  # ``s + log(m)``: -inf where the 0/1 mask is 0


def _sign_inf(ctx: RuleContext, expr: cst.BaseExpression | None, scope: Scope, depth: int = 3) -> int:
    """1 for +inf, -1 for -inf (``float('-inf')``, ``-np.inf``, ``np.NINF``, a name bound
    once to one), else 0."""
    if expr is None or depth < 0:
        return 0
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        inner = _sign_inf(ctx, expr.expression, scope, depth)
        return -inner if isinstance(expr.operator, cst.Minus) else inner
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "float" \
            and len(expr.args) == 1 and isinstance(expr.args[0].value, cst.SimpleString):
        text = str(expr.args[0].value.evaluated_value).strip().lower()
        if text in ("inf", "+inf", "infinity", "+infinity"):
            return 1
        return -1 if text in ("-inf", "-infinity") else 0
    if isinstance(expr, cst.Attribute):
        qual = ctx.index.qualname(expr, scope) or ""
        return 1 if qual in o.POS_INF else -1 if qual in o.NEG_INF else 0
    if isinstance(expr, cst.Name):
        qual = ctx.index.qualname(expr, scope) or ""
        if qual in o.POS_INF or qual in o.NEG_INF:
            return 1 if qual in o.POS_INF else -1
        r = ctx.resolve(expr, scope)
        if r.expr is not expr and (r.ctx is None or r.ctx is ctx):
            return _sign_inf(ctx, r.expr, r.scope, depth - 1)
    return 0


def neg_inf(ctx: RuleContext, expr: cst.BaseExpression | None, scope: Scope) -> bool:
    return _sign_inf(ctx, expr, scope) < 0


def fills(ctx: RuleContext, expr: cst.BaseExpression | None, scope: Scope, is_fill,
          src: cst.BaseExpression | None = None, depth: int = 4) -> list[Fill]:
    """The fills (``is_fill(ctx, value, scope)`` says which constants) that reach the
    scores ``expr``: through names, layout ops, scaling and additions."""
    if expr is None or depth < 0:
        return []
    out: list[Fill] = []
    for r in ctx.values(expr, scope, shape=True):
        if r.ctx is not None and r.ctx is not ctx:
            continue  # made in another module: no fix here
        e = ctx.arithmetic(r.expr, r.scope)
        call = ctx.op_call(e, r.scope) if isinstance(e, cst.Call) else None
        if call is not None and call.op == o.MASKED_FILL:
            value, cond = call.value("value"), call.value("cond")
            if cond is not None and is_fill(ctx, value, r.scope):
                out.append(Fill(value, r.scope, cond, call.x, call.framework, False, call.node))  # type: ignore[arg-type]
        elif call is not None and call.op == o.WHERE:
            x, y, cond = call.value("x"), call.value("y"), call.value("cond")
            for fill, other in ((y, x), (x, y)):
                if cond is not None and is_fill(ctx, fill, r.scope):
                    kept = other if other is not None and number(other) is None else src
                    out.append(Fill(fill, r.scope, cond, kept, call.framework, False, call.node))  # type: ignore[arg-type]
                    break
        elif isinstance(e, cst.BinaryOperation):
            left, right = e.left, e.right
            if isinstance(e.operator, cst.Multiply):
                for fill, mask in ((right, left), (left, right)):
                    if is_fill(ctx, fill, r.scope):
                        out.append(Fill(fill, r.scope, mask, src, None, True, e if e is r.expr else fill))
                        break
                else:
                    out += fills(ctx, left, r.scope, is_fill, src, depth - 1)
                    out += fills(ctx, right, r.scope, is_fill, src, depth - 1)
            elif isinstance(e.operator, cst.Divide):
                out += fills(ctx, left, r.scope, is_fill, src, depth - 1)
            elif isinstance(e.operator, (cst.Add, cst.Subtract)):
                for one, other in ((left, right), (right, left)):
                    log = ctx.op_of(one, r.scope, o.LOG)
                    if isinstance(e.operator, cst.Add) and log is not None and _bare(ctx, log[0].x, log[1].scope):
                        out.append(Fill(log[0].node, r.scope, log[0].x, other, log[0].framework, False,
                                        log[0].node, True))
                    else:
                        out += fills(ctx, one, r.scope, is_fill, other, depth - 1)
    if isinstance(expr, cst.Name):
        out += _in_place(ctx, expr, scope, is_fill)
    return out


def _bare(ctx: RuleContext, expr: cst.BaseExpression | None, scope: Scope) -> bool:
    """A 0/1 mask as it is (through names and casts), not kept from 0 (``mask + 1e-45``, a clamp)."""
    if expr is None:
        return False
    for r in ctx.values(expr, scope, shape=True):
        e = ctx.arithmetic(r.expr, r.scope)
        if isinstance(e, cst.BinaryOperation) or number(e) is not None or \
                ctx.op_of(e, r.scope, o.CLIP, o.MAXIMUM, o.EXP, o.SOFTMAX, o.SIGMOID) is not None:
            return False
    return True


def _in_place(ctx: RuleContext, use: cst.Name, scope: Scope, is_fill) -> list[Fill]:
    """``s.masked_fill_(m, fill)`` of the name ``s`` in ``scope`` on a line before its use."""
    out = []
    for call in ctx.calls(o.MASKED_FILL_INPLACE):
        x, value, cond = call.x, call.value("value"), call.value("cond")
        if call.scope is scope and isinstance(x, cst.Name) and x.value == use.value and cond is not None \
                and ctx.line_of(call.node) < ctx.line_of(use) and is_fill(ctx, value, scope):
            out.append(Fill(value, scope, cond, x, call.framework, False, call.node))  # type: ignore[arg-type]
    return out


# --- can the mask empty a row? ------------------------------------------------------------
STRONG, MAY, SILENT = "strong", "may", "silent"


def _func_name(func: cst.BaseExpression) -> str:
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else ""


def _expanded(ctx: RuleContext, expr: cst.BaseExpression, scope: Scope) -> bool:
    """``m[:, None]``, ``m[..., None, :]``, ``m.unsqueeze(1)``, ``expand_dims(m, 1)``
    (through a cast or a name): a mask given a new axis, one side of an outer product."""
    for r in ctx.values(expr, scope)[:4]:
        e = r.expr
        while True:
            if isinstance(e, cst.Subscript):
                if any(isinstance(el.slice, cst.Index) and isinstance(el.slice.value, cst.Name)
                       and el.slice.value.value == "None" for el in e.slice):
                    return True
                e = e.value
            elif isinstance(e, cst.Call) and _func_name(e.func) == "rearrange" and len(e.args) >= 2 and \
                    isinstance(e.args[1].value, cst.SimpleString):  # einops: ``'b i -> b () i ()'``
                out_side = str(e.args[1].value.evaluated_value).partition("->")[2]
                return "()" in out_side or " 1" in f" {out_side} "
            elif isinstance(e, cst.Call) and _func_name(e.func) in _LAYOUT:
                if _func_name(e.func) in _EXPAND:
                    return True
                inner = e.func.value if isinstance(e.func, cst.Attribute) and \
                    ctx.index.qualname(e.func, r.scope) is None else (e.args[0].value if e.args else None)
                if inner is None:
                    break
                e = inner
            else:
                break
    return False


def _names(node: cst.CSTNode) -> set[str]:
    out, stack = set(), [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Name):
            out.add(n.value)
        else:
            stack.extend(n.children)
    return out


def _buffer(ctx: RuleContext, expr: cst.Attribute) -> cst.BaseExpression | None:
    """The value of ``self.X`` registered as ``self.register_buffer("X", value)``."""
    for node, _ in ctx.index.calls:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "register_buffer" and len(node.args) >= 2:
            name = node.args[0].value
            if isinstance(name, cst.SimpleString) and name.evaluated_value == expr.attr.value:
                return node.args[1].value
    return None


def row_mask(ctx: RuleContext, expr: cst.BaseExpression, scope: Scope, scores: set[str],
             depth: int = 5) -> tuple[str, str]:
    """Whether the mask ``expr`` can mask a whole row of the scores, and why: STRONG for
    a query-key outer product (a padded query's row is all masked); MAY for a padding mask
    of keys (a row is empty only for a sequence of length 0) and a mask the code does not
    show; SILENT for a causal mask (tril/triu keep the diagonal) and a selection relative to
    the scores themselves (top-k/top-p keep the largest)."""
    if depth < 0:
        return MAY, "a mask the code does not show"
    shown = MAY, "a mask the code does not show (passed in, or made elsewhere)"
    found = ctx.values(expr, scope)
    verdicts = []
    for r in found:
        if isinstance(r.expr, cst.Name) and r.expr.value == "None":
            continue  # ``self.mask = None`` until it is set
        if r.ctx is not None and r.ctx is not ctx:
            verdicts.append(shown)
            continue
        verdicts.append(_one(ctx, r.expr, r.scope, scores, depth, PARAM in r.via))
    return _any(verdicts) if verdicts else shown


def _any(verdicts: list[tuple[str, str]]) -> tuple[str, str]:
    for tier in (STRONG, MAY):
        for v in verdicts:
            if v[0] == tier:
                return v
    return verdicts[0]


def _one(ctx: RuleContext, raw: cst.BaseExpression, scope: Scope, scores: set[str], depth: int,
         passed: bool) -> tuple[str, str]:
    e = ctx.condition(raw, scope)
    text = ctx.code(e)
    if isinstance(e, (cst.BinaryOperation,)) and isinstance(e.operator, (cst.BitAnd, cst.BitOr, cst.Multiply)) \
            and _expanded(ctx, e.left, scope) and _expanded(ctx, e.right, scope):
        return STRONG, (f"the mask `{_short(text)}` is an outer product of two masks (query x key): "
                        "the row of a masked query is all masked")
    if padding_mask(e):  # a key padding mask keeps every key of a sequence that has one (as NAN401 judges it)
        return MAY, (f"the mask `{_short(text)}` marks padding: it empties a row only for a sequence of only "
                     "padding (length 0), which the code does not show")
    if isinstance(e, cst.UnaryOperation):
        return row_mask(ctx, e.expression, scope, scores, depth - 1)
    if isinstance(e, cst.BinaryOperation):
        if isinstance(e.operator, cst.Subtract) and number(e.left) is not None:
            return row_mask(ctx, e.right, scope, scores, depth - 1)  # 1 - m
        if isinstance(e.operator, (cst.BitAnd, cst.BitOr, cst.Multiply, cst.Add)):
            left = row_mask(ctx, e.left, scope, scores, depth - 1)
            right = row_mask(ctx, e.right, scope, scores, depth - 1)
            return _any([left, right])
        return MAY, "a mask the code does not show"
    if isinstance(e, cst.Comparison):
        if _names(e) & scores:
            return SILENT, "a selection relative to the scores themselves keeps the largest"
        parts = [e.left] + [t.comparator for t in e.comparisons]
        shown = [p for p in parts if number(p) is None]
        if len(shown) == 1:
            return row_mask(ctx, shown[0], scope, scores, depth - 1)
        return MAY, f"the mask `{_short(text)}`: whether it can empty a row is not shown"
    if isinstance(e, cst.Subscript):
        return row_mask(ctx, e.value, scope, scores, depth - 1)
    if isinstance(e, cst.Call):
        name = _func_name(e.func)
        if name in _CAUSAL_CALL or _CAUSAL_NAME.search(name):
            return SILENT, "a causal mask keeps the diagonal"
        if name in _LAYOUT:
            inner = e.func.value if isinstance(e.func, cst.Attribute) and \
                ctx.index.qualname(e.func, scope) is None else (e.args[0].value if e.args else None)
            if inner is not None:
                return row_mask(ctx, inner, scope, scores, depth - 1)
        return MAY, f"the mask `{_short(text)}` is made by a call the code does not show"
    if isinstance(e, (cst.Name, cst.Attribute)):
        if _CAUSAL_NAME.search(text):
            return SILENT, "a causal mask keeps the diagonal"
        if isinstance(e, cst.Attribute) and isinstance(e.value, cst.Name) and e.value.value == "self":
            value = _buffer(ctx, e)
            if value is not None:
                return row_mask(ctx, value, scope, scores, depth - 1)
        how = "passed in" if passed or isinstance(e, cst.Name) else "set elsewhere"
        return MAY, f"the mask `{_short(text)}` is {how}: whether it can empty a row is not shown"
    return MAY, "a mask the code does not show"


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 50 else text[:47] + "..."


def finite_fill(ctx: RuleContext, fill: Fill, framework) -> tuple[cst.BaseExpression, list] | None:
    """The fill's replacement: ``-torch.finfo(s.dtype).max``, ``s.dtype.min`` (TensorFlow),
    ``jnp.finfo(s.dtype).min``, and half of it for an additive fill (``s + (1 - m) * fill``:
    a score of -16 or below plus float16's lowest value overflows to -inf, and a fully masked row
    of those is NaN again; half survives any score above -32768); None where the scores are
    not a name to take the dtype of (or the framework, Keras 3, has no finfo)."""
    src = fill.scores
    if framework is None or src is None or not isinstance(src, (cst.Name, cst.Attribute, cst.Subscript)):
        return None
    text = ctx.code(src)
    imports: list = []
    if framework.name == "tensorflow":
        new = f"{text}.dtype.min"
    elif framework.name in ("torch", "jax"):
        spelling = ctx.spell(framework, o.FINFO, fill.scope)
        if spelling is None:
            return None
        func, _, imports = spelling
        new = f"-{ctx.code(func)}({text}.dtype).max" if framework.name == "torch" else \
            f"{ctx.code(func)}({text}.dtype).min"
    else:
        return None
    try:
        made = code(new)
    except cst.ParserSyntaxError:  # pragma: no cover - the parts come from parsed code
        return None
    return (halved(ctx, fill.node, made) if fill.additive else made), imports


def halved(ctx: RuleContext, at: cst.BaseExpression, value: cst.BaseExpression) -> cst.BinaryOperation:
    """``value / 2``, to replace ``at``: in parentheses where ``at`` is an operand, ``(1 - m) * (fill / 2)``."""
    inside = isinstance(ctx.parent(at), (cst.BinaryOperation, cst.UnaryOperation))
    return cst.BinaryOperation(value, cst.Divide(), cst.Integer("2"),
                               **({"lpar": [cst.LeftParen()], "rpar": [cst.RightParen()]} if inside else {}))
