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
    "**/.pytest_cache",
    "**/.mypy_cache",
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
