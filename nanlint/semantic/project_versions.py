"""Which framework versions a project targets, for version-aware rules.

Two sources, in order: ``[tool.nanlint.frameworks]`` (``tensorflow = "2.3"``,
already validated by :mod:`nanlint.lint.config` and passed to rules as
``ctx.settings["frameworks"]``), then the project's own dependency pins next to
the configuration root: ``[project] dependencies`` in ``pyproject.toml`` and
every ``requirements*.txt``.

A version-aware rule asks :func:`targets_below`: does *every* version the
project admits lie below a limit?  A pin without an upper bound
(``tensorflow>=2.1``) admits the newest release, so the answer is no; an
unknown target is no as well (precision first: no finding without evidence).
Reading the files is cached per root.
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from pathlib import Path

# distribution name (normalized) -> framework
DISTRIBUTIONS = {
    "tensorflow": "tensorflow", "tensorflow-cpu": "tensorflow", "tensorflow-gpu": "tensorflow",
    "tensorflow-macos": "tensorflow", "tensorflow-intel": "tensorflow", "tensorflow-aarch64": "tensorflow",
    "intel-tensorflow": "tensorflow",
    "keras": "keras", "torch": "torch", "jax": "jax",
}

Version = tuple[int, ...]
# The least upper bound of the versions a pin admits: (version, strict).  strict
# means "below version" (``<2.4``, ``~=2.3.0``, ``==2.3.*``); not strict means
# "at most version" (``==2.3.1``, ``<=2.3.4``).  None: no upper bound.
Upper = tuple[Version, bool]

_REQUIREMENT = re.compile(r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?P<spec>[^;]*)")
_CLAUSE = re.compile(r"^\s*(?P<op>===|==|~=|<=|>=|!=|<|>)\s*(?P<version>[^\s,]+)\s*$")


def parse_version(text: str) -> Version:
    """``"2.3"`` -> (2, 3); ``"2.3.0rc1"`` -> (2, 3, 0); ``"2.3.*"`` -> (2, 3)."""
    parts = []
    for piece in text.strip().lstrip("vV").split("."):
        m = re.match(r"\d+", piece)
        if m is None:
            break
        parts.append(int(m.group()))
        if m.end() != len(piece):  # 0rc1, 1+cu118: the rest is not a release number
            break
    return tuple(parts)


def _pad(v: Version, n: int = 4) -> Version:
    return v + (0,) * (n - len(v))


def _bump(v: Version) -> Version:
    """The next release at ``v``'s last position: (2, 3) -> (2, 4)."""
    return v[:-1] + (v[-1] + 1,) if v else v


def upper_bound(spec: str) -> Upper | None:
    """The upper bound of a PEP 440 specifier set such as ``">=2.1,<2.4"``; None when unbounded."""
    best: Upper | None = None
    for clause in spec.split(","):
        if not clause.strip():
            continue
        m = _CLAUSE.match(clause)
        if m is None:
            return None  # a URL or something we do not understand: no claim
        op, text = m["op"], m["version"]
        version = parse_version(text)
        if not version:
            return None
        bound: Upper | None
        if op in ("==", "==="):
            bound = (_bump(version), True) if text.endswith(".*") else (version, False)
        elif op == "~=":
            bound = (_bump(version[:-1]), True) if len(version) > 1 else None
        elif op == "<":
            bound = (version, True)
        elif op == "<=":
            bound = (version, False)
        else:  # >=, >, !=: no upper bound
            bound = None
        if bound is not None and (best is None or _before(bound, best)):
            best = bound
    return best


def _before(a: Upper, b: Upper) -> bool:
    """``a`` is a tighter upper bound than ``b``."""
    va, vb = _pad(a[0]), _pad(b[0])
    return va < vb or (va == vb and a[1] and not b[1])


def requirement(line: str) -> tuple[str, Upper | None] | None:
    """(framework, upper bound) for one requirement line naming a framework, else None."""
    line = line.split("#", 1)[0].strip()
    if not line or line.startswith("-"):
        return None
    m = _REQUIREMENT.match(line)
    if m is None:
        return None
    name = re.sub(r"[-_.]+", "-", m["name"]).lower()
    framework = DISTRIBUTIONS.get(name)
    if framework is None:
        return None
    return framework, upper_bound(m["spec"])


def _requirement_lines(root: Path) -> list[str]:
    lines: list[str] = []
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            data = {}
        deps = data.get("project", {}).get("dependencies", [])
        if isinstance(deps, list):
            lines.extend(d for d in deps if isinstance(d, str))
    for path in sorted(root.glob("requirements*.txt")):
        try:
            lines.extend(path.read_text(encoding="utf-8").splitlines())
        except (OSError, UnicodeDecodeError):
            continue
    return lines


@lru_cache(maxsize=64)
def project_pins(root: str) -> dict[str, Upper | None]:
    """framework -> the loosest upper bound over all its pins under ``root`` (None: unbounded)."""
    pins: dict[str, Upper | None] = {}
    for line in _requirement_lines(Path(root)):
        found = requirement(line)
        if found is None:
            continue
        framework, bound = found
        if framework in pins:
            old = pins[framework]
            pins[framework] = None if old is None or bound is None else (old if _before(bound, old) else bound)
        else:
            pins[framework] = bound
    return pins


def target(settings: dict, framework: str) -> Upper | None:
    """The upper bound of the versions of ``framework`` the project targets, if known."""
    explicit = (settings.get("frameworks") or {}).get(framework)
    if explicit:
        # ``tensorflow = "2.3"`` means the 2.3 series; "2.3.1" that release
        v = parse_version(explicit)
        return (_bump(v), True) if len(v) < 3 else (v, False)
    root = settings.get("root")
    if root is None:
        return None
    return project_pins(str(Path(root).resolve())).get(framework)


def targets_below(settings: dict, framework: str, limit: str) -> bool:
    """Whether every version of ``framework`` the project admits is below ``limit``."""
    bound = target(settings, framework)
    if bound is None:
        return False
    version, strict = bound
    lim = _pad(parse_version(limit))
    return _pad(version) <= lim if strict else _pad(version) < lim


def describe(settings: dict, framework: str) -> str:
    """Where the target came from, for messages."""
    if (settings.get("frameworks") or {}).get(framework):
        return f'[tool.nanlint.frameworks] {framework} = "{settings["frameworks"][framework]}"'
    return f"the project's {framework} pin"
