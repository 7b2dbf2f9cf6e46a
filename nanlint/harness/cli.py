"""``python -m nanlint.harness [PATH]...`` (also ``nanlint verify``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from nanlint.harness import fixtures, plot, verify
from nanlint.harness import summary as report


def parser(prog: str = "python -m nanlint.harness") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
        description="Prove nanlint's fixes by execution: fix a copy of every fixture with nanlint, run the "
                    "unfixed and fixed code (one process per framework), and check that hazard cases are "
                    "NaN/Inf unfixed and finite fixed, and that benign cases keep their values.")
    p.add_argument("paths", nargs="*", type=Path,
                   help=f"fixture directories, files, or directories holding them (default: {fixtures.default_fixture_dir()})")
    p.add_argument("--device", choices=("cpu", "gpu", "auto"), default="cpu",
                   help="where to run: gpu fails for a framework that sees no GPU; auto = gpu where available "
                        "(default: cpu)")
    p.add_argument("--rules", help="comma-separated rule codes to run (default: all)")
    p.add_argument("--frameworks", help=f"comma-separated, from {','.join(fixtures.FRAMEWORKS)} (default: all)")
    p.add_argument("--allow-missing", action="store_true",
                   help="skip (loudly) the fixtures of a framework (or of another package a fixture imports) "
                        "that is not installed, instead of failing")
    p.add_argument("--allow-empty", action="store_true",
                   help="exit 0 when no case ran (every fixture skipped); the report says 'nothing verified' "
                        "(default: a run that verified nothing fails)")
    p.add_argument("--json", type=Path, metavar="PATH", help="write the JSON report here")
    p.add_argument("--plot", type=Path, metavar="DIR",
                   help="also sweep each hazard case from a benign case with the same inputs' structure and write, "
                        "per fixture, a PNG of values and gradients (unfixed, fixed, float64 reference; NaN/Inf "
                        "marked) with the numbers plotted (JSON), and DIR/index.html with the verdicts "
                        "(needs matplotlib: pip install 'nanlint[plot]')")
    p.add_argument("--keep", type=Path, metavar="DIR", help="keep nanlint's fixed copies here (the combined fixes, all default rules, under DIR/combined/)")
    p.add_argument("--jobs", type=int, default=0, help="parallel processes (default: min(3, CPUs))")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds per framework worker (default: 900)")
    p.add_argument("--python", action="append", default=[], metavar="FRAMEWORK=PYTHON",
                   help="run FRAMEWORK's fixtures in a worker on this interpreter (repeatable), e.g. "
                        "--python tensorflow=/work/tf23-venv/bin/python for fixtures whose REQUIRES needs "
                        "TensorFlow < 2.4 (default: this interpreter for every framework)")
    return p


class Progress:
    """One terminal line, redrawn in place (``\\r``) as the fixtures finish, cleared before the table."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.shown = False

    def __call__(self, done: int, total: int, phase: str) -> None:
        self.stream.write(f"\r\033[Kverifying: {done}/{total} fixtures done ({phase})")
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = False


def _split(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


def main(argv: list[str] | None = None) -> int:
    args = parser("nanlint verify" if argv is not None else "python -m nanlint.harness").parse_args(argv)
    python = {}
    for item in args.python:
        fw, sep, exe = item.partition("=")
        if not sep or not fw.strip() or not exe.strip():
            print(f"nanlint harness: error: --python takes FRAMEWORK=PYTHON, got {item!r}", file=sys.stderr)
            return 2
        python[fw.strip()] = exe.strip()
    if args.plot is not None and plot.missing():
        print(f"nanlint harness: error: {plot.missing()}", file=sys.stderr)
        return 2
    options = verify.Options(paths=args.paths, device=args.device, rules=_split(args.rules),
                             frameworks=_split(args.frameworks), allow_missing=args.allow_missing,
                             jobs=args.jobs, timeout=args.timeout, keep=args.keep, python=python,
                             allow_empty=args.allow_empty, sweep=args.plot is not None)
    line = Progress(sys.stdout) if sys.stdout.isatty() else None  # piped (tests, CI): nothing extra
    options.progress = line
    try:
        result = verify.run(options)
    except fixtures.UsageError as exc:
        if line is not None:
            line.clear()
        print(f"nanlint harness: error: {exc}", file=sys.stderr)
        return 2
    if line is not None:
        line.clear()
    if not result.fixtures:
        print("nanlint harness: error: no fixtures found under "
              + ", ".join(map(str, options.paths or [fixtures.default_fixture_dir()])), file=sys.stderr)
        return 2
    sys.stdout.write(report.table(result))
    for f in result.fixtures:
        if f.skipped:
            print(f"nanlint harness: WARNING: {f.id} skipped: {f.skipped}", file=sys.stderr)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(report.dumps(result))
    if args.plot is not None:
        print(f"nanlint harness: plots: {plot.write(result, args.plot)}")
    return 0 if result.ok else 1
