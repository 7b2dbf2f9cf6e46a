"""Values floored in place (``count[count == 0] = 1``, ``var.clamp_(min=eps)``): the semantic
model records what a scope changes in place (``Scope.mutations``) and one fact,
``guards.floored_in_place``, reads it for every rule that asks whether a value is guarded.
The floor must come before the use, on the value that reaches it, and must replace the zeros
with a positive value; the numbers it relies on are checked in torch."""

import textwrap

import pytest

from conftest import lint
from nanlint.semantic.context import FileContext
from nanlint.semantic.navigation import precedes
from nanlint.source.walk import parse


def _codes(src: str, select: str = "ALL") -> list[str]:
    return [f.code for f in lint(textwrap.dedent(src), select=select, may=True)]


def test_the_index_records_item_writes_and_in_place_methods():
    ctx = FileContext(parse(textwrap.dedent("""\
        def f(m, s, t):
            m[m == 0] = 1
            s.std.clamp_(min=1e-6)
            t.sum()
            m.add(1)
    """)))
    [fscope] = [s for s in ctx.index.scopes.values() if s.kind == "function"]
    assert {k: [type(n).__name__ for n in v] for k, v in fscope.mutations.items()} == \
        {"m": ["Assign"], "s.std": ["Call"]}


def test_precedes_orders_nodes_and_rejects_nesting():
    module = parse("a = 1\nb = a\n")
    ctx = FileContext(module)
    first, second = module.body
    inner = second.body[0].value  # the ``a`` read on line 2
    assert precedes(ctx, first, second) and precedes(ctx, first, inner)
    assert not precedes(ctx, second, first) and not precedes(ctx, second, inner)


MEAN = """\
    import torch

    def masked_mean(emb, mask):
        total = (emb * mask.unsqueeze(-1)).sum(1)
        count = mask.sum(1)
        {floor}
        return total / count.unsqueeze(-1)
"""


@pytest.mark.parametrize("floor,flagged", [
    ("count[count == 0] = 1", False),
    ("count[count < 1e-9] = 1e-9", False),
    ("count.clamp_(min=1.0)", False),
    ("count.masked_fill_(count == 0, 1.0)", False),
    ("pass", True),
    ("count[count == 0] = 0", True),  # the zeros stay zeros
    ("count[count == 1] = 2", True),  # not the zeros
    ("count[count < 0] = 1", True),  # 0 is not below 0
    ("count.clamp_(max=1.0)", True),
])
def test_a_floor_in_place_guards_the_masked_mean(floor, flagged):
    assert ("NAN401" in _codes(MEAN.format(floor=floor), "NAN401")) is flagged


def test_a_floor_after_the_division_or_on_another_value_is_no_guard():
    assert _codes("""\
        import torch

        def f(emb, mask):
            total = (emb * mask.unsqueeze(-1)).sum(1)
            count = mask.sum(1)
            out = total / count.unsqueeze(-1)
            count[count == 0] = 1
            return out
    """, "NAN401") == ["NAN401"]
    assert _codes("""\
        import torch

        def f(p, q):
            p[p == 0] = 1e-8
            p = q * 2
            return torch.log(p)
    """, "NAN109") == ["NAN109"]
    assert _codes("""\
        import torch

        def f(p):
            p[p == 0] = 1e-8
            return torch.log(p)
    """, "NAN109") == []


def test_a_sum_of_guarded_terms_is_guarded_for_x_log_x():
    """dopamine's MoE entropy: ``x += EPS; x /= sum(x)`` keeps x positive, so x * log(x)
    is finite; without the epsilon it is a may-tier finding."""
    src = """\
        import jax.numpy as jnp
        EPS = 1e-6

        def entropy(x):
            {eps}
            x /= jnp.sum(x)
            return -jnp.sum(x * jnp.log(x))
    """
    assert _codes(src.format(eps="x += EPS"), "NAN112") == []
    assert _codes(src.format(eps="pass"), "NAN112") == ["NAN112"]


def test_a_cast_is_not_looked_through_a_layout_op_is():
    """``reshape(p + eps)`` keeps the epsilon; a cast may lose it (1e-8 is 0 in float16)."""
    src = """\
        import torch

        def f(p):
            return torch.log({arg})
    """
    assert _codes(src.format(arg="(p + 1e-6).unsqueeze(-1)"), "NAN109") == []
    assert _codes(src.format(arg="(p + 1e-8).to(torch.float16)"), "NAN109") == ["NAN109"]


def test_the_floor_in_place_removes_the_nan_in_torch():
    """What the silence rests on: an empty mask row gives 0/0 = NaN in value and gradient;
    ``count[count == 0] = 1`` first gives 0 and a finite gradient."""
    import torch

    def run(floor: bool):
        emb = torch.ones(2, 3, 4, requires_grad=True)
        mask = torch.tensor([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
        total = (emb * mask.unsqueeze(-1)).sum(1)
        count = mask.sum(1)
        if floor:
            count[count == 0] = 1
        out = total / count.unsqueeze(-1)
        out.sum().backward()
        return out, emb.grad

    out, grad = run(False)
    assert torch.isnan(out[1]).all() and torch.isnan(grad[1]).all()
    out, grad = run(True)
    assert torch.equal(out[1], torch.zeros(4)) and torch.isfinite(grad).all()
    assert torch.equal(out[0], torch.ones(4))
