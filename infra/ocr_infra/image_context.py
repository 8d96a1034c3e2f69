"""The endpoint image's build context: only what that image uses, so an unrelated change leaves it alone.

CDK fingerprints a Docker image asset by its build context. Built from the whole repository (filtered only by
``.dockerignore``), the endpoint image changed with any edit under ``lambdas/``, ``README.md`` or the CPU image,
and every such ``cdk deploy`` replaced the SageMaker model and endpoint config and updated the endpoint: blue/green,
a second GPU fleet beside the first. Here the context is the endpoint's own files and the ``ocr_platform``
modules the endpoint server imports, found by reading the imports (lazy ones and the engine registry's
``"module:attribute"`` strings included) from ``ocr_platform.gpu.model_server`` outwards.
"""

from __future__ import annotations

import ast
from pathlib import Path

from ocr_infra.paths import LAMBDAS_DIR

#: Where the endpoint's code starts: its server and the engine registry's PaddleOCR-VL engine.
ENDPOINT_ENTRY_MODULES = ("ocr_platform.gpu.model_server",)
#: What the root ``.dockerignore`` admits that the endpoint image does not use: the project's metadata (the image
#: puts ``ocr_platform`` on its path instead of installing the project) and the other image's files.
OTHER_FILES = ("pyproject.toml", "README.md", "LICENSE", "requirements/", "containers/")
#: The endpoint image's own files, admitted again after ``containers/``.
ENDPOINT_FILES = ("containers/vl-endpoint/", "containers/bake-models.py")
PACKAGE = "ocr_platform"


def _module_file(module: str, root: Path) -> Path | None:
    path = root.joinpath(*module.split("."))
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    return path.with_suffix(".py") if path.with_suffix(".py").is_file() else None


def _imports(module: str, path: Path) -> set[str]:
    """Every ``ocr_platform`` module ``module`` names: imports anywhere in the file and ``"ocr_platform.x:y"`` strings."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1] + [node.module or ""]).strip(".") if node.level else node.module or ""
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith(f"{PACKAGE}."):
            found.add(node.value.partition(":")[0])
    return {name for name in found if name == PACKAGE or name.startswith(f"{PACKAGE}.")}


def endpoint_modules(root: Path = LAMBDAS_DIR, entry: tuple[str, ...] = ENDPOINT_ENTRY_MODULES) -> set[str]:
    """The ``ocr_platform`` modules the endpoint server can import, with their packages."""
    seen: set[str] = set()
    todo = list(entry)
    while todo:
        module = todo.pop()
        path = _module_file(module, root)
        if module in seen or path is None:
            continue
        seen.add(module)
        parts = module.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]
        todo += _imports(module, path)
    return seen


def endpoint_context_excludes(root: Path = LAMBDAS_DIR) -> list[str]:
    """Docker-style exclude patterns (applied after the root ``.dockerignore``) that leave the endpoint image's
    context with :data:`ENDPOINT_FILES` and the modules of :func:`endpoint_modules` only."""
    used = {path for module in endpoint_modules(root) if (path := _module_file(module, root)) is not None}
    unused = sorted(
        str(path.relative_to(root.parent)) for path in (root / PACKAGE).rglob("*.py") if path not in used
    )
    return [*OTHER_FILES, *(f"!{name}" for name in ENDPOINT_FILES), *unused]
