"""The house rules of docs/architecture.md, checked: the layers import one way only and
rules never import rules (import-linter's contracts in pyproject.toml), no import cycle
at all (also inside a layer, and counting imports under TYPE_CHECKING), no nanlint
import inside a function (a lazy import that hides a cycle), no module over ~500 lines."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "nanlint"
MAX_LINES = 500  # "about 500": a module past it has two jobs


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


LINT_IMPORTS = ("import sys; from importlinter.cli import lint_imports; "
                "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))")


def test_the_contracts_hold():
    # in a child process: its report goes to a stream of its own, whatever this process imported
    run = subprocess.run([sys.executable, "-c", LINT_IMPORTS], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "BROKEN" not in out and out.count(" KEPT") == 3, out


def test_no_import_cycle():
    graph = grimp.build_graph("nanlint", exclude_type_checking_imports=False)
    edges = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    index, low, on_stack, stack, cycles = {}, {}, set(), [], []

    def strongconnect(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(edges):
        if module not in index:
            strongconnect(module)
    assert not cycles, f"import cycles: {cycles}"


def _inner_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for func in ast.walk(tree):
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(func):
                names = ([node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                         else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
                if (isinstance(node, ast.ImportFrom) and node.level) or any(n.split(".")[0] == "nanlint" for n in names):
                    out.append(f"{path.name}:{node.lineno}")
    return out


def test_no_nanlint_import_inside_a_function():
    found = [f"{path.parent.relative_to(ROOT)}/{where}" for path in _modules() for where in _inner_imports(path)]
    assert not found, f"imports of nanlint inside functions (hoist them; a cycle they hide is a design bug): {found}"


@pytest.mark.parametrize("probe", ["def f():\n    from nanlint.lint import engine\n",
                                   "def f():\n    import nanlint.cli\n", "def f():\n    from . import x\n"])
def test_the_inner_import_check_can_fail(tmp_path, probe):
    path = tmp_path / "probe.py"
    path.write_text(probe)
    assert _inner_imports(path) == ["probe.py:2"]


def test_no_module_over_500_lines():
    long = {str(p.relative_to(ROOT)): n for p in _modules()
            if (n := p.read_text(encoding="utf-8").count("\n")) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them by job): {long}"
