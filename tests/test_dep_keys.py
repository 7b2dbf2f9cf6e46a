"""A warm run takes each file's dependency key part from the last run's record when nothing
the record observed changed (nanlint/lint/dep_keys.py, issue 22): whatever changes in the
project, each file's cache key is the one a run without the record computes."""

import os
from pathlib import Path

import pytest

from nanlint.lint import cache as cache_mod
from nanlint.lint import dep_keys, runner
from nanlint.lint.engine import Linter
from nanlint.rules.base import all_rules

LINTER = Linter([r for r in all_rules() if r.default])

PROJECT = {
    "proj/pkg/__init__.py": "",
    "proj/pkg/model.py": "import torch\n\n\ndef f(x):\n    return torch.log(torch.softmax(x, -1))\n",
    "proj/pkg/train.py": "import torch\nfrom .model import f\nfrom .helpers import g\nimport utils\n\ny = f(torch.ones(3)) * utils.Y\n",
    "proj/scripts/run.py": "from pkg.model import f\nimport common\n\nprint(f, common.X)\n",
    "proj/scripts/common.py": "X = 1\n",
    "proj/pkg/sub/__init__.py": "",
    "proj/pkg/sub/layers.py": "Z = 3\n",
    "solo/plain.py": "X = 1\n",  # outside proj: no import, so no dependency is searched for, nothing observed
    "solo/helper.py": "def h():\n    return 0\n",
}
LINTED = ["proj/pkg/model.py", "proj/pkg/train.py", "proj/scripts/run.py", "solo/plain.py"]


def _write(root: Path, files: dict) -> None:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def _run(root: Path, cache_dir: Path, record: bool) -> runner.Stats:
    cache = cache_mod.Cache(cache_dir)
    if not record:
        cache.store_dep_keys(None)
    stats = runner.Stats()
    runner.run([root / f for f in LINTED], lambda p: LINTER, False, False, False, jobs=1, cache=cache, stats=stats)
    return stats


def _with_and_without(root: Path, cache_dir: Path) -> tuple[dict, int]:
    """(the keys of a run with the last run's record, how many parts it reused), after checking
    that a run without the record keys every file the same."""
    kept = _run(root, cache_dir, record=True)
    fresh = _run(root, cache_dir, record=False)
    assert kept.keys == fresh.keys
    return kept.keys, kept.reused_keys


def _make_symlink(root: Path) -> None:
    _write(root, {"proj/pkg/model_v2.py": "import torch\n\n\ndef f(x):\n    return torch.log_softmax(x, -1)\n"})
    (root / "proj/pkg/model.py").unlink()
    os.symlink(root / "proj/pkg/model_v2.py", root / "proj/pkg/model.py")


# each step: what changes, the linted files whose key must change with it
STEPS = [
    ("a dependency edited", lambda r: _write(r, {"proj/pkg/model.py": PROJECT["proj/pkg/model.py"] + "# edited\n"}),
     {"proj/pkg/model.py", "proj/pkg/train.py"}),
    ("an import that led nowhere now finds a module", lambda r: _write(r, {"proj/pkg/helpers.py": "def g(x):\n    return x\n"}),
     {"proj/pkg/train.py"}),
    ("a new importer of a linted file", lambda r: _write(r, {"proj/pkg/other.py": "from .model import f\n\nf(1)\n"}),
     {"proj/pkg/model.py"}),
    ("a new importer in a subpackage only the importer scan lists",
     lambda r: _write(r, {"proj/pkg/sub/other.py": "from ..model import f\n\nf(2)\n"}), {"proj/pkg/model.py"}),
    ("a file without imports gains one", lambda r: _write(r, {"solo/plain.py": "from helper import h\n\nh()\n"}),
     {"solo/plain.py"}),
    ("a src/ root appears", lambda r: _write(r, {"proj/src/utils.py": "Y = 2\n"}), {"proj/pkg/train.py"}),
    ("a directory becomes a package", lambda r: _write(r, {"proj/scripts/__init__.py": ""}), None),
    ("a dependency removed", lambda r: (r / "proj/pkg/helpers.py").unlink(), {"proj/pkg/train.py"}),
    ("a dependency replaced by a link to another file", _make_symlink, {"proj/pkg/model.py", "proj/pkg/train.py"}),
    ("an unlinted module's dependency edited", lambda r: _write(r, {"proj/scripts/common.py": "X = 22\n"}),
     {"proj/scripts/run.py"}),
]


@pytest.fixture
def trusting(monkeypatch):
    """Every stat vouches, however recent its file (the steps follow one another in milliseconds)."""
    monkeypatch.setattr(dep_keys, "RACY_NS", 0)


def test_unchanged_files_reuse_their_parts_and_every_change_gives_the_fresh_keys(tmp_path, trusting, monkeypatch):
    root, cache_dir = tmp_path / "ws", tmp_path / "cache"
    _write(root, PROJECT)
    monkeypatch.chdir(tmp_path)
    _run(root, cache_dir, record=False)
    keys, reused = _with_and_without(root, cache_dir)
    assert reused == len(LINTED)
    for what, change, affected in STEPS:
        change(root)
        new, _ = _with_and_without(root, cache_dir)
        changed = {f for f in LINTED if new[str(root / f)] != keys[str(root / f)]}
        assert changed and (affected is None or affected <= changed), (what, changed)
        _, reused = _with_and_without(root, cache_dir)
        assert reused == len(LINTED), what  # settled again: nothing changed since
        keys = new


def test_a_file_edited_just_before_the_run_vouches_for_nothing(tmp_path, monkeypatch):
    root, cache_dir = tmp_path / "ws", tmp_path / "cache"
    _write(root, PROJECT)
    monkeypatch.chdir(tmp_path)
    _run(root, cache_dir, record=False)
    assert _run(root, cache_dir, record=True).reused_keys == 0  # every file is seconds old
    past = os.stat(root / "proj/pkg/model.py").st_mtime - 60
    for p in [root, *root.rglob("*")]:
        os.utime(p, (past, past), follow_symlinks=False)
    _run(root, cache_dir, record=False)
    assert _run(root, cache_dir, record=True).reused_keys == len(LINTED)


def test_a_damaged_or_foreign_record_is_ignored(tmp_path, trusting, monkeypatch):
    root, cache_dir = tmp_path / "ws", tmp_path / "cache"
    _write(root, PROJECT)
    monkeypatch.chdir(tmp_path)
    keys = _run(root, cache_dir, record=False).keys
    stored = next((cache_dir / f"v{cache_mod.SCHEMA}").glob("deps-*.json"))
    text = stored.read_text()
    for bad in ["{not json", "[]", '{"cwd": 1, "seen": {}, "parts": {}}', text.replace(str(tmp_path), "/elsewhere", 1)]:
        stored.write_text(bad)
        stats = _run(root, cache_dir, record=True)
        assert stats.keys == keys and stats.reused_keys == 0, bad[:40]
    monkeypatch.chdir(root)  # the same record read from another directory
    assert _run(root, cache_dir, record=True).reused_keys == 0
