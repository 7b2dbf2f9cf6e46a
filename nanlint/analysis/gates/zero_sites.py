"""Where the zero rules (NAN107, NAN108, NAN206) can report, read from CPython's tree:
a backward search from the operands of their sinks to a *strong* source of 0, for the
site filter (``Rule.site``).

It mirrors :func:`nanlint.analysis.zeros.reaches_zero` and the facts that make evidence strong
(:mod:`nanlint.analysis.facts`) on the syntax alone, and must answer True wherever a rule reports
(``tests/test_speed.py`` compares on the pages' examples, ``scripts/site_soundness.py``
on whole corpora).  The search is :mod:`nanlint.analysis.gates.zero_search`'s, over the bindings
:mod:`nanlint.analysis.gates.zero_files` reads.  What it follows, from a sink's operand:

* names and attribute names (file-wide, any scope), the returns of the functions and of
  the methods of the classes a called name may be, the arguments the call sites of a
  function bind to its parameters, the objects a called name is bound to (a layer, a
  container of layers, a model), layout ops (``view``, ``cat``, ``gather``, casts),
  indexing, and the names imported from the project's modules, into those modules;
* ``1 - p`` to ``p``; a reduction (``sum``, ``max``) to its argument, which is then a
  source when it is a mask (a comparison: its count) or holds one itself.

and the strong sources it stops at: a relu; a softmax or sigmoid of a value the code
calls a logit or computes affinely (and the layers and activation strings that are
one); a hand-written sigmoid or softmax of such a value; a clip or maximum at 0 of a
value shown to take either sign; a count of a mask this code selects with a comparison
(not a padding mask, not a mask passed in); a zero literal (the one binding of its
name); for NAN107 an affine output and a product.  A sum with a constant (``d + eps``),
a division, a comparison outside a reduction, a clip away from 0, a library call: no
source.
"""

from __future__ import annotations

import ast
from pathlib import Path

from nanlint.analysis.gates import zero_files
from nanlint.analysis.gates.syntax_sites import calls
from nanlint.analysis.gates.zero_files import File
from nanlint.analysis.gates.zero_search import MAX_DEPTH, Search, Vocabulary, zero_literal


def zero_sinks(tree: ast.Module, text: str, vocab: Vocabulary, divide: bool = False, power=None,
               path: Path | None = None, extra: tuple[str, ...] = ()) -> bool:
    """Whether an operand of a sink (a call spelled with one of ``vocab.sinks``, a ``/``
    when ``divide``, ``x ** p`` when ``power(p)``) may hold a strong source's value: where
    the zero rules can report.  Searched backwards from the sinks, reading an expression
    only when the search needs it (most files have few sinks and many assignments).
    ``path`` (the file's, with the configuration's ``extra`` roots) lets a name imported
    from a module of the project be searched in that module; without it such a name
    gives nothing, as the value flow finds nothing there either."""
    operands: list[tuple[ast.AST, bool]] = []  # (operand, may a zero literal there count)
    f = zero_files.file(tree, text)
    for call, name in calls(tree, text, vocab.sinks):
        if name is None:
            if _alias(call, f):
                return True  # a sink bound to another name: any call may be one
            continue
        values = [*call.args, *(k.value for k in call.keywords)]
        if any(type(a) in (ast.List, ast.Tuple, ast.Call) and zero_literal(a) for a in values):
            return True  # log([0.0, 1.0]); a bare number is no operand (x.pow(-1), sum(x, 0))
        operands.extend((a, False) for a in values)
        if type(call.func) is ast.Attribute:
            operands.append((call.func.value, True))
    if divide or power is not None:
        operands.extend((o, True) for o in f.operators(divide, power))
    if not operands:
        return False
    return Search(f, vocab, path, extra, MAX_DEPTH).reaches(operands)


def _alias(node: ast.AST, f: File) -> bool:
    """A sink's name written other than called: ``import ... as``, or an attribute of an
    imported module (``ln = tf.math.log``, ``map(torch.log, xs)``); not a variable or an
    argument of that name (``power=power``, ``self.power``)."""
    if type(node) is ast.alias:
        return True
    if type(node) is not ast.Attribute:
        return False
    root = node
    while type(root) is ast.Attribute:
        root = root.value
    return type(root) is ast.Name and (root.id in f.bindings.modules or root.id in f.bindings.imported)
