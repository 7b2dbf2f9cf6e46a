"""Where the precision corpora come from (used by ``scripts/corpus.py``).

Three corpora share the lint/compare/verdict code of ``corpus.py``:

* ``frameworks`` -- the installed, pinned framework packages (the ``frameworks`` extra);
  located with ``importlib``, never imported.
* ``training`` -- training code (model zoos, training loops, pipelines, RL agents,
  probabilistic models) from PyPI wheels that ship their Python sources. They are
  *fetched, not installed* (installing would drag their dependencies and clash with the
  pinned frameworks): ``pip download --no-deps`` of the exact wheel pinned below, its
  sha256 checked, and its ``.py`` files unzipped into a cache directory outside the
  repository (``$NANLINT_CORPUS_CACHE``, default ``~/.cache/nanlint-corpus``).
  Despite its name this is *library* code (model libraries, installed by users): the
  "library" population of docs/precision.md, with ``frameworks``.
* ``scripts`` -- *training code*, the "training code" population: training scripts,
  examples, agents and paper implementations (GAN/VAE/diffusion/RL, TF1-era code) from
  pinned PyPI *sdists* (``pip download --no-binary :all: --no-deps``), fetched the same
  way into the same cache, their ``.py`` files untarred, never installed.  A third of its
  projects is held out (``held_out``), chosen by a rule on the names before any finding
  was looked at; its precision is reported apart from the rest.

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
import tarfile
import zipfile
from concurrent.futures import ThreadPoolExecutor
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


# The bench's research corpus (bench/run.py --corpus research; not a precision corpus): TF1-era
# research code, the tree issue 22 measured (tensor2tensor: large files, graph-mode TF1 layers and
# models, tests included as the tree had them), with the scripts corpus's TF1 sdists.
RESEARCH = (
    Wheel("tensor2tensor", "tensor2tensor", "1.15.7", "tensor2tensor-1.15.7-py2.py3-none-any.whl",
          "26ef986c2b9f45bdefa4218229f33f2992e4d9df84f8939d41481cdaa8444392", "tensor2tensor", (".",)),
)
RESEARCH_SDISTS = ("stable-baselines", "tflearn")  # of SCRIPTS

def cache_dir() -> Path:
    if os.environ.get("NANLINT_CORPUS_CACHE"):
        return Path(os.environ["NANLINT_CORPUS_CACHE"]).expanduser()
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "nanlint-corpus"


def _unpacked(wheel: Wheel, cache: Path) -> Path:
    return cache / "src" / f"{wheel.dist}-{wheel.version}"


def locate_training(cache: Path | None = None, wheels=TRAINING) -> list[Package]:
    """The training corpus as unpacked in the cache; NotInstalled when it was not fetched."""
    return _locate(wheels, _unpacked, cache, lambda w: f"{w.dist}=={w.version}", "training")


def _locate(pinned, unpacked, cache: Path | None, named, corpus: str) -> list[Package]:
    """The packages of a fetched corpus (wheels or sdists), as ``unpacked`` put them in the cache."""
    cache = cache or cache_dir()
    out = []
    for p in pinned:
        where = unpacked(p, cache)
        if not (where / ".complete").exists():
            raise NotInstalled(f"{named(p)} is not fetched into {cache} "
                               f"(python scripts/corpus.py --corpus {corpus} --fetch)")
        root = where / p.package
        for sub in p.subtrees:
            if "*" not in sub and not (root / sub).exists():
                raise NotInstalled(f"{root / sub} is missing")
        out.append(Package(p.name, p.version, root, p.subtrees, p.exclude))
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



# --- the scripts corpus: training code from sdists fetched from PyPI ------------------------
@dataclass(frozen=True)
class Sdist:
    name: str  # the corpus's name for it (verdict key); the PyPI distribution
    version: str
    filename: str  # the exact sdist file; pip download must produce it
    sha256: str
    package: str  # the directory inside the sdist (below its top folder); paths are relative to it
    subtrees: tuple[str, ...]
    exclude: tuple[str, ...] = ()
    framework: str = ""  # what the code is written in (docs/precision.md)
    held_out: bool = False  # frozen before any finding was reviewed: see held_out_names()

    @property
    def dist(self) -> str:
        return self.name


def held_out_names(names) -> set[str]:
    """The held-out third of the scripts corpus: the projects sorted by the sha256 of their
    name, every third from the first.  Fixed before any finding of the corpus was seen; the
    ``held_out`` flags of SCRIPTS are this rule written out (a test checks they agree)."""
    ranked = sorted(names, key=lambda n: hashlib.sha256(n.encode()).hexdigest())
    return {n for i, n in enumerate(ranked) if i % 3 == 0}


NOT_CODE = TESTS + ("setup.py", "version.py", "*/version.py", "docs/*", "*/docs/*", "examples/tests/*")
SCRIPTS = (
    # PyTorch: paper implementations (lucidrains), VAEs, GANs, RL training scripts and agents
    Sdist("denoising-diffusion-pytorch", "2.3.4", "denoising_diffusion_pytorch-2.3.4.tar.gz",
          "c6950c09367e9d05992d44bdeacc578803c64f3864205da959cf95c2774780f4", "denoising_diffusion_pytorch",
          (".",), NOT_CODE, "pytorch"),
    Sdist("vit-pytorch", "1.26.14", "vit_pytorch-1.26.14.tar.gz",
          "554df1ebb1d1726a1ebec5d23f6090694e391d0e17e145108add46ef0badf864", "vit_pytorch", (".",), NOT_CODE,
          "pytorch"),
    Sdist("stylegan2-pytorch", "1.9.0", "stylegan2_pytorch-1.9.0.tar.gz",
          "13c155c892e78fda5a6c6e029fe30c8f28251c5aa7b375a4794b9d5223d7e6ce", "stylegan2_pytorch", (".",),
          NOT_CODE, "pytorch", held_out=True),
    Sdist("dalle-pytorch", "1.6.6", "dalle-pytorch-1.6.6.tar.gz",
          "c9e0d2de5405167bc6dae82f577098b7514bbb3c32fdf8803ff023173712c1d2", "dalle_pytorch", (".",), NOT_CODE,
          "pytorch"),
    # single-file training scripts (PPO, DQN, SAC, TD3...), PyTorch and JAX
    Sdist("cleanrl", "0.4.8", "cleanrl-0.4.8.tar.gz",
          "947a5b4c006f43cf90be03b90c5345d118468260c7269c11e5d795954a2effa5", "cleanrl", (".",), NOT_CODE,
          "pytorch+jax", held_out=True),
    Sdist("pythae", "0.1.2", "pythae-0.1.2.tar.gz",
          "191824894f1b49dc425dea4a53dc24491ebdbe22334298b4ac42e9f0b0726b09", "src/pythae", ("models",), NOT_CODE,
          "pytorch", held_out=True),
    Sdist("lightning-bolts", "0.7.0", "lightning-bolts-0.7.0.tar.gz",
          "6071cda7721087890ba01523d6580fe72b03b842766fd5018a8eb9caa99fe75c", "src/pl_bolts", ("models", "losses"),
          NOT_CODE, "pytorch"),
    Sdist("tianshou", "2.0.1", "tianshou-2.0.1.tar.gz",
          "ec81006848489c23a4952825abb034a525a625dea214a257b1854d03068d11b8", "tianshou", ("algorithm",), NOT_CODE,
          "pytorch", held_out=True),
    # TF1 graph-mode agents and layers, TF2/Keras agents and models
    Sdist("stable-baselines", "2.10.2", "stable_baselines-2.10.2.tar.gz",
          "82491c8028edd5ae17186b8c8b3963368b45a37c9a0a00841ce26990b381f556", "stable_baselines", (".",),
          NOT_CODE, "tf1"),
    Sdist("tflearn", "0.5.0", "tflearn-0.5.0.tar.gz",
          "818aa57667693810415dc203ba3f75f1541e931a8dc30b6e8b21563541a70388", "tflearn", (".",),
          NOT_CODE + ("datasets/*", "vendor/*"), "tf1"),
    Sdist("magenta", "2.1.3", "magenta-2.1.3.tar.gz",
          "3fac011d786bdead8129bb93481d662d871c55bff7f3c5ad147e49bf29d6877a", "magenta", ("models",), NOT_CODE,
          "tf1"),
    Sdist("keras-rl2", "1.0.5", "keras-rl2-1.0.5.tar.gz",
          "1a31d16e212ff3e01b904d42c3b3961b588841d1b2563b5ac51ed9b936ec7be3", "rl", (".",), NOT_CODE,
          "tf2-keras", held_out=True),
    Sdist("deepctr", "0.9.4", "deepctr-0.9.4.tar.gz",
          "c2131e6cda16078bb1861aae5fd3b985d2b9bc67001bf116974ea0982e2fa447", "deepctr", (".",), NOT_CODE,
          "tf2-keras"),
    # JAX (and TF) RL agents, losses and trainers
    # two of its labs' launchers are not Python: a redacted Google-internal import line
    # (".learning.deepmind.xmanager2.client.google as xm") that only a parse error reports
    Sdist("dopamine-rl", "4.1.2", "dopamine_rl-4.1.2.tar.gz",
          "61b791d11edf80e08a164db7bc60166bb669db8a57b6cf21c8717a4aea1a84ef", "dopamine", ("jax", "tf", "labs"),
          NOT_CODE + ("labs/atari_100k/train.py", "labs/moes/atari_100k_train.py"), "jax+tf1"),
    Sdist("rlax", "0.1.9", "rlax-0.1.9.tar.gz",
          "72c01f519b401e684b2c4ac9fe9f2eed242a5a047e3572eb848a759141539736", "rlax", ("_src",), NOT_CODE, "jax"),
    Sdist("dm-acme", "0.4.0", "dm-acme-0.4.0.tar.gz",
          "4b43e7738914cdf0134935485a5d9255189e59f73d442bef057c94279d7691ff", "acme",
          ("agents", "tf/losses", "tf/networks", "jax/losses", "jax/networks"), NOT_CODE, "jax+tf2",
          held_out=True),
    Sdist("brax", "0.14.2", "brax-0.14.2.tar.gz",
          "fd5240fb30ea0d7b0a9da162eb4a460c3ad415c049453936118e2e05089222c2", "brax", ("training",), NOT_CODE,
          "jax"),
    Sdist("sbx-rl", "0.28.0", "sbx_rl-0.28.0.tar.gz",
          "d31098a1d9ebb67b84cab1b91fe3f080b94b9f3fe22867902627a5d1956f1125", "sbx", (".",), NOT_CODE, "jax"),
)


def _unpacked_sdist(sdist: Sdist, cache: Path) -> Path:
    return cache / "src" / f"sdist-{sdist.name}-{sdist.version}"


def locate_scripts(cache: Path | None = None, sdists=SCRIPTS) -> list[Package]:
    """The scripts corpus as unpacked in the cache; NotInstalled when it was not fetched."""
    return _locate(sdists, _unpacked_sdist, cache, lambda s: f"{s.name}=={s.version} (sdist)", "scripts")


def _download_sdist(s: Sdist, downloads: Path) -> None:
    path = downloads / s.filename
    if path.exists() and _sha256(path) == s.sha256:
        return
    # pip prepares an sdist's metadata (a build backend in an isolated environment) before it
    # keeps the file: a few seconds each, so the downloads run side by side.  Few retries:
    # without network the test should skip in seconds, not minutes.
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
           "--retries", "1", "--timeout", "30", *SDIST_INDEX, "--dest", str(downloads), f"{s.name}=={s.version}"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0 or not path.exists():
        said = (done.stderr or done.stdout or "").strip().splitlines()
        raise NotInstalled(f"pip download {s.name}=={s.version} failed: "
                           f"{said[-1] if said else 'it did not produce ' + s.filename}")


SDIST_INDEX: tuple[str, ...] = ()  # extra pip options (the tests point it at a local index)


def fetch_scripts(cache: Path | None = None, sdists=SCRIPTS, log=print, jobs: int = 6) -> list[Package]:
    """Download (if missing) and unpack (if missing) every pinned sdist; check its sha256."""
    cache = cache or cache_dir()
    downloads = cache / "sdists"
    downloads.mkdir(parents=True, exist_ok=True)
    todo = [s for s in sdists if not (_unpacked_sdist(s, cache) / ".complete").exists()]
    for s in todo:
        if not (downloads / s.filename).exists():
            log(f"corpus: downloading {s.name}=={s.version} (sdist)")
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        failures = [f for f in (pool.submit(_download_sdist, s, downloads) for s in todo) if f.exception()]
    if failures:
        raise failures[0].exception()
    for s in todo:
        path = downloads / s.filename
        digest = _sha256(path)
        if digest != s.sha256:
            raise NotInstalled(f"{path} has sha256 {digest}, pinned {s.sha256}")
        _untar_sources(path, _unpacked_sdist(s, cache))
    return locate_scripts(cache, sdists)


def _untar_sources(archive: Path, where: Path) -> None:
    """The sdist's .py files under ``where``, its top folder stripped, then a marker."""
    tmp = where.with_name(where.name + ".partial")
    if tmp.exists():
        _rmtree(tmp)
    tmp.mkdir(parents=True)
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            members = [(i.filename, i) for i in z.infolist() if not i.is_dir()]
            for name, info in members:
                rel = _inner(name)
                if rel is not None:
                    (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
                    (tmp / rel).write_bytes(z.read(info))
    else:
        with tarfile.open(archive) as t:
            for info in t:
                rel = _inner(info.name) if info.isfile() else None
                if rel is not None:
                    (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
                    (tmp / rel).write_bytes(t.extractfile(info).read())
    if where.exists():
        _rmtree(where)
    tmp.rename(where)
    (where / ".complete").write_text(archive.name + "\n")


def _inner(name: str) -> Path | None:
    """A member's path below the sdist's top folder, when it is a safe .py path."""
    parts = Path(name).parts
    if not name.endswith(".py") or name.startswith("/") or ".." in parts or len(parts) < 2:
        return None
    return Path(*parts[1:])
