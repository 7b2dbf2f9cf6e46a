"""What a fixture is and where fixtures are: the Fixture / Case / Combined records the
harness fills in, and their discovery (``fixtures/<CODE>-<name>/<framework>.py``).
Standard library only."""

from __future__ import annotations

import ast
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

FRAMEWORKS = ("tensorflow", "keras", "torch", "jax")
# One worker process per group: Keras 3 runs on the TensorFlow backend, so the two
# share a process (TensorFlow's import alone costs ~5 s).
GROUP = {"tensorflow": "tensorflow", "keras": "tensorflow", "torch": "torch", "jax": "jax"}
REQUIRES = {"tensorflow": ("tensorflow",), "keras": ("keras", "tensorflow"), "torch": ("torch",),
            "jax": ("jax", "jaxlib")}
DEFAULT_TOLERANCE = 1e-5
FIXTURE_DIR = re.compile(r"^(NAN\d{3})-([A-Za-z0-9][A-Za-z0-9_-]*)$")
PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the directory holding nanlint/
SKIP_DIRS = {".git", "__pycache__", ".venv", "venv", "node_modules", ".pytest_cache", ".hypothesis"}
# A fixture directory holding this file is linted as a project with it (``--config``)
# instead of ``--isolated``, so version-aware rules see the target it (or a
# ``requirements*.txt`` next to it) declares, e.g. NAN502's TensorFlow < 2.4.
PROJECT_CONFIG = "nanlint.toml"


class UsageError(Exception):
    """A bad path or option: exit 2."""


def default_fixture_dir() -> Path:
    """The repository's ``fixtures/`` (next to the package), else the copy an installed
    wheel ships (``nanlint/_fixtures``), else ``./fixtures``."""
    repo = PACKAGE_ROOT / "fixtures"
    packaged = Path(__file__).resolve().parent.parent / "_fixtures"
    return repo if repo.is_dir() else packaged if packaged.is_dir() else Path("fixtures")


@dataclass
class Case:
    name: str
    kind: str  # hazard / benign / invalid
    device: str = "-"
    unfixed: str = "-"  # "NaN: loss, grad" / "finite" / "error"
    fixed: str = "-"
    max_abs_diff: float | None = None
    criterion: str = "-"  # hazard cases: nonfinite / raises / reference (benign: "equal")
    observed: str = "-"  # what proved (or failed to prove) the hazard, e.g. "raises ValueError"
    ok: bool = False
    problems: list[str] = field(default_factory=list)
    raw: dict = field(default_factory=dict)
    reference: str = "-"  # hazard cases: where the exact values come from (float64 / closed form / none: why)
    ref_err: float | None = None  # max |fixed - reference| over every output element


@dataclass
class Combined:
    """The fixture fixed the way a user fixes it: every default rule (plus the fixture's rule
    when it is opt-in) with ``--fix --unsafe-fixes``, the fixture's config handling kept.

    ``mode``: ``"same"`` — its text equals the rule-alone copy's (or, for a display-only
    fixture, nothing changed it), so the rule-alone result is its result; ``"fix"`` — it
    differs and runs under the rule-alone criteria (hazards finite / EXPECT, benign equal);
    ``"keep"`` — a display-only fixture that other rules' fixes changed while the finding is
    still reported: the hazard is the user's to fix by hand, so only the benign cases are
    judged (finite and equal to unfixed: the other fixes broke nothing) and hazard cases are
    recorded, not judged."""

    selection: str  # e.g. "default rules" / "default rules + NAN109"
    path: Path | None = None
    identical: bool | None = None  # text == the rule-alone fixed copy's (None: not made)
    mode: str = "-"
    diff: str = ""  # rule-alone fixed text -> combined text
    rules_fixed: dict[str, int] = field(default_factory=dict)  # code -> fixes nanlint applied
    still_reported: list[dict] = field(default_factory=list)  # the fixture's rule, on the combined copy
    errors: list[str] = field(default_factory=list)
    cases: list[Case] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        if self.errors:
            return False
        if self.mode == "same":
            return True
        return bool(self.cases) and all(c.ok for c in self.cases)


@dataclass
class Fixture:
    rule: str
    slug: str
    framework: str
    path: Path
    mode: str | None = None  # "fix": nanlint's fix is applied; "manual": display-only, compute_manual
    fixed_path: Path | None = None
    diff: str = ""
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None
    requires: dict | None = None  # the fixture's REQUIRES (framework -> version specifier)
    requires_unmet: bool = False  # skipped because the worker's framework version does not meet REQUIRES
    device: str = "-"
    tolerance: float = DEFAULT_TOLERANCE
    reference_tolerance: float | None = None  # REFERENCE_TOLERANCE (default: the tolerance)
    reference_source: str | None = None  # float64 / closed form / None (see nanlint.harness.reference)
    cases: list[Case] = field(default_factory=list)
    findings_before: list[dict] = field(default_factory=list)
    findings_after: list[dict] = field(default_factory=list)
    combined: Combined | None = None  # the all-default-rules fix (see Combined)
    sweeps: dict | None = None  # --plot only: the worker's sweep (nanlint.harness.sweep.run), drawn by harness.plot

    @property
    def id(self) -> str:
        return f"{self.rule}-{self.slug}/{self.path.name}"

    @property
    def config(self) -> Path | None:
        """The fixture directory's nanlint.toml, when it has one (see PROJECT_CONFIG)."""
        path = self.path.parent / PROJECT_CONFIG
        return path if path.is_file() else None

    @property
    def ok(self) -> bool:
        return (self.skipped is None and not self.errors and bool(self.cases) and all(c.ok for c in self.cases)
                and (self.combined is None or self.combined.ok))

    @property
    def failed(self) -> bool:
        """Not ok, and not excused by a skip: a skipped fixture still fails on an error of its
        own (nanlint no longer reporting it, a fixture that does not import, a combined fix
        that does not parse)."""
        return not self.ok and (self.skipped is None or bool(self.errors)
                                or bool(self.combined and self.combined.errors))

    @property
    def status(self) -> str:
        if self.failed:
            return "FAIL"
        return "skip" if self.skipped is not None else "ok"


def framework_of(path: Path) -> str | None:
    """``torch.py`` -> torch; ``tensorflow_tf1.py`` (a variant) -> tensorflow."""
    stem = path.stem
    if stem in FRAMEWORKS:
        return stem
    head = re.split(r"[_-]", stem, maxsplit=1)[0]
    return head if head in FRAMEWORKS else None


def _fixture_files(directory: Path, match: re.Match) -> list[Fixture]:
    found = []
    for path in sorted(directory.glob("*.py")):
        if path.name.startswith("_"):
            continue
        fw = framework_of(path)
        fixture = Fixture(match.group(1), match.group(2), fw or path.stem, path.resolve())
        if fw is None:
            fixture.errors.append(f"unknown framework {path.stem!r}: a fixture file is named "
                                  f"<framework>.py (or <framework>_<variant>.py), one of {', '.join(FRAMEWORKS)}")
        found.append(fixture)
    return found


def discover(paths: Iterable[Path]) -> list[Fixture]:
    """Fixtures under ``paths``: fixture directories (``NAN101-log-softmax/``), files in
    them, or any directory holding fixture directories (searched recursively)."""
    found: list[Fixture] = []
    seen: set[Path] = set()

    def add(items: list[Fixture]) -> None:
        for f in items:
            if f.path not in seen:
                seen.add(f.path)
                found.append(f)

    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise UsageError(f"path does not exist: {path}")
        if path.is_file():
            match = FIXTURE_DIR.match(path.resolve().parent.name)
            if match is None or path.suffix != ".py":
                raise UsageError(f"{path} is not a fixture: fixtures are <CODE>-<name>/<framework>.py "
                                 f"(e.g. fixtures/NAN101-log-softmax/torch.py)")
            add([f for f in _fixture_files(path.resolve().parent, match) if f.path == path.resolve()])
            continue
        match = FIXTURE_DIR.match(path.resolve().name)
        if match:
            add(_fixture_files(path, match))
            continue
        for root, dirs, _ in os.walk(path):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
            for d in list(dirs):
                m = FIXTURE_DIR.match(d)
                if m:
                    add(_fixture_files(Path(root) / d, m))
                    dirs.remove(d)
    return found


def required_imports(path: Path) -> list[str]:
    """The top-level packages a fixture cannot be imported without: its module-level
    ``import``s (also under a module-level ``if``; one under ``try`` is the fixture's own
    business), less the standard library and nanlint. A fixture that does not parse has
    none here (the static phase reports it)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    except (OSError, SyntaxError, ValueError):
        return []
    names: list[str] = []
    todo = list(tree.body)
    while todo:
        node = todo.pop(0)
        if isinstance(node, ast.If):
            todo[:0] = node.body + node.orelse
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    tops = (name.split(".")[0] for name in names)
    return list(dict.fromkeys(n for n in tops if n not in sys.stdlib_module_names and n not in ("__future__", "nanlint")))
