"""Child processes: whether a framework is importable here (and the pip command when it is
not), the environment children get, nanlint run as a program, and one framework worker
(:mod:`nanlint.harness.workers`) run on a job file.  Standard library only: the frameworks
are imported by the worker in its own process."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import time
from importlib.metadata import PackageNotFoundError, requires
from pathlib import Path

from nanlint.harness.fixtures import PACKAGE_ROOT, REQUIRES, Fixture


def child_env() -> dict[str, str]:
    """The environment for child processes: nanlint importable from a source checkout
    even when it is not installed."""
    env = dict(os.environ)
    if (PACKAGE_ROOT / "pyproject.toml").is_file():
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PACKAGE_ROOT), env.get("PYTHONPATH")) if p)
    env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    return env


def nanlint(args: list[str], cwd: Path) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-m", "nanlint", *args], cwd=cwd, env=child_env(),
                          capture_output=True, text=True, timeout=600)
    return proc.returncode, proc.stdout, proc.stderr


INSTALL = "python3 -m pip install -e '.[frameworks]' in a nanlint checkout"


def install_command(framework: str, requirements: list[str] | None = None) -> str:
    """The pip command installing ``framework`` (or another package a fixture imports, e.g.
    ``optax``) at the version nanlint's ``frameworks`` extra pins for this platform
    (``requirements``: nanlint's metadata), else the checkout's extra (a framework) or the
    package by its import name (anything else)."""
    wanted = REQUIRES.get(framework, (framework,))
    if requirements is None:
        try:
            requirements = requires("nanlint") or []
        except PackageNotFoundError:
            requirements = []
    env = {"extra": "frameworks", "sys_platform": sys.platform}
    picks = []
    for line in requirements:
        spec, _, marker = line.partition(";")
        # the extra's markers are `VAR ==/!= 'value'` clauses joined by `and` (pyproject.toml)
        clauses = re.findall(r"""(\w+)\s*(==|!=)\s*["']([^"']*)["']""", marker)
        if not any(var == "extra" for var, _, _ in clauses) or \
                not all((env.get(var) == value) == (op == "==") for var, op, value in clauses):
            continue
        name = re.split(r"[\s\[=<>!~]", spec.strip(), maxsplit=1)[0]
        if name.replace("-cpu", "") in wanted:
            picks.append(spec.strip())
    if not picks and framework not in REQUIRES:
        picks = [framework]
    return "python3 -m pip install " + " ".join(map(shlex.quote, picks)) if picks else INSTALL


def available(framework: str) -> str | None:
    """None when the framework's modules are importable, else why not."""
    missing = [m for m in REQUIRES[framework] if importlib.util.find_spec(m) is None]
    return f"{framework} is not installed (no module {', '.join(missing)})" if missing else None


def missing_module(module: str) -> str | None:
    """None when the top-level package ``module`` (a fixture's own import, e.g. optax) is
    importable, else why not, worded as :func:`available` words a framework."""
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    return None if found else f"{module} is not installed (no module {module})"


def worker_env(group: str, device: str) -> dict[str, str]:
    env = child_env()
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env["KERAS_BACKEND"] = "tensorflow"  # the protocol: Keras fixtures run on the TensorFlow backend
    env["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"  # several workers may share one GPU
    if device == "cpu":
        if group == "jax":
            env["JAX_PLATFORMS"] = "cpu"
        if group == "tensorflow":
            env["CUDA_VISIBLE_DEVICES"] = "-1"  # TensorFlow would otherwise claim every GPU
    return env


def progress_path(work: Path, group: str) -> Path:
    """The file ``group``'s worker appends a line to per fixture it is done with."""
    return work / f"progress-{group}.txt"


def fixtures_done(work: Path, groups: list[str]) -> int:
    """How many fixtures the workers of ``groups`` are done with so far."""
    done = 0
    for group in groups:
        try:
            done += progress_path(work, group).read_text().count("\n")
        except OSError:
            pass
    return done


def run_worker(group: str, frameworks: list[str], fixtures: list[Fixture], device: str, work: Path,
               timeout: float, python: str | None = None, sweep: bool = False) -> dict:
    job = {"device": device, "frameworks": frameworks,
           "fixtures": [{"id": str(i), "framework": f.framework, "unfixed": str(f.path),
                         "fixed": str(f.fixed_path) if f.fixed_path and f.mode == "fix" and not f.errors else None,
                         "manual": f.mode == "manual",
                         "combined": str(f.combined.path) if f.combined is not None and f.combined.path
                         and f.combined.mode in ("fix", "keep") and not f.errors and not f.combined.errors else None}
                        for i, f in enumerate(fixtures)]}
    job_path, out_path = work / f"job-{group}.json", work / f"out-{group}.json"
    job["progress"] = str(progress_path(work, group))
    if sweep:  # --plot: the worker also walks each hazard's path from a benign case (harness.sweep)
        for entry in job["fixtures"]:
            entry["sweep"] = True
    job_path.write_text(json.dumps(job))
    start = time.monotonic()
    try:
        proc = subprocess.run([python or sys.executable, "-m", "nanlint.harness.workers", str(job_path), str(out_path)],
                              cwd=work, env=worker_env(group, device), capture_output=True, text=True,
                              timeout=timeout)
        rc, err = proc.returncode, proc.stderr
    except subprocess.TimeoutExpired as exc:
        tail = exc.stderr.decode("utf-8", "replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        rc, err = "killed", f"timed out after {timeout:g} s (--timeout)\n{tail}"
    try:
        out = json.loads(out_path.read_text())
    except (OSError, json.JSONDecodeError):
        out = {"frameworks": {}, "fixtures": {}}
    out["seconds"] = round(time.monotonic() - start, 2)
    if rc != 0:
        out["crash"] = f"the {group} worker exited {rc}: {err.strip()[-1500:]}"
    return out
