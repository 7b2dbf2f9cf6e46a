"""The project's own modules: values imported from another module are followed
(relative and absolute imports, src layouts), a file's cached result depends on
the modules it imports, and partial or parallel runs see the same findings."""

import textwrap
from pathlib import Path

import pytest

import json

from nanlint.semantic import modules

MODEL_SOFTMAX = """\
    import tensorflow as tf

    def predict_proba(x, w):
        return tf.nn.softmax(tf.matmul(x, w))
"""
MODEL_LOGITS = """\
    import tensorflow as tf

    def predict_proba(x, w):
        return tf.matmul(x, w)
"""
TRAIN = """\
    import tensorflow as tf
    from {source} import predict_proba

    def loss(x, w, y):
        return -tf.reduce_sum(y * tf.log(predict_proba(x, w)))
"""


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def findings(run_cli, *args) -> list[str]:
    _, out, _ = run_cli(*args, "--format", "json")
    return sorted(f"{Path(d['filename']).name}:{d['location']['row']}:{d['code']}" for d in json.loads(out))


@pytest.mark.parametrize("layout,source,train", [
    ({"pkg/__init__.py": "", "pkg/model.py": MODEL_SOFTMAX}, ".model", "pkg/train.py"),
    ({"pkg/__init__.py": "", "pkg/model.py": MODEL_SOFTMAX}, "pkg.model", "pkg/train.py"),
    ({"model.py": MODEL_SOFTMAX}, "model", "train.py"),  # a script beside its module
    ({"src/pkg/__init__.py": "", "src/pkg/model.py": MODEL_SOFTMAX}, "pkg.model", "scripts/train.py"),
])
def test_value_from_another_module(run_cli, tmp_path, layout, source, train):
    write(tmp_path, {**layout, train: TRAIN.format(source=source)})
    code, out, err = run_cli(str(tmp_path / train), "--no-cache", "--format", "json")
    assert code == 1, err
    [finding] = json.loads(out)
    assert finding["code"] == "NAN103"
    assert "model.py" in finding["message"] and "returns it on line 4" in finding["message"]
    assert finding["fix"] is None or finding["fix"]["applicability"] == "display-only"


def test_model_class_from_another_module(run_cli, tmp_path):
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/nets.py": """\
            import torch
            from torch import nn

            class Net(nn.Module):
                def forward(self, x):
                    return torch.sigmoid(self.fc(x))
        """,
        "pkg/train.py": """\
            import torch
            from .nets import Net

            model = Net()
            loss = -torch.log(model(x)).mean()
        """,
    })
    assert findings(run_cli, str(tmp_path / "pkg/train.py"), "--no-cache") == ["train.py:5:NAN102"]


def test_editing_the_imported_module_invalidates_the_cached_result(run_cli, tmp_path):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/model.py": MODEL_SOFTMAX,
                     "pkg/train.py": TRAIN.format(source=".model")})
    cache = str(tmp_path / "cache")
    target = str(tmp_path / "pkg")
    assert findings(run_cli, target, "--cache-dir", cache) == ["train.py:5:NAN103"]
    write(tmp_path, {"pkg/model.py": MODEL_LOGITS})
    assert findings(run_cli, target, "--cache-dir", cache) == []
    write(tmp_path, {"pkg/model.py": MODEL_SOFTMAX})
    assert findings(run_cli, target, "--cache-dir", cache) == ["train.py:5:NAN103"]
    # and a run over train.py alone (a pre-commit run on the changed file) agrees
    write(tmp_path, {"pkg/model.py": MODEL_LOGITS})
    assert findings(run_cli, str(tmp_path / "pkg/train.py"), "--cache-dir", cache) == []


def test_partial_and_parallel_runs_agree_with_a_full_run(run_cli, tmp_path):
    files = {"pkg/__init__.py": "", "pkg/model.py": MODEL_SOFTMAX}
    for k in range(12):
        files[f"pkg/train{k}.py"] = TRAIN.format(source=".model") + "\n" * k
    write(tmp_path, files)
    full = findings(run_cli, str(tmp_path), "--no-cache", "-j", "1")
    assert len(full) == 12
    assert findings(run_cli, str(tmp_path), "--no-cache", "-j", "2") == full
    changed = [str(tmp_path / f"pkg/train{k}.py") for k in range(5)]  # pre-commit passes file names
    assert findings(run_cli, *changed, "--no-cache", "-j", "2") == \
        [f for f in full if f.split(":")[0] in {f"train{k}.py" for k in range(5)}]


def test_src_setting_adds_an_import_root(run_cli, tmp_path):
    write(tmp_path, {"lib/mlpkg/__init__.py": "", "lib/mlpkg/model.py": MODEL_SOFTMAX,
                     "scripts/train.py": TRAIN.format(source="mlpkg.model")})
    assert findings(run_cli, str(tmp_path / "scripts"), "--no-cache") == []  # lib/ is no root by default
    (tmp_path / "pyproject.toml").write_text('[tool.nanlint]\nsrc = ["lib"]\n')
    assert findings(run_cli, str(tmp_path / "scripts"), "--no-cache") == ["train.py:5:NAN103"]


def test_one_run_scans_each_imported_module_once_and_sees_changes(tmp_path, monkeypatch):
    """Within a run the imported modules are found and scanned once, not once per importer
    (the training benchmark's warm run spent 5 s re-reading them); a module rewritten
    meanwhile is scanned again, and outside a run (the language server) a module created
    later is found."""
    from nanlint.semantic import modules

    importers = {f"pkg/train{i}.py": TRAIN.format(source=".model") for i in range(5)}
    write(tmp_path, {"pkg/__init__.py": "", "pkg/model.py": MODEL_SOFTMAX, **importers})
    scanned = []
    real_scan = modules.import_lines
    monkeypatch.setattr(modules, "import_lines", lambda text: scanned.append(text) or real_scan(text))
    model = tmp_path / "pkg/model.py"
    model_text = model.read_text()

    def deps(name):
        path = tmp_path / name
        return modules.dependencies(path, path.read_text())

    with modules.run_memo():
        digests = set()
        for name in importers:
            assert deps(name) == [model]
            digests.add(modules.digest([model]))
        assert scanned.count(model_text) == 1 and len(digests) == 1
        model.write_text(model_text + "\n# edited\n")  # another size: scanned and hashed anew
        assert deps("pkg/train0.py") == [model]
        assert scanned.count(model_text + "\n# edited\n") == 1
        assert modules.digest([model]) not in digests
    assert deps("pkg/train0.py") == [model]
    assert scanned.count(model_text + "\n# edited\n") == 2  # no memo outside a run
    write(tmp_path, {"pkg/losses.py": MODEL_LOGITS,
                     "pkg/train9.py": TRAIN.format(source=".losses")})
    assert deps("pkg/train9.py") == [tmp_path / "pkg/losses.py"]


def test_a_package_leads_only_to_the_modules_of_the_names_taken(run_cli, tmp_path):
    """``from pkg import predict_proba`` reads ``pkg/__init__.py`` and the module it takes
    that name from, not every module the package re-exports (a pipeline importing one
    scheduler from diffusers' ``schedulers`` package depended on all 60), and the value
    is followed through the re-export, under an alias too."""
    from nanlint.semantic import modules

    write(tmp_path, {
        "pkg/__init__.py": """\
            from .model import (
                predict_proba,  # the one taken
                predict_proba as other_name,
            )
            from .losses import unused
            from .extra import *
        """,
        "pkg/model.py": MODEL_SOFTMAX,
        "pkg/losses.py": "def unused():\n    return 0\n",
        "pkg/extra.py": "X = 1\n",
        "train.py": TRAIN.format(source="pkg"),
        "train2.py": TRAIN.replace("predict_proba", "other_name").format(source="pkg"),
    })
    for name in ("train.py", "train2.py"):
        path = tmp_path / name
        deps = {p.relative_to(tmp_path).as_posix() for p in modules.dependencies(path, path.read_text())}
        assert deps == {"pkg/__init__.py", "pkg/model.py", "pkg/extra.py"}, deps  # `import *`: any name
    for name in ("train.py", "train2.py"):  # the value is followed through the package's re-export
        assert findings(run_cli, "--isolated", "--no-cache", str(tmp_path / name)) == [f"{name}:5:NAN103"]


def test_torch_max_with_a_tensor_floor_is_elementwise_not_a_reduction(run_cli, tmp_path):
    """pytorch-metric-learning 0.9.88 (the fix-history corpus in its package): a squared
    distance clamped at 0 in a helper module, then ``torch.max(d, torch.tensor(cutoff))``,
    an elementwise floor at the cutoff: its log is no log of a reduce_max of a clamped value."""
    helper = """\
        import numpy as np
        import torch

        def dist_mat(x, y):
            dist = (x ** 2).sum(1).view(-1, 1) + (y ** 2).sum(1).view(1, -1) - 2.0 * torch.mm(x, y.t())
            return torch.clamp(dist, 0.0, np.inf)
        """
    miner = """\
        import torch
        import lmu

        def mine(embeddings, ref_emb, cutoff):
            d = lmu.dist_mat(embeddings, ref_emb)
            d = {floor}
            return torch.log(d)
        """
    write(tmp_path, {"lmu.py": helper, "miner.py": miner.format(floor="torch.max(d, torch.tensor(cutoff).to(d.device))")})
    assert findings(run_cli, str(tmp_path / "miner.py"), "--no-cache") == []
    write(tmp_path, {"miner.py": miner.format(floor="torch.max(d, 1)[0]")})  # a reduction still is one
    assert findings(run_cli, str(tmp_path / "miner.py"), "--no-cache") == ["miner.py:7:NAN107"]


def test_the_attributes_read_of_an_imported_name_are_whole_chains_only():
    """``m.f`` reads ``f`` of ``m``; ``am.f`` (another word), ``x.m.f`` (another chain) and
    ``m . f`` do not; a dotted import is read through its whole chain."""
    text = textwrap.dedent("""\
        import m
        import pkg.model
        y = m.f(x) + m.g + am.h + x.m.i + (m . j) + m.k.l
        z = pkg.model.net(y) + pkg.modelx.other + ém.u
        """)
    lines = {bound[0]: attrs[0] for _level, _module, _names, bound, attrs in modules.import_lines(text)}
    assert lines == {"m": frozenset({"f", "g", "k"}), "pkg.model": frozenset({"net"})}
