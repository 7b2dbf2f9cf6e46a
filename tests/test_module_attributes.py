"""A call through an imported module's attribute (``from . import model as m``;
``m.discriminator(x)``) is followed into the project module as ``from .model import
discriminator; discriminator(x)`` is: the attribute-form twins of
``tests/test_project_modules.py``, the cache key and the zero rules' site check too."""

import importlib
import json
import sys
import textwrap
from pathlib import Path

import pytest

from test_project_modules import MODEL_LOGITS, MODEL_SOFTMAX, findings, write

TRAIN_ATTR = """\
    import tensorflow as tf
    {line}

    def loss(x, w, y):
        return -tf.reduce_sum(y * tf.log({call}(x, w)))
"""

DISCRIMINATOR = """\
    import torch

    def discriminator(x, w):
        logits = x @ w
        return torch.sigmoid(logits)
"""
GAN_STEP = """\
    import torch
    {line}

    def generator_loss(x, w):
        p = {call}(x, w)
        return -torch.log(1 - p).mean()
"""


@pytest.mark.parametrize("layout,line,call,train", [
    ({"pkg/__init__.py": "", "pkg/model.py": MODEL_SOFTMAX}, "from . import model as m", "m.predict_proba",
     "pkg/train.py"),
    ({"pkg/__init__.py": "", "pkg/model.py": MODEL_SOFTMAX}, "from pkg import model", "model.predict_proba",
     "pkg/train.py"),
    ({"pkg/__init__.py": "", "pkg/model.py": MODEL_SOFTMAX}, "import pkg.model as m", "m.predict_proba",
     "pkg/train.py"),
    ({"pkg/__init__.py": "", "pkg/model.py": MODEL_SOFTMAX}, "import pkg.model", "pkg.model.predict_proba",
     "train.py"),
    ({"model.py": MODEL_SOFTMAX}, "import model as m", "m.predict_proba", "train.py"),  # a script beside it
    ({"src/pkg/__init__.py": "", "src/pkg/model.py": MODEL_SOFTMAX}, "from pkg import model as m",
     "m.predict_proba", "scripts/train.py"),
    # a package re-exporting the function: import pkg; pkg.predict_proba(x, w)
    ({"pkg/__init__.py": "from .model import predict_proba\n", "pkg/model.py": MODEL_SOFTMAX}, "import pkg",
     "pkg.predict_proba", "train.py"),
])
def test_a_function_called_through_its_module(run_cli, tmp_path, layout, line, call, train):
    write(tmp_path, {**layout, train: TRAIN_ATTR.format(line=line, call=call)})
    code, out, err = run_cli(str(tmp_path / train), "--no-cache", "--format", "json")
    assert code == 1, err
    [finding] = json.loads(out)
    assert finding["code"] == "NAN103"
    assert "model.py" in finding["message"] and "returns it on line 4" in finding["message"], finding["message"]
    assert finding["fix"] is None or finding["fix"]["applicability"] == "display-only"


def test_a_module_attribute_that_is_no_function_there_gives_nothing(run_cli, tmp_path):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/model.py": MODEL_LOGITS,
                     "pkg/train.py": TRAIN_ATTR.format(line="from . import model as m", call="m.predict_proba"),
                     "pkg/other.py": TRAIN_ATTR.format(line="from . import model as m", call="m.missing")})
    assert findings(run_cli, str(tmp_path / "pkg"), "--no-cache") == []


def test_the_gan_generator_loss_through_the_discriminators_module(run_cli, tmp_path, monkeypatch):
    """The GAN step of a training repository: ``models/gan.py`` holds the discriminator
    (a sigmoid), ``train.py`` calls it as ``gan.discriminator``; log(1 - D(G(z))) is
    -inf once the discriminator saturates: measured in torch here, and found as the
    direct import's twin is."""
    import torch

    files = {"models/__init__.py": "", "models/gan.py": DISCRIMINATOR}
    for i, (line, call) in enumerate([("from models import gan", "gan.discriminator"),
                                      ("import models.gan as D", "D.discriminator"),
                                      ("from models.gan import discriminator", "discriminator")]):
        files[f"train{i}.py"] = GAN_STEP.format(line=line, call=call)
    write(tmp_path, files)
    out = findings(run_cli, *(str(tmp_path / f"train{i}.py") for i in range(3)), "--no-cache")
    assert out == ["train0.py:6:NAN102", "train1.py:6:NAN102", "train2.py:6:NAN102"]

    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        train = importlib.import_module("train0")
        x, w = torch.ones(1, 1), torch.full((1, 1), 20.0, requires_grad=True)  # a saturated discriminator
        value = train.generator_loss(x, w)
        value.backward()
        assert value.item() == float("inf")  # float32: sigmoid(20) rounds to 1
        assert not torch.isfinite(w.grad).all()
    finally:
        for name in ("train0", "models.gan", "models"):
            sys.modules.pop(name, None)


def test_a_model_class_through_its_module(run_cli, tmp_path):
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
            from . import nets

            model = nets.Net()
            loss = -torch.log(model(x)).mean()
        """,
    })
    assert findings(run_cli, str(tmp_path / "pkg/train.py"), "--no-cache") == ["train.py:5:NAN102"]


def test_a_zero_source_through_a_module_attribute_passes_the_site_check(run_cli, tmp_path):
    """NAN107's site check (CPython's tree) follows ``m.f(x)`` into the module as the value
    flow does: a relu returned there reaches the log here."""
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/layers.py": """\
            import torch

            def features(x, w):
                return torch.relu(x @ w)
        """,
        "pkg/train.py": """\
            import torch
            from . import layers as L

            def loss(x, w):
                h = L.features(x, w)
                return torch.log(h).sum()
        """,
    })
    assert findings(run_cli, str(tmp_path / "pkg/train.py"), "--no-cache") == ["train.py:6:NAN107"]


def test_dependencies_list_a_module_imported_whole_by_the_attributes_read(tmp_path):
    from nanlint.semantic import modules

    write(tmp_path, {
        "pkg/__init__.py": "from .model import predict_proba\nfrom .losses import unused\n",
        "pkg/model.py": MODEL_SOFTMAX,
        "pkg/losses.py": "def unused():\n    return 0\n",
        "pkg/nets.py": "X = 1\n",
        "a.py": "from pkg import nets\nfrom pkg import model as m\ny = m.predict_proba(x, w) + nets.X\n",
        "b.py": "import pkg\ny = pkg.predict_proba(x, w)\n",  # the package: only the module of the name read
        "c.py": "from pkg import nets\nprint(nets)\n",  # no attribute read: nothing to follow
        "d.py": "import torch.nn.functional as F\nimport numpy as np\n",
    })

    def deps(name):
        path = tmp_path / name
        return sorted(p.relative_to(tmp_path).as_posix() for p in modules.dependencies(path, path.read_text()))

    assert deps("a.py") == ["pkg/model.py", "pkg/nets.py"]
    assert deps("b.py") == ["pkg/__init__.py", "pkg/model.py"]
    assert deps("c.py") == []
    assert deps("d.py") == []


def test_editing_a_module_imported_whole_invalidates_the_cached_result(run_cli, tmp_path):
    train = TRAIN_ATTR.format(line="from . import model as m", call="m.predict_proba")
    write(tmp_path, {"pkg/__init__.py": "", "pkg/model.py": MODEL_SOFTMAX, "pkg/train.py": train})
    cache = str(tmp_path / "cache")
    target = str(tmp_path / "pkg/train.py")
    assert findings(run_cli, target, "--cache-dir", cache) == ["train.py:5:NAN103"]
    write(tmp_path, {"pkg/model.py": MODEL_LOGITS})
    assert findings(run_cli, target, "--cache-dir", cache) == []
