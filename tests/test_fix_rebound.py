"""A fix that writes a value's code where the value is used must read the same names there
(``semantic.reach.Resolved.repeatable``): ``q = softmax(x); x = relu(x); log(q)`` is not
``log_softmax(x)``, which reads the new ``x``.  Such a finding keeps no edit; one whose names
are not rebound in between keeps its (unsafe) fix.  Each fixed form is checked in torch:
where a fix is offered it computes what the original computes."""

from __future__ import annotations

import textwrap

import pytest

from nanlint.lint.engine import Linter
from nanlint.rules.base import all_rules

torch = pytest.importorskip("torch")


def _fix(code: str) -> tuple[list[str], str]:
    source = textwrap.dedent(code)
    linter = Linter([r for r in all_rules() if r.default])
    found = linter.lint_source(source.encode(), "model.py")
    fixed = linter.fix_source(source.encode(), "model.py", True)
    return [f.code for f in found.findings], (fixed.fixed_source or source.encode()).decode()


def _run(source: str, *args):
    namespace: dict = {}
    exec(compile(source, "model.py", "exec"), namespace)
    return namespace["f"](*args)


CASES = {
    "NAN101 rebound": ("""
        import torch

        def f(x):
            q = torch.softmax(x, -1)
            x = torch.relu(x)
            return torch.log(q)
        """, "NAN101", False),
    "NAN101 rebound on a branch": ("""
        import torch

        def f(x, c=True):
            q = torch.softmax(x, -1)
            if c:
                x = x + 1
            return torch.log(q)
        """, "NAN101", False),
    "NAN101 another name bound": ("""
        import torch

        def f(x):
            q = torch.softmax(x, -1)
            y = torch.relu(x)
            return torch.log(q) + 0 * y
        """, "NAN101", True),
    "NAN102 rebound": ("""
        import torch

        def f(z):
            p = torch.sigmoid(z)
            z = z * 2
            return torch.log(p)
        """, "NAN102", False),
    "NAN106 rebound": ("""
        import torch

        def f(x):
            s = 1 + torch.exp(x)
            x = x * 2
            return torch.log(s)
        """, "NAN106", False),
    "NAN106 rebound after the sum": ("""
        import torch

        def f(x):
            e = torch.exp(x)
            s = 1 + e
            x = x * 2
            return torch.log(s)
        """, "NAN106", False),
    "NAN101 complement rebound": ("""
        import torch

        def f(z):
            q = torch.softmax(z, -1)
            p = 1 - q
            z = z * 2
            return torch.log(p)
        """, "NAN101", True),  # the epsilon guard, at the log: not the exact form, which repeats z
    "NAN106 not rebound": ("""
        import torch

        def f(x):
            s = 1 + torch.exp(x)
            y = x * 2
            return torch.log(s) + 0 * y
        """, "NAN106", True),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_fix_never_reads_a_name_rebound_since_the_value(case):
    code, rule, offered = CASES[case]
    found, fixed = _fix(code)
    assert found == [rule]
    source = textwrap.dedent(code)
    assert (fixed != source) is offered, fixed
    if case == "NAN101 complement rebound":
        assert "clip(p" in fixed and "log_softmax" not in fixed, fixed
    x = torch.tensor([[0.5, -1.0, 2.0], [3.0, 0.0, -2.0]], dtype=torch.float64)
    torch.testing.assert_close(_run(fixed, x), _run(source, x))  # same values: offered or not
