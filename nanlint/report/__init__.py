"""Output formats: one module per format, each with ``render(run) -> str``.

The format name is the module name (``json_lines`` is ``--format json-lines``)."""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path

from nanlint.engine import Finding


@dataclass
class Run:
    """Everything a report needs about one invocation."""

    findings: list[Finding]
    fixed: int = 0
    unsafe_fixes: bool = False
    fix_mode: bool = False
    errors: list[str] = field(default_factory=list)
    files: int = 0
    cwd: Path = field(default_factory=Path.cwd)

    def display_path(self, path: str) -> str:
        p = Path(path)
        try:
            return str(p.absolute().relative_to(self.cwd))
        except ValueError:
            return path


def formats() -> list[str]:
    return sorted(info.name.replace("_", "-") for info in pkgutil.iter_modules(__path__)
                  if not info.name.startswith("_"))


def render(fmt: str, run: Run) -> str:
    module = importlib.import_module(f"{__name__}.{fmt.replace('-', '_')}")
    return module.render(run)
