#!/usr/bin/env python3
"""Benchmark nanlint against ruff, flake8 and Fixit on one corpus, in one run.

    python bench/run.py --setup           # once: bench/.venv with ruff, flake8, fixit==2.2.1
    python bench/run.py                   # default corpus (see bench/README.md)
    python bench/run.py PATH              # any tree
    python bench/run.py --markdown bench/RESULTS.md

Every number is the wall time of a whole process (start-up included), the
median of several runs, hyperfine-style; peak memory is the largest resident
set of any one process of the run (``wait4``'s ``ru_maxrss``: nanlint's
workers and flake8's are separate processes).  Run it with the Python that has
nanlint installed (``.venv/bin/python``); the peer tools come from bench/.venv
so they never touch the test environment.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PEER_VENV = HERE / ".venv"
PEERS = ("ruff", "flake8", "fixit==2.2.1")
# The default corpus: real ML code nobody here wrote, the Python sources of the
# frameworks installed next to nanlint (about 610 files, 188k lines).
DEFAULT_CORPUS = (
    "torch/nn", "torch/optim", "torch/distributions",
    "keras/src/layers", "keras/src/losses", "keras/src/metrics", "keras/src/optimizers",
    "jax/_src/nn", "jax/_src/scipy",
)


def site_packages() -> Path:
    import sysconfig

    return Path(sysconfig.get_paths()["purelib"])


def setup() -> None:
    if not (PEER_VENV / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
    subprocess.run([str(PEER_VENV / "bin" / "python"), "-m", "pip", "install", "-q", *PEERS], check=True)


def copy_tree(src: Path, dst: Path) -> None:
    for path in src.rglob("*.py"):
        if "__pycache__" in path.parts:
            continue
        target = dst / path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)


def make_corpus(work: Path, given: Path | None) -> Path:
    corpus = work / "x1"
    if given is not None:
        copy_tree(given, corpus)
    else:
        sp = site_packages()
        for rel in DEFAULT_CORPUS:
            if (sp / rel).is_dir():
                copy_tree(sp / rel, corpus / rel)
    return corpus


def count(tree: Path) -> tuple[int, int]:
    files = [p for p in tree.rglob("*.py")]
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    return len(files), lines


TIME = Path("/usr/bin/time")
# As installed: bytecode is cached (PYTHONDONTWRITEBYTECODE would make every run
# of an editable install recompile nanlint, ~0.2 s).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(cmd: list[str], cwd: Path) -> tuple[float, int, int, float]:
    """(wall seconds, peak RSS in KiB of any one process, exit status, CPU seconds of all processes).

    The RSS comes from ``/usr/bin/time`` when there is one: a child forked from
    this (large) process would count this process's pages until it execs."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        wrapped = [str(TIME), "-f", "%M %U %S", "-o", rss.name, *cmd] if TIME.exists() else cmd
        start = time.perf_counter()
        proc = subprocess.Popen(wrapped, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        peak = usage.ru_maxrss
        cpu = usage.ru_utime + usage.ru_stime
        if TIME.exists():
            try:
                m, u, s = rss.read().strip().splitlines()[-1].split()
                peak, cpu = int(m), float(u) + float(s)
            except (ValueError, IndexError):
                pass
    return wall, peak, code, cpu


def bench(name: str, cmd: list[str], cwd: Path, runs: int, before=None, warmup: int = 0) -> dict:
    for _ in range(warmup):
        if before:
            before()
        timed(cmd, cwd)
    walls, peaks, codes, cpus = [], [], set(), []
    for _ in range(runs):
        if before:
            before()
        wall, peak, code, cpu = timed(cmd, cwd)
        walls.append(wall)
        peaks.append(peak)
        codes.add(code)
        cpus.append(cpu)
    row = {"name": name, "median": statistics.median(walls), "min": min(walls), "max": max(walls),
           "runs": runs, "peak_mb": max(peaks) / 1024, "codes": sorted(codes), "cpu": statistics.median(cpus)}
    print(f"  {name:34s} median {row['median']:7.2f} s  (min {row['min']:.2f}, max {row['max']:.2f}, "
          f"n={runs})  cpu {row['cpu']:.2f} s  peak {row['peak_mb']:.0f} MB  exit {row['codes']}", flush=True)
    return row


def provenance(argv: list[str] | None = None) -> str:
    """Which code was measured, when and how: the commit (and whether nanlint/ had uncommitted
    changes), the UTC time and the command line, for the results file's first line."""
    root = HERE.parent
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                                timeout=10).stdout.strip() or "?"
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "nanlint"], cwd=root, capture_output=True,
                               text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit, dirty = "?", ""
    command = " ".join(["python bench/run.py", *(sys.argv[1:] if argv is None else argv)])
    return (f"Measured at commit `{commit}`{' (with uncommitted changes under nanlint/)' if dirty else ''}, "
            f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, with `{command}`.")


def parsed_count(corpus: Path) -> tuple[int, int]:
    """(files nanlint parsed with libcst, files) on ``corpus`` with the default rules, counted
    in-process by the runner: the rest the prefilter decided without libcst."""
    from nanlint import runner
    from nanlint.engine import Linter
    from nanlint.rule import all_rules

    files = sorted(p for p in corpus.rglob("*.py") if p.is_file())
    linter = Linter([r for r in all_rules() if r.default], {"frameworks": {}})
    stats = runner.Stats()
    runner.run(files, lambda p: linter, False, False, False, jobs=1, prefilter=True, stats=stats)
    return stats.parsed, len(files)


def loadavg() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover
        return "?"


def machine() -> dict:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        cpu = platform.processor() or "?"
    mem = "?"
    try:
        kb = int(next(l for l in Path("/proc/meminfo").read_text().splitlines() if l.startswith("MemTotal")).split()[1])
        mem = f"{kb / 1024 / 1024:.0f} GiB"
    except (OSError, StopIteration, ValueError):
        pass

    def version(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip().splitlines()[0]
        except (OSError, IndexError, subprocess.SubprocessError):
            return "?"

    peer = PEER_VENV / "bin"
    from importlib.metadata import version as dist_version

    return {
        "nproc": os.cpu_count(), "cpu": cpu, "ram": mem, "os": platform.platform(),
        "python": platform.python_version(), "nanlint": dist_version("nanlint"), "libcst": dist_version("libcst"),
        "ruff": version([str(peer / "ruff"), "--version"]), "flake8": version([str(peer / "flake8"), "--version"]),
        "fixit": version([str(peer / "fixit"), "--version"]),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path", nargs="?", type=Path, help="a tree to benchmark (default: installed ML packages)")
    ap.add_argument("--setup", action="store_true", help="create bench/.venv with the peer tools and exit")
    ap.add_argument("--runs", type=int, default=5, help="runs of the fast commands (ruff, nanlint warm)")
    ap.add_argument("--slow-runs", type=int, default=3, help="runs of nanlint cold and flake8")
    ap.add_argument("--fixit-runs", type=int, default=1, help="runs of Fixit (0: skip)")
    ap.add_argument("--no-scaling", action="store_true", help="skip the 1x/2x/4x linearity runs")
    ap.add_argument("--markdown", type=Path, help="also write the results table here")
    args = ap.parse_args()
    if args.setup:
        setup()
        return 0
    peer = PEER_VENV / "bin"
    missing = [t for t in ("ruff", "flake8", "fixit") if not (peer / t).exists()]
    if missing:
        print(f"missing peer tools {missing}: run `python bench/run.py --setup` first", file=sys.stderr)
        return 2

    info = machine()
    load_start = loadavg()
    work = Path(tempfile.mkdtemp(prefix="nanlint-bench-"))
    try:
        corpus = make_corpus(work, args.path)
        files, lines = count(corpus)
        print(f"corpus: {files} files, {lines} lines in {corpus}; load average {load_start}", flush=True)
        info["parsed"] = parsed_count(corpus)
        nanlint = [sys.executable, "-m", "nanlint", "check", "--isolated", "--exit-zero", "-q"]
        cache_dir = work / "cache"
        rows = {}

        print("whole corpus:", flush=True)
        rows["ruff"] = bench("ruff check --select ALL --no-cache",
                             [str(peer / "ruff"), "check", "--isolated", "--select", "ALL", "--no-cache",
                              "--exit-zero", "-q", "."], corpus, args.runs, warmup=1)
        rows["cold"] = bench("nanlint (cold: --no-cache)", nanlint + ["--no-cache", "."], corpus, args.slow_runs,
                             warmup=1)
        rows["cold1"] = bench("nanlint -j 1 (cold, one process)", nanlint + ["--no-cache", "-j", "1", "."], corpus, 1)
        rows["unfiltered"] = bench("nanlint (cold, no prefilter)", nanlint + ["--no-cache", "--no-prefilter", "."],
                                   corpus, 1)
        timed(nanlint + ["--cache-dir", str(cache_dir), "."], corpus)  # fill the cache
        rows["warm"] = bench("nanlint (warm: nothing changed)", nanlint + ["--cache-dir", str(cache_dir), "."],
                             corpus, args.runs)
        rows["flake8"] = bench("flake8 (all cores)", [str(peer / "flake8"), "--isolated", "--exit-zero", "."],
                               corpus, args.slow_runs)
        if args.fixit_runs:
            rows["fixit"] = bench("fixit lint", [str(peer / "fixit"), "lint", "."], corpus, args.fixit_runs)

        print("pre-commit: 5 changed files", flush=True)
        five = pick_five(corpus)
        rows["python"] = bench("python -c pass (start-up)", [sys.executable, "-c", "pass"], corpus, args.runs)
        rows["startup"] = bench("nanlint --version (start-up)", [sys.executable, "-m", "nanlint", "--version"],
                                corpus, args.runs)
        rows["five"] = bench(f"nanlint 5 files ({sum(count_lines(p) for p in five)} lines)",
                             nanlint + ["--no-cache", *map(str, five)], corpus, args.runs)
        rows["ruff5"] = bench("ruff 5 files", [str(peer / "ruff"), "check", "--isolated", "--select", "ALL",
                                                "--no-cache", "--exit-zero", "-q", *map(str, five)], corpus, args.runs)

        scaling = []
        if not args.no_scaling:
            print("linearity (cold, all cores):", flush=True)
            for factor in (1, 2, 4):
                tree = work / f"scale{factor}"
                for k in range(factor):
                    shutil.copytree(corpus, tree / f"copy{k}")
                row = bench(f"nanlint {factor}x ({factor * lines} lines)", nanlint + ["--no-cache", "."], tree,
                            max(1, args.slow_runs - 1))
                rrow = bench(f"ruff {factor}x", [str(peer / "ruff"), "check", "--isolated", "--select", "ALL",
                                                 "--no-cache", "--exit-zero", "-q", "."], tree, args.runs)
                scaling.append((factor, factor * lines, row, rrow))
                shutil.rmtree(tree)
        load_end = loadavg()
        text = report(info, files, lines, rows, scaling, load_start, load_end, args)
        print()
        print(text)
        if args.markdown:
            args.markdown.write_text(text)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def count_lines(p: Path) -> int:
    return p.read_bytes().count(b"\n")


def pick_five(corpus: Path) -> list[Path]:
    """Five files a commit could touch: framework files the prefilter sends to the parser,
    around the 75th percentile of size (a conservative 'typical')."""
    from nanlint import runner
    from nanlint.engine import Linter
    from nanlint.rule import all_rules

    pf = runner.Prefilter(Linter([r for r in all_rules() if r.default]))
    parsed = sorted((p for p in corpus.rglob("*.py") if pf.decide(str(p), p.read_bytes()) == runner.LINT),
                    key=lambda p: (p.stat().st_size, str(p)))
    if len(parsed) < 5:
        parsed = sorted(corpus.rglob("*.py"), key=lambda p: (p.stat().st_size, str(p)))
    at = max(0, min(len(parsed) - 5, int(len(parsed) * 0.75) - 2))
    return parsed[at:at + 5]


def report(info, files, lines, rows, scaling, load_start, load_end, args) -> str:
    ruff = rows["ruff"]["median"]
    out = ["# nanlint benchmark", "", provenance(), ""]
    out.append(f"Machine: {info['nproc']} CPUs ({info['cpu']}), {info['ram']} RAM, {info['os']}; "
               f"load average {load_start} at start, {load_end} at end.")
    out.append(f"Versions: Python {info['python']}, nanlint {info['nanlint']}, libcst {info['libcst']}, "
               f"{info['ruff']}, flake8 {info['flake8']}, {info['fixit']}.")
    what = f"`{args.path}`" if args.path else "the installed ML packages' sources (" + ", ".join(DEFAULT_CORPUS) + ")"
    out.append(f"Corpus: {what}: {files} files, {lines} lines.")
    if "parsed" in info:
        parsed, total = info["parsed"]
        out.append(f"Prefilter: libcst parsed {parsed} of {total} files ({parsed / total:.0%}; default rules, "
                   f"counted in-process); the rest were decided without it.")
    out += ["", "Wall time of whole processes, median of n runs; CPU = user + system seconds of all its "
            "processes (median; robust to a loaded machine); peak = largest RSS of any one process.", "",
            "| command | median s | min s | n | CPU s | peak MB | wall vs ruff | CPU vs ruff | Fixit / this (wall) |",
            "|---|---|---|---|---|---|---|---|---|"]
    fixit = rows.get("fixit", {}).get("median")
    order = ["ruff", "cold", "cold1", "unfiltered", "warm", "flake8", "fixit"]
    for key in order:
        if key not in rows:
            continue
        r = rows[key]
        vs_fixit = f"{fixit / r['median']:.1f}x" if fixit else "-"
        out.append(f"| {r['name']} | {r['median']:.2f} | {r['min']:.2f} | {r['runs']} | {r['cpu']:.2f} | "
                   f"{r['peak_mb']:.0f} | {r['median'] / ruff:.2f}x | {r['cpu'] / rows['ruff']['cpu']:.2f}x | {vs_fixit} |")
    out += ["", "Pre-commit (5 changed files, no cache):", "",
            "| command | median s | CPU s | peak MB |", "|---|---|---|---|"]
    for key in ("python", "startup", "five", "ruff5"):
        r = rows[key]
        out.append(f"| {r['name']} | {r['median']:.2f} | {r['cpu']:.2f} | {r['peak_mb']:.0f} |")
    after = rows["five"]["median"] - rows["python"]["median"]
    out.append("")
    out.append(f"5 files after Python start-up: {after:.2f} s.")
    if scaling:
        out += ["", "Linearity (cold, all cores):", "",
                "| corpus | lines | nanlint median s | s per 100k lines | nanlint CPU s | CPU s per 100k lines "
                "| ruff median s |", "|---|---|---|---|---|---|---|"]
        for factor, n, row, rrow in scaling:
            out.append(f"| {factor}x | {n} | {row['median']:.2f} | {row['median'] / n * 1e5:.2f} | "
                       f"{row['cpu']:.2f} | {row['cpu'] / n * 1e5:.2f} | {rrow['median']:.2f} |")
    out += ["", "Ratios: " + ", ".join(filter(None, [
        f"cold {rows['cold']['median'] / ruff:.2f}x ruff (CPU {rows['cold']['cpu'] / rows['ruff']['cpu']:.2f}x)",
        f"warm {rows['warm']['median'] / ruff:.2f}x ruff",
        f"Fixit / nanlint cold {fixit / rows['cold']['median']:.1f}x "
        f"(CPU {rows['fixit']['cpu'] / rows['cold']['cpu']:.1f}x)" if fixit else None,
        f"flake8 / nanlint cold {rows['flake8']['median'] / rows['cold']['median']:.2f}x",
    ])) + "."]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
