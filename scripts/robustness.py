#!/usr/bin/env python3
"""Robustness corpus: lint and fix every ``.py`` file of the installed ML packages.

Not a unit test: a long run (tens of minutes on 2 cores) whose summary is committed
to ``docs/robustness.md``.  For every file, in worker processes (the engine
in-process, as the CLI runs it):

1. lint it with every rule (opt-in rules included);
2. when a finding is fixable (unsafe fixes included), fix it, write the result
   atomically to a copy of the file (``nanlint.lint.writer``) and read it back;
3. check that the fixed file parses (libcst and CPython), and that fixing it again
   changes nothing (idempotence);
4. record crashes (an exception escaping the engine, with its traceback),
   engine errors (``FileResult.error``: a rule that crashed, a fix that did not
   re-parse or reach a fixpoint), timeouts, and times.

    python scripts/robustness.py                       # all packages, 2 jobs, write docs/robustness.md
    python scripts/robustness.py --packages numpy --limit 200 --out -   # a quick look

Exit status: 0 when there are no crashes, engine errors, timeouts, broken or
non-idempotent fixes; 1 otherwise.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import importlib.metadata
import importlib.util
import multiprocessing
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PACKAGES = ("tensorflow", "keras", "tf_keras", "torch", "torchvision", "jax", "jaxlib", "flax", "optax",
                    "numpy", "scipy", "sklearn", "pandas", "transformers", "ml_dtypes")
DISTRIBUTIONS = {"sklearn": "scikit-learn", "tf_keras": "tf-keras", "tensorflow": "tensorflow-cpu"}

_LINTER = None
_TIMEOUT = 60
_SCRATCH = ""


class FileTimeout(Exception):
    pass


def _alarm(signum, frame):  # noqa: ARG001
    raise FileTimeout()


def _init(timeout: int, scratch: str) -> None:
    global _LINTER, _TIMEOUT, _SCRATCH
    from nanlint.lint.engine import Linter
    from nanlint.rules.base import all_rules

    _LINTER = Linter(list(all_rules()))
    _TIMEOUT = timeout
    _SCRATCH = scratch
    signal.signal(signal.SIGALRM, _alarm)


def _compiles(source: bytes) -> bool:
    try:
        compile(source, "<fixed>", "exec", flags=0x400, dont_inherit=True)
    except BaseException:  # noqa: BLE001
        return False
    return True


def check_file(item: tuple[str, str]) -> dict:
    """Lint, fix, verify one file; a dict of plain data for the parent."""
    path, label = item
    from nanlint.lint import writer

    linter = _LINTER
    out: dict = {"path": label, "bytes": 0, "findings": {}, "fixed": 0, "changed_lines": 0,
                 "lint_s": 0.0, "fix_s": 0.0, "crash": None, "error": None, "broken": None,
                 "non_idempotent": None, "timeout": False, "parse_error": None, "write": None}
    signal.alarm(_TIMEOUT)
    stage = "read"
    try:
        source = writer.read(Path(path))
        out["bytes"] = len(source)
        stage = "lint"
        t = time.perf_counter()
        result = linter.lint_source(source, label)
        out["lint_s"] = time.perf_counter() - t
        counts = collections.Counter(f.code for f in result.findings)
        out["findings"] = dict(counts)
        if result.error:
            out["error"] = f"lint: {result.error}"
        if counts.get("NAN001"):
            out["parse_error"] = next(f.message for f in result.findings if f.code == "NAN001")
        if any(f.fixable(True) for f in result.findings):
            stage = "fix"
            t = time.perf_counter()
            fixed = linter.fix_source(source, label, True)
            out["fix_s"] = time.perf_counter() - t
            if fixed.error:
                out["error"] = f"fix: {fixed.error}"
            out["fixed"] = fixed.fixed
            if fixed.fixed_source is not None:
                new = fixed.fixed_source
                import difflib

                a = source.splitlines(keepends=True)
                b = new.splitlines(keepends=True)
                matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
                out["changed_lines"] = sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes()
                                           if tag != "equal")
                stage = "verify"
                import libcst

                problems = []
                if _compiles(source) and not _compiles(new):
                    problems.append("CPython rejects the fixed file")
                try:
                    libcst.parse_module(new)
                except Exception as exc:  # noqa: BLE001
                    problems.append(f"libcst rejects the fixed file: {type(exc).__name__}")
                if problems:
                    out["broken"] = "; ".join(problems)
                stage = "refix"
                again = linter.fix_source(new, label, True)
                if again.fixed_source is not None or again.error:
                    out["non_idempotent"] = again.error or f"a second fix changed it again ({again.fixed} fixes)"
                stage = "write"
                copy = Path(tempfile.mkdtemp(dir=_SCRATCH)) / Path(path).name
                try:
                    shutil.copyfile(path, copy)
                    error = writer.write_atomic(copy, new, source)
                    if error is not None or writer.read(copy) != new:
                        out["write"] = error or "the copy does not hold the fixed bytes"
                finally:
                    shutil.rmtree(copy.parent, ignore_errors=True)
    except FileTimeout:
        out["timeout"] = stage
    except BaseException:  # noqa: BLE001 - exactly what we are looking for
        out["crash"] = f"[{stage}] " + traceback.format_exc()
    finally:
        signal.alarm(0)
    return out


def package_dirs(names: list[str]) -> list[tuple[str, Path, str]]:
    found = []
    for name in names:
        try:
            spec = importlib.util.find_spec(name)  # a top-level name: imports nothing
        except (ImportError, ValueError):
            spec = None
        if spec is None or not spec.submodule_search_locations:
            continue
        try:
            version = importlib.metadata.version(DISTRIBUTIONS.get(name, name))
        except importlib.metadata.PackageNotFoundError:
            version = "?"
        for location in spec.submodule_search_locations:
            found.append((name, Path(location), version))
    return found


def collect(dirs: list[tuple[str, Path, str]]) -> list[tuple[str, str]]:
    items, seen = [], set()
    for name, root, _ in dirs:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for f in sorted(filenames):
                if not f.endswith(".py"):
                    continue
                p = os.path.join(dirpath, f)
                real = os.path.realpath(p)
                if real in seen or not os.path.isfile(p):
                    continue
                seen.add(real)
                items.append((p, f"{name}/{os.path.relpath(p, root)}"))
    return items


def run(items, jobs: int, timeout: int) -> tuple[list[dict], list[str], float]:
    scratch = tempfile.mkdtemp(prefix="nanlint-robustness-")
    results: list[dict] = []
    pending = {label for _, label in items}
    order = sorted(items, key=lambda it: -os.path.getsize(it[0]))  # biggest first
    start = time.perf_counter()
    from nanlint.rules.base import all_rules

    all_rules()  # import every module once here: workers fork with this snapshot of the code
    ctx = multiprocessing.get_context("fork")
    pool = ctx.Pool(jobs, initializer=_init, initargs=(timeout, scratch), maxtasksperchild=300)
    lost: list[str] = []
    try:
        it = pool.imap_unordered(check_file, order, chunksize=1)
        while pending:
            try:
                r = it.next(timeout=timeout * 4 + 60)
            except StopIteration:
                break
            except multiprocessing.TimeoutError:  # a worker died (a crash in native code): its files are lost
                lost = sorted(pending)
                break
            pending.discard(r["path"])
            results.append(r)
            if len(results) % 500 == 0:
                print(f"  {len(results)}/{len(items)} files, {time.perf_counter() - start:.0f}s", file=sys.stderr, flush=True)
    finally:
        pool.terminate()
        pool.join()
        shutil.rmtree(scratch, ignore_errors=True)
    return results, lost, time.perf_counter() - start


def summarize(results, lost, wall, dirs, jobs, timeout, argv, total) -> tuple[str, bool]:
    from nanlint import __version__
    from nanlint.rules.base import all_rules

    rules = {r.code: r for r in all_rules()}
    n = len(results)
    total_bytes = sum(r["bytes"] for r in results)
    lint_cpu = sum(r["lint_s"] for r in results)
    fix_cpu = sum(r["fix_s"] for r in results)
    per_rule = collections.Counter()
    files_per_rule = collections.Counter()
    for r in results:
        for code, k in r["findings"].items():
            per_rule[code] += k
            files_per_rule[code] += 1
    crashes = [r for r in results if r["crash"]]
    errors = [r for r in results if r["error"]]
    broken = [r for r in results if r["broken"]]
    nonidem = [r for r in results if r["non_idempotent"]]
    timeouts = [r for r in results if r["timeout"]]
    write = [r for r in results if r["write"]]
    fixed_files = [r for r in results if r["fixed"]]
    parse_errors = [r for r in results if r["parse_error"]]
    ok = not (crashes or errors or broken or nonidem or timeouts or write or lost)
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "nanlint"], cwd=ROOT, capture_output=True,
                               text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit, dirty = "?", ""
    packages = {}
    for name, _, version in dirs:
        packages[name] = version
    files_per_pkg = collections.Counter(r["path"].split("/", 1)[0] for r in results)
    L = []
    L.append("# Robustness corpus\n")
    L.append("Every `.py` file of the installed ML packages, linted with every rule (opt-in included) and, "
             "where a finding is fixable, fixed with `--unsafe-fixes` on a copy; the fixed file must parse "
             "(libcst and CPython), a second fix must change nothing, and the atomic write must hold the fixed "
             "bytes. Produced by `python scripts/robustness.py` (" + " ".join(argv) + ").\n")
    L.append(f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; nanlint {__version__} "
             f"at commit `{commit}`{' (with uncommitted changes under nanlint/)' if dirty else ''}; "
             f"{len(rules)} rules; Python {platform.python_version()}, libcst {importlib.metadata.version('libcst')}")
    try:
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    L.append(f"- {jobs} worker processes, per-file timeout {timeout} s; load average at the end {load} on "
             f"{os.cpu_count()} CPUs (times are only comparable between runs on an equally loaded machine)")
    L.append("- packages: " + ", ".join(f"{k} {v} ({files_per_pkg[k]} files)" for k, v in packages.items()))
    L.append("")
    L.append("| | |\n|---|---|")
    L.append(f"| files | {n} of {total} ({total_bytes / 1e6:.1f} MB) |")
    L.append(f"| wall time | {wall:.0f} s ({n / wall if wall else 0:.1f} files/s) |")
    L.append(f"| CPU time: lint / fix+verify | {lint_cpu:.0f} s / {fix_cpu:.0f} s |")
    L.append(f"| files with findings | {sum(1 for r in results if r['findings'])} |")
    L.append(f"| files fixed (unsafe fixes included) | {len(fixed_files)} ({sum(r['fixed'] for r in fixed_files)} fixes, "
             f"{sum(r['changed_lines'] for r in fixed_files)} lines changed) |")
    L.append(f"| **crashes** (exception escaping the engine) | **{len(crashes)}** |")
    L.append(f"| **engine errors** (rule crashed, fix did not re-parse / reach a fixpoint) | **{len(errors)}** |")
    L.append(f"| **fixed files that do not parse** | **{len(broken)}** |")
    L.append(f"| **non-idempotent fixes** | **{len(nonidem)}** |")
    L.append(f"| **atomic write failures** | **{len(write)}** |")
    L.append(f"| **timeouts** | **{len(timeouts)}** |")
    L.append(f"| **files lost** (a worker process died) | **{len(lost)}** |")
    L.append(f"| NAN001 parse errors (files that do not parse, see below) | {len(parse_errors)} |")
    L.append("")
    L.append("## Findings per rule\n")
    L.append("| rule | name | default | findings | files |\n|---|---|---|---|---|")
    for code in sorted(set(per_rule) | set(rules)):
        r = rules.get(code)
        L.append(f"| {code} | {r.name if r else '?'} | {'on' if r and r.default else 'opt-in'} | "
                 f"{per_rule.get(code, 0)} | {files_per_rule.get(code, 0)} |")
    L.append("")
    slow = sorted(results, key=lambda r: -(r["lint_s"] + r["fix_s"]))[:10]
    L.append("## Slowest files\n")
    L.append("| file | KB | lint s | fix s |\n|---|---|---|---|")
    for r in slow:
        L.append(f"| `{r['path']}` | {r['bytes'] / 1024:.0f} | {r['lint_s']:.1f} | {r['fix_s']:.1f} |")
    L.append("")

    def section(title, rows, key, limit=50):
        L.append(f"## {title}\n")
        if not rows:
            L.append("None.\n")
            return
        for r in rows[:limit]:
            text = str(r[key])
            if "\n" in text.strip():
                L.append(f"- `{r['path']}`\n\n```\n{text.strip()}\n```\n")
            else:
                L.append(f"- `{r['path']}`: {text}")
        if len(rows) > limit:
            L.append(f"- ... and {len(rows) - limit} more")
        L.append("")

    section("Crashes", crashes, "crash")
    section("Engine errors", errors, "error")
    section("Fixed files that do not parse", broken, "broken")
    section("Non-idempotent fixes", nonidem, "non_idempotent")
    section("Atomic write failures", write, "write")
    section("Timeouts", timeouts, "timeout")
    if lost:
        L.append("## Files lost\n")
        L.extend(f"- `{p}`" for p in lost[:50])
        L.append("")
    reasons = collections.Counter(r["parse_error"].split(" (")[0][:80] for r in parse_errors)
    L.append("## Files that do not parse (NAN001)\n")
    L.append("Each is a finding, never a crash." if parse_errors else "None: every file parses.")
    L.append("")
    for reason, k in reasons.most_common():
        L.append(f"- {k} x {reason}")
    L.append("")
    for r in parse_errors[:30]:
        L.append(f"- `{r['path']}`: {r['parse_error']}")
    if len(parse_errors) > 30:
        L.append(f"- ... and {len(parse_errors) - 30} more")
    L.append("")
    return "\n".join(L), ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--packages", nargs="*", default=list(DEFAULT_PACKAGES))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=120, help="seconds per file")
    parser.add_argument("--limit", type=int, default=0, help="a deterministic sample of N files, every k-th (0: all)")
    parser.add_argument("--max-kb", type=int, default=0, help="skip files bigger than this (0: no limit)")
    parser.add_argument("--out", default=str(ROOT / "docs" / "robustness.md"), help="'-' for stdout")
    args = parser.parse_args(argv)
    dirs = package_dirs(args.packages)
    if not dirs:
        print("none of the packages is installed", file=sys.stderr)
        return 2
    items = collect(dirs)
    total = len(items)
    if args.max_kb:
        items = [it for it in items if os.path.getsize(it[0]) <= args.max_kb * 1024]
    if args.limit:
        step = len(items) / args.limit
        items = [items[int(k * step)] for k in range(min(args.limit, len(items)))]
    print(f"{len(items)} of {total} files from {', '.join(sorted({d[0] for d in dirs}))}", file=sys.stderr, flush=True)
    results, lost, wall = run(items, args.jobs, args.timeout)
    shown = sys.argv[1:] if argv is None else argv
    text, ok = summarize(results, lost, wall, dirs, args.jobs, args.timeout, ["python", "scripts/robustness.py", *shown],
                         total)
    if args.out == "-":
        print(text)
    else:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n")
        print(text.split("## Findings per rule")[0], file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
