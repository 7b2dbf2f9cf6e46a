"""NAN112's gate on CPython's tree: a product one factor of which is logged in the other,
``x * log(x)``, ``x * (log(x) - y)``, ``log(x) * x`` (issue 24).

NAN112's check starts from a framework log and walks up through sums, differences and
negations to a ``*`` whose other factor is the log's argument, written alike.
:func:`xlogx_site` over-approximates that: any call (not only a log, so that a renamed
log is never missed) whose first argument or receiver is written like the other factor
of a ``*`` it sits in, through ``+``, ``-`` and unary minus.
"""

from __future__ import annotations

import ast
from typing import Iterator

from nanlint.source.ast_tree import by_type


def xlogx_site(tree: ast.Module) -> bool:
    """Whether some product in ``tree`` may be the ``x * log(x)`` NAN112 reports."""
    for node in by_type(tree).get(ast.BinOp, ()):
        if not isinstance(node.op, ast.Mult):
            continue
        for factor, other in ((node.left, node.right), (node.right, node.left)):
            if isinstance(factor, ast.Constant):
                continue  # 0.5 * log(0.5): a literal is never 0 unless written 0
            text = ast.dump(factor)
            if any(ast.dump(a) == text for a in _logged(other)):
                return True
    return False


def _logged(node: ast.AST) -> Iterator[ast.AST]:
    """The first argument or receiver of each call in the additive chain of ``node``."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        yield from _logged(node.left)
        yield from _logged(node.right)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        yield from _logged(node.operand)
    elif isinstance(node, ast.Call):
        if node.args:
            yield node.args[0]
        if isinstance(node.func, ast.Attribute):
            yield node.func.value
