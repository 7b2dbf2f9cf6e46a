"""Where the precision corpora come from (used by ``scripts/corpus.py``).

Two corpora share the lint/compare/verdict code of ``corpus.py``:

* ``frameworks`` -- the installed, pinned framework packages (the ``frameworks`` extra);
  located with ``importlib``, never imported.
* ``training`` -- training code (model zoos, training loops, pipelines, RL agents,
  probabilistic models) from PyPI wheels that ship their Python sources. They are
  *fetched, not installed* (installing would drag their dependencies and clash with the
  pinned frameworks): ``pip download --no-deps`` of the exact wheel pinned below, its
  sha256 checked, and its ``.py`` files unzipped into a cache directory outside the
  repository (``$NANLINT_CORPUS_CACHE``, default ``~/.cache/nanlint-corpus``).

Nothing here imports nanlint or corpus.py.
"""

from __future__ import annotations

import fnmatch
import hashlib
import importlib.metadata
import importlib.util
import os
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path


class NotInstalled(Exception):
    pass


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    root: Path  # the package directory; paths are relative to it
    subtrees: tuple[str, ...]  # what is linted: directories ("." all), files or globs under root
    exclude: tuple[str, ...] = field(default=())  # fnmatch patterns on the file name or path under root

    def files(self, everything: bool = False) -> list[Path]:
        """The package's corpus files (``everything``: all of its Python files)."""
        if everything:
            found = set(self.root.rglob("*.py"))
        else:
            found = set()
            for sub in self.subtrees:
                if "*" in sub:  # a glob under root: "*.py" is the package's own modules
                    found |= set(self.root.glob(sub))
                elif (self.root / sub).is_file():
                    found.add(self.root / sub)
                else:  # a directory, "." all of it
                    found |= set((self.root / sub).rglob("*.py"))
        patterns = EXCLUDED_FILES + (() if everything else self.exclude)
        return sorted(p for p in found if "__pycache__" not in p.parts and not any(
            fnmatch.fnmatch(p.name, pat) or fnmatch.fnmatch(p.relative_to(self.root).as_posix(), pat)
            for pat in patterns))


EXCLUDED_FILES = ("gen_*.py",)  # generated code

# --- the framework corpus: installed packages ---------------------------------------------
# (package, distribution, import name, subtrees of the package directory).  Whole
# packages are ~95 MB of Python (nanlint parses ~all of it: every file names its
# framework), too slow for the test suite on 2 cores; the corpus is the training-
# numerics code: keras's implementation (its backends are written in the public
# tf/torch/jax APIs nanlint resolves), torch's nn/distributions/optim/reference
# ops and top-level modules, tensorflow's ops/keras/training (generated gen_*.py
# op wrappers excluded), jax's nn/numpy/scipy, example_libraries and experimental.
# Left out: compilers, distributed, export, quantization and test harnesses
# (torch/_inductor, _dynamo, testing, distributed, onnx, fx, ao...).  See docs/precision.md.
FRAMEWORKS = (
    ("keras", "keras", "keras", ("src",)),
    ("torch", "torch", "torch", ("*.py", "nn", "distributions", "optim", "_refs", "_decomp", "special",
                                 "linalg", "masked", "signal")),
    ("tensorflow", "tensorflow-cpu", "tensorflow", ("python/ops", "python/keras", "python/training")),
    ("jax", "jax", "jax", ("_src/nn", "_src/numpy", "_src/scipy", "example_libraries", "experimental")),
    ("optax", "optax", "optax", (".",)),  # JAX losses, optimizers and schedules, written in the public jnp API
)


def locate_frameworks() -> list[Package]:
    """The framework corpus, found without importing it."""
    out = []
    for name, dist, module, subtree in FRAMEWORKS:
        try:
            version = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            raise NotInstalled(f"{dist} is not installed (pip install -e '.[frameworks]')") from None
        spec = importlib.util.find_spec(module)
        if spec is None or not spec.submodule_search_locations:
            raise NotInstalled(f"{module} is not importable")
        root = Path(list(spec.submodule_search_locations)[0])
        for sub in subtree:
            if sub != "*.py" and not (root / sub).is_dir():
                raise NotInstalled(f"{root / sub} is missing")
        out.append(Package(name, version.split("+")[0], root, subtree))
    return out


# --- the training corpus: wheels fetched from PyPI ----------------------------------------
@dataclass(frozen=True)
class Wheel:
    name: str  # the corpus's name for it (verdict key)
    dist: str  # the PyPI distribution
    version: str
    filename: str  # the exact wheel file; pip download must produce it
    sha256: str
    package: str  # the package directory inside the wheel; paths are relative to it
    subtrees: tuple[str, ...]
    exclude: tuple[str, ...] = ()


# Platform of the one wheel that is not pure Python (torchvision): the sources are the same
# on every platform; pip downloads this one wherever it runs.
PLATFORM = ("--platform", "manylinux_2_28_x86_64", "--python-version", "3.11", "--implementation", "cp",
            "--abi", "cp311")

TESTS = ("*_test.py", "test_*.py", "tests/*", "*/tests/*", "conftest.py")
TRAINING = (
    # The model zoos' model code; transformers' modular_*.py are the sources its modeling_*.py
    # files are generated from (the same code twice), so only modeling_*.py.
    Wheel("transformers", "transformers", "5.24.0", "transformers-5.24.0-py3-none-any.whl",
          "ff5ebedf9359f94bb63772b6380eba6e7104d010cbbb2cb82c788817ea7486f6", "transformers",
          ("models/**/modeling_*.py", "loss", "generation")),
    Wheel("diffusers", "diffusers", "0.42.1", "diffusers-0.42.1-py3-none-any.whl",
          "9154faa704ce00e0b77f568e0d64786064368528aab5fc14eeea92f87d788014", "diffusers",
          ("models", "schedulers", "pipelines", "guiders", "training_utils.py")),
    Wheel("timm", "timm", "1.0.31", "timm-1.0.31-py3-none-any.whl",
          "5bd50f7d0fe6d09bf9285ac2523234a1b7e6bf075c0be3e7aed09139fcb617c7", "timm", (".",)),
    Wheel("torchvision", "torchvision", "0.29.1", "torchvision-0.29.1-cp311-cp311-manylinux_2_28_x86_64.whl",
          "2cb678029a5dd45afbbfa662fce49736827d52be33242b5a8a731e0db02ccdf5", "torchvision", (".",)),
    Wheel("keras-hub", "keras-hub", "0.32.0", "keras_hub-0.32.0-py3-none-any.whl",
          "c0a07ed19b894f5588188afd841659263eb6d3732e21188c82e3e7d3b6de4268", "keras_hub",
          ("src/models", "src/layers", "src/samplers", "src/metrics"), TESTS),
    Wheel("tf-models-official", "tf-models-official", "2.20.0", "tf_models_official-2.20.0-py2.py3-none-any.whl",
          "0bf173f9ea83e1a83f983b35fe515e9d9bfd294b27538f6e8806afeb5a069150", "official",
          ("modeling", "nlp/modeling", "vision/modeling", "vision/losses", "vision/ops", "legacy/detection",
           "legacy/xlnet", "legacy/transformer", "legacy/image_classification"), TESTS),
    # Training loops, RL agents, losses and metrics
    Wheel("sentence-transformers", "sentence-transformers", "6.2.0", "sentence_transformers-6.2.0-py3-none-any.whl",
          "ffb51ccfef65427cfa61776d0eeeb257600b0099cf0c7533ae9a6856d31e4665", "sentence_transformers", (".",), TESTS),
    Wheel("pytorch-metric-learning", "pytorch-metric-learning", "2.9.0",
          "pytorch_metric_learning-2.9.0-py3-none-any.whl",
          "d51646006dc87168f00cf954785db133a4c5aac81253877248737aa42ef6432a", "pytorch_metric_learning", (".",),
          TESTS),
    Wheel("speechbrain", "speechbrain", "1.1.2", "speechbrain-1.1.2-py3-none-any.whl",
          "9fea4144c917ea58bcf13f17a1a1759179ed7472a30ec8416e7c7c8cf21d9c9a", "speechbrain", (".",), TESTS),
    Wheel("allennlp", "allennlp", "2.10.1", "allennlp-2.10.1-py3-none-any.whl",
          "d840f2cb285ded77f48fbe5c8f52fe955dc48d4462cae2baf4668eca10dd42fb", "allennlp", (".",), TESTS),
    Wheel("torchmetrics", "torchmetrics", "1.9.0", "torchmetrics-1.9.0-py3-none-any.whl",
          "bfdcbff3dd1d96b3374bb2496eb39f23c4b28b8a845b6a18c313688e0d2d9ca1", "torchmetrics", (".",), TESTS),
    Wheel("lightning", "lightning", "2.6.6", "lightning-2.6.6-py3-none-any.whl",
          "2bcbd6ee840071cd076c7dc9953d7ac1040df92f1c5fa76583aae644f037ab85", "lightning", ("pytorch", "fabric")),
    Wheel("stable-baselines3", "stable-baselines3", "2.9.2", "stable_baselines3-2.9.2-py3-none-any.whl",
          "0b7db1789bea31d43b3e9be4f88abf639549b587f2bf2a2461ee9d3d77c68e96", "stable_baselines3", (".",)),
    # Probabilistic models
    Wheel("pyro-ppl", "pyro-ppl", "1.9.2", "pyro_ppl-1.9.2-py3-none-any.whl",
          "4fa9a96e1af113a8b2bdf5d54299f6a86b05aa6f1be1761f520a7114c186902a", "pyro", (".",)),
    Wheel("gpytorch", "gpytorch", "1.15.2", "gpytorch-1.15.2-py3-none-any.whl",
          "2112fdc7c0c0bf56a7f2444663cfc80fdfc3e19724399d6303a83d8efdd71e9e", "gpytorch", (".",)),
    # tfp's substrates/ are machine-rewritten copies of python/ (the same code twice);
    # internal/backend is its numpy shim of the TF API
    Wheel("tensorflow-probability", "tensorflow-probability", "0.25.0",
          "tensorflow_probability-0.25.0-py2.py3-none-any.whl",
          "f3f4d6431656c0122906888afe1b67b4400e82bd7f254b45b92e6c5b84ea8e3e", "tensorflow_probability",
          ("python",), TESTS + ("python/internal/backend/*",)),
    # JAX model libraries and trainers
    Wheel("dm-haiku", "dm-haiku", "0.0.17", "dm_haiku-0.0.17-py3-none-any.whl",
          "aa1394276adf59d695c910810ad90febb741503a83c32b022ce1162483904bbb", "haiku", (".",), TESTS),
    Wheel("flax", "flax", "0.12.8", "flax-0.12.8-py3-none-any.whl",
          "807931d369cbc716fc447801ab39cd6c3c2614d573387a2319a028675dd34fe5", "flax", (".",), TESTS),
    Wheel("trax", "trax", "1.4.1", "trax-1.4.1-py2.py3-none-any.whl",
          "5884c010ceaffca5148fe702321ac8f336bc5ca9bdc88d2247a9e04f3deba281", "trax", (".",), TESTS),
)


def cache_dir() -> Path:
    if os.environ.get("NANLINT_CORPUS_CACHE"):
        return Path(os.environ["NANLINT_CORPUS_CACHE"]).expanduser()
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "nanlint-corpus"


def _unpacked(wheel: Wheel, cache: Path) -> Path:
    return cache / "src" / f"{wheel.dist}-{wheel.version}"


def locate_training(cache: Path | None = None, wheels=TRAINING) -> list[Package]:
    """The training corpus as unpacked in the cache; NotInstalled when it was not fetched."""
    cache = cache or cache_dir()
    out = []
    for w in wheels:
        where = _unpacked(w, cache)
        if not (where / ".complete").exists():
            raise NotInstalled(f"{w.dist}=={w.version} is not fetched into {cache} "
                               f"(python scripts/corpus.py --corpus training --fetch)")
        root = where / w.package
        for sub in w.subtrees:
            if "*" not in sub and not (root / sub).exists():
                raise NotInstalled(f"{root / sub} is missing")
        out.append(Package(w.name, w.version, root, w.subtrees, w.exclude))
    return out


def fetch_training(cache: Path | None = None, wheels=TRAINING, log=print) -> list[Package]:
    """Download (if missing) and unpack (if missing) every pinned wheel; check its sha256."""
    cache = cache or cache_dir()
    downloads = cache / "wheels"
    downloads.mkdir(parents=True, exist_ok=True)
    for w in wheels:
        where = _unpacked(w, cache)
        if (where / ".complete").exists():
            continue
        wheel_path = downloads / w.filename
        if not wheel_path.exists() or _sha256(wheel_path) != w.sha256:
            log(f"corpus: downloading {w.dist}=={w.version}")
            # few retries: without network the test should skip in seconds, not minutes
            cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                   "--retries", "1", "--timeout", "30", *PLATFORM, "--dest", str(downloads),
                   f"{w.dist}=={w.version}"]
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode != 0 or not wheel_path.exists():
                said = (done.stderr or done.stdout or "").strip().splitlines()
                raise NotInstalled(f"pip download {w.dist}=={w.version} failed: "
                                   f"{said[-1] if said else 'it did not produce ' + w.filename}")
        digest = _sha256(wheel_path)
        if digest != w.sha256:
            raise NotInstalled(f"{wheel_path} has sha256 {digest}, pinned {w.sha256}")
        _unzip_sources(wheel_path, where)
    return locate_training(cache, wheels)


def _unzip_sources(wheel_path: Path, where: Path) -> None:
    """The wheel's .py files under ``where``, then a marker (an interrupted unpack is redone)."""
    tmp = where.with_name(where.name + ".partial")
    if tmp.exists():
        _rmtree(tmp)
    with zipfile.ZipFile(wheel_path) as z:
        for info in z.infolist():
            name = info.filename
            if name.endswith(".py") and not name.startswith("/") and ".." not in Path(name).parts:
                z.extract(info, tmp)
    if where.exists():
        _rmtree(where)
    tmp.rename(where)
    (where / ".complete").write_text(wheel_path.name + "\n")


def _rmtree(path: Path) -> None:
    import shutil

    shutil.rmtree(path)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
