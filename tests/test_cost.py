"""Cost grows linearly with the file (issue 22), counted rather than timed: the calls
of ``Index.qualname`` and of the positions pass for a module with N and 2N findings,
and the memory the value flow of a function keeps for N and 2N statements."""

from __future__ import annotations

import importlib.util
import tracemalloc
from pathlib import Path

import pytest

from nanlint.lint.engine import Linter
from nanlint.rules.base import all_rules
from nanlint.source import positions as positions_mod
from nanlint.semantic.context import FileContext
from nanlint.semantic.resolve import Index
from nanlint.source.walk import parse

# the bench's generators of issue 22's shapes (bench/adversarial.py), so the test counts what the bench times
_spec = importlib.util.spec_from_file_location("nanlint_adversarial",
                                               Path(__file__).resolve().parent.parent / "bench" / "adversarial.py")
adversarial = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(adversarial)
findings_module = adversarial.findings_file  # n functions, each with one NAN106 (log(1 + exp(x)))
long_function = adversarial.long_def_file  # one function of n statements, ending in one NAN101


def _count(monkeypatch, target, name: str, source: str) -> tuple[int, int]:
    calls = [0]
    original = getattr(target, name)

    def counted(*args, **kwargs):
        calls[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(target, name, counted)
    result = Linter(all_rules()).lint_source(source.encode(), "generated.py")
    monkeypatch.setattr(target, name, original)
    return calls[0], len(result.findings)


@pytest.mark.parametrize("n", [150])
def test_qualname_calls_grow_linearly_with_findings(monkeypatch, n):
    small, found_small = _count(monkeypatch, Index, "qualname", findings_module(n))
    large, found_large = _count(monkeypatch, Index, "qualname", findings_module(2 * n))
    assert (found_small, found_large) == (n, 2 * n)
    assert large / small < 2.5, (small, large)  # one walk of the module per scope made it ~4


def test_positions_computed_once_per_statement_holding_a_finding(monkeypatch):
    """A few findings never compute the whole module's positions (nanlint/source/positions.py):
    each places itself by generating the code of its own statement, once; past MAX_UNITS of
    them, one pass over the whole module is cheaper, and is done once."""
    few = positions_mod.MAX_UNITS // 2
    whole, found = _count(monkeypatch, positions_mod, "whole_positions", findings_module(few))
    units, again = _count(monkeypatch, positions_mod, "unit_positions", findings_module(few))
    assert found == again == few and whole == 0
    assert units == few  # one ``return`` per function holding a finding
    whole, found = _count(monkeypatch, positions_mod, "whole_positions", findings_module(4 * few))
    units, _ = _count(monkeypatch, positions_mod, "unit_positions", findings_module(4 * few))
    assert found == 4 * few and whole == 1 and units == positions_mod.MAX_UNITS


def _flow_memory(n: int) -> int:
    module = parse(long_function(n))
    ctx = FileContext(module)
    scope = next(s for s in ctx.index.scopes.values() if s.kind == "function")
    tracemalloc.start()
    try:
        ctx._flow(scope)
        return tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()


def test_flow_memory_grows_linearly_with_a_long_function():
    small, large = _flow_memory(1000), _flow_memory(2000)
    assert large / small < 2.5, (small, large)  # a state copied per statement made it ~4
