"""The speed work must not change a single finding: the prefilter, the worker
processes, the result cache, and the fast libcst plumbing (walk, parents,
positions, parse) are each compared with the plain way on the rule pages'
examples and on real ML sources (the installed frameworks' own code)."""

from __future__ import annotations

import gc
import json
import os
import shutil
import sys
import textwrap
import warnings
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from conftest import ALLOW_MISSING, missing_allowed, missing_framework
from nanlint.lint import cache as cache_mod
from nanlint.lint import catalogue, runner
from nanlint.source import ast_tree, codegen, walk
from nanlint.lint import engine as engine_mod
from nanlint.lint.engine import Linter
from nanlint.semantic.resolve import Index
from nanlint.rules.base import all_rules

SITE = Path(cst.__file__).resolve().parent.parent  # site-packages of the test environment
# Real ML sources nobody here wrote: a mix that some rules flag and the prefilter skips.
CORPUS = [
    "torch/distributions/bernoulli.py", "torch/distributions/categorical.py", "torch/distributions/von_mises.py",
    "torch/distributions/utils.py", "torch/optim/adam.py", "torch/nn/modules/container.py",
    "keras/src/activations/activations.py", "keras/src/optimizers/adam.py", "jax/_src/nn/functions.py",
]

EXTRA = {  # hand-made cases at the prefilter's edges
    "py2_tf.py": "import tensorflow as tf\nprint 'loss', tf.log(x)\n",                  # NAN001, framework file
    "py2_plain.py": "import os\nprint 'hello'\n",                                      # NAN001, no framework
    "plain.py": "import os\n\ndef f(x):\n    return x + 1\n",                          # nothing at all
    "plain_noqa.py": "import os\n\nx = 1  # NOQA: NAN101\n",                             # NAN002 (all), no framework
    "tf_no_needs.py": "import tensorflow as tf\n\nmodel = tf.keras.Sequential()\n",    # framework, no rule's tokens
    "nul.py": "import torch\nx = 1\x00\n",                                             # NUL byte: not parseable
    "in_string.py": "import torch\nDOC = 'torch.log(torch.softmax(x, 1))'\n",          # tokens only in a string
    "torch_hit.py": "import torch\n\ndef f(z):\n    return torch.log(torch.softmax(z, dim=1))\n",
    # the site filter (nanlint/sites.py) at its edges: each of these has a finding
    "alias_module.py": "import tensorflow as tf\ntfm = tf.math\nnn = tf.nn\n\ndef f(z):\n"
                       "    return tfm.log(nn.softmax(z, axis=-1))\n",
    "alias_two_levels.py": "import jax.numpy as jnp\nimport jax\nmath = jnp\nln = math.log\n\n"
                           "def f(z):\n    return ln(jax.nn.softmax(z, axis=-1))\n",
    "split_chain.py": "import torch\n\ndef f(z):\n    return (torch  # the module\n            .log(torch\n"
                      "                 . softmax(z, dim=1)))\n",
    "import_in_function.py": "def f(z):\n    if z is not None:\n        from torch.nn.functional import softmax as s\n"
                             "        import torch as t\n        return t.log(s(z, dim=1))\n",
    "methods_only.py": "import torch\n\ndef f(z):\n    return z.softmax(-1).log()\n",
    "after_docstring.py": 'import torch\n\ndef f(z):\n    """torch.log(torch.softmax(z)) is bad."""; '
                          'return torch.log(torch.softmax(z, dim=1))\n',
    "pow_half.py": "import torch\n\ndef d(a, b):\n    return (((a - b) ** 2).sum(-1)) ** (.5)\n",
    "pow_call.py": "import torch\n\ndef d(a, b):\n    return torch.pow(torch.sum((a - b) ** 2, -1), 5e-1)\n",
    "divide_op.py": "import tensorflow as tf\n\ndef f(x, m):\n    return tf.math.divide(tf.reduce_sum(x * m), "
                    "tf.reduce_sum(m))\n",
    "latin1_cookie.py": "# -*- coding: latin-1 -*-\n# caf\u00e9\nimport torch\nF = torch.nn.functional\n\n"
                        "def f(z):\n    return torch.log(F.softmax(z, dim=1))\n",
    "comment_bars.py": "import torch\n\nF = (torch  " + "#" * 64 + "\n     .nn.functional)\n\n"
                       "def f(z):\n    return torch.log(F.softmax(z, dim=1))  " + "# -" * 64 + "\n",
    # rules whose triggers are common ops (a clip, a log) report only on some shapes of
    # their arguments: each of these has a finding
    "eps_named.py": "import torch\nEPS = 1e-10\n\ndef f(p):\n    return torch.log(EPS + 1 - p)\n",
    "eps_method.py": "import torch\n\ndef f(p):\n    return (1e-10 + 1 - p).log()\n",
    "clip_upper.py": "import tensorflow as tf\n\ndef f(p):\n    return tf.clip_by_value(p, 1e-10, 1 - 1e-10)\n",
    "clip_alias.py": "import torch\nfrom torch import clamp as c\n\ndef step(model):\n"
                     "    for p in model.parameters():\n        p.grad = c(p.grad, 0, 1)\n",
    "grad_clamp.py": "import torch\n\ndef step(model):\n    for p in model.parameters():\n"
                     "        p.grad.data.clamp_(min=0)\n",
    "module_and_method.py": "import math\nimport torch\n\ndef f(z):\n    return math.log(2) * z.softmax(-1).log()\n",
    # a product of probabilities that reaches 0 (the zero rules): each has a finding
    "prod_halting.py": "import torch\n\ndef h(lam, lam_j):\n    p_n = lam * torch.prod(1 - lam_j, dim=-1)\n"
                       "    return torch.log(p_n)\n",
    "cumprod_method.py": "import torch\n\ndef f(probs):\n    return (1 - probs).cumprod(-1).log()\n",
    "reduce_prod_divide.py": "import tensorflow as tf\n\ndef f(w, keep):\n"
                             "    return w / tf.math.reduce_prod(keep, axis=-1)\n",
    # and files it skips: framework code where no rule can start
    "builtin_sum.py": "import torch\n\ndef f(xs):\n    return sum(xs) / len(xs)\n",
    "doc_only.py": 'import torch\n\ndef f(z):\n    """Like torch.log(torch.softmax(z, 1))."""\n    return z\n',
}


def _corpus(tmp_path: Path) -> list[Path]:
    files = []
    for rel in CORPUS:
        src = SITE / rel
        if src.is_file():
            dst = tmp_path / "corpus" / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
            files.append(dst)
    if len(files) < 6:  # the hand-made edge cases below need no framework: they run anyway, when allowed
        why = f"the ML frameworks' sources are not installed ({len(files)} of {len(CORPUS)} corpus files found)"
        if not missing_allowed():
            missing_framework(why)
        warnings.warn(f"{why}: running the hand-made edge cases, fixtures and rule pages only ({ALLOW_MISSING}=1)")
    for name, text in EXTRA.items():
        p = tmp_path / "extra" / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text.encode())
        files.append(p)
    for fixture in sorted((Path(__file__).resolve().parent.parent / "fixtures").glob("NAN*/*.py")):
        p = tmp_path / "fixtures" / fixture.parent.name / fixture.name
        p.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(fixture, p)
        files.append(p)
    for i, block in enumerate(b for page in catalogue.pages().values() for b in page.blocks()):
        p = tmp_path / "pages" / f"{i:03d}_{block.kind}_{block.label or 'x'}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(block.code)
        files.append(p)
    return files


def test_edge_cases_run_without_the_frameworks_sources(tmp_path, monkeypatch):
    """Without the frameworks' sources the corpus fails, unless the run allows it: then the
    hand-made edge cases (which need no framework) still run, with a warning."""
    monkeypatch.setattr(sys.modules[__name__], "SITE", tmp_path / "no-site-packages")
    monkeypatch.delenv(ALLOW_MISSING, raising=False)
    with pytest.raises((pytest.fail.Exception, pytest.skip.Exception)) as failed:
        _corpus(tmp_path / "a")
    assert failed.type is pytest.fail.Exception and f"0 of {len(CORPUS)} corpus files found" in str(failed.value)
    monkeypatch.setenv(ALLOW_MISSING, "1")
    with pytest.warns(UserWarning, match="running the hand-made edge cases"):
        files = _corpus(tmp_path / "b")
    assert {p.name for p in files if p.parent.name == "extra"} == set(EXTRA)


def _findings(results) -> list[tuple]:
    return [(f.path, f.start, f.end, f.code, f.message, f.fix_applicability, f.fix_message,
             [(e.content, e.start, e.end) for e in f.edits]) for result, _ in results for f in result.findings]


SELECTIONS = {
    "default": lambda r: r.default,
    "default+gradient": lambda r: r.default or r.code in ("NAN201", "NAN202", "NAN203", "NAN205", "NAN301", "NAN401"),
    "all": lambda r: True,  # NAN002 (not about framework code) turns the framework gate off
    "one-rule": lambda r: r.code in ("NAN001", "NAN101"),
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return _corpus(tmp_path_factory.mktemp("speed"))


@pytest.mark.parametrize("selection", sorted(SELECTIONS))
def test_prefilter_never_hides_a_finding(corpus, selection):
    # the may tier too: the filter must not hide a finding on weak evidence either
    linter = Linter([r for r in all_rules() if SELECTIONS[selection](r)], {"frameworks": {}, "may": True})
    plain = runner.run(corpus, lambda p: linter, False, False, False, jobs=1, prefilter=False)
    stats = runner.Stats()
    filtered = runner.run(corpus, lambda p: linter, False, False, False, jobs=1, prefilter=True, stats=stats)
    assert _findings(filtered) == _findings(plain)
    codes = {f[3] for f in _findings(plain)}
    if selection == "default+gradient":  # the comparison is not vacuous: there are findings, and skipped files
        assert "NAN001" in codes and len(codes) >= 3
        assert stats.prefiltered >= 5
        parse_errors = {Path(f[0]).name for f in _findings(plain) if f[3] == "NAN001"}
        assert {"py2_tf.py", "py2_plain.py", "nul.py"} <= parse_errors
        flagged = {Path(f[0]).name for f in _findings(plain)}
        edges = {"alias_module.py", "alias_two_levels.py", "split_chain.py", "import_in_function.py",
                 "methods_only.py", "after_docstring.py", "comment_bars.py", "pow_half.py", "pow_call.py", "divide_op.py",
                 "latin1_cookie.py", "eps_named.py", "eps_method.py", "clip_upper.py", "clip_alias.py",
                 "grad_clamp.py", "module_and_method.py"}
        assert edges <= flagged, edges - flagged  # each edge case is a real finding the filter must keep


def test_site_filter_decisions(monkeypatch):
    """Files no rule can start in are not parsed with libcst, nor are those where the rules,
    run on CPython's tree (``Linter.on_tree``), find nothing or nothing whose fix has
    edits; the rest are."""
    linter = Linter([r for r in all_rules() if r.default], {})
    parsed: list = []
    real = engine_mod.parse
    monkeypatch.setattr(engine_mod, "parse", lambda source, checked=None: parsed.append(source) or real(source, checked))

    def skipped(source: str) -> bool:
        return linter.lint_source(source.encode(), "a.py").skipped

    def not_parsed(source: str) -> bool:
        del parsed[:]
        linter.lint_source(source.encode(), "a.py")
        return not parsed

    assert skipped(EXTRA["builtin_sum.py"]) and skipped(EXTRA["doc_only.py"])
    # a sum (NAN207's trigger; its gate is gone): the rules on CPython's tree decide it
    assert not_parsed("import torch\nmodel = torch.nn.Linear(2, 2)\nloss = model(x).sum()\n")
    assert not skipped(EXTRA["torch_hit.py"]) and not skipped(EXTRA["methods_only.py"])
    assert skipped("import math\nimport torch\n\ndef f(z):\n    return math.log(2) * torch.softmax(z, -1)\n")
    # a clip nobody applies to gradients (NAN503's gate is gone: its check decides, on CPython's tree)
    assert not_parsed("import torch\n\ndef f(x, n):\n    return x.clamp(min=0) + x.clamp(0, n - 1)\n")
    assert not_parsed("import torch\n\nwith torch.no_grad():\n    y = x.clamp(0, 1)\n")  # no_grad: no gradient
    assert not skipped("import torch\n\ndef f(z, h):\n    return h.math.log(z.softmax(-1))\n")  # an attribute
    assert not skipped(EXTRA["grad_clamp.py"]) and not skipped(EXTRA["eps_named.py"])
    # a finding whose fix has no edit (display-only) needs no libcst parse; one whose fix has edits does
    assert not_parsed(EXTRA["grad_clamp.py"]) and not_parsed(EXTRA["eps_named.py"])
    assert [f.code for f in linter.lint_source(EXTRA["grad_clamp.py"].encode(), "a.py").findings] == ["NAN503"]
    assert not not_parsed("import torch\n\ndef f(z):\n    return torch.log(torch.softmax(z, -1))\n")
    broken = linter.lint_source(b"import torch\nprint 'x', torch.log(p)\n", "a.py")
    assert not broken.skipped and [f.code for f in broken.findings] == ["NAN001"]
    # a rule that may report anywhere (NAN002 unused-noqa declares no triggers) turns the filter
    # off where it can report: in a file holding a directive, in any case
    with_noqa = Linter([r for r in all_rules() if r.default or r.code == "NAN002"], {})
    quiet = b"import torch\nmodel = torch.nn.Linear(2, 2)\n"
    assert with_noqa.lint_source(quiet, "a.py").skipped
    for directive in (b"  # noqa: NAN101\n", b"  # NoQA: NAN101\n"):
        marked = with_noqa.lint_source(quiet.replace(b"\n", directive, 1), "a.py")
        assert not marked.skipped and [f.code for f in marked.findings] == ["NAN002"]
    assert {r.code for r in all_rules() if r.triggers is None} == {"NAN001", "NAN002"}


def test_a_large_file_is_reduced_with_nan002_on_unless_it_holds_a_directive():
    """NAN002 names no trigger: a large file is analysed whole (libcst's parse) only when it
    holds a directive for NAN002 to judge; else it is reduced as for the other rules."""
    from nanlint.source import large

    pad = "WEIGHTS = {\n" + "".join(f"    'w{i}': [{i % 7}.0, 0.5],\n" for i in range(21_000)) + "}\n"
    hazard = "import torch\n\n\ndef f(x):\n    return torch.log(torch.softmax(x, -1))\n"
    linter = Linter([r for r in all_rules() if r.default or r.code == "NAN002"], {})
    source = (hazard + pad).encode()
    assert len(source) > large.LARGE
    result = linter.lint_source(source, "big.py")
    assert result.reduced and [f.code for f in result.findings] == ["NAN101"]
    marked = linter.lint_source(source.replace(b"[0.0, 0.5],", b"[0.0, 0.5],  # noqa: NAN101", 1), "big.py")
    assert not marked.reduced and [f.code for f in marked.findings] == ["NAN101", "NAN002"]


def test_operators_decide_before_imports(monkeypatch):
    """A ``/`` is enough for NAN111 (with a statistic in the text): the site filter passes the
    file without resolving its imports (``decides``); an imported module's ops are still read
    in full, a division in it notwithstanding."""
    from nanlint.semantic import sites
    from nanlint.source.syntax import precheck
    from nanlint.vocabulary import ops as o

    linter = Linter([r for r in all_rules() if r.default], {})
    resolved: list = []
    real = sites.chain_pairs
    monkeypatch.setattr(sites, "chain_pairs", lambda *a: resolved.append(a) or real(*a))
    text = "import torch\nalias = torch.nn\n\ndef f(x):\n    return x / x.std()\n"
    assert not linter.cannot_report(precheck(text.encode()), "a.py")
    assert not resolved  # decided by the operator: no alias was read
    assert not linter.cannot_report(precheck(b"import torch\nalias = torch.nn\n\ndef f(x, z):\n"
                                             b"    return x / 2 + torch.log(torch.softmax(z, -1))\n"), "a.py")
    assert resolved  # no statistic: NAN111 cannot start, NAN101's log and softmax had to be resolved
    dep = precheck(b"import torch\n\ndef probs(z, t):\n    return torch.softmax(z / t, -1)\n")
    wanted = linter.sites.wanted
    assert o.SOFTMAX in sites.scan(dep.tree, dep.text, wanted, lambda p: True)
    assert o.SOFTMAX not in sites.scan(dep.tree, dep.text, wanted, lambda p: True, lambda p: sites.SLASH in p)


def test_rules_run_only_where_their_triggers_can_be():
    """Once a file passes the site filter, only the rules whose triggers its text can hold
    run on it (``SiteFilter.reporting``); ``pow(s, 0.5)`` counts as a root without ``**``."""
    linter = Linter([r for r in all_rules() if r.default], {})
    codes = {r.code for r in linter.sites.reporting("import torch\n\ndef f(x):\n    return x / x.std()\n")}
    assert "NAN111" in codes and "NAN101" not in codes and "NAN302" not in codes
    rooted = {r.code for r in linter.sites.reporting("import torch\n\ndef f(x):\n"
                                                     "    return torch.pow(torch.exp(x), 0.5)\n")}
    assert "NAN302" in rooted


def test_prefilter_decisions():
    linter = Linter([r for r in all_rules() if r.default], {})
    pf = runner.Prefilter(linter)
    assert pf.framework_gate
    assert pf.decide("a.py", b"import os\nx = 1\n") == runner.CHECK
    assert pf.decide("a.py", b"import torch\nx = torch.log(torch.softmax(z, 1))\n") == runner.LINT
    # NAN101-NAN104 follow values into models and other modules, so they need no token
    # of their own: a framework file goes on to the site filter, which skips it unparsed
    assert pf.decide("a.py", b"import torch\n") == runner.LINT
    assert linter.lint_source(b"import torch\n", "a.py").skipped
    tokens = runner.Prefilter(Linter([r for r in all_rules() if r.code == "NAN302"], {}))
    assert tokens.decide("a.py", b"import torch\n") == runner.SKIP  # no rule's token
    assert pf.decide("a.ipynb", b"{}") == runner.LINT  # notebooks are never prefiltered
    quiet = runner.Prefilter(Linter([r for r in all_rules() if r.code == "NAN101"], {}))
    assert quiet.decide("a.py", b"import os\n") == runner.SKIP  # no NAN001: not even a syntax check
    # NAN002 speaks of no framework: a file without one is linted only when it holds a directive
    everything = runner.Prefilter(Linter(all_rules(), {}))
    assert everything.framework_gate
    assert everything.decide("a.py", b"import os\nx = 1\n") == runner.CHECK
    assert everything.decide("a.py", b"import os\nx = 1  # NoQA: E501\n") == runner.LINT
    assert runner.Prefilter(Linter([r for r in all_rules() if r.code == "NAN002"], {})).decide(
        "a.py", b"import os\nx = 1\n") == runner.SKIP
    # every framework op resolves through an import naming a root the gate looks for
    from nanlint.vocabulary import frameworks
    for name in frameworks.function_table():
        assert pf.framework_word.search(f"import {name.split('.')[0]}\n")


def test_parallel_equals_serial(corpus, tmp_path):
    linter = Linter([r for r in all_rules() if r.default], {"frameworks": {}})
    frozen = gc.get_freeze_count()
    serial = runner.run(corpus, lambda p: linter, False, False, False, jobs=1)
    # the serial run froze its heap as a worker does (runner._frozen_heap), and gave it back
    assert gc.get_freeze_count() == frozen and not ast_tree.FREEZE_TREES
    stats = runner.Stats()
    parallel = runner.run(corpus, lambda p: linter, False, False, False, jobs=2, stats=stats)
    assert _findings(parallel) == _findings(serial)
    if "fork" in runner._start_methods():
        assert stats.jobs == 2


def test_a_files_tree_is_frozen_after_the_garbage_before_it():
    """Under a frozen heap, the whole file's CPython tree is frozen (no later collection
    scans it), and what was garbage before it is collected first, not frozen with it."""
    import weakref

    class Cycle:
        pass

    assert not ast_tree.FREEZE_TREES
    before = gc.get_freeze_count()
    ast_tree.freeze_heap()
    try:
        garbage = Cycle()
        garbage.me = garbage  # a reference cycle: only the collector frees it
        dead = weakref.ref(garbage)
        del garbage
        frozen = gc.get_freeze_count()
        tree = ast_tree.compile_tree("x = [1, 2]\n" * 50, kept=True)
        assert dead() is None
        kept = gc.get_freeze_count()
        assert kept >= frozen + 50  # the tree's nodes
        ast_tree.compile_tree("y = 1\n")  # a window's tree, say: not frozen
        assert gc.get_freeze_count() == kept
    finally:
        ast_tree.thaw_heap()
    assert gc.get_freeze_count() == before and tree.body


def test_parallel_fix_writes_every_file(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "MIN_PARALLEL_BYTES", 0)
    src = "import torch\n\ndef f(z):\n    return torch.log(torch.softmax(z, dim=1))\n"
    files = []
    for i in range(runner.MIN_PARALLEL + 4):
        p = tmp_path / f"m{i}.py"
        p.write_text(src)
        files.append(p)
    linter = Linter([r for r in all_rules() if r.default], {})
    stats = runner.Stats()
    results = runner.run(files, lambda p: linter, True, False, True, jobs=2, stats=stats)
    if "fork" in runner._start_methods():
        assert stats.jobs == 2
    assert all(r.fixed == 1 and r.error is None for r, _ in results)
    assert all("torch.log_softmax(z, dim=1)" in p.read_text() for p in files)


# --- the cache --------------------------------------------------------------------------
PROJECT = {
    "train.py": """\
        import keras
        import torch

        opt = keras.optimizers.Adam(lr=1e-3)

        def loss(z):
            return torch.log(torch.softmax(z, dim=1))
        """,
    "util.py": "import os\n",
    "broken.py": "import torch\nprint 'x'\n",
}


def _project(tmp_path: Path) -> Path:
    for name, text in PROJECT.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    return tmp_path


def _entries(root: Path) -> list[Path]:
    return sorted((root / cache_mod.DIRNAME).rglob("*.json"))


def test_warm_run_is_identical_and_cached(run_cli, tmp_path):
    _project(tmp_path)
    cold = run_cli("--no-cache")
    assert not (tmp_path / cache_mod.DIRNAME).exists()
    first = run_cli()
    assert _entries(tmp_path) and (tmp_path / cache_mod.DIRNAME / "CACHEDIR.TAG").is_file()
    warm = run_cli()
    assert cold == first == warm
    assert "NAN101" in cold[1] and "NAN501" in cold[1] and "NAN001" in cold[1]
    for fmt in ("json",):
        assert run_cli("--format", fmt) == run_cli("--format", fmt, "--no-cache")


def test_warm_run_reads_the_cache(tmp_path):
    files = [tmp_path / n for n in PROJECT]
    _project(tmp_path)
    linter = Linter([r for r in all_rules() if r.default], {"frameworks": {}, "root": tmp_path})
    cache = cache_mod.Cache(tmp_path / cache_mod.DIRNAME)
    cold = runner.run(files, lambda p: linter, False, False, False, jobs=1, cache=cache)
    stats = runner.Stats()
    warm = runner.run(files, lambda p: linter, False, False, False, jobs=1, cache=cache, stats=stats)
    assert stats.cached == len(files) and stats.parsed == 0
    assert _findings(warm) == _findings(cold)


def test_changed_file_invalidates(run_cli, tmp_path):
    _project(tmp_path)
    code, out, _ = run_cli("util.py")
    assert code == 0
    (tmp_path / "util.py").write_text("import torch\ny = torch.log(torch.sigmoid(x))\n")
    code, out, _ = run_cli("util.py")
    assert code == 1 and "NAN102" in out


def test_changed_config_invalidates(run_cli, tmp_path):
    from nanlint.semantic import project_versions

    def run(*args):
        project_versions.project_pins.cache_clear()  # as in a new process
        return run_cli(*args)

    _project(tmp_path)
    assert "NAN501" in run("train.py")[1]
    # the dependency pins are read by version-aware rules: Keras < 2.3 still took lr=
    (tmp_path / "requirements.txt").write_text("keras<2.3\n")
    assert "NAN501" not in run("train.py")[1]
    (tmp_path / "requirements.txt").unlink()
    assert "NAN501" in run("train.py")[1]
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n[tool.nanlint]\nignore = ['NAN501']\n")
    assert "NAN501" not in run_cli("train.py")[1]


def test_corrupt_entries_are_ignored(run_cli, tmp_path):
    _project(tmp_path)
    expected = run_cli()
    entries = _entries(tmp_path)
    garbage = [b"", b"{", b"[]", b'{"key": "x", "findings": []}', b"\xff\xfe", json.dumps(
        {"key": "k", "findings": [{"code": 1}]}).encode()]
    for i, entry in enumerate(entries):
        entry.write_bytes(garbage[i % len(garbage)])
    # a well-formed entry under the right key with a bad finding shape
    key = entries[0].stem
    entries[0].write_text(json.dumps({"key": key, "findings": [{"code": "NAN101"}]}))
    assert run_cli() == expected
    assert run_cli() == expected  # and the entries were rewritten


def test_cache_is_not_used_to_skip_a_fix(run_cli, tmp_path):
    _project(tmp_path)
    run_cli()  # fills the cache with the findings, fixable ones included
    code, out, _ = run_cli("--fix", "train.py")
    assert "torch.log_softmax(z, dim=1)" in (tmp_path / "train.py").read_text()
    assert "learning_rate=1e-3" in (tmp_path / "train.py").read_text()
    assert run_cli("train.py") == run_cli("--no-cache", "train.py")


def test_cache_dir_option_and_unwritable_cache(run_cli, tmp_path):
    _project(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    expected = run_cli("--no-cache")
    assert run_cli("--cache-dir", str(elsewhere)) == expected
    assert list(elsewhere.rglob("*.json")) and not (tmp_path / cache_mod.DIRNAME).exists()
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("")
    assert run_cli("--cache-dir", str(blocker)) == expected  # cannot write: linted all the same


def test_cache_writes_are_atomic(tmp_path, monkeypatch):
    cache = cache_mod.Cache(tmp_path / "c")
    replaced = []
    real = os.replace
    monkeypatch.setattr(cache_mod.os, "replace", lambda a, b: (replaced.append((a, b)), real(a, b)))
    cache.put("ab" * 20, [])
    assert len(replaced) == 1 and Path(replaced[0][1]).name == "ab" * 20 + ".json"
    assert cache.get("ab" * 20) == ([], 0, [])  # no finding, none hidden, no opt-in rule named
    assert not [p for p in (tmp_path / "c").rglob(".tmp-*")]


# --- the fast libcst plumbing ------------------------------------------------------------
def _modules(corpus):
    out = []
    for p in corpus:
        try:
            out.append(cst.parse_module(p.read_bytes()))
        except Exception:  # noqa: BLE001 - the NAN001 examples
            pass
    return out


class _LibcstIndex(Index):
    """The index built by libcst's own traversal."""

    on_visit = cst.CSTVisitor.on_visit
    on_leave = cst.CSTVisitor.on_leave


def _value_summary(b) -> tuple:
    """A binding's value by identity; an augmented one (``s += v``: a node made by the index,
    new each build) by the tree's nodes it is made of."""
    if isinstance(b.node, cst.AugAssign) and b.value is not None:
        return ("augmented", type(b.value.operator).__name__, id(b.value.left), id(b.value.right))
    return ("value", id(b.value))


def _index_summary(ix: Index) -> list:
    scopes = {}
    for _, scope in ix.calls + ix.binops:
        while scope is not None:
            scopes[id(scope.node)] = (
                [(n, [(b.kind, id(b.node), b.qualname, _value_summary(b), b.conditional,
                       id(b.scope.node) if b.scope else 0) for b in bs]) for n, bs in scope.bindings.items()],
                sorted(scope.globals),
                [(n, [(b.kind, id(b.node), b.conditional) for b in bs]) for n, bs in scope.attributes.items()])
            scope = scope.parent
    return [[id(c) for c, _ in ix.calls], [id(b) for b, _ in ix.binops], sorted(ix.imported_roots),
            sorted(scopes.items())]


def test_fast_walk_builds_the_same_index(corpus):
    for module in _modules(corpus):
        assert _index_summary(Index(module)) == _index_summary(_LibcstIndex(module))


def test_fast_parents_and_positions(corpus):
    for module in _modules(corpus)[:12]:
        expected: dict[int, int] = {}

        class _P(cst.CSTVisitor):
            def on_visit(self, n):
                for child in n.children:
                    expected[id(child)] = id(n)
                return True

        module.visit(_P())
        assert {k: id(v) for k, v in walk.parents(module).items()} == expected
        assert dict(codegen.positions(module)) == dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider))


def test_fast_code_is_libcst_code(corpus):
    """codegen.code_of is Module.code_for_node, on every statement and expression."""
    for module in _modules(corpus)[:12]:
        assert codegen.code_of(module, module) == module.code
        stack: list[cst.CSTNode] = [module]
        while stack:
            node = stack.pop()
            stack.extend(node.children)
            if isinstance(node, (cst.BaseExpression, cst.BaseStatement)):
                assert codegen.code_of(module, node) == module.code_for_node(node)


def test_fast_parse_is_libcst_parse(corpus):
    for p in corpus[:10] + [p for p in corpus if p.parent.name == "extra"]:
        source = p.read_bytes()
        try:
            expected = cst.parse_module(source)
        except Exception as exc:  # noqa: BLE001
            with pytest.raises(type(exc)):
                walk.parse(source)
            continue
        module = walk.parse(source)
        assert module.deep_equals(expected) and module.bytes == source
    # nodes built after parsing are validated as before
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not an identifier")
