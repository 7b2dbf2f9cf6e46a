"""NAN001 parse-error: reported by the engine when a file does not parse."""

from nanlint.rules.base import Rule


class ParseError(Rule):
    code = "NAN001"
    name = "parse-error"
    summary = "The file could not be parsed (Python 2 syntax, syntax error, bad encoding)"
    frameworks = ()

    def check(self, ctx) -> None:
        """Nothing to do: the engine reports this before rules run."""
