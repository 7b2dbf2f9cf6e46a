"""NAN206 root-at-zero: ``sqrt`` (or ``x ** p``, ``pow(x, p)`` with ``0 < p < 1``) of a value
that reaches 0 -- a relu or clipped value, an underflowing probability, ``1 - p`` -- has an
infinite gradient there: ``inf * 0 = NaN`` upstream.  Sums of squares of differences are
NAN202's (distances)."""

from __future__ import annotations

from nanlint.fix import fixes
from nanlint.rules._zero_roots import RootSinks


class RootAtZero(RootSinks):
    code = "NAN206"
    name = "root-at-zero"
    summary = "sqrt / fractional power of a value that reaches 0 (relu, probability, 1 - p): NaN gradient at 0"
    fix = fixes.UNSAFE
    # strong evidence only (5 true, 0 false on both corpora, docs/zero-rules.md)
    default = True
