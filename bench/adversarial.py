#!/usr/bin/env python3
"""Adversarial inputs for nanlint's cost (issue 22): generated files at 1x/2x/4x.

    python3 bench/adversarial.py                        # this checkout only
    python3 bench/adversarial.py --base /tmp/base       # also a checkout of the base (before/after)
    python3 bench/adversarial.py --markdown bench/RESULTS-adversarial.md
    python3 bench/adversarial.py --only long-def --sizes 50000 100000 200000   # 2.4, 5, 10 MB

Two shapes, each at three sizes:

* ``findings``: N functions ``def f_i(x): return torch.log(1 + torch.exp(x))``, one
  NAN106 each (N = 500, 1000, 2000): the cost per finding must not grow with the file.
* ``long-def``: one ``def build(x):`` of L lines (L = 5k, 10k, 20k) alternating
  ``x = tf.nn.relu(tf.matmul(x, W_i) + b_i)`` and ``h_i = tf.reduce_sum(x * i, axis=-1)``,
  ending in ``p = tf.nn.softmax(x); return tf.math.log(p)`` (one NAN101).
* ``divisions``: one function of D lines ``y_i = x / torch.sum(torch.relu(m * i))``
  (D = 1000, 2000, 4000): division sites with weak zero evidence (NAN110, off by
  default), each of which is checked and given a fix, none reported.

Each number is one process, ``python3 -m nanlint --isolated --no-cache --exit-zero -q FILE``,
under ``/usr/bin/time -f %M`` (wall time, peak resident set).  ruff (``--ruff``,
else bench/.venv/bin/ruff, else ``ruff`` on PATH) runs ``check --isolated --select ALL
--no-cache`` on the same file in the same run.  "scaling" is CPU(kx) / (k * CPU(1x)),
start-up (the CPU time on a one-line file) taken off both: 1.0 is linear, k is quadratic.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FINDINGS = (500, 1000, 2000)
LINES = (5000, 10000, 20000)
DIVISIONS = (1000, 2000, 4000)


def findings_file(n: int) -> str:
    return "import torch\n\n" + "".join(
        f"def f_{i}(x):\n    return torch.log(1 + torch.exp(x))\n\n" for i in range(n))


def long_def_file(lines: int) -> str:
    out = ["import tensorflow as tf", "", "def build(x):"]
    for i in range(lines // 2):
        out.append(f"    x = tf.nn.relu(tf.matmul(x, W_{i}) + b_{i})")
        out.append(f"    h_{i} = tf.reduce_sum(x * {i}, axis=-1)")
    out += ["    p = tf.nn.softmax(x)", "    return tf.math.log(p)", ""]
    return "\n".join(out)


def divisions_file(n: int) -> str:
    out = ["import torch", "", "def build(x, m):"]
    out += [f"    y_{i} = x / torch.sum(torch.relu(m * {i}))" for i in range(n)]
    return "\n".join(out + ["    return y_0", ""])


def cases(scale: float, only: str | None = None, sizes: list[int] | None = None) -> list[tuple[str, int, int, callable]]:
    """(shape, size, factor, generator) for each file (``only``: that shape, at ``sizes``
    when given, the factor of each against the first)."""
    out = []
    for shape, default, make in (("findings", FINDINGS, findings_file), ("long-def", LINES, long_def_file),
                                 ("divisions", DIVISIONS, divisions_file)):
        if only is not None and shape != only:
            continue
        chosen = sizes or default
        for size in chosen:
            out.append((shape, max(1, int(size * scale)), round(size / chosen[0]), make))
    return out


def measure(cmd: list[str], env: dict | None, timeout: float, cwd: str | None = None, runs: int = 1) -> dict:
    """Wall time, CPU time (user + system), peak RSS (MB) and finding lines of one
    process, the best of ``runs``; None values on a timeout."""
    timer = ["/usr/bin/time", "-f", "%M %U %S"] if os.path.exists("/usr/bin/time") else []
    best: dict = {"time": None, "cpu": None, "rss": None, "lines": None}
    for _ in range(runs):
        start = time.perf_counter()
        try:
            done = subprocess.run(timer + cmd, env=env, capture_output=True, text=True, timeout=timeout, cwd=cwd)
        except subprocess.TimeoutExpired:
            return best
        wall = time.perf_counter() - start
        rss = cpu = None
        if timer:
            last = (done.stderr.strip().splitlines() or ["0 0 0"])[-1].split()
            try:
                rss, cpu = int(last[0]) / 1024, float(last[1]) + float(last[2])
            except (ValueError, IndexError):
                pass
        got = {"time": wall, "cpu": cpu, "rss": rss,
               "lines": len([line for line in done.stdout.splitlines() if ": NAN" in line])}
        key = "cpu" if cpu is not None else "time"
        if best[key] is None or got[key] < best[key]:
            best = got
    return best


def nanlint_cmd(path: Path) -> list[str]:
    return [sys.executable, "-m", "nanlint", "--isolated", "--no-cache", "--exit-zero", "-q", str(path)]


def checkout_env(checkout: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(checkout)  # the checkout's nanlint, not the installed one
    return env


def find_ruff(given: str | None) -> str | None:
    for candidate in (given, str(HERE / ".venv" / "bin" / "ruff"), shutil.which("ruff")):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


def commit_of(checkout: Path) -> str:
    try:
        return subprocess.run(["git", "-C", str(checkout), "log", "-1", "--format=%h %s"],
                              capture_output=True, text=True, check=True).stdout.strip()[:90]
    except (OSError, subprocess.CalledProcessError):
        return "?"


def fmt(value: float | None, unit: str = "") -> str:
    return "timeout" if value is None else f"{value:.2f}{unit}" if unit == " s" else f"{value:.0f}{unit}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", type=Path, help="a checkout of the base, measured in the same run")
    ap.add_argument("--ruff", help="the ruff executable")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every size (0.1 for a quick look)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per process")
    ap.add_argument("--runs", type=int, default=1, help="runs per cell, the one of least CPU time kept")
    ap.add_argument("--markdown", type=Path, help="write the results here")
    ap.add_argument("--only", choices=("findings", "long-def", "divisions"), help="one shape only")
    ap.add_argument("--sizes", type=int, nargs="+", help="with --only: its sizes (functions, lines, divisions)")
    args = ap.parse_args()
    ruff = find_ruff(args.ruff)
    tools = [("after", nanlint_cmd, checkout_env(ROOT))]
    if args.base is not None:
        tools.insert(0, ("base", nanlint_cmd, checkout_env(args.base.resolve())))
    rows = []
    startup: dict[str, float | None] = {}
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "empty.py"
        empty.write_text("import torch\n")
        for name, cmd, env in tools:  # start-up, taken off before "scaling"
            startup[name] = measure(cmd(empty), env, args.timeout, tmp, runs=3)["cpu"] or 0.0
        for shape, size, k, make in cases(args.scale, args.only, args.sizes):
            path = Path(tmp) / f"{shape}_{size}.py"
            path.write_text(make(size))
            row = {"shape": shape, "size": size, "k": k, "bytes": path.stat().st_size}
            for name, cmd, env in tools:
                row[name] = measure(cmd(path), env, args.timeout, tmp, args.runs)  # not in the checkout: -m puts cwd first
            if ruff is not None:
                row["ruff"] = measure([ruff, "check", "--isolated", "--select", "ALL", "--no-cache",
                                       "--exit-zero", "-q", str(path)], None, args.timeout, tmp, args.runs)
            rows.append(row)
            print(shape, size, {n: row[n] for n in row if isinstance(row[n], dict)}, flush=True)
    text = render(rows, args, ruff, startup)
    print(text)
    if args.markdown is not None:
        args.markdown.write_text(text)
    return 0


def render(rows: list[dict], args, ruff: str | None, startup: dict) -> str:
    names = (["base"] if args.base is not None else []) + ["after"]
    lines = [
        "# Adversarial cost: many findings, one long function (issue 22)",
        "",
        f"Generated by `python3 bench/adversarial.py{' --base ' + str(args.base) if args.base else ''}` "
        f"on {datetime.date.today().isoformat()}, {platform.python_implementation()} "
        f"{platform.python_version()}, {os.cpu_count()} CPUs; one process per cell, the best of "
        f"{args.runs} (wall time; CPU time and peak RSS from `/usr/bin/time -f '%M %U %S'`).",
        "",
        f"- after: `{commit_of(ROOT)}`",
    ]
    if args.base is not None:
        lines.append(f"- base: `{commit_of(args.base)}`")
    lines.append(f"- ruff: `{ruff}` (`check --isolated --select ALL --no-cache`)" if ruff else "- ruff: not found")
    lines += ["", "CPU = user + system time of the process (the machine is shared: wall time is noisy). "
              "scaling = (CPU(kx) - start-up) / (k x (CPU(1x) - start-up)) of the same tool, "
              "start-up being its time on a file of one import ("
              + ", ".join(f"{n} {startup[n]:.2f} s" for n in names)
              + "): 1.0 is linear growth, 2.0 at 2x and 4.0 at 4x quadratic.", ""]
    head = ["file", "size", "findings"]
    for n in names:
        head += [f"{n} wall", f"{n} CPU", f"{n} RSS", f"{n} scaling"]
    if ruff:
        head += ["ruff CPU", "after / ruff (CPU)"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    first: dict[tuple[str, str], float | None] = {}
    for row in rows:
        unit = {"findings": "functions", "long-def": "lines", "divisions": "divisions"}[row["shape"]]
        cells = [row["shape"], f"{row['size']} {unit} ({row['bytes'] // 1024} KB)",
                 " / ".join(str(row[n]["lines"]) for n in names)]
        for n in names:
            t = row[n]["cpu"]
            if row["k"] == 1:
                first[(row["shape"], n)] = t
            base_t = first.get((row["shape"], n))
            s0 = startup.get(n, 0.0)
            scaling = (t - s0) / (row["k"] * (base_t - s0)) if t is not None and base_t and base_t > s0 else None
            cells += [fmt(row[n]["time"], " s"), fmt(t, " s"), fmt(row[n]["rss"], " MB"),
                      "timeout" if scaling is None else f"{scaling:.2f}"]
        if ruff:
            r = row["ruff"]["cpu"]
            a = row["after"]["cpu"]
            cells += [fmt(r, " s"), "-" if not (r and a) else f"{a / r:.0f}x"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
