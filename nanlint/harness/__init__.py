"""The fixture harness: proves by execution that nanlint's fixes make the NaNs disappear.

``python -m nanlint.harness`` (or ``nanlint verify``) discovers fixtures
(``fixtures/<CODE>-<name>/<framework>.py``, see ``fixtures/README.md``), fixes a copy of
each with nanlint itself, runs the unfixed and the fixed code in one subprocess per
framework, and checks that every ``hazard*`` case is NaN/Inf unfixed and finite fixed and
that every ``benign*`` case keeps its values.  The linter never imports this package.
"""
