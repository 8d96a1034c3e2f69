"""Where the CDK app finds the code it packages, independent of the current directory."""

from __future__ import annotations

from pathlib import Path

#: The repository root (``infra/ocr_infra/paths.py`` -> two levels up from ``infra``).
REPO_ROOT = Path(__file__).resolve().parents[2]
#: The zip Lambdas' code: ``lambdas/ocr_platform`` is packaged as the function root.
LAMBDAS_DIR = REPO_ROOT / "lambdas"
#: ``cdk.json`` (its context holds the feature flags and the app's defaults).
CDK_JSON = REPO_ROOT / "cdk.json"
#: Dockerfiles, relative to the build context (the repository root, filtered by ``.dockerignore``).
CPU_OCR_DOCKERFILE = "containers/cpu-ocr/Dockerfile"
VL_ENDPOINT_DOCKERFILE = "containers/vl-endpoint/Dockerfile"

#: Never packaged into the zip Lambdas.
LAMBDA_ASSET_EXCLUDES = [
    "**/__pycache__",
    "**/*.pyc",
    "**/tests",
    "**/*.egg-info",
    # Hidden files and tool caches (.pytest_cache, .mypy_cache, .ruff_cache, ...).
    "**/.*",
]

#: Parts of ``ocr_platform`` that no zip function imports (invoker, completion, scale-in, DLQ consumer,
#: sweeper), left out of their asset. ``tests/infra`` imports each handler from the synthesized asset alone.
ZIP_FUNCTION_EXCLUDES = [
    # The local stack (moto and the local runtimes) and the developer's command line and client.
    "ocr_platform/local",
    "ocr_platform/cli",
    "ocr_platform/core/client_errors.py",
    "ocr_platform/inputs/console_publish.py",
    # The OCR side, which runs in the processor and endpoint images: the engines (imported by model name
    # on first use, so only the registry is needed), document intake, the job runner, the model cache, the
    # endpoint's HTTP server and the processor's handler. The completion function publishes results
    # through ``result_store`` and ``fan_in``, which open no document.
    "ocr_platform/engines/*",
    "!ocr_platform/engines/__init__.py",
    "ocr_platform/document/intake.py",
    "ocr_platform/cpu/job_runner.py",
    "ocr_platform/gpu/model_server.py",
    "ocr_platform/handlers/processor.py",
]


def check_layout() -> None:
    """Fail early with a clear message when the app runs outside a checkout of the repository."""
    missing = [
        str(path.relative_to(REPO_ROOT))
        for path in (LAMBDAS_DIR / "ocr_platform", REPO_ROOT / CPU_OCR_DOCKERFILE, REPO_ROOT / VL_ENDPOINT_DOCKERFILE)
        if not path.exists()
    ]
    if missing:
        raise FileNotFoundError(
            f"The CDK app expects the repository layout under {REPO_ROOT}; missing: {', '.join(missing)}"
        )
