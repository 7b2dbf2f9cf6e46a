"""The large-file measurement of ``bench/run.py``: two generated ~10 MB modules.

* ``weights``: ``WEIGHTS = {'layer0.weight': torch.tensor([...64 floats...]), ...}``
  (one statement, ~640k float literals), then one real hazard, a hand-written
  softmax cross entropy (NAN103).
* ``chain``: 250,000 statements ``h{i} = torch.relu(h{i-1} * c)`` ending with
  ``torch.log(torch.softmax(h1, -1))`` (NAN101).

Each is timed as ``nanlint --no-cache FILE``, ``ruff check --no-cache --select ALL
FILE`` and ``python -c "import ast; ast.parse(...)"`` (CPython's own tree, the floor
of anything that parses the file with CPython) in the same run.  The files are
deterministic (seeded), so every run measures the same bytes.
"""

from __future__ import annotations

import random
from pathlib import Path

TARGET_BYTES = 10_000_000
CHAIN_STATEMENTS = 250_000
EXPECTED = {"weights": "NAN103", "chain": "NAN101"}  # the one finding each must report


def write_weights(path: Path, target: int = TARGET_BYTES) -> None:
    rnd = random.Random(0)
    out = ["import torch\n\n", "WEIGHTS = {\n"]
    size = i = 0
    while size < target:
        vals = ", ".join(f"{rnd.uniform(-1, 1):.6f}" for _ in range(64))
        line = f"    'layer{i}.weight': torch.tensor([{vals}]),\n"
        out.append(line)
        size += len(line)
        i += 1
    out.append("}\n\n\ndef loss(logits, target):\n"
               "    return -(target * torch.log(torch.softmax(logits, -1))).sum()\n")
    path.write_text("".join(out))


def write_chain(path: Path, n: int = CHAIN_STATEMENTS) -> None:
    rnd = random.Random(1)
    out = ["import torch\n\n", "h0 = torch.randn(8, 16)\n"]
    out += [f"h{i} = torch.relu(h{i - 1} * {rnd.uniform(0.5, 1.5):.4f})\n" for i in range(1, n)]
    out.append("out = torch.log(torch.softmax(h1, -1))\n")
    path.write_text("".join(out))


def make(work: Path) -> dict[str, Path]:
    work.mkdir(parents=True, exist_ok=True)
    files = {"weights": work / "weights.py", "chain": work / "chain.py"}
    write_weights(files["weights"])
    write_chain(files["chain"])
    return files


def commands(python: str, nanlint: list[str], ruff: str, path: Path) -> list[tuple[str, list[str]]]:
    return [
        ("nanlint --no-cache", nanlint + ["--no-cache", str(path)]),
        ("ruff check --select ALL --no-cache", [ruff, "check", "--isolated", "--select", "ALL", "--no-cache",
                                                "--exit-zero", "-q", str(path)]),
        ("python: ast.parse", [python, "-c", "import ast, sys; ast.parse(open(sys.argv[1]).read())", str(path)]),
    ]


def report(rows: dict[str, list[dict]], files: dict[str, Path], found: dict[str, str]) -> list[str]:
    out = ["", "Large files (one generated ~10 MB module each, cold; targets: nanlint < 10 s and < 1 GB):", "",
           "| file | command | median s | CPU s | peak MB |", "|---|---|---|---|---|"]
    for key, rs in rows.items():
        size = files[key].stat().st_size / 1e6
        for r in rs:
            out.append(f"| {key} ({size:.1f} MB) | {r['name']} | {r['median']:.2f} | {r['cpu']:.2f} | "
                       f"{r['peak_mb']:.0f} |")
    out.append("")
    out.append("nanlint's findings: " + "; ".join(f"{k}: {v}" for k, v in found.items()) + ".")
    return out
