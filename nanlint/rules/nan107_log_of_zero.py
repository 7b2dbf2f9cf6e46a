"""NAN107 log-of-zero: a log whose argument reaches 0 (or below) on inputs the program
sees -- a probability that underflows, ``1 - p`` of a probability that saturates, a
rectified value, a count of a mask, an affine output, a literal holding 0."""

from __future__ import annotations

from nanlint.fix import fixes
from nanlint.rules._zero_logs import LogSinks


class LogOfZero(LogSinks):
    code = "NAN107"
    name = "log-of-zero"
    summary = "log of a value that reaches 0: an underflowing probability, 1 - p, relu, a count, matmul + b"
    fix = fixes.UNSAFE  # its best fix is a guard; the log of a hand-written sigmoid is NAN102's (safe)
    default = True  # strong evidence only; the weak classes are NAN110's (docs/zero-rules.md)
    supersedes = ("NAN109",)
