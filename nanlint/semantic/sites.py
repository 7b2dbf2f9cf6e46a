"""What a file can hold, without libcst: the canonical ops its names can resolve
to, and the few syntactic sites rules start from.

The engine parses every file with CPython's parser first anyway (the syntax check
of :func:`nanlint.lint.engine.precheck`).  :func:`scan` reads the names in the source
text and, when those could matter, that tree's statements (imports, aliases), at
about a tenth of the cost of a libcst parse; a file where no enabled rule finds
all of its ``Rule.triggers`` is never parsed with libcst: it cannot have a
finding.  That is most files of framework internals (86% of the frameworks
benchmark corpus's at 389aea3, see ``bench/README.md``; libcst's parse was 85% of
a cold run), far fewer of model code (the training corpus).

The answer over-approximates what :mod:`nanlint.semantic.resolve` resolves, so it never
hides a finding (``tests/test_speed.py`` compares runs with and without it on the
rule pages, the fixtures and real ML sources):

* every import anywhere in the file binds its name, whatever the scope or the
  branch (resolve.py binds per scope, and drops conditional or ambiguous names);
* a name assigned a Name/Attribute chain anywhere (``=``, annotated, ``:=``) is an
  alias of every qualified name that chain can have (resolve.py follows a single
  unconditional one);
* every dotted chain in the text rooted in a bound name is looked up in the
  frameworks' tables, in code, strings and comments alike (docstrings alone are
  left out), called or not (resolve.py looks at call targets in code);
* when a framework with tensor methods is imported (torch), every ``.name`` of one
  of its methods counts (``x.softmax(-1).log()``), whatever its receiver;
* a ``/`` anywhere in the text counts as a division; a ``**`` followed by a float
  literal equal to 0.5 as a square root, and so does a pow op when a 0.5 literal
  is anywhere in the text.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache

from nanlint.source.lines import LINES
from nanlint.source.ast_tree import chain_pairs, statements
from nanlint.vocabulary import ops as o
from nanlint.vocabulary import frameworks as fw_registry

POW_HALF = "**0.5"  # a square root written as a power: ``s ** 0.5``, ``pow(s, 0.5)``
NEG_POW = "**-"  # a power with a negative exponent, a division written as one: ``var ** -0.5``
SLASH = "/"  # the true-division operator (``a / b``)

_GAP = r"(?:\s|\\\n|#[^\n]*\n)*"  # what may separate the parts of a dotted chain
_FLOAT = re.compile(r"(?<![\w.])(?:\d[\d_]*\.[\d_]*(?:[eE][-+]?\d[\d_]*)?|\.\d[\d_]*(?:[eE][-+]?\d[\d_]*)?"
                    r"|\d[\d_]*[eE][-+]?\d[\d_]*)(?![\w.])")
_SLASH = re.compile(r"(?<!/)/(?![/=])")
_NEG_POW = re.compile(r"\*\*(?:[\s(]|\\\n)*-")  # ``** -0.5``, ``**(-1)``
_POW_FLOAT = re.compile(r"\*\*(?:[\s(+]|\\\n)*(\.?\d[\d_.]*(?:[eE][-+]?[\d_]+)?)")  # ``** 0.5``, ``** (.5)``
_WALRUS = re.compile(r"([A-Za-z_]\w*)\s*:=\s*([A-Za-z_]\w*(?:" + _GAP + r"\." + _GAP + r"[A-Za-z_]\w*)*)")
_NAME = re.compile(r"[A-Za-z_]\w*")


@lru_cache(maxsize=None)
def _tables():
    """(qualified name -> ops (its op, and the elementwise form's: ``torch.max(a, b)``),
    method name -> ops, roots of frameworks with methods, last name -> ops it can be the
    last name of, every proper prefix of a qualified name)."""

    functions = {name: _ops_of(f) for name, (_, f) in fw_registry.function_table().items()}
    methods: dict[str, dict[str, set[str]]] = {}  # root -> method name -> ops (a tensor method
    roots: set[str] = set()                        # is an op only where its framework is imported)
    for fw in fw_registry.method_frameworks():
        roots |= set(fw.roots)
        for root in fw.roots:
            for name, f in fw.methods.items():
                methods.setdefault(root, {}).setdefault(name, set()).update(_ops_of(f))
    last: dict[str, set[str]] = {}
    for name, ops in functions.items():
        last.setdefault(name.rsplit(".", 1)[-1], set()).update(ops)
    for table in methods.values():
        for name, ops in table.items():
            last.setdefault(name, set()).update(ops)
    prefixes = {name.rsplit(".", k)[0] for name in functions for k in range(1, name.count(".") + 1)}
    return functions, methods, frozenset(roots), last, frozenset(prefixes)


def _ops_of(f) -> frozenset[str]:
    return frozenset(v.op for v in f.variants())


@lru_cache(maxsize=256)
def _chains(names: frozenset[str]) -> re.Pattern:
    """Dotted chains rooted in one of ``names``: (root, the rest)."""
    return re.compile(r"(?<![\w.])(%s)((?:%s\.%s[A-Za-z_]\w*)+)"
                      % ("|".join(map(re.escape, sorted(names))), _GAP, _GAP))


@lru_cache(maxsize=64)
def last_names(wanted: frozenset[str]) -> frozenset[str]:
    """The identifiers a file must contain to hold one of the ``wanted`` ops."""
    return _names(wanted)


def _names(wanted: frozenset[str]) -> frozenset[str]:
    """The last names that can spell one of the ``wanted`` ops."""
    return frozenset(n for n, ops in _tables()[3].items() if not ops.isdisjoint(wanted))


_WORDS: list = [None, frozenset()]  # the last text scanned, and its identifiers


def words(text: str) -> frozenset[str]:
    """The identifiers written in ``text`` (remembered for the last text: the site filter
    and a large file's reduction read the same one)."""
    if _WORDS[0] is not text:
        _WORDS[:] = [text, frozenset(_NAME.findall(text))]
    return _WORDS[1]


def scan(tree: ast.Module, text: str, wanted: frozenset[str], enough, decides=None) -> frozenset[str]:
    """The ops among ``wanted`` and the site keys the file (its CPython ``tree``, its
    ``text``) can contain, as far as ``enough`` needs them: it is asked whether a
    set is enough for some rule to report, and the answer is final once it is false
    (no rule can report) or true.

    First the names in the text alone: an op none of whose spellings' last names
    appears cannot be there (a qualified name, an import of it and an alias of it
    all spell it out).  Then, when ``decides`` is given (whether a set is enough on its own,
    without what imported modules give), the operators alone (a ``/``: NAN111 starts from
    any division), which no import can change; then those names are resolved through the
    file's imports and aliases."""
    functions, methods, method_roots, last, prefixes = _tables()
    if POW_HALF in wanted:
        wanted = wanted | {o.POW}  # pow(s, 0.5)
    names = _names(wanted).intersection(words(text))
    present = {op for name in names for op in last[name]} & wanted
    keys = _Keys(text, wanted)
    if not keys.complete(present, enough, o.POW in present):
        return frozenset(present)
    # the operators alone (a ``/``, ``** 0.5``, ``** -1`` in the text: no name to resolve) may
    # already decide (NAN111 starts from any division): then no import need be read
    spelled: set[str] = set()
    if decides is not None and keys.complete(spelled, decides, False):
        return frozenset(spelled)
    present = set()
    docstrings: list[tuple[int, int, int, int]] = []
    binds: dict[str, set[str]] = {}
    aliases: list[tuple[str, list[str]]] = []
    roots: set[str] = set()
    for node in statements(tree.body):
        kind = type(node)
        if kind is ast.Import:
            for alias in node.names:
                root = alias.name.split(".")[0]
                roots.add(root)
                if alias.asname:
                    binds.setdefault(alias.asname, set()).add(alias.name)
                else:
                    binds.setdefault(root, set()).add(root)
        elif kind is ast.ImportFrom:
            if node.module and not node.level:
                roots.add(node.module.split(".")[0])
                for alias in node.names:
                    if alias.name != "*":
                        binds.setdefault(alias.asname or alias.name, set()).add(f"{node.module}.{alias.name}")
        elif kind is ast.Assign:
            for target in node.targets:
                chain_pairs(target, node.value, aliases)
        elif kind is ast.AnnAssign:
            if node.value is not None:
                chain_pairs(node.target, node.value, aliases)
        elif kind is ast.Expr and type(node.value) is ast.Constant and type(node.value.value) is str:
            docstrings.append((node.lineno, node.col_offset, node.end_lineno, node.end_col_offset))  # type: ignore
    if docstrings:
        text = _without(text, docstrings)
    if ":=" in text:
        for m in _WALRUS.finditer(text):
            aliases.append((m.group(1), _parts(m.group(2))))

    # aliases: ``tfm = tf.math`` makes ``tfm.log`` a tensorflow.math.log (to a fixpoint)
    for _ in range(8):
        changed = False
        for name, parts in aliases:
            if parts[0] not in binds:
                continue
            rest = "".join("." + p for p in parts[1:])
            known = binds.setdefault(name, set())
            for q in list(binds[parts[0]]):
                if q + rest not in known:
                    known.add(q + rest)
                    changed = True
        if not changed:
            break
    for quals in binds.values():
        for q in quals:
            present.update(functions.get(q, ()))
    roots_of_ops = frozenset(name for name, quals in binds.items() if not prefixes.isdisjoint(quals))
    if roots_of_ops:
        for m in _chains(roots_of_ops).finditer(text):
            rest = _parts(m.group(2))
            for q in binds[m.group(1)]:
                for p in rest:
                    q = f"{q}.{p}"
                    present.update(functions.get(q, ()))
    for root in method_roots & roots:
        table = methods[root]
        for name in names & table.keys():
            if not table[name] <= present and _method_call(text, name, binds):
                present.update(table[name])
    present &= wanted
    keys.complete(present, enough, o.POW in present)
    return frozenset(present)


def _method_call(text: str, name: str, modules: dict[str, set[str]]) -> bool:
    """Whether ``.name`` is written on something that may be a tensor: not on a name an
    import binds (``math.log(2)``, ``np.exp(x)``: a module's function, which the
    functions table resolves, never a tensor's method)."""
    for m in re.finditer(r"\.%s%s\b" % (_GAP, re.escape(name)), text):
        end = m.start()
        while end and text[end - 1] in " \t\n\\":
            end -= 1
        start = end
        while start and (text[start - 1].isalnum() or text[start - 1] == "_"):
            start -= 1
        if start == end or text[start:end] not in modules or text[start - 1:start] == ".":
            return True
    return False


class _Keys:
    """The site keys of a text, each searched only when it could decide."""

    def __init__(self, text: str, wanted: frozenset[str]) -> None:
        self.text = text
        self.wanted = wanted
        self.found: dict[str, bool] = {}

    def _has(self, key: str, pow_call: bool) -> bool:
        if key in (SLASH, NEG_POW):
            if key not in self.found:
                self.found[key] = (_SLASH if key == SLASH else _NEG_POW).search(self.text) is not None
            return self.found[key]
        if "power" not in self.found:  # ``s ** 0.5``
            self.found["power"] = any(_is_half(m) for m in _POW_FLOAT.findall(self.text))
        if self.found["power"] or not pow_call:
            return self.found["power"]
        if "half" not in self.found:  # ``pow(s, 0.5)``: a 0.5 anywhere
            self.found["half"] = any(_is_half(m) for m in _FLOAT.findall(self.text))
        return self.found["half"]

    def complete(self, present: set[str], enough, pow_call: bool) -> bool:
        """Add to ``present`` the keys that make it enough; whether it is."""
        if enough(present):
            return True
        if not enough(present | {SLASH, POW_HALF, NEG_POW}):
            return False  # no key can make it enough: none is searched
        for key in (SLASH, POW_HALF, NEG_POW):
            if key in self.wanted and self._has(key, pow_call):
                present.add(key)
                if enough(present):
                    return True
        return False


def _is_half(literal: str) -> bool:
    try:
        return float(literal) == 0.5
    except ValueError:  # not a literal after all (``** 2.real``)
        return False


def _without(text: str, spans: list[tuple[int, int, int, int]]) -> str:
    """``text`` with the lines of the given statements (docstrings: examples in them
    are not code) blanked, when nothing else is on those lines."""
    lines = LINES.findall(text)
    for l1, c1, l2, c2 in spans:
        if not (0 < l1 <= l2 <= len(lines)):
            continue
        before = lines[l1 - 1].encode("utf-8", "surrogateescape")[:c1].strip()
        after = lines[l2 - 1].encode("utf-8", "surrogateescape")[c2:].strip()
        if before or (after and not after.startswith(b"#")):
            continue  # code shares a line with it
        for k in range(l1 - 1, l2):
            lines[k] = "\n"
    return "".join(lines)


def _parts(chain: str) -> list[str]:
    """``"a . b  # c\\n .c"`` -> ["a", "b", "c"]"""
    if "#" in chain:
        chain = re.sub(r"#[^\n]*", "", chain)
    return _NAME.findall(chain)
