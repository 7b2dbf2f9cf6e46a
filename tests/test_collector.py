"""A file's analysis makes no reference cycle, so reference counting frees its trees and
models as soon as the file is done, and the collector, which a frozen heap runs rarely
(``ast_tree.FROZEN_THRESHOLDS``), finds next to nothing.

What refers back to the model that holds it does so weakly: a binding's scope
(``scopes.Binding.scope``), a value's asking model and its steps' owner (``reach._Walk``), a
line computed later (``differentiated._line_of``); a parent map is an object of its own
(``walk.Parents``), not a bound method kept by the positions it serves; a rule walks a tree
with a stack, not with a recursive closure or a visitor class made per call; a syntax error
raised again is a copy (``syntax.parse``). One cycle anywhere kept the whole model, its trees
included, until the next full collection: on the 2 MB module of 34,826 findings, 336,000
objects a window and 6 s of its 19 s run in collections."""

from __future__ import annotations

import ast
import collections
import gc

import pytest

from nanlint.lint.engine import Linter
from nanlint.rules.base import all_rules
from nanlint.source import ast_tree
from test_snapshot import snapshot  # scripts/snapshot.py, loaded once: its cases are the pages, fixtures, examples


def _ours(o: object) -> bool:
    kind = type(o)
    module = getattr(o, "__module__", "") if kind.__name__ == "function" else kind.__module__
    return (module or "").startswith(("nanlint", "libcst")) or issubclass(kind, ast.AST)


def _cyclic_garbage(run) -> collections.Counter:
    """What of nanlint's, libcst's or CPython's tree only the collector would free after ``run()``."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        run()
        gc.collect()
        found = collections.Counter(f"{type(o).__module__}.{type(o).__qualname__}"
                                    for o in gc.garbage if _ours(o))
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()
    return found


def test_linting_and_fixing_every_page_fixture_and_example_leaves_no_cycle():
    """Every rule page's blocks under every rule (the may tier and NAN002 included), the
    fixtures and the examples, linted with their fixes' edits and fixed: none leaves garbage
    that reference counting does not free."""
    cases = [c for c in snapshot.sources() if c[3] is None]
    rules = all_rules()
    assert len(cases) > 300

    def run():
        for _, source, settings, _ in cases:
            linter = Linter(rules, dict(settings, may=True))
            linter.lint_source(source, "example.py")
            linter.fix_source(source, "example.py", unsafe=True)

    found = _cyclic_garbage(run)
    assert not found, f"reference cycles left: {found.most_common(8)}"


@pytest.mark.parametrize("text", [
    b"print 'hello'\nimport tensorflow as tf\n",  # CPython's error, raised again by libcst's parse
    b"import torch\nW = " + repr([[0.5] * 40] * 4000).encode() + b"\n"  # a large file, reduced
    b"def f(x):\n    return torch.log(torch.softmax(x, dim=-1))\n",
], ids=["syntax-error", "large-file"])
def test_a_syntax_error_and_a_large_file_leave_no_cycle(text):
    linter = Linter(all_rules(), {})
    found = _cyclic_garbage(lambda: (linter.lint_source(text, "example.py"),
                                     linter.fix_source(text, "example.py", unsafe=False)))
    assert not found, f"reference cycles left: {found.most_common(8)}"


def test_the_frozen_heap_runs_the_collector_less_often_and_gives_its_thresholds_back():
    before = gc.get_threshold()
    ast_tree.freeze_heap()
    try:
        assert gc.get_threshold() == ast_tree.FROZEN_THRESHOLDS != before
    finally:
        ast_tree.thaw_heap()
    assert gc.get_threshold() == before
