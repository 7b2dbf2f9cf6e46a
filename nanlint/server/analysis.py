"""What the language server computes for one document, without any protocol: findings
from the in-memory text, the fixed text, a line with ``# noqa`` added.

The configuration is resolved exactly as the command line resolves it for that path
(:func:`nanlint.lint.project.resolve`), with the editor's settings in place of options."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from nanlint.lint import incremental
from nanlint.lint import noqa as noqa_mod
from nanlint.lint import project as project_mod
from nanlint.findings import PARSE_ERROR, FileResult, Finding
from nanlint.lint.config import ConfigError
from nanlint.source.syntax import precheck
from nanlint.source.lines import split_lines


@dataclass
class Settings:
    """The client's settings (``initializationOptions`` or ``workspace/didChangeConfiguration``)."""

    select: list[str] | None = None
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    unsafe_fixes: bool | None = None  # None: the project's ``unsafe-fixes``

    @classmethod
    def from_client(cls, raw) -> "Settings":
        """From ``{"select": [...], "ignore": "NAN1,NAN2", "unsafeFixes": true}``, also nested
        under ``"nanlint"`` or ``"settings"``; unknown keys are ignored."""
        if not isinstance(raw, dict):
            return cls()
        for key in ("nanlint", "settings"):
            if isinstance(raw.get(key), dict):
                raw = raw[key]

        def selectors(*names):
            for name in names:
                value = raw.get(name)
                if isinstance(value, str):
                    return [v.strip() for v in value.split(",") if v.strip()]
                if isinstance(value, list):
                    return [str(v) for v in value]
            return None

        unsafe = raw.get("unsafeFixes", raw.get("unsafe-fixes", raw.get("unsafe")))
        return cls(select=selectors("select"), extend_select=selectors("extendSelect", "extend-select") or [],
                   ignore=selectors("ignore") or [], unsafe_fixes=unsafe if isinstance(unsafe, bool) else None)


@dataclass
class Analysis:
    path: Path
    findings: list[Finding] = field(default_factory=list)
    excluded: bool = False
    error: str | None = None  # a configuration error or an internal one, one line
    unsafe: bool = False
    # the document's statements, for the analysis of its next edit (:func:`analyse_edit`)
    units: incremental.Units | None = None
    # an edit's analysis (:func:`analyse_edit`): the region it touched and that region's findings,
    # which the server applies to the snapshot it keeps (``findings`` is empty until then)
    change: incremental.Change | None = None


def _project(path: Path, settings: Settings, edits: bool = True) -> project_mod.Project:
    options = project_mod.Options(select=settings.select, extend_select=list(settings.extend_select),
                                  ignore=list(settings.ignore), unsafe_fixes=settings.unsafe_fixes, edits=edits)
    return project_mod.resolve([path], options)


def _included(path: Path, settings: Settings, edits: bool = True) -> project_mod.Project | None:
    """The project ``path`` lints in; None when its configuration is broken (the diagnostics'
    analysis shows why) or excludes it."""
    try:
        project = _project(path, settings, edits)
    except ConfigError:
        return None
    return None if project.excluded(path) else project


def analyse(path: Path, text: str, settings: Settings, edits: bool = False, units: bool = False) -> Analysis:
    """The findings of ``text`` as the file ``path`` (which need not exist or match the
    disk); an excluded path has none (what ``--force-exclude`` does on the command line).
    ``edits``: with their fixes' edits (a quick fix asks for them; diagnostics need only
    whether there is one, which spares libcst's parse: ``Linter.on_tree``).  ``units``:
    with its statements' lines, from which :func:`analyse_edit` analyses an edit of it."""

    out = Analysis(path)
    try:
        project = _project(path, settings, edits)
    except ConfigError as exc:
        out.error = str(exc)
        return out
    out.unsafe = project.unsafe
    if project.excluded(path):
        out.excluded = True
        return out
    source = text.encode("utf-8")
    checked = None
    if units:
        try:
            checked = precheck(source)
        except Exception:  # noqa: BLE001 - the lint reports it (NAN001); no statements to keep
            pass
    result: FileResult = project.linter_for(path).lint_source(source, str(path), checked=checked)
    out.findings = [f for f in result.findings if f.cell is None]
    out.error = result.error
    if checked is not None and checked.tree is not None and not result.error and \
            not any(f.code == PARSE_ERROR[0] for f in result.findings):
        out.units = incremental.units_of(checked.tree)
    return out


def analyse_edit(path: Path, base: incremental.Snapshot, text: str, settings: Settings) -> Analysis | None:
    """The analysis of ``text``, an edit of the document ``base`` was, from the statements the
    edit touched (:mod:`nanlint.lint.incremental`: the large-file reduction's approximation),
    as the :class:`incremental.Change` to apply to ``base`` (a document of 35,000 findings
    comes back from its worker in 0.4 s; its region's findings in next to nothing); None
    where the whole text must be analysed (:func:`analyse`)."""
    project = _included(path, settings, edits=False)
    if project is None:
        return None
    change = incremental.changed(project.linter_for(path), str(path), base, text)
    if change is None:
        return None
    return Analysis(path, unsafe=project.unsafe, change=change)


def fixes_around(path: Path, snapshot: incremental.Snapshot, first: int, last: int,
                 settings: Settings) -> Analysis | None:
    """The findings of the statements on lines ``first``..``last`` of a large document (its
    snapshot) with their fixes' edits, from those statements alone (:func:`incremental.around`):
    a quick fix without the whole document's analysis; None where that cannot be done."""
    project = _included(path, settings)
    if project is None:
        return None
    found = incremental.around(project.linter_for(path), str(path), snapshot, first, last)
    return None if found is None else Analysis(path, findings=found, unsafe=project.unsafe)


def warm() -> None:
    """Analyse a small text once, in the server itself: what the first analysis builds and
    keeps (rule tables, parsers) is then in every worker forked after it, not rebuilt in each."""
    try:
        analyse(Path(tempfile.gettempdir()) / "nanlint-warm.py",
                "import torch\n\n\ndef f(x):\n    return torch.log(torch.softmax(x, 0))\n", Settings())
    except Exception:  # noqa: BLE001 - only a head start: a failure here is the real analysis's to report
        pass


def fix_all(path: Path, text: str, settings: Settings, unsafe: bool = False) -> str | None:
    """The text after ``--fix`` (safe fixes only unless ``unsafe``); None when nothing changes."""

    project = _included(path, settings)
    if project is None:
        return None
    result = project.linter_for(path).fix_source(text.encode("utf-8"), str(path), unsafe)
    if result.error or result.fixed_source is None:
        return None
    return result.fixed_source.decode("utf-8")


def noqa_line(text: str, row: int, code: str) -> str | None:
    """Line ``row`` (1-based) of ``text`` with ``# noqa: CODE`` added or merged, without its
    line ending; None when a comment cannot go there (inside a multi-line string...)."""
    done = noqa_mod.add_noqa(text, {row: [code]})
    if not done.added:
        return None
    return split_lines(done.source)[row - 1]
