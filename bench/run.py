#!/usr/bin/env python3
"""Benchmark nanlint against ruff, flake8 and Fixit on one corpus, in one run.

    python bench/run.py --setup           # once: bench/.venv with ruff, flake8, fixit==2.2.1
    python bench/run.py                   # the frameworks corpus (see bench/README.md)
    python bench/run.py --corpus training # diffusers + timm, fetched by scripts/corpus_sources.py
    python bench/run.py --corpus research # TF1-era research code: tensor2tensor, stable-baselines, tflearn
    python bench/run.py PATH              # any tree
    python bench/run.py --base ../old     # also nanlint from another checkout (before/after)
    python bench/run.py --large           # also the two generated ~10 MB files
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
# The training corpus: modern PyTorch training code from PyPI, fetched (not installed)
# by scripts/corpus_sources.py into its cache: (wheel, subtrees of its package); about
# 1,080 files, 610k lines.
TRAINING_CORPUS = (("diffusers", ("models", "pipelines", "schedulers")), ("timm", (".",)))
CORPORA = ("frameworks", "training", "research")


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


def training_sources() -> list[tuple[str, Path]]:
    """(name, directory) of the training corpus, fetched into the corpus cache if missing
    (pinned wheels, sha256 checked: scripts/corpus_sources.py)."""
    sys.path.insert(0, str(HERE.parent / "scripts"))
    try:
        import corpus_sources as cs
    finally:
        sys.path.pop(0)
    wheels = [w for w in cs.TRAINING if w.name in dict(TRAINING_CORPUS)]
    packages = cs.fetch_training(wheels=wheels, log=lambda m: print(m, flush=True))
    out = []
    for pkg in packages:
        for sub in dict(TRAINING_CORPUS)[pkg.name]:
            out.append((f"{pkg.name}-{pkg.version}/{sub}".rstrip("/."), pkg.root / sub))
    return out


def research_sources() -> list[tuple[str, Path]]:
    """(name, directory or file) of the research corpus: TF1-era research code (tensor2tensor's
    wheel, the scripts corpus's TF1 sdists), fetched into the corpus cache if missing (pinned,
    sha256 checked: scripts/corpus_sources.py ``RESEARCH``)."""
    sys.path.insert(0, str(HERE.parent / "scripts"))
    try:
        import corpus_sources as cs
    finally:
        sys.path.pop(0)
    packages = cs.fetch_training(wheels=cs.RESEARCH, log=lambda m: print(m, flush=True))
    packages += cs.fetch_scripts(sdists=[s for s in cs.SCRIPTS if s.name in cs.RESEARCH_SDISTS],
                                 log=lambda m: print(m, flush=True))
    return [(f"{pkg.name}-{pkg.version}/{f.relative_to(pkg.root)}", f) for pkg in packages for f in pkg.files()]


def corpus_name(args) -> str:
    if args.path is not None:
        return f"`{args.path}`"
    if args.corpus == "training":
        return "training code from PyPI wheels, fetched not installed (" + ", ".join(
            f"{name} {'+'.join(subs)}" for name, subs in TRAINING_CORPUS) + "; versions pinned in " \
            "scripts/corpus_sources.py)"
    if args.corpus == "research":
        return "TF1-era research code from PyPI, fetched not installed (tensor2tensor 1.15.7, the whole " \
            "package with its tests; stable-baselines 2.10.2 and tflearn 0.5.0 as the scripts corpus has " \
            "them; pinned in scripts/corpus_sources.py)"
    return "frameworks: the installed ML packages' sources (" + ", ".join(DEFAULT_CORPUS) + ")"


def make_corpus(work: Path, given: Path | None, which: str = "frameworks") -> Path:
    corpus = work / "x1"
    if given is not None:
        copy_tree(given, corpus)
    elif which == "training":
        for name, src in training_sources():
            copy_tree(src, corpus / name)
    elif which == "research":
        for name, src in research_sources():
            (corpus / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, corpus / name)
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
# nanlint is this checkout's (whatever is installed), or --base's for the "before" rows.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV["PYTHONPATH"] = os.pathsep.join([str(HERE.parent)] + ([ENV["PYTHONPATH"]] if ENV.get("PYTHONPATH") else []))


def env_for(checkout: Path) -> dict:
    return {**ENV, "PYTHONPATH": str(checkout.resolve())}


def commit_of(checkout: Path) -> str:
    try:
        head = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(checkout), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=30).stdout.strip()
        return (head or "?") + (" + uncommitted changes" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "?"


def timed(cmd: list[str], cwd: Path, env: dict | None = None) -> tuple[float, int, int, float]:
    """(wall seconds, peak RSS in KiB of any one process, exit status, CPU seconds of all processes).

    The RSS comes from ``/usr/bin/time`` when there is one: a child forked from
    this (large) process would count this process's pages until it execs."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        wrapped = [str(TIME), "-f", "%M %U %S", "-o", rss.name, *cmd] if TIME.exists() else cmd
        start = time.perf_counter()
        proc = subprocess.Popen(wrapped, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=env or ENV)
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


def bench(name: str, cmd: list[str], cwd: Path, runs: int, warmup: int = 0, env=None) -> dict:
    return bench_alternating([(name, cmd, env)], cwd, runs, warmup)[0]


def bench_alternating(commands: list[tuple[str, list[str], dict | None]], cwd: Path, runs: int,
                      warmup: int = 0) -> list[dict]:
    """A row per (name, command, environment), their runs alternating (a, b, a, b, ...): a
    machine whose load drifts during the benchmark slows each command alike, where runs in
    blocks gave "before" and "after" different machines (issue 22's runs of 2026-12-04)."""
    for _ in range(warmup):
        for _, cmd, env in commands:
            timed(cmd, cwd, env)
    samples: list[list[tuple[float, int, int, float]]] = [[] for _ in commands]
    for _ in range(runs):
        for k, (_, cmd, env) in enumerate(commands):
            samples[k].append(timed(cmd, cwd, env))
    rows = []
    for (name, _, _), got in zip(commands, samples):
        walls, peaks, codes, cpus = [g[0] for g in got], [g[1] for g in got], {g[2] for g in got}, [g[3] for g in got]
        row = {"name": name, "median": statistics.median(walls), "min": min(walls), "max": max(walls),
               "runs": runs, "peak_mb": max(peaks) / 1024, "codes": sorted(codes), "cpu": statistics.median(cpus)}
        print(f"  {name:34s} median {row['median']:7.2f} s  (min {row['min']:.2f}, max {row['max']:.2f}, "
              f"n={runs})  cpu {row['cpu']:.2f} s  peak {row['peak_mb']:.0f} MB  exit {row['codes']}", flush=True)
        rows.append(row)
    return rows


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
    ap.add_argument("path", nargs="?", type=Path, help="a tree to benchmark (instead of --corpus)")
    ap.add_argument("--corpus", choices=CORPORA, default="frameworks",
                    help="frameworks: the installed ML packages' sources; training: diffusers + timm from PyPI")
    ap.add_argument("--base", type=Path, help="a checkout of an earlier nanlint to time next to this one "
                    "(git worktree add DIR COMMIT): its cold, warm and 5-file runs")
    ap.add_argument("--large", action="store_true", help="also time the two generated ~10 MB files")
    ap.add_argument("--large-only", action="store_true", help="only the large files (no corpus)")
    ap.add_argument("--setup", action="store_true", help="create bench/.venv with the peer tools and exit")
    ap.add_argument("--runs", type=int, default=5, help="runs of the fast commands (ruff, nanlint warm)")
    ap.add_argument("--slow-runs", type=int, default=3, help="runs of nanlint cold and flake8")
    ap.add_argument("--fixit-runs", type=int, default=1, help="runs of Fixit (0: skip)")
    ap.add_argument("--no-scaling", action="store_true", help="skip the 1x/2x/4x linearity runs")
    ap.add_argument("--markdown", type=Path, help="also write the results table here")
    args = ap.parse_args()
    sys.path.insert(0, str(HERE.parent))  # this checkout's nanlint (pick_five)
    if args.path is not None and not args.path.is_dir():
        ap.error(f"{args.path} is not a directory")
    if args.base is not None and not (args.base / "nanlint" / "__init__.py").exists():
        ap.error(f"{args.base} is not a nanlint checkout")
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
    nanlint = [sys.executable, "-m", "nanlint", "check", "--isolated", "--exit-zero", "-q"]
    try:
        if args.large_only:
            large = run_large(work, nanlint, str(peer / "ruff"), args)
            text = "\n".join(header(info, args, load_start, loadavg()) + large) + "\n"
            print()
            print(text)
            if args.markdown:
                args.markdown.write_text(text)
            return 0
        corpus = make_corpus(work, args.path, args.corpus)
        files, lines = count(corpus)
        print(f"corpus: {files} files, {lines} lines in {corpus}; load average {load_start}", flush=True)
        cache_dir = work / "cache"
        rows = {}

        base_env = env_for(args.base) if args.base is not None else None
        base_cache = work / "base-cache"

        def with_base(key: str, name: str, cmd: list[str], runs: int, warmup: int = 0, base_cmd=None) -> None:
            """The row, and with ``--base`` the before row, their runs alternating."""
            commands = [(name, cmd, None)]
            if base_env is not None:
                commands.append((f"before: {name}", base_cmd or cmd, base_env))
            got = bench_alternating(commands, corpus, runs, warmup)
            rows[key] = got[0]
            if base_env is not None:
                rows["base_" + key] = got[1]

        print("whole corpus:", flush=True)
        rows["ruff"] = bench("ruff check --select ALL --no-cache",
                             [str(peer / "ruff"), "check", "--isolated", "--select", "ALL", "--no-cache",
                              "--exit-zero", "-q", "."], corpus, args.runs, warmup=1)
        with_base("cold", "nanlint (cold: --no-cache)", nanlint + ["--no-cache", "."], args.slow_runs, warmup=1)
        rows["cold1"] = bench("nanlint -j 1 (cold, one process)", nanlint + ["--no-cache", "-j", "1", "."], corpus, 1)
        rows["unfiltered"] = bench("nanlint (cold, no prefilter)", nanlint + ["--no-cache", "--no-prefilter", "."],
                                   corpus, 1)
        # a run that shows every fix's edits (--fix, --diff, json, the editor): libcst parses the files
        # with findings, and the fixes found on CPython's tree are moved onto its parse
        rows["ruff_diff"] = bench("ruff check --select ALL --no-cache --diff",
                                  [str(peer / "ruff"), "check", "--isolated", "--select", "ALL", "--no-cache",
                                   "--diff", "--exit-zero", "-q", "."], corpus, args.runs)
        with_base("diff", "nanlint --diff (cold: every fix's edits)", nanlint + ["--no-cache", "--diff", "."],
                  args.slow_runs)
        timed(nanlint + ["--cache-dir", str(cache_dir), "."], corpus)  # fill the cache
        if base_env is not None:
            timed(nanlint + ["--cache-dir", str(base_cache), "."], corpus, base_env)
        with_base("warm", "nanlint (warm: nothing changed)", nanlint + ["--cache-dir", str(cache_dir), "."],
                  args.runs, base_cmd=nanlint + ["--cache-dir", str(base_cache), "."])
        rows["flake8"] = bench("flake8 (all cores)", [str(peer / "flake8"), "--isolated", "--exit-zero", "."],
                               corpus, args.slow_runs)
        if args.fixit_runs:
            rows["fixit"] = bench("fixit lint", [str(peer / "fixit"), "lint", "."], corpus, args.fixit_runs)

        print("pre-commit: 5 changed files", flush=True)
        five = pick_five(corpus)
        rows["python"] = bench("python -c pass (start-up)", [sys.executable, "-c", "pass"], corpus, args.runs)
        rows["startup"] = bench("nanlint --version (start-up)", [sys.executable, "-m", "nanlint", "--version"],
                                corpus, args.runs)
        with_base("five", f"nanlint 5 files ({sum(count_lines(p) for p in five)} lines)",
                  nanlint + ["--no-cache", *map(str, five)], args.runs)
        rows["ruff5"] = bench("ruff 5 files", [str(peer / "ruff"), "check", "--isolated", "--select", "ALL",
                                                "--no-cache", "--exit-zero", "-q", *map(str, five)], corpus, args.runs)

        large = run_large(work, nanlint, str(peer / "ruff"), args) if args.large else []

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
        text = report(info, files, lines, rows, scaling, load_start, load_end, args, large)
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
    from nanlint.lint import runner
    from nanlint.lint.engine import Linter
    from nanlint.rules.base import all_rules

    pf = runner.Prefilter(Linter([r for r in all_rules() if r.default]))
    parsed = sorted((p for p in corpus.rglob("*.py") if pf.decide(str(p), p.read_bytes()) == runner.LINT),
                    key=lambda p: (p.stat().st_size, str(p)))
    if len(parsed) < 5:
        parsed = sorted(corpus.rglob("*.py"), key=lambda p: (p.stat().st_size, str(p)))
    at = max(0, min(len(parsed) - 5, int(len(parsed) * 0.75) - 2))
    return parsed[at:at + 5]


def run_large(work: Path, nanlint: list[str], ruff: str, args) -> list[str]:
    import large_file

    print("large files:", flush=True)
    made = large_file.make(work / "large")
    rows, found = {}, {}
    for key, path in made.items():
        done = subprocess.run(nanlint[:-1] + ["--no-cache", str(path)], capture_output=True, text=True, env=ENV)
        codes = sorted({line.split()[1] for line in done.stdout.splitlines() if line.startswith(str(path) + ":")})
        found[key] = (", ".join(codes) or "none") + ("" if large_file.EXPECTED[key] in codes else
                                                      f" (expected {large_file.EXPECTED[key]}: MISSING)")
        rows[key] = [bench(f"{name}", cmd, path.parent, max(1, args.slow_runs - 1))
                     for name, cmd in large_file.commands(sys.executable, nanlint, ruff, path)]
    return large_file.report(rows, made, found)

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
    from nanlint.lint import runner
    from nanlint.lint.engine import Linter
    from nanlint.rules.base import all_rules

    files = sorted(p for p in corpus.rglob("*.py") if p.is_file())
    linter = Linter([r for r in all_rules() if r.default], {"frameworks": {}})
    stats = runner.Stats()
    runner.run(files, lambda p: linter, False, False, False, jobs=1, prefilter=True, stats=stats)
    return stats.parsed, len(files)


def header(info, args, load_start, load_end) -> list[str]:
    out = ["# nanlint benchmark", ""]
    out.append(provenance() + (f" Before = {args.base} at commit {commit_of(args.base)}; its cold, warm and "
                               "5-file runs alternate with this checkout's." if args.base else ""))
    out.append(f"Machine: {info['nproc']} CPUs ({info['cpu']}), {info['ram']} RAM, {info['os']}; "
               f"load average {load_start} at start, {load_end} at end (shared machine: compare ratios to ruff "
               f"measured in this run, and CPU seconds, not absolute wall times across runs).")
    out.append(f"Versions: Python {info['python']}, nanlint {info['nanlint']}, libcst {info['libcst']}, "
               f"{info['ruff']}, flake8 {info['flake8']}, {info['fixit']}.")
    return out


def targets(rows) -> list[tuple[str, str, bool]]:
    ruff, cold, warm = rows["ruff"], rows["cold"], rows["warm"]
    after = rows["five"]["median"] - rows["python"]["median"]
    peak = max(r["peak_mb"] for k, r in rows.items() if not k.startswith("base_") and k in ("cold", "cold1", "warm"))
    return [
        ("cold wall <= 2x ruff --select ALL", f"{cold['median'] / ruff['median']:.2f}x "
         f"({cold['median']:.2f} s vs {ruff['median']:.2f} s)", cold["median"] <= 2 * ruff["median"]),
        ("cold CPU <= 3x ruff", f"{cold['cpu'] / ruff['cpu']:.2f}x ({cold['cpu']:.2f} vs {ruff['cpu']:.2f} CPU s)",
         cold["cpu"] <= 3 * ruff["cpu"]),
        ("warm <= 1x ruff cold", f"{warm['median'] / ruff['median']:.2f}x ({warm['median']:.2f} s)",
         warm["median"] <= ruff["median"]),
        ("5-file pre-commit < 1 s after start-up", f"{after:.2f} s", after < 1.0),
        ("memory <= 300 MB (largest process)", f"{peak:.0f} MB", peak <= 300),
    ]


def report(info, files, lines, rows, scaling, load_start, load_end, args, large=()) -> str:
    ruff = rows["ruff"]["median"]
    out = header(info, args, load_start, load_end)
    out.append(f"Corpus: {corpus_name(args)}: {files} files, {lines} lines.")
    out += ["", "Targets (issue 11; ratios against ruff measured in this run):", "",
            "| target | measured | met |", "|---|---|---|"]
    for label, value, ok in targets(rows):
        out.append(f"| {label} | {value} | {'yes' if ok else 'no'} |")
    out += ["", "Wall time of whole processes, median of n runs; CPU = user + system seconds of all its "
            "processes (median; robust to a loaded machine); peak = largest RSS of any one process.", "",
            "| command | median s | min s | n | CPU s | peak MB | wall vs ruff | CPU vs ruff | Fixit / this (wall) |",
            "|---|---|---|---|---|---|---|---|---|"]
    fixit = rows.get("fixit", {}).get("median")
    order = ["ruff", "cold", "base_cold", "cold1", "unfiltered", "ruff_diff", "diff", "base_diff", "warm",
             "base_warm", "flake8", "fixit"]
    for key in order:
        if key not in rows:
            continue
        r = rows[key]
        vs_fixit = f"{fixit / r['median']:.1f}x" if fixit else "-"
        out.append(f"| {r['name']} | {r['median']:.2f} | {r['min']:.2f} | {r['runs']} | {r['cpu']:.2f} | "
                   f"{r['peak_mb']:.0f} | {r['median'] / ruff:.2f}x | {r['cpu'] / rows['ruff']['cpu']:.2f}x | {vs_fixit} |")
    out += ["", "Pre-commit (5 changed files, no cache):", "",
            "| command | median s | CPU s | peak MB |", "|---|---|---|---|"]
    for key in ("python", "startup", "five", "base_five", "ruff5"):
        if key not in rows:
            continue
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
    if "base_cold" in rows:
        out += ["", "Before / after (same run, same corpus):", "",
                "| | before wall s | after wall s | before CPU s | after CPU s | before vs ruff | after vs ruff |",
                "|---|---|---|---|---|---|---|"]
        for label, b, a in (("cold", "base_cold", "cold"), ("--diff (edits)", "base_diff", "diff"),
                            ("warm", "base_warm", "warm"), ("5 files", "base_five", "five")):
            rb, ra = rows[b], rows[a]
            out.append(f"| {label} | {rb['median']:.2f} | {ra['median']:.2f} | {rb['cpu']:.2f} | {ra['cpu']:.2f} | "
                       f"{rb['median'] / ruff:.2f}x | {ra['median'] / ruff:.2f}x |")
    out += list(large)
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
