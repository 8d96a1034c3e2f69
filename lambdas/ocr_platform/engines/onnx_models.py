"""ONNX model directories in the model cache: exported from Paddle weights, optimised once, installed atomically.

An ONNX model directory holds ``inference.onnx`` (ONNX Runtime's optimised form of the graph) and the
PaddleX ``inference.yml`` beside it. ``export_onnx`` makes one from a Paddle inference model (for
``model_cache.ModelCache``), ``model_packages.materialize`` from an ONNX file a package ships; both
optimise the graph with ``optimize_onnx`` and move the finished directory into the cache with
``install_onnx_model_dir``. ``model_cache`` re-exports these names.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path

logger = logging.getLogger(__name__)


def is_onnx_model_dir(path: Path) -> bool:
    return (path / "inference.yml").is_file() and (path / "inference.onnx").is_file()


def export_onnx(model_dir: Path, target: Path) -> Path:
    """Export a Paddle inference model to ``target/inference.onnx`` (+ its ``inference.yml``).

    paddle2onnx's own graph optimiser is skipped (it takes tens of seconds); ONNX Runtime's is applied
    once here instead (``optimize_onnx``), so every later start loads the already optimised graph.
    """
    import paddle2onnx

    program = next((model_dir / n for n in ("inference.json", "inference.pdmodel") if (model_dir / n).is_file()), None)
    if program is None:
        raise FileNotFoundError(f"{model_dir} has no inference.json or inference.pdmodel to export")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        staging = Path(tmp) / target.name
        staging.mkdir()
        shutil.copy2(model_dir / "inference.yml", staging / "inference.yml")
        exported = Path(tmp) / "exported.onnx"
        paddle2onnx.export(
            str(program), str(model_dir / "inference.pdiparams"), str(exported),
            opset_version=14, enable_onnx_checker=False, optimize_tool="None",
        )
        optimize_onnx(exported, staging / "inference.onnx")
        install_onnx_model_dir(staging, target)
    logger.info("Exported %s to ONNX at %s", model_dir.name, target)
    return target


def install_onnx_model_dir(staging: Path, target: Path) -> None:
    """Move a finished ONNX model directory from ``staging`` to ``target`` in the cache: an incomplete
    ``target`` is replaced, and a complete one that a process sharing the cache wrote first is kept."""
    if not is_onnx_model_dir(target):
        shutil.rmtree(target, ignore_errors=True)
    try:
        staging.rename(target)
    except OSError:
        if not is_onnx_model_dir(target):
            raise


def optimize_onnx(source: Path, target: Path) -> Path:
    """Save ONNX Runtime's optimised form of the model at ``source`` to ``target``, for CPU sessions.

    A session applies these graph optimisations (constant folding, node fusions: PP-OCRv5 det goes from
    925 to 259 nodes) every time it loads a raw export; loading the saved result skips that work and the
    warnings about paddle2onnx's unused initialisers, which halves session creation for det + rec
    (benchmarks/cold_start.py). The outputs are the same. ``ORT_ENABLE_EXTENDED``, not ``ALL``: the saved
    graph has no layout changes tied to this CPU, so an image built on one machine runs on another; a
    session still applies the layout optimisations when it loads the file.
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(target)
    options.log_severity_level = 3  # errors only: ORT warns about every unused initialiser it drops
    ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
    return target
