"""The two entry points the scripts use, in one place, so that a move of nanlint's
modules changes one import here and not every script."""

from nanlint.lint.engine import Linter  # noqa: F401
from nanlint.rules.base import all_rules  # noqa: F401
