"""One verification run: discover the fixtures, run the static phase
(:mod:`nanlint.harness.static`), one worker per framework group
(:mod:`nanlint.harness.launch`), judge what they report (:mod:`nanlint.harness.judging`),
and return the Result the report (:mod:`nanlint.harness.summary`) shows."""

from __future__ import annotations

import concurrent.futures as futures
import datetime
import os
import platform
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from nanlint import __version__
from nanlint.harness import launch, static
from nanlint.harness.fixtures import (FRAMEWORKS, GROUP, PACKAGE_ROOT, REQUIRES, Fixture, UsageError,
                                      default_fixture_dir, discover, required_imports)
from nanlint.harness.judging import judge_fixture


@dataclass
class Options:
    paths: list[Path] = field(default_factory=list)
    device: str = "cpu"  # cpu / gpu / auto
    rules: list[str] | None = None
    frameworks: list[str] | None = None
    allow_missing: bool = False
    jobs: int = 0  # 0: one per framework group, at most the CPU count
    timeout: float = 900.0
    keep: Path | None = None  # keep the fixed copies here
    # framework -> the Python interpreter its worker runs on (default: this one), e.g.
    # {"tensorflow": "/work/tf23-venv/bin/python"} for fixtures that REQUIRE TF < 2.4
    python: dict[str, str] = field(default_factory=dict)
    allow_empty: bool = False  # a run in which no case ran (every fixture skipped) passes
    # called as progress(done, total, phase) while the run goes on: the fixtures the workers
    # are done with out of those they run (the CLI draws it on a terminal)
    progress: Callable[[int, int, str], None] | None = None
    sweep: bool = False  # --plot: the workers also sweep benign -> hazard inputs (Fixture.sweeps)


@dataclass
class Result:
    fixtures: list[Fixture]
    frameworks: dict[str, dict]
    meta: dict
    seconds: float
    problems: list[str] = field(default_factory=list)  # run-level failures (a crashed worker)
    allow_empty: bool = False  # Options.allow_empty: verifying nothing is not a failure

    @property
    def empty(self) -> bool:
        """No case ran: every fixture was skipped (or failed before running)."""
        return not any(f.cases for f in self.fixtures)

    @property
    def ok(self) -> bool:
        return (bool(self.fixtures) and not self.problems and not any(f.failed for f in self.fixtures)
                and (self.allow_empty or not self.empty))


def run(options: Options) -> Result:
    start = time.monotonic()
    paths = options.paths or [default_fixture_dir()]
    fixtures = discover(paths)
    if options.rules:
        wanted = {r.upper() for r in options.rules}
        fixtures = [f for f in fixtures if f.rule.upper() in wanted or f.slug.upper() in wanted]
    if options.frameworks:
        unknown = set(options.frameworks) - set(FRAMEWORKS)
        if unknown:
            raise UsageError(f"unknown framework(s) {', '.join(sorted(unknown))}; choose from {', '.join(FRAMEWORKS)}")
        fixtures = [f for f in fixtures if f.framework in options.frameworks]
    if not options.allow_missing:  # stop before any work, in one line, rather than fail every fixture
        for fw in sorted({f.framework for f in fixtures if f.framework in FRAMEWORKS} - set(options.python)):
            why = launch.available(fw)
            if why:
                raise UsageError(f"{why}: {launch.install_command(fw)} "
                                 f"(or --frameworks to run others, --allow-missing to skip {fw}'s fixtures)")
    missing = _missing_imports(fixtures, options)
    if not options.allow_missing:  # the same for a package a fixture imports (optax for NAN505's jax fixture)
        for module, why in sorted({m: w for needs in missing.values() for m, w in needs.items()}.items()):
            ids = ", ".join(f.id for f in fixtures if module in missing.get(f.id, {}))
            raise UsageError(f"{why}, needed by {ids}: {launch.install_command(module)} "
                             f"(or --allow-missing to skip the fixtures that need it)")
    jobs = options.jobs or min(3, os.cpu_count() or 1)
    for fw, exe in options.python.items():
        if fw not in FRAMEWORKS:
            raise UsageError(f"--python {fw}=...: unknown framework; choose from {', '.join(FRAMEWORKS)}")
        if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
            raise UsageError(f"--python {fw}={exe}: not an executable file")
    frameworks: dict[str, dict] = {}
    run_notes: list[str] = []
    problems: list[str] = []
    work = Path(tempfile.mkdtemp(prefix="nanlint-harness-"))
    try:
        if options.progress is not None:
            options.progress(0, len(fixtures), "fixing copies with nanlint")
        run_notes += static.static_phase(fixtures, work, jobs)
        static_seconds = round(time.monotonic() - start, 2)
        runnable = [f for f in fixtures if f.framework in FRAMEWORKS]
        for fw in sorted({f.framework for f in runnable}):
            # another interpreter's packages are not visible here: its worker reports an import failure
            why = None if fw in options.python else launch.available(fw)
            frameworks[fw] = {"status": "missing", "reason": why} if why else {"status": "pending"}
            if why:
                for f in runnable:
                    if f.framework == fw:
                        if options.allow_missing:
                            f.skipped = why
                        else:
                            f.errors.append(why + " (pass --allow-missing to skip it)")
        for f in runnable:
            needs = missing.get(f.id)
            if needs and f.skipped is None:
                f.skipped = "; ".join(needs.values())  # only with --allow-missing: it stopped above otherwise
        runnable = [f for f in runnable if frameworks[f.framework]["status"] != "missing" and f.skipped is None]
        groups: dict[str, list[Fixture]] = {}
        for f in runnable:  # a framework on its own interpreter gets its own worker
            exe = options.python.get(f.framework)
            groups.setdefault(GROUP[f.framework] + (f"-{f.framework}-python" if exe else ""), []).append(f)

        def go(group: str) -> tuple[str, dict]:
            members = groups[group]
            fws = sorted({f.framework for f in members})
            return group, launch.run_worker(group, fws, members, options.device, work, options.timeout,
                                            options.python.get(fws[0]), options.sweep)

        with futures.ThreadPoolExecutor(max_workers=max(1, min(jobs, len(groups) or 1))) as pool:
            slowest_first = sorted(groups, key=lambda g: (g != "tensorflow", g))  # TF imports slowest
            running = {group: pool.submit(go, group) for group in slowest_first}
            if options.progress is not None:
                _follow(options.progress, work, running, len(fixtures) - len(runnable), len(fixtures))
            outs = dict(running[group].result() for group in slowest_first)
        for group, out in outs.items():
            for fw, info in out.get("frameworks", {}).items():
                frameworks[fw] = {"status": "error" if "error" in info else "ran", **info,
                                  "worker_seconds": out["seconds"]}
                if fw in options.python:  # say which interpreter ran it
                    frameworks[fw].update(python=out.get("python"), numpy=out.get("numpy"),
                                          interpreter=options.python[fw])
            for i, f in enumerate(groups[group]):
                info = out.get("frameworks", {}).get(f.framework)
                raw = out.get("fixtures", {}).get(str(i))
                if raw is not None:
                    judge_fixture(f, raw)
                elif info is not None and "error" in info:
                    f.errors.append(info["error"])
                elif "error" in out:
                    f.errors.append(out["error"])
                else:
                    f.errors.append(out.get("crash") or "the worker returned nothing for this fixture")
            if "crash" in out:
                problems.append(out["crash"])
        if options.keep is not None:
            options.keep.mkdir(parents=True, exist_ok=True)
            for f in fixtures:
                if f.fixed_path is not None:
                    dest = options.keep / f"{f.rule}-{f.slug}" / f.path.name
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(f.fixed_path, dest)
                if f.combined is not None and f.combined.path is not None:
                    dest = options.keep / "combined" / f"{f.rule}-{f.slug}" / f.path.name
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(f.combined.path, dest)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "nanlint": __version__,
        "commit": _commit(),
        "device_requested": options.device,
        "static_seconds": static_seconds,
        "paths": [str(p) for p in paths],
        "notes": run_notes,
    }
    return Result(fixtures, frameworks, meta, round(time.monotonic() - start, 2), problems, options.allow_empty)


def _missing_imports(fixtures: list[Fixture], options: Options) -> dict[str, dict[str, str]]:
    """Fixture id -> {package: why} for the packages a fixture imports that are not installed
    (its framework's own are :func:`launch.available`'s; another interpreter's packages
    (``--python``) are not visible here: its worker reports an import failure)."""
    missing: dict[str, dict[str, str]] = {}
    for f in fixtures:
        if f.framework not in FRAMEWORKS or f.framework in options.python or f.errors:
            continue
        needs = {m: why for m in required_imports(f.path) if m not in REQUIRES[f.framework]
                 for why in [launch.missing_module(m)] if why}
        if needs:
            missing[f.id] = needs
    return missing


def _follow(progress: Callable[[int, int, str], None], work: Path, running: dict[str, futures.Future],
            before: int, total: int) -> None:
    """Report the workers' progress (``before``: the fixtures that run in none) until every
    worker has returned."""
    shown = -1
    while True:
        finished = all(job.done() for job in running.values())
        done = before + launch.fixtures_done(work, list(running))
        if done != shown:
            progress(min(done, total), total, "running the fixtures")
            shown = done
        if finished:
            return
        time.sleep(0.2)


def _commit() -> str | None:
    """The git commit of the nanlint that ran (``abc1234``, ``+dirty`` when nanlint/ or fixtures/
    had uncommitted changes), or None outside a git checkout: a report says what it measured."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=PACKAGE_ROOT, capture_output=True,
                              text=True, timeout=10)
        if head.returncode != 0 or not head.stdout.strip():
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "nanlint", "fixtures"], cwd=PACKAGE_ROOT,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("+dirty" if dirty else "")
