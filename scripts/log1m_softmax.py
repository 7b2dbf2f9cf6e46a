"""Measure ``log(1 - softmax(z))`` in float32 against an exact reference: the original,
``log1p(-softmax(z))``, the epsilon guard NAN107 used to give it, NAN101's exact form (the
text nanlint's fix writes, executed), and two other exact forms that were considered.

    python scripts/log1m_softmax.py            # print the tables
    python scripts/log1m_softmax.py --write    # replace them in docs/log1m-softmax.md

Every framework (PyTorch, TensorFlow, JAX, Keras 3 on TensorFlow) on CPU; logits of K
classes whose largest is ``gap`` above the next (the others standard normal), optionally
all shifted by an offset; the reference is mpmath at 160 digits on the same float32
inputs: ``log(1 - p_i)`` and the gradient of ``L = sum_i w_i log(1 - p_i)`` (random
weights ``w``), ``dL/dz_j = -w_j p_j + p_j sum_{i != j} w_i p_i / (1 - p_i)``.  The error
of an element is ``|x - ref| / max(1, |ref|)`` (numpy-allclose's mix of absolute and
relative); a cell is the largest over its elements, ``inf``/``NaN`` when some element is
not finite where the reference is.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import mpmath  # noqa: E402
import numpy as np  # noqa: E402

DOC = ROOT / "docs" / "log1m-softmax.md"
BEGIN, END = "<!-- measured: begin -->", "<!-- measured: end -->"
GAPS = (0, 1, 5, 10, 15, 17, 20, 30, 50, 100, 200)
CLASSES = (2, 10, 100, 1000)
OFFSETS = (0.0, 1000.0)
SEEDS = (0, 1)
FORMS = ("log(1 - p)", "log1p(-p)", "guard", "exact")
ALTERNATIVES = ("exact", "lse(others of z) - lse(z)", "log1mexp(log_softmax(z))")

SOURCES = {  # what a user writes; nanlint's safe fix of it is the "exact" form measured
    "torch": "import torch\nimport torch.nn.functional as F\n\ndef f(logits):\n"
             "    return torch.log(1 - F.softmax(logits, dim=-1))\n",
    "tensorflow": "import tensorflow as tf\n\ndef f(logits):\n    return tf.math.log(1 - tf.nn.softmax(logits, axis=-1))\n",
    "jax": "import jax\nimport jax.numpy as jnp\n\ndef f(logits):\n"
           "    return jnp.log(1 - jax.nn.softmax(logits, axis=-1))\n",
    "keras": "from keras import ops\n\ndef f(logits):\n    return ops.log(1 - ops.softmax(logits, axis=-1))\n",
}


def fixed_function(framework: str):
    """nanlint's fix of SOURCES[framework] (safe fixes only), compiled."""
    from nanlint.lint.engine import Linter
    from nanlint.rules.base import by_code

    result = Linter([by_code()["NAN101"]]).fix_source(SOURCES[framework].encode(), "measure.py", unsafe=False)
    assert result.error is None and result.fixed_source, (framework, result.error)
    namespace: dict = {}
    exec(compile(result.fixed_source.decode(), f"<nanlint fix, {framework}>", "exec"), namespace)
    return namespace["f"], result.fixed_source.decode()


# --- frameworks: the ops the other forms need, and value + gradient of sum(w * f(z)) ----------
class Torch:
    name = "torch"

    def __init__(self):
        import torch
        import torch.nn.functional as F
        self.t, self.F = torch, F

    def run(self, form, z, w):
        t = self.t
        zt = t.tensor(z, dtype=t.float32, requires_grad=True)
        out = form(zt)
        (out * t.tensor(w, dtype=t.float32)).sum().backward()
        return out.detach().numpy().astype(np.float64), zt.grad.numpy().astype(np.float64)

    def forms(self):
        t, F = self.t, self.F
        inf = float("inf")
        return {
            "log(1 - p)": lambda z: t.log(1 - F.softmax(z, dim=-1)),
            "log1p(-p)": lambda z: t.log1p(-F.softmax(z, dim=-1)),
            "guard": lambda z: t.log(t.clamp(1 - F.softmax(z, dim=-1), 1e-7)),
            "lse(others of z) - lse(z)": lambda z: t.where(
                F.softmax(z, -1) > 0.5,
                t.logsumexp(t.where(F.softmax(z, -1) > 0.5, -inf, z), -1, keepdim=True) - t.logsumexp(z, -1, keepdim=True),
                t.log1p(-t.where(F.softmax(z, -1) > 0.5, 0.0, F.softmax(z, -1)))),
            "log1mexp(log_softmax(z))": lambda z: t.where(
                F.log_softmax(z, -1) > -math.log(2), t.log(-t.expm1(F.log_softmax(z, -1))),
                t.log1p(-t.exp(F.log_softmax(z, -1)))),
        }


class TensorFlow:
    name = "tensorflow"

    def __init__(self):
        import tensorflow as tf
        self.tf = tf

    def run(self, form, z, w):
        tf = self.tf
        zt = tf.constant(z, tf.float32)
        with tf.GradientTape() as tape:
            tape.watch(zt)
            out = form(zt)
            loss = tf.reduce_sum(out * tf.constant(w, tf.float32))
        return np.asarray(out, np.float64), np.asarray(tape.gradient(loss, zt), np.float64)

    def forms(self):
        tf = self.tf
        return {
            "log(1 - p)": lambda z: tf.math.log(1 - tf.nn.softmax(z, axis=-1)),
            "log1p(-p)": lambda z: tf.math.log1p(-tf.nn.softmax(z, axis=-1)),
            "guard": lambda z: tf.math.log(tf.maximum(1 - tf.nn.softmax(z, axis=-1), 1e-7)),
        }


class Keras(TensorFlow):
    name = "keras"

    def forms(self):
        from keras import ops
        return {
            "log(1 - p)": lambda z: ops.log(1 - ops.softmax(z, axis=-1)),
            "log1p(-p)": lambda z: ops.log1p(-ops.softmax(z, axis=-1)),
            "guard": lambda z: ops.log(ops.maximum(1 - ops.softmax(z, axis=-1), 1e-7)),
        }


class Jax:
    name = "jax"

    def __init__(self):
        import jax
        import jax.numpy as jnp
        self.jax, self.jnp = jax, jnp

    def run(self, form, z, w):
        jnp = self.jnp
        zt = jnp.asarray(z, jnp.float32)
        wt = jnp.asarray(w, jnp.float32)
        out, grad = self.jax.value_and_grad(lambda a: jnp.sum(form(a) * wt))(zt)
        return np.asarray(form(zt), np.float64), np.asarray(grad, np.float64)

    def forms(self):
        jax, jnp = self.jax, self.jnp
        return {
            "log(1 - p)": lambda z: jnp.log(1 - jax.nn.softmax(z, axis=-1)),
            "log1p(-p)": lambda z: jnp.log1p(-jax.nn.softmax(z, axis=-1)),
            "guard": lambda z: jnp.log(jnp.maximum(1 - jax.nn.softmax(z, axis=-1), 1e-7)),
        }


FRAMEWORKS = (Torch, TensorFlow, Jax, Keras)


# --- the reference --------------------------------------------------------------------
def reference(z: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log(1 - p) and the gradient of sum(w * log(1 - p)), row by row, at 160 digits."""
    mpmath.mp.dps = 160
    values, grads = np.empty_like(z), np.empty_like(z)
    for r in range(z.shape[0]):
        row = [mpmath.mpf(float(v)) for v in z[r]]
        top = max(row)
        e = [mpmath.exp(v - top) for v in row]
        total = mpmath.fsum(e)
        p = [v / total for v in e]
        rest = [(total - v) / total for v in e]  # 1 - p, without cancelling
        if any(v == 0 for v in rest):
            values[r], grads[r] = -np.inf, np.nan
            continue
        ws = [mpmath.mpf(float(v)) for v in w[r]]
        s = mpmath.fsum(ws[i] * p[i] / rest[i] for i in range(len(p)))
        values[r] = [float(mpmath.log(v)) for v in rest]
        grads[r] = [float(-ws[j] * p[j] + p[j] * (s - ws[j] * p[j] / rest[j])) for j in range(len(p))]
    return values, grads


def error(x: np.ndarray, ref: np.ndarray) -> float:
    """The largest |x - ref| / max(1, |ref|); inf or NaN when x is not finite where ref is."""
    finite = np.isfinite(ref)
    bad = finite & ~np.isfinite(x)
    if bad.any():
        return math.nan if np.isnan(x[bad]).any() else math.inf
    if not finite.any():
        return 0.0
    return float(np.max(np.abs(x[finite] - ref[finite]) / np.maximum(1.0, np.abs(ref[finite]))))


def logits(gap: float, k: int, offset: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng([seed, k, int(gap * 10), int(offset)])
    z = rng.normal(size=k)
    top = rng.integers(k)  # the saturating class, anywhere in the row
    if k > 1:
        z -= np.delete(z, top).max()
    z[top] = gap
    return (z + offset).astype(np.float32).astype(np.float64)


def worst(a: float, b: float) -> float:
    if math.isnan(a) or math.isnan(b):
        return math.nan
    return max(a, b)


def cell(e: float) -> str:
    return "NaN" if math.isnan(e) else "inf" if math.isinf(e) else f"{e:.0e}"


def measure(log=print):
    """errors[(framework, form, offset, gap)] = (value error, gradient error), the worst over
    K, seeds and (for gap 0) ties; edge[(framework, form, case)] = (values, gradients)."""
    errors: dict = {}
    edge: dict = {}
    texts = {}
    references: dict = {}
    for cls in FRAMEWORKS:
        fw = cls()
        forms = fw.forms()
        forms["exact"], texts[fw.name] = fixed_function(fw.name)
        log(f"{fw.name}: {', '.join(forms)}")
        for k in CLASSES:
            for offset in OFFSETS:
                for seed in SEEDS:
                    z = np.stack([logits(g, k, offset, seed) for g in GAPS])
                    w = np.random.default_rng([seed, k]).uniform(0.5, 1.5, size=z.shape)
                    if (k, offset, seed) not in references:
                        references[(k, offset, seed)] = reference(z, w)
                    ref_v, ref_g = references[(k, offset, seed)]
                    for name, form in forms.items():
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            v, g = fw.run(form, z, w)
                        for row, gap in enumerate(GAPS):
                            key = (fw.name, name, offset, gap)
                            ev, eg = error(v[row], ref_v[row]), error(g[row], ref_g[row])
                            old = errors.get(key, (0.0, 0.0))
                            errors[key] = (worst(old[0], ev), worst(old[1], eg))
        for case, z in EDGE_CASES.items():
            z = np.asarray(z, np.float64)
            for name, form in forms.items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    edge[(fw.name, name, case)] = fw.run(form, z, np.ones_like(z))
    return errors, edge, texts


EDGE_CASES = {
    "K=1, z = [3]": [[3.0]],
    "tie, z = [2, 2]": [[2.0, 2.0]],
    "tie, z = [5, 5, -30, -40]": [[5.0, 5.0, -30.0, -40.0]],
    "tie, z = [1, 1, 1]": [[1.0, 1.0, 1.0]],
}


def tables(errors, edge, texts) -> str:
    names = [cls.name for cls in FRAMEWORKS]
    out = []
    out.append("Worst error over PyTorch, TensorFlow, JAX and Keras 3, K = "
               + ", ".join(map(str, CLASSES)) + f", {len(SEEDS)} draws each, no offset "
               "(value / gradient; the gap is the saturating logit above the next one, gap 0 a tie):\n")
    out.append("| gap | " + " | ".join(f"{f}" for f in FORMS) + " |")
    out.append("|---:|" + "---|" * len(FORMS))
    for gap in GAPS:
        row = []
        for form in FORMS:
            ev = eg = 0.0
            for fw in names:
                v, g = errors[(fw, form, 0.0, gap)]
                ev, eg = worst(ev, v), worst(eg, g)
            row.append(f"{cell(ev)} / {cell(eg)}")
        out.append(f"| {gap} | " + " | ".join(row) + " |")
    out.append("")
    out.append("The exact form against the two other exact forms considered (PyTorch; worst over every gap "
               "and K above; value / gradient), without and with every logit shifted by "
               f"{OFFSETS[1]:g} (softmax does not change):\n")
    out.append("| offset | " + " | ".join(ALTERNATIVES) + " |")
    out.append("|---:|" + "---|" * len(ALTERNATIVES))
    for offset in OFFSETS:
        row = []
        for form in ALTERNATIVES:
            ev = eg = 0.0
            for gap in GAPS:
                v, g = errors[("torch", form, offset, gap)]
                ev, eg = worst(ev, v), worst(eg, g)
            row.append(f"{cell(ev)} / {cell(eg)}")
        out.append(f"| {offset:g} | " + " | ".join(row) + " |")
    out.append("")
    out.append("The exact form per framework, worst over every gap, K and offset (value / gradient):\n")
    out.append("| " + " | ".join(names) + " |")
    out.append("|" + "---|" * len(names))
    row = []
    for fw in names:
        ev = eg = 0.0
        for (f, form, _, _), (v, g) in errors.items():
            if f == fw and form == "exact":
                ev, eg = worst(ev, v), worst(eg, g)
        row.append(f"{cell(ev)} / {cell(eg)}")
    out.append("| " + " | ".join(row) + " |")
    out.append("")
    out.append("Edge cases, the same in all four frameworks unless noted (values; gradient of their sum):\n")
    out.append("| case | " + " | ".join(FORMS) + " |")
    out.append("|---|" + "---|" * len(FORMS))
    for case in EDGE_CASES:
        row = []
        for form in FORMS:
            seen = {}
            for fw in names:
                v, g = edge[(fw, form, case)]
                text = f"{_short(v)}; {_short(g)}"
                seen.setdefault(text, []).append(fw)
            if len(seen) == 1:
                row.append(next(iter(seen)))
            else:
                row.append("<br>".join(f"{text} ({', '.join(fws)})" for text, fws in seen.items()))
        out.append(f"| {case} | " + " | ".join(row) + " |")
    out.append("")
    out.append("The exact form as nanlint writes it (PyTorch):\n")
    out.append("```python\n" + texts["torch"] + "```")
    return "\n".join(out) + "\n"


def _short(a: np.ndarray) -> str:
    flat = np.asarray(a).ravel()
    return "[" + ", ".join("NaN" if np.isnan(x) else "-inf" if x == -np.inf else "inf" if x == np.inf
                           else f"{x:.4g}" for x in flat) + "]"


def provenance() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        head, dirty = "unknown", ""
    import jax
    import keras
    import tensorflow as tf
    import torch
    return (f"Measured at commit `{head}`{' (with uncommitted changes)' if dirty else ''} with "
            f"`python scripts/log1m_softmax.py --write`: torch {torch.__version__}, tensorflow {tf.__version__}, "
            f"jax {jax.__version__}, keras {keras.__version__}, CPU.")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help=f"replace the measured section of {DOC.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    errors, edge, texts = measure(log=lambda msg: print(msg, file=sys.stderr))
    body = provenance() + "\n\n" + tables(errors, edge, texts)
    if not args.write:
        print(body)
        return 0
    text = DOC.read_text(encoding="utf-8")
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    DOC.write_text(text[:start] + "\n" + body + text[end:], encoding="utf-8")
    print(f"wrote {DOC.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
