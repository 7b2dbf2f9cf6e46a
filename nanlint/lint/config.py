"""``[tool.nanlint]`` in the nearest pyproject.toml (or ``--config FILE``), validated."""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path


class ConfigError(Exception):
    """A configuration problem: reported in one line, exit code 2."""


@dataclass
class Config:
    select: list[str] | None = None
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] | None = None
    extend_exclude: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    unsafe_fixes: bool | None = None
    may: bool | None = None  # the may tier: also report findings on weak evidence
    force_exclude: bool | None = None  # excludes apply to files named explicitly too
    frameworks: dict[str, str] = field(default_factory=dict)  # framework -> target version
    src: list[str] = field(default_factory=list)  # import roots of the project (absolute paths)
    path: Path | None = None  # the file it came from
    root: Path = field(default_factory=Path.cwd)  # patterns are relative to this


def _str_list(key: str, value, source: Path) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{source}: [tool.nanlint] {key} must be a list of strings, got {value!r}")
    return list(value)


_VERSION = re.compile(r"^\d+(\.\d+){0,2}$")
KNOWN_FRAMEWORKS = ("tensorflow", "keras", "torch", "jax")


def _validate(table: dict, source: Path) -> Config:
    config = Config(path=source, root=source.parent)
    for key, value in table.items():
        if key == "select":
            config.select = _str_list(key, value, source)
        elif key == "extend-select":
            config.extend_select = _str_list(key, value, source)
        elif key == "ignore":
            config.ignore = _str_list(key, value, source)
        elif key == "exclude":
            config.exclude = _str_list(key, value, source)
        elif key == "extend-exclude":
            config.extend_exclude = _str_list(key, value, source)
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{source}: [tool.nanlint] per-file-ignores must be a table of pattern = [codes]")
            config.per_file_ignores = {k: _str_list(f"per-file-ignores.{k}", v, source) for k, v in value.items()}
        elif key == "unsafe-fixes":
            if not isinstance(value, bool):
                raise ConfigError(f"{source}: [tool.nanlint] unsafe-fixes must be true or false, got {value!r}")
            config.unsafe_fixes = value
        elif key == "may":
            if not isinstance(value, bool):
                raise ConfigError(f"{source}: [tool.nanlint] may must be true or false, got {value!r}")
            config.may = value
        elif key == "force-exclude":
            if not isinstance(value, bool):
                raise ConfigError(f"{source}: [tool.nanlint] force-exclude must be true or false, got {value!r}")
            config.force_exclude = value
        elif key == "frameworks":
            if not isinstance(value, dict):
                raise ConfigError(f"{source}: [tool.nanlint.frameworks] must be a table like tensorflow = \"2.3\"")
            for name, version in value.items():
                if name not in KNOWN_FRAMEWORKS:
                    raise ConfigError(f"{source}: [tool.nanlint.frameworks] unknown framework {name!r} "
                                      f"(known: {', '.join(KNOWN_FRAMEWORKS)})")
                if not isinstance(version, str) or not _VERSION.match(version):
                    raise ConfigError(f"{source}: [tool.nanlint.frameworks] {name} must be a version string "
                                      f"like \"2.3\", got {version!r}")
            config.frameworks = dict(value)
        elif key == "src":
            config.src = [str((source.parent / p).resolve()) for p in _str_list(key, value, source)]
        else:
            known = ("select, extend-select, ignore, exclude, extend-exclude, force-exclude, per-file-ignores, "
                     "unsafe-fixes, may, frameworks, src")
            raise ConfigError(f"{source}: unknown key {key!r} in [tool.nanlint] (known: {known})")
    return config


def _read_toml(path: Path) -> dict:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {' '.join(str(exc).split())}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None


def load(path: Path) -> Config:
    """Load ``--config FILE``: a pyproject.toml ([tool.nanlint]) or a nanlint.toml (top level)."""
    data = _read_toml(path)
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: [tool] must be a table")
    if path.name == "pyproject.toml":
        table = tool.get("nanlint", {})
    else:
        table = tool.get("nanlint", data) if "tool" in data else data
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.nanlint] must be a table")
    return _validate(table, Path(os.path.realpath(path)))


def find(start: Path) -> Path | None:
    """The nearest ``nanlint.toml`` or pyproject.toml with a [tool.nanlint] table, from ``start`` upwards."""
    start = Path(os.path.realpath(start))
    directory = start if os.path.isdir(start) else start.parent
    for d in (directory, *directory.parents):
        for name in ("nanlint.toml", ".nanlint.toml"):
            if os.path.isfile(d / name):  # os.path: False, not PermissionError, below an unreadable directory
                return d / name
        candidate = d / "pyproject.toml"
        if os.path.isfile(candidate):
            tool = _read_toml(candidate).get("tool", {})
            if isinstance(tool, dict) and "nanlint" in tool:
                return candidate
    return None


def discover(paths: list[Path], config_file: Path | None, isolated: bool) -> Config:
    if isolated:
        return Config()
    if config_file is not None:
        return load(config_file)
    start = Path(_common_parent(paths)) if paths else Path.cwd()
    found = find(start)
    return load(found) if found is not None else Config()


def _common_parent(paths: list[Path]) -> str:
    import os

    resolved = [os.path.realpath(p) for p in paths]  # never raises, unlike Path.resolve() on a symlink loop
    try:
        common = os.path.commonpath(resolved)
    except ValueError:
        return str(Path.cwd())
    return common
