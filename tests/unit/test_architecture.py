"""The layout is the architecture, and stays so: the import-layer contracts hold (pyproject.toml's
[tool.importlinter]), no two modules import each other, even through others or only for type checking, and no
runtime file grows past 450 lines."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: The runtime packages and where they live.
PACKAGES = {"ocr_platform": REPO / "lambdas" / "ocr_platform", "ocr_infra": REPO / "infra" / "ocr_infra"}
MAX_LINES = 450


def _modules() -> dict[str, Path]:
    modules = {}
    for package, root in PACKAGES.items():
        for path in root.rglob("*.py"):
            parts = [package, *path.relative_to(root).with_suffix("").parts]
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _imports(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules ``module`` imports anywhere in its file (``TYPE_CHECKING`` blocks and functions included)."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1] + [node.module or ""]).strip(".") if node.level else node.module or ""
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        for name in names:
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != module and not module.startswith(name + "."):
                found.add(name)
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def test_no_module_imports_itself_through_others() -> None:
    modules = _modules()
    graph = {module: _imports(module, path, modules) for module, path in modules.items()}
    assert _cycles(graph) == []


def test_the_cycle_check_finds_a_loop() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_runtime_file_is_over_450_lines() -> None:
    long = {
        str(path.relative_to(REPO)): lines
        for root in PACKAGES.values()
        for path in root.rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def test_the_import_layers_hold() -> None:
    """import-linter's contracts in pyproject.toml: each floor of ocr_platform imports only the floors below it."""
    lint_imports = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if lint_imports is None:
        pytest.fail("lint-imports is missing: run `bash scripts/setup.sh`, which installs the dev extra")
    run = subprocess.run([lint_imports, "--no-cache"], cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "Contracts: 2 kept, 0 broken." in run.stdout
