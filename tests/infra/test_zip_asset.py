"""The zip functions' asset: lean (no local stack, client or OCR engines) and still complete.

The handlers' real import graph decides what the asset needs: each handler is imported in a fresh
interpreter and the ``ocr_platform`` modules it loaded are listed. Then each handler is imported again
from the synthesized asset alone, with only the packages Lambda provides (boto3 in the runtime, Powertools
in the layer) importable, as on AWS.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import tomllib
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement

from ocr_infra.paths import REPO_ROOT
from ocr_infra.platform_function import (
    COMPLETION_HANDLER,
    DLQ_CONSUMER_HANDLER,
    INVOKER_HANDLER,
    SCALE_IN_HANDLER,
    SWEEPER_HANDLER,
)
from tests.infra.conftest import Synthesis

ZIP_HANDLERS = [INVOKER_HANDLER, COMPLETION_HANDLER, SCALE_IN_HANDLER, DLQ_CONSUMER_HANDLER, SWEEPER_HANDLER]
PACKAGE = "ocr_platform"

#: Run in a fresh interpreter: import one module, print the modules it loaded as JSON.
LIST_IMPORTS = """
import importlib, json, sys
module = importlib.import_module(sys.argv[1])
print(json.dumps({"file": sys.modules["ocr_platform"].__file__, "modules": sorted(sys.modules),
                  "handler": callable(getattr(module, sys.argv[2], None))}))
"""

#: Run with ``python -S`` (no site-packages, no .pth files, so no editable install of ocr_platform):
#: the asset first, then site-packages, where only the allowed top-level packages can be imported.
IMPORT_FROM_ASSET = """
import importlib.abc, json, sys
asset, allowed, site_dirs = sys.argv[3], set(json.loads(sys.argv[4])), json.loads(sys.argv[5])


class OnlyWhatLambdaProvides(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in allowed or top in sys.stdlib_module_names or top == "ocr_platform":
            return None
        raise ModuleNotFoundError(f"No module named {name!r} in the Lambda runtime", name=name)


sys.path[:] = [asset] + [entry for entry in sys.path if entry] + site_dirs
sys.meta_path.insert(0, OnlyWhatLambdaProvides())
""" + LIST_IMPORTS


def _module_file(module: str) -> str:
    """``ocr_platform.handlers.invoker`` -> ``ocr_platform/handlers/invoker.py`` (a package: its ``__init__.py``)."""
    relative = Path(*module.split("."))
    source = REPO_ROOT / "lambdas" / relative
    return (relative / "__init__.py" if source.is_dir() else relative.with_suffix(".py")).as_posix()


def _imports(code: str, handler: str, *args: str, python_flags: tuple[str, ...] = ()) -> dict[str, Any]:
    module, _, function = handler.rpartition(".")
    completed = subprocess.run(
        [sys.executable, *python_flags, "-c", code, module, function, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, f"importing {module} failed:\n{completed.stderr}"
    return json.loads(completed.stdout.splitlines()[-1])


@cache
def _handler_modules(handler: str) -> frozenset[str]:
    """The ``ocr_platform`` modules ``handler``'s module imports, from the source tree."""
    loaded = _imports(LIST_IMPORTS, handler)
    return frozenset(name for name in loaded["modules"] if name == PACKAGE or name.startswith(f"{PACKAGE}."))


def _lambda_provided_packages() -> list[str]:
    """Top-level import names of pyproject's runtime dependencies and what they require (no extras).

    That is what a zip function has on AWS: boto3 and its dependencies in the Python runtime, Powertools
    and its dependencies in the layer.
    """
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pending = [Requirement(text) for text in project["dependencies"]]
    distributions: set[str] = set()
    while pending:
        requirement = pending.pop()
        name = requirement.name.lower().replace("_", "-")
        if name in distributions or (requirement.marker and not requirement.marker.evaluate({"extra": ""})):
            continue
        distributions.add(name)
        pending += [Requirement(text) for text in metadata.requires(name) or []]
    return sorted(
        top
        for top, owners in metadata.packages_distributions().items()
        if any(owner.lower().replace("_", "-") in distributions for owner in owners)
    )


@pytest.fixture(scope="module")
def asset_dir(synthesis: Synthesis) -> Path:
    stack = synthesis.stack
    assert synthesis.gpu is not None
    functions = [
        stack.invoker.function,
        stack.completion.function,
        synthesis.gpu.scale_in_function,
        stack.recovery.dlq_consumer_function,
        stack.recovery.sweeper_function,
    ]
    keys = {synthesis.resource(function)["Properties"]["Code"]["S3Key"] for function in functions}
    assert len(keys) == 1, "one shared asset"
    return synthesis.outdir / f"asset.{keys.pop().removesuffix('.zip')}"


@pytest.fixture(scope="module")
def asset_files(asset_dir: Path) -> set[str]:
    return {p.relative_to(asset_dir).as_posix() for p in asset_dir.rglob("*") if p.is_file()}


def test_zip_code_is_the_lambdas_directory_without_tests(asset_files: set[str]) -> None:
    files = asset_files
    assert "ocr_platform/handlers/invoker.py" in files
    assert "ocr_platform/handlers/scale_in.py" in files
    assert "ocr_platform/handlers/dlq_consumer.py" in files
    assert "ocr_platform/handlers/sweeper.py" in files
    assert not [f for f in files if "__pycache__" in f or "/tests/" in f or f.endswith(".pyc")]


def test_what_never_runs_in_a_zip_function_is_left_out(asset_files: set[str]) -> None:
    # The local stack, the developer's command line and client.
    assert not [f for f in asset_files if f.startswith("ocr_platform/local/")]
    assert not {"ocr_platform/cli/commands.py", "ocr_platform/cli/client.py"} & asset_files
    # The OCR side, which the processor and endpoint images run: only the engine registry stays.
    assert [f for f in asset_files if f.startswith("ocr_platform/engines/")] == ["ocr_platform/engines/__init__.py"]
    assert not {
        "ocr_platform/gpu/model_server.py",
        "ocr_platform/engines/model_cache.py",
        "ocr_platform/handlers/processor.py",
    } & asset_files
    assert not [f for f in asset_files if any(part.startswith(".") for part in f.split("/"))], "no tool caches"


@pytest.mark.parametrize("handler", ZIP_HANDLERS)
def test_every_module_a_handler_imports_is_in_the_asset(handler: str, asset_files: set[str]) -> None:
    modules = _handler_modules(handler)
    assert handler.rpartition(".")[0] in modules
    missing = sorted(_module_file(module) for module in modules if _module_file(module) not in asset_files)
    assert not missing, f"{handler} imports modules the asset leaves out: {missing}"


@pytest.mark.parametrize("handler", ZIP_HANDLERS)
def test_each_handler_imports_from_the_asset_with_only_what_lambda_provides(handler: str, asset_dir: Path) -> None:
    paths = sysconfig.get_paths()
    site_dirs = sorted({paths["purelib"], paths["platlib"]})
    assert not any((Path(d) / PACKAGE).exists() for d in site_dirs), "site-packages must not hold ocr_platform"
    loaded = _imports(
        IMPORT_FROM_ASSET,
        handler,
        str(asset_dir),
        json.dumps(_lambda_provided_packages()),
        json.dumps(site_dirs),
        python_flags=("-S",),
    )
    assert Path(str(loaded["file"])).is_relative_to(asset_dir), loaded["file"]
    assert loaded["handler"] is True, f"{handler} is not a function in the asset"
    assert {m for m in loaded["modules"] if m.startswith(f"{PACKAGE}.")} == _handler_modules(handler) - {PACKAGE}
