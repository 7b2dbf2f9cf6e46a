"""Options + configuration -> what to run on a file: rules, excludes, per-file linters.

One resolution for the command line, stdin mode and the language server, so that a
file gets the same findings wherever it is linted."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from nanlint.lint import config as config_mod, discovery, selection
from nanlint.lint.config import Config, ConfigError
from nanlint.lint.engine import Linter
from nanlint.rules.base import Rule, all_rules


@dataclass
class Options:
    """What the user asked for on the command line (or in the editor's settings);
    None: not given, the configuration decides."""

    select: list[str] | None = None
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] | None = None
    extend_exclude: list[str] = field(default_factory=list)
    unsafe_fixes: bool | None = None
    may: bool | None = None  # None: the configuration's ``may``
    force_exclude: bool | None = None
    config_file: Path | None = None
    isolated: bool = False
    # whether findings carry their fixes' edits (a report that shows none spares libcst's
    # parse of the files with findings: ``Linter.on_tree``)
    edits: bool = True


@dataclass
class Project:
    cfg: Config
    rules: list[Rule]
    unsafe: bool
    excludes: tuple[str, ...]
    force_exclude: bool
    settings: dict
    _linters: dict = field(default_factory=dict, repr=False)

    def linter_for(self, path: Path) -> Linter:
        """The linter for ``path``: the selected rules less its ``per-file-ignores``."""
        ignored = selection.per_file_ignored(path, self.cfg.root, self.cfg.per_file_ignores)
        key = tuple(sorted(ignored))
        if key not in self._linters:
            rules = [r for r in self.rules if not any(selection.matches(s, r) for s in ignored)]
            self._linters[key] = Linter(rules, self.settings)
        return self._linters[key]

    def excluded(self, path: Path) -> str | None:
        """Whether an exclude pattern matches ``path`` or a directory it is in (below the
        configuration root): what ``--force-exclude`` drops from explicitly named files."""
        return discovery.excluded_with_parents(path, self.cfg.root, self.excludes)


def _check(selectors: Sequence[str], where: str) -> None:
    selection.check(selectors, all_rules(), where)


def resolve(paths: Sequence[Path], options: Options) -> Project:
    """The project the files ``paths`` belong to, under ``options``; ConfigError (one line)
    when the configuration or an option is invalid.  An invalid selector names where it
    was written: the configuration file, or the option."""
    if options.config_file is not None and not options.config_file.is_file():
        raise ConfigError(f"config file not found: {options.config_file}")
    cfg = config_mod.discover(list(paths), options.config_file, options.isolated)
    source = f"{cfg.path} ([tool.nanlint]" if cfg.path is not None else "the configuration ("
    _check(list(cfg.select or []), f"{source} select)")
    _check(cfg.extend_select, f"{source} extend-select)")
    _check(cfg.ignore, f"{source} ignore)")
    for pattern, codes in cfg.per_file_ignores.items():
        _check(codes, f"{source} per-file-ignores {pattern!r})")
    _check(list(options.select or []), "--select")
    _check(options.extend_select, "--extend-select")
    _check(options.ignore, "--ignore")
    may = options.may if options.may is not None else bool(cfg.may)
    rules = selection.select_rules(
        all_rules(),
        options.select if options.select is not None else cfg.select,
        cfg.extend_select + list(options.extend_select),
        cfg.ignore + list(options.ignore),
        may=may,
    )
    unsafe = options.unsafe_fixes if options.unsafe_fixes is not None else bool(cfg.unsafe_fixes)
    force = options.force_exclude if options.force_exclude is not None else bool(cfg.force_exclude)
    if options.exclude is not None:
        excludes = tuple(options.exclude)
    elif cfg.exclude is not None:
        excludes = tuple(cfg.exclude)
    else:
        excludes = discovery.DEFAULT_EXCLUDE
    excludes += tuple(cfg.extend_exclude) + tuple(options.extend_exclude)
    # --isolated: no config and no dependency pins read from the project either
    settings = {"frameworks": cfg.frameworks, "root": None if options.isolated else cfg.root, "src": cfg.src}
    if may:
        settings["may"] = True
    if not options.edits:
        settings["edits"] = False
    return Project(cfg, rules, unsafe, excludes, force, settings)
