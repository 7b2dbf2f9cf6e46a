"""Output formats: one module per format, each with ``render(run) -> str``.

The format name is the module name (``json_lines`` is ``--format json-lines``); modules
whose name starts with ``_`` are helpers, not formats.  A format may also define
``statistics(run) -> str`` for ``--statistics`` (the text table is the default), and
``EDITS = False`` when it shows no fix's edits (only whether a finding is fixable): a check
in that format need not build them."""

from __future__ import annotations

import importlib
import pkgutil

from nanlint.report import text
from nanlint.report._run import Run, use_color  # noqa: F401 - use_color: the CLI asks for it here


def formats() -> list[str]:
    return sorted(info.name.replace("_", "-") for info in pkgutil.iter_modules(__path__)
                  if not info.name.startswith("_"))


def module(fmt: str):
    return importlib.import_module(f"{__name__}.{fmt.replace('-', '_')}")


def shows_edits(fmt: str, statistics: bool = False) -> bool:
    """Whether a report in ``fmt`` (its ``--statistics`` table) shows the edits of fixes."""
    return not statistics and getattr(module(fmt), "EDITS", True)


def render(fmt: str, run: Run) -> str:
    return module(fmt).render(run)


def render_statistics(fmt: str, run: Run) -> str:
    mod = module(fmt)
    if hasattr(mod, "statistics"):
        return mod.statistics(run)

    return text.statistics(run)
