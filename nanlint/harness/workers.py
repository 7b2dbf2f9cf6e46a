"""The per-framework worker: ``python -m nanlint.harness.workers JOB.json OUT.json``.

One process per framework group (TensorFlow and Keras share one: Keras 3 runs on the
TensorFlow backend, and importing TensorFlow twice would cost seconds for nothing).
It imports the frameworks, resolves the device, imports every fixture module (the
unfixed original and nanlint's fixed copy) from its path, calls ``compute`` (or
``compute_manual``) on every case, converts the outputs to numpy and writes JSON:
values, NaN/Inf counts and the device each output actually lives on.

This module imports only the standard library at import time; numpy and the
frameworks are imported in :func:`main`, in the worker process only.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import math
import platform
import sys
import traceback
from contextlib import nullcontext
from pathlib import Path

from nanlint.harness import reference as reference_plan
from nanlint.harness import sweep
from nanlint.harness.versions import unmet_requirement

MAX_ELEMENTS = 100_000  # per output: fixtures are tiny by protocol

# Modules each framework needs, in import order (keras needs tensorflow for its backend).
IMPORTS = {"tensorflow": ("tensorflow",), "keras": ("tensorflow", "keras"), "torch": ("torch",),
           "jax": ("jax",)}


def _tail(exc: BaseException, limit: int = 6) -> str:
    lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
    text = "".join(lines).rstrip().splitlines()
    return "\n".join(text[-limit:])


def encode(x: float):
    """A float as JSON: NaN and infinities as the strings "nan", "inf", "-inf"."""
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


class Framework:
    """What the worker knows about one framework: versions, GPUs, how to name a device."""

    name = ""

    def __init__(self) -> None:
        self.modules = {m: importlib.import_module(m) for m in IMPORTS[self.name]}

    def versions(self) -> dict[str, str]:
        return {m: getattr(mod, "__version__", "?") for m, mod in self.modules.items()}

    def gpus(self) -> list[str]:  # pragma: no cover - overridden
        return []

    def setup(self, device: str) -> None:
        pass

    def device_of(self, value) -> str | None:
        return None

    def float64(self, dtype):
        """The float64 counterpart of a fixture's ``DTYPE`` (its float32), for the reference run."""
        if isinstance(dtype, str):
            return "float64"
        return self._float64()

    def _float64(self):  # pragma: no cover - overridden
        raise TypeError(f"no float64 for {self.name}")

    def x64(self):
        """A context in which float64 arrays are float64 (JAX needs x64 enabled)."""
        return nullcontext()


def cpu_name() -> str:
    return f"cpu ({platform.machine() or 'unknown'})"


class TensorFlow(Framework):
    name = "tensorflow"

    def _gpus(self):
        tf = self.modules["tensorflow"]
        return tf.config.list_physical_devices("GPU")

    def gpus(self) -> list[str]:
        tf = self.modules["tensorflow"]
        names = []
        for gpu in self._gpus():
            try:
                details = tf.config.experimental.get_device_details(gpu)
            except Exception:  # noqa: BLE001 - details are best effort
                details = {}
            names.append(details.get("device_name") or gpu.name)
        return names

    def setup(self, device: str) -> None:
        tf = self.modules["tensorflow"]
        if device == "gpu":
            for gpu in self._gpus():  # don't grab the whole GPU for a few tiny tensors
                try:
                    tf.config.experimental.set_memory_growth(gpu, True)
                except RuntimeError:  # already initialized (Keras after TensorFlow): keep it
                    pass

    def device_of(self, value) -> str | None:
        spec = getattr(value, "device", None)
        if not isinstance(spec, str) or not spec:
            return None
        kind_index = spec.rsplit("device:", 1)[-1]  # "CPU:0", "GPU:0"
        kind, _, index = kind_index.partition(":")
        if kind.upper() == "CPU":
            return cpu_name()
        if kind.upper() == "GPU":
            names = self.gpus()
            i = int(index or 0)
            return f"gpu:{i} ({names[i] if i < len(names) else '?'})"
        return kind_index

    def _float64(self):
        return self.modules["tensorflow"].float64


class Keras(TensorFlow):
    name = "keras"

    def versions(self) -> dict[str, str]:
        out = super().versions()
        try:
            out["keras backend"] = self.modules["keras"].backend.backend()
        except Exception:  # noqa: BLE001
            pass
        return out


class Torch(Framework):
    name = "torch"

    def gpus(self) -> list[str]:
        torch = self.modules["torch"]
        if not torch.cuda.is_available():
            return []
        return [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]

    def versions(self) -> dict[str, str]:
        out = super().versions()
        torch = self.modules["torch"]
        if torch.version.cuda:
            out["cuda"] = torch.version.cuda
        return out

    def device_of(self, value) -> str | None:
        torch = self.modules["torch"]
        if not isinstance(value, torch.Tensor):
            return None
        if value.device.type == "cpu":
            return cpu_name()
        if value.device.type == "cuda":
            i = value.device.index or 0
            return f"cuda:{i} ({torch.cuda.get_device_name(i)})"
        return str(value.device)

    def _float64(self):
        return self.modules["torch"].float64


class Jax(Framework):
    name = "jax"

    def versions(self) -> dict[str, str]:
        out = super().versions()
        try:
            import jaxlib

            out["jaxlib"] = jaxlib.__version__
        except Exception:  # noqa: BLE001
            pass
        return out

    def gpus(self) -> list[str]:
        jax = self.modules["jax"]
        try:
            return [f"{d.device_kind}" for d in jax.devices("gpu")]
        except RuntimeError:
            return []

    def device_of(self, value) -> str | None:
        devices = getattr(value, "devices", None)
        if not callable(devices):
            return None
        try:
            found = sorted(devices(), key=lambda d: d.id)
        except Exception:  # noqa: BLE001 - a tracer or a deleted array
            return None
        names = []
        for d in found:
            names.append(cpu_name() if d.platform == "cpu" else f"{d.platform}:{d.id} ({d.device_kind})")
        return ", ".join(names) or None

    def _float64(self):
        return self.modules["jax"].numpy.float64

    def x64(self):
        jax = self.modules["jax"]
        if callable(getattr(jax, "enable_x64", None)):
            return jax.enable_x64(True)
        from jax.experimental import enable_x64  # older JAX

        return enable_x64()


FRAMEWORKS = {c.name: c for c in (TensorFlow, Keras, Torch, Jax)}


def to_numpy(np, value):
    """``value`` (a tensor of any framework, a number, a nested list) as a numpy array."""
    if value is None:
        raise TypeError("the output is None (a gradient that does not depend on the input?)")
    detach = getattr(value, "detach", None)
    if callable(detach):  # torch
        t = value.detach().cpu()
        try:
            return t.numpy()
        except TypeError:  # bfloat16 and friends
            return t.float().numpy()
    numpy = getattr(value, "numpy", None)
    if callable(numpy):  # tf.Tensor, keras tensors
        return np.asarray(numpy())
    return np.asarray(value)


def outputs_of(np, fw: Framework, result) -> tuple[dict, list[str]]:
    """Named outputs as JSON (values, counts), and the devices they live on."""
    if not isinstance(result, dict) or not result:
        raise TypeError(f"compute must return a non-empty dict of named arrays, got {type(result).__name__}")
    flat: dict[str, object] = {}
    for name, value in result.items():
        if isinstance(value, (list, tuple)) and value and not all(isinstance(v, (int, float)) for v in value):
            for i, v in enumerate(value):
                flat[f"{name}[{i}]"] = v
        else:
            flat[str(name)] = value
    out, devices = {}, []
    for name, value in flat.items():
        where = fw.device_of(value)
        if where and where not in devices:
            devices.append(where)
        array = to_numpy(np, value)
        dtype = str(getattr(value, "dtype", array.dtype))
        if array.size > MAX_ELEMENTS:
            raise ValueError(f"output {name!r} has {array.size} elements; keep fixtures tiny (< {MAX_ELEMENTS})")
        if array.dtype.kind == "c":
            raise TypeError(f"output {name!r} is complex; return real arrays")
        a = array.astype(np.float64)
        out[name] = {
            "shape": list(a.shape),
            "dtype": dtype.replace("torch.", "").replace("<dtype: '", "").replace("'>", ""),
            "nan": int(np.isnan(a).sum()),
            "inf": int(np.isinf(a).sum()),
            "values": [encode(float(x)) for x in a.ravel()],
        }
    return out, devices


def load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def run_one(np, fw: Framework, func, case, device: str) -> dict:
    try:
        result = func(case, device)
        outputs, devices = outputs_of(np, fw, result)
    except Exception as exc:  # noqa: BLE001 - reported per case
        return {"error": _tail(exc), "exception": type(exc).__name__, "message": str(exc)[:500]}
    return {"outputs": outputs, "device": "; ".join(devices) or "host (numpy)"}


def _load_compute(path, name: str, what: str):
    """(the ``compute`` of nanlint's ``what`` copy at ``path``, or None; the error, or None)."""
    try:
        module = load(path, name)
    except BaseException as exc:  # noqa: BLE001
        return None, f"importing nanlint's {what} copy failed:\n" + _tail(exc)
    compute = getattr(module, "compute", None)
    if not callable(compute):
        return None, f"nanlint's {what} copy has no compute function"
    return compute, None

def run_fixture(np, fw: Framework, job: dict, index: int, device: str) -> dict:
    out: dict = {"cases": {}}
    try:
        unfixed = load(job["unfixed"], f"nanlint_fixture_{index}_unfixed")
    except BaseException as exc:  # noqa: BLE001 - SystemExit in a fixture too
        out["error"] = "importing the fixture failed:\n" + _tail(exc)
        return out
    requires = getattr(unfixed, "REQUIRES", None)
    if requires is not None:
        try:
            why = unmet_requirement(fw, requires)
        except (TypeError, ValueError) as exc:
            out["error"] = str(exc)
            return out
        out["requires"] = {str(k): str(v) for k, v in requires.items()}
        if why is not None:
            out["requires_unmet"] = why
            return out
    cases = getattr(unfixed, "CASES", None)
    compute = getattr(unfixed, "compute", None)
    if not isinstance(cases, dict) or not cases:
        out["error"] = "the fixture defines no CASES dict (case name -> inputs)"
        return out
    if not callable(compute):
        out["error"] = "the fixture defines no compute(case, device) function"
        return out
    tolerance = getattr(unfixed, "TOLERANCE", None)
    out["tolerance"] = tolerance if isinstance(tolerance, (int, float)) and not isinstance(tolerance, bool) \
        else None if tolerance is None else repr(tolerance)
    fixed_compute = None
    if job.get("manual"):
        fixed_compute = getattr(unfixed, "compute_manual", None)
        if not callable(fixed_compute):
            out["error"] = ("nanlint's fix for this finding is display-only, so the fixture must define "
                            "compute_manual(case, device) implementing the documented manual fix")
    elif job.get("fixed"):
        fixed_compute, error = _load_compute(job["fixed"], f"nanlint_fixture_{index}_fixed", "fixed")
        if error:
            out["error"] = error
    out["fixed_ran"] = callable(fixed_compute)
    combined_compute = None
    if job.get("combined"):  # the fixture fixed with all default rules (differs from the rule-alone copy)
        combined_compute, error = _load_compute(job["combined"], f"nanlint_fixture_{index}_combined", "combined")
        if error:
            out["combined_error"] = error
        out["combined_ran"] = callable(combined_compute)
    expect = getattr(unfixed, "EXPECT", None)
    if expect is not None:  # case name -> criterion; judged (and validated) by the parent
        out["expect"] = {str(k): v if isinstance(v, str) else repr(v) for k, v in expect.items()} \
            if isinstance(expect, dict) else repr(expect)
    ref_tolerance = getattr(unfixed, "REFERENCE_TOLERANCE", None)
    if ref_tolerance is not None:
        out["reference_tolerance"] = ref_tolerance if isinstance(ref_tolerance, (int, float)) \
            and not isinstance(ref_tolerance, bool) else repr(ref_tolerance)
    plan = reference_plan.prepare(fw, unfixed, job["unfixed"], f"nanlint_fixture_{index}_float64", load)
    out["reference"] = plan.to_json()
    if plan.error:
        out["error"] = plan.error
    wants_reference = isinstance(expect, dict) and "reference" in expect.values()
    if wants_reference and plan.compute is None:
        out["error"] = ('EXPECT names a "reference" case, so the fixture must define reference(case) -> dict '
                        "of the exact outputs (float64 numpy or closed form), or DTYPE for a float64 run")
    for name, case in cases.items():
        entry = {"unfixed": run_one(np, fw, compute, case, device)}
        if callable(fixed_compute):
            entry["fixed"] = run_one(np, fw, fixed_compute, case, device)
        if callable(combined_compute):
            entry["combined"] = run_one(np, fw, combined_compute, case, device)
        hazard = str(name).startswith("hazard") or (isinstance(expect, dict) and expect.get(name) == "reference")
        if plan.compute is not None and hazard and plan.why_none(str(name)) is None:
            ref = run_one(np, fw, plan.compute, case, device)
            ref.pop("device", None)
            entry["reference"] = ref
        out["cases"][str(name)] = entry
    if job.get("sweep"):  # --plot: walk benign -> hazard inputs with the same machinery (harness.sweep)
        try:
            out["sweeps"] = sweep.run(cases, getattr(unfixed, "SWEEP", None),
                                      lambda func, case: run_one(np, fw, func, case, device), compute, fixed_compute,
                                      lambda hazard: plan.compute if plan.why_none(hazard) is None else None)
        except Exception as exc:  # noqa: BLE001 - the picture is lost, not the verdict
            out["sweeps"] = {"error": "the sweep failed:\n" + _tail(exc)}
    return out


def main(argv: list[str]) -> int:
    job_path, out_path = argv
    job = json.loads(Path(job_path).read_text())
    requested = job["device"]
    result: dict = {"frameworks": {}, "fixtures": {}, "python": sys.version.split()[0]}

    def write() -> None:
        Path(out_path).write_text(json.dumps(result))

    try:
        import numpy as np

        result["numpy"] = np.__version__
    except Exception as exc:  # noqa: BLE001
        result["error"] = "importing numpy failed:\n" + _tail(exc)
        write()
        return 0
    loaded: dict[str, tuple[Framework, str] | None] = {}
    for name in job["frameworks"]:
        info: dict = {}
        result["frameworks"][name] = info
        try:
            fw = FRAMEWORKS[name]()
            info["versions"] = fw.versions()
            gpus = fw.gpus()
            info["gpus"] = gpus
        except BaseException as exc:  # noqa: BLE001
            info["error"] = f"importing {name} failed:\n" + _tail(exc)
            loaded[name] = None
            continue
        if requested == "gpu" and not gpus:
            info["error"] = f"--device gpu: {name} sees no GPU (is the CUDA build installed?)"
            loaded[name] = None
            continue
        device = "gpu" if gpus and requested in ("gpu", "auto") else "cpu"
        try:
            fw.setup(device)
        except Exception as exc:  # noqa: BLE001
            info["error"] = f"setting up {name} on {device} failed:\n" + _tail(exc)
            loaded[name] = None
            continue
        info["device"] = device
        loaded[name] = (fw, device)
    write()
    for index, fixture in enumerate(job["fixtures"]):
        got = loaded.get(fixture["framework"])
        if got is not None:
            fw, device = got
            entry = run_fixture(np, fw, fixture, index, device)
            entry["device_requested"] = device
            result["fixtures"][fixture["id"]] = entry
            write()  # a crash later keeps what ran so far
        done(job, fixture)
    return 0


def done(job: dict, fixture: dict) -> None:
    """One line per finished fixture in the job's progress file (the parent's progress line)."""
    if job.get("progress"):
        with open(job["progress"], "a", encoding="utf-8") as f:
            f.write(fixture["id"] + "\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
