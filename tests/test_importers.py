"""Gradient evidence across the project's files (issue 21 item 2): a helper module's
function is differentiated when a file of the project that imports it calls it where
autodiff runs; the importers are part of the helper's cache key."""

from __future__ import annotations

import textwrap
from pathlib import Path

from nanlint.rules.base import all_rules
from nanlint.lint.engine import Linter
from nanlint.semantic import importers, modules

HELPER = """\
    import tensorflow as tf


    def safe_log(x):
        return tf.where(x > 0, tf.math.log(x), tf.zeros_like(x))
    """

TAPE = """\
    import tensorflow as tf
    from {imp} import safe_log


    def step(model, x):
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(safe_log(model(x)))
        return tape.gradient(y, model.trainable_variables)
    """

METRIC = """\
    import tensorflow as tf
    from utils import safe_log


    def report(p):
        print(float(tf.reduce_mean(safe_log(p))))
    """


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))


def nan201(path: Path, may: bool = False):
    rules = [r for r in all_rules() if r.code == "NAN201"]
    result = Linter(rules, {"may": True} if may else None).lint_source(path.read_bytes(), str(path))
    return [f for f in result.findings if f.code == "NAN201"]


def test_a_helper_called_under_a_tape_in_another_file_is_reported_with_that_file(tmp_path):
    write(tmp_path, {"utils.py": HELPER, "train.py": TAPE.format(imp="utils")})
    found = nan201(tmp_path / "utils.py")
    assert len(found) == 1 and not found[0].may
    assert "through `train.py`: `safe_log` is called there on line 7, under the GradientTape on line 6" \
        in found[0].message


def test_a_helper_only_a_metric_calls_stays_in_the_may_tier(tmp_path):
    write(tmp_path, {"utils.py": HELPER, "metrics.py": METRIC})
    assert nan201(tmp_path / "utils.py") == []
    weak = nan201(tmp_path / "utils.py", may=True)
    assert len(weak) == 1 and weak[0].may


def test_relative_and_whole_module_imports_are_importers(tmp_path):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/utils.py": HELPER,
                     "pkg/train.py": TAPE.format(imp=".utils"),
                     "pkg/other.py": "import pkg.utils as U\n\ndef f(x):\n    return U.safe_log(x)\n",
                     "pkg/unrelated.py": "import os\n"})
    with modules.run_memo():
        found = {p.name: sorted(names) for p, names in importers.importers(tmp_path / "pkg" / "utils.py")}
    assert found == {"train.py": ["safe_log"], "other.py": ["safe_log"]}
    assert not nan201(tmp_path / "pkg" / "utils.py")[0].may


def test_editing_the_importer_relints_the_helper(tmp_path, run_cli):
    write(tmp_path, {"utils.py": HELPER, "train.py": TAPE.format(imp="utils")})
    code, out, _ = run_cli("--select", "NAN201", "utils.py")
    assert code == 1 and "under the GradientTape" in out
    write(tmp_path, {"train.py": METRIC})
    code, out, _ = run_cli("--select", "NAN201", "utils.py")
    assert code == 0 and "NAN201" not in out, out


def test_a_same_named_function_of_another_module_is_not_the_helper(tmp_path):
    """The importer takes ``safe_log`` from utils too, but the call under its tape is of
    a local ``safe_log`` that shadows it (a ``def`` after the import): not the helper."""
    shadowed = TAPE.format(imp="utils").replace(
        "    def step(", "    def safe_log(x):\n        return x\n\n\n    def step(")
    write(tmp_path, {"utils.py": HELPER, "train.py": shadowed})
    assert nan201(tmp_path / "utils.py") == []
    write(tmp_path, {"train.py": TAPE.format(imp="losses"), "losses.py": "def safe_log(x):\n    return x\n"})
    assert nan201(tmp_path / "utils.py") == []
    assert nan201(tmp_path / "utils.py", may=True)[0].may


def test_resolved_is_path_resolve(tmp_path, monkeypatch):
    """``modules.resolved`` (a file's directory resolved once per run) is ``Path.resolve``:
    through a linked directory, a linked file, ``..`` and a relative path."""
    real = tmp_path / "real"
    (real / "pkg").mkdir(parents=True)
    (real / "pkg" / "a.py").write_text("x = 1\n")
    (real / "b.py").write_text("y = 2\n")
    (tmp_path / "linked").symlink_to(real, target_is_directory=True)
    (real / "pkg" / "to_b.py").symlink_to(real / "b.py")
    monkeypatch.chdir(tmp_path)
    paths = [tmp_path / "linked" / "pkg" / "a.py", tmp_path / "linked" / "pkg" / "to_b.py",
             tmp_path / "linked" / "pkg" / ".." / "b.py", Path("linked/pkg/a.py"), Path("linked/pkg/to_b.py"),
             tmp_path / "linked" / "pkg" / "missing.py", Path("linked") / "pkg" / ".."]
    with modules.run_memo():
        got = [modules.resolved(p) for p in paths]
    assert got == [p.resolve() for p in paths]
    assert got[1] == real / "b.py" and got[0] == real / "pkg" / "a.py"
