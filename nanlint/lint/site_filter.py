"""The site filter: whether a file can hold a finding of an enabled rule, decided
without libcst.

A rule names the ops it starts from (``Rule.triggers``) and the words its text must
hold (``Rule.wanted``); :mod:`nanlint.semantic.sites` reads which ops a file's names
resolve to, counting the value sources of the project modules it imports (a value may
come from them: their texts' names first, their trees only while those could decide).
A file where no rule can report is done here.  What a rule asks beyond its ops (the
shape of a call's arguments, where a value comes from) has no second implementation on
CPython's tree: the rules themselves run on it next (``Linter.on_tree``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from nanlint.source.syntax import Checked
from nanlint.vocabulary import ops as o
from nanlint.vocabulary.ops import VALUE_SOURCES, with_implying
from nanlint.rules.base import Rule
from nanlint.source.syntax import precheck
from nanlint.semantic import modules
from nanlint.semantic import sites
from nanlint.source import large


_DEP_OPS: dict[tuple, frozenset[str]] = {}  # ops of imported project modules, per process


class SiteFilter:
    def __init__(self, rules: Sequence[Rule], settings: dict) -> None:
        self.settings = settings
        self.rules = list(rules)
        # the rules that name no trigger (NAN002: a directive anywhere): in a text where one of
        # them is wanted (a ``noqa`` written), every file is linted whole
        self.anywhere = [r for r in self.rules if r.triggers is None]
        # every op and site key the other rules' triggers name
        self.wanted = frozenset(k for r in self.rules if r.triggers is not None for group in r.triggers
                                for k in with_implying(group))

    def _anywhere(self, text: str) -> bool:
        """Whether a rule that names no trigger may report in ``text``."""
        return any(r.wanted(text) for r in self.anywhere)

    def cannot_report(self, checked: Checked, path: str | None = None) -> bool:
        """True when no enabled rule can report in a source (whose :func:`precheck` is
        ``checked``): it lacks some group of every rule's triggers (:mod:`nanlint.semantic.sites`),
        counting the ops of the project modules it imports (a value may come from them),
        so the rules need not run on it."""

        if checked.tree is None or self._anywhere(checked.text):
            return False
        rules = [r for r in self.rules if r.wanted(checked.text)]  # as run_rules skips them
        if not rules:
            return True
        deps: list[tuple[Path, frozenset[str]]] = []  # imported project modules, the ops their names spell
        listed: list[bool] = []  # whether deps was filled

        def may(present: frozenset[str]) -> bool:
            return any(rule.can_report(present) for rule in rules)

        def enough(present: frozenset[str]) -> bool:
            if may(present):
                return True
            if not may(present | VALUE_SOURCES):
                return False  # no value an imported module can give would make it enough
            # the imported modules: the names in their texts bound what their trees can
            # hold; a tree is built only while those bounds could still decide
            if not listed:
                listed.append(True)
                deps.extend((d, self._dep_ops(d, exact=False)) for d in self._dependencies(checked, path))
            loose = [ops for _, ops in deps]
            if not may(present.union(*loose)):
                return False
            found: set[str] = set()
            for i, (dep, ops) in enumerate(deps):
                if ops:
                    found |= self._dep_ops(dep, exact=True)
                    if may(present | found):
                        return True
                    if not may(present.union(found, *loose[i + 1:])):
                        return False
            return False
        return not enough(sites.scan(checked.tree, checked.text, self.wanted, enough, decides=may))

    def reduced(self, checked: Checked, source: bytes) -> tuple[str, list[int]] | list | None:
        """A large file's text with only the statements that can hold a finding, or windows
        of it (a list of such texts, each analysed apart), a long def cut into its body's
        statements (:func:`nanlint.source.large.pieces`); None to parse it whole."""

        if len(source) <= large.LARGE or checked.tree is None or self._anywhere(checked.text):
            return None
        rules = self.reporting(checked.text)
        ops = frozenset(k for r in rules for group in r.triggers for k in with_implying(group))  # type: ignore[union-attr]
        # and the words a rule's check reads beside its ops (NAN504's float16 evidence, a
        # set_floatx("float16") statement of its own): its ``needs`` that are names
        evidence = frozenset(n for r in rules for n in r.needs if n.isidentifier())
        # and the operators a rule starts from (a division, a power): their statements too
        names = sites.last_names(ops) | evidence | frozenset(t for t in (sites.SLASH, "**") if t in ops
                                                              or t == "**" and ops & {sites.POW_HALF, sites.NEG_POW})
        return large.pieces(checked.tree, checked.text, names)

    def reporting(self, text: str) -> list[Rule]:
        """The rules that can report in ``text``, judged by the names in it and the operators
        it writes (never fewer than a scan finds; the ops an imported module can give all
        count): a rule missing a group of its triggers finds nothing there, so neither the
        engine runs it (``Linter._check``) nor does a large file keep a statement for it (a
        relu chain with no division is no NAN108's).  Every rule when some rule may report
        anywhere (``triggers`` None) and is wanted in ``text``."""
        if self._anywhere(text):
            return [r for r in self.rules if r.wanted(text)]
        present = set(sites.scan(None, text, self.wanted, lambda p: False))
        if "/" in text:
            present.add(sites.SLASH)
        if "**" in text:
            present.update((sites.POW_HALF, sites.NEG_POW))
        if o.POW in present:
            present.add(sites.POW_HALF)  # pow(s, 0.5)
        present.update(VALUE_SOURCES)
        return [r for r in self.rules if r.wanted(text) and r.can_report(frozenset(present))]

    def _dep_ops(self, dep: Path, exact: bool) -> frozenset[str]:
        """The value-source ops an imported project module can hold: read from its tree
        when ``exact``, else from the names in its text alone (more, never fewer; no
        tree is built).  Remembered per process."""

        try:
            st = dep.stat()
        except OSError:
            return frozenset()
        key = (str(dep), st.st_mtime_ns, st.st_size, self.wanted, exact)
        if key not in _DEP_OPS:
            try:
                if exact:
                    dep_checked = precheck(dep.read_bytes())
                    ops = sites.scan(dep_checked.tree, dep_checked.text, self.wanted, lambda p: True) \
                        if dep_checked.tree is not None else frozenset()
                else:  # the first, text-only step of a scan
                    text = dep.read_bytes().decode("utf-8", "replace")
                    ops = sites.scan(None, text, self.wanted, lambda p: False)  # type: ignore[arg-type]
                _DEP_OPS[key] = ops & VALUE_SOURCES
            except Exception:  # noqa: BLE001 - an unreadable or broken module gives nothing
                _DEP_OPS[key] = frozenset()
        return _DEP_OPS[key]

    def _dependencies(self, checked: Checked, path: str | None) -> list[Path]:
        if not path or path.startswith("<") or "import" not in checked.text:
            return []
        return list(modules.dependencies(Path(path), checked.text, modules.extra_roots(self.settings)))
