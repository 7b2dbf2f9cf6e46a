"""NAN108 divide-by-zero: a division, ``reciprocal``, ``rsqrt`` or negative power whose
denominator reaches 0 on inputs the program sees: a count of a mask (``loss / num_pos``),
a probability that underflows (``1 / p``), ``1 - p`` of a saturating probability
(odds ``p / (1 - p)``), a rectified value, a literal holding 0."""

from __future__ import annotations

from nanlint.fix import fixes
from nanlint.rules._zero_divisions import DivisionSinks


class DivideByZero(DivisionSinks):
    code = "NAN108"
    name = "divide-by-zero"
    summary = "division by a value that reaches 0: a count of a mask, a probability, 1 - p, relu, a 0 literal"
    # strong evidence only (7 true, 0 false on both corpora, docs/zero-rules.md)
    default = True
    fix = fixes.UNSAFE  # a guard (`maximum(count, 1)`, `maximum(d, 1e-7)`); display-only for another module's value
