"""The keyword arguments an engine builds a PaddleOCR pipeline with: where each model's weights are and
how inference runs.

PaddleOCR's pipeline classes take, per model role (``text_detection``, ``layout_detection``, ...), a
``<role>_model_name`` and optionally a ``<role>_model_dir``. ``ModelResolver`` fills the directory from
``ModelCache`` (baked into the image, the local cache, the bucket's ``models/`` cache, installed model
packages) and leaves it out only when no cache has the model and hub downloads are allowed; then PaddleX
fetches it from its hub and ``publish_downloaded`` keeps a copy in the bucket for the next cold start.
``runtime_kwargs`` turns ``PaddleSettings`` into the device and inference-engine arguments.

>>> from ocr_platform.engines.settings import PaddleSettings
>>> runtime_kwargs(PaddleSettings(inference_engine="onnxruntime", cpu_threads=2))
{'device': 'cpu', 'engine': 'onnxruntime', 'engine_config': {'intra_op_num_threads': 2}}
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.engines.model_cache import ModelCache
from ocr_platform.engines.model_packages import model_label
from ocr_platform.engines.settings import PaddleSettings

logger = logging.getLogger(__name__)


class ModelUnavailableError(Exception):
    """A model no cache has, while hub downloads are off."""


class ModelResolver:
    """Turns model names into PaddleOCR ``<role>_model_name`` / ``<role>_model_dir`` keyword arguments.

    Args:
        settings: ``inference_engine`` picks Paddle or ONNX model directories; ``allow_hub_download``
            whether a model no cache has may come from PaddleX's hub; ``bucket`` the S3 model cache.
        cache: where model directories are looked up (default: ``ModelCache(settings.bucket)``).

    Attributes:
        from_hub: the models left to PaddleX's hub since the last ``publish_downloaded``.
    """

    def __init__(self, settings: PaddleSettings, cache: ModelCache | None = None) -> None:
        self.settings = settings
        self.cache = cache or ModelCache(settings.bucket)
        self.from_hub: list[str] = []
        self._labels: dict[str, str] = {}

    def label(self, name: str) -> str:
        """What ``engine.models`` calls the weights resolved for ``name`` (``model_packages.model_label``)."""
        return self._labels.get(name, name)

    def kwargs(self, role: str, name: str) -> dict[str, str]:
        """``{<role>_model_name, <role>_model_dir}`` for a cached model; only the name for a hub download.

        Raises ``ModelUnavailableError`` when no cache has ``name`` and hub downloads are off.
        """
        return {f"{role}_{key}": value for key, value in self.model_kwargs(name).items()}

    def model_kwargs(self, name: str) -> dict[str, str]:
        """``{model_name, model_dir}`` for one of PaddleOCR's single-model classes (as ``kwargs``)."""
        model_dir = self.cache.resolve(name, onnx=self.settings.inference_engine == "onnxruntime")
        if model_dir is not None:
            self._labels[name] = model_label(name, model_dir)
            return {"model_name": name, "model_dir": str(model_dir)}
        if not self.settings.allow_hub_download:
            raise ModelUnavailableError(f"model {name} is in no cache and hub downloads are off (OCR_MODEL_HUB)")
        self.from_hub.append(name)
        return {"model_name": name}

    def require(self, name: str, *, hub_check: Callable[[], str | None]) -> None:
        """Raise ``JobError(model_unavailable)`` at once when the job's model ``name`` cannot be had: no cache has it
        (baked, local, bucket, a model package, PaddleX's own download folder) and the hub is off, or
        ``hub_check`` says why no hub answers. PaddleX's downloader would otherwise try each hoster in turn and
        end in a traceback of its own."""
        onnx = self.settings.inference_engine == "onnxruntime"
        if self.cache.resolve(name, onnx=onnx) is not None or is_downloaded(name):
            return
        if self.settings.allow_hub_download:
            problem = hub_check()
            if problem is None:
                return
            why = f"no model hub answers ({problem})"
        else:
            why = "hub downloads are off (OCR_MODEL_HUB)"
        raise JobError(
            ErrorCode.MODEL_UNAVAILABLE,
            f"The model {name} is not on this machine and {why}. Bake it into the processor image "
            f"(processor_bake_models), seed it into the bucket's model cache (ocr-platform models seed <model_dir>), "
            f"or put it in {self.cache.local_dir}/{name}.",
        )

    def publish_downloaded(self) -> None:
        """After PaddleX fetched models from its hub, keep them in the bucket for the next cold start."""
        if not self.cache.bucket:
            return
        hub_dir = paddlex_download_dir()
        for name in self.from_hub:
            try:
                self.cache.publish(name, hub_dir / name)
            except Exception as err:  # the cache is an optimisation; a failed upload must not fail the job
                logger.warning("Could not cache model %s in S3: %s", name, err)
        self.from_hub.clear()


def paddlex_download_dir() -> Path:
    """Where PaddleX keeps the models it downloaded from its hub."""
    return Path(os.environ.get("PADDLE_PDX_CACHE_HOME", Path.home() / ".paddlex")) / "official_models"


def is_downloaded(name: str) -> bool:
    """Whether PaddleX already downloaded ``name`` (it then loads it without the network)."""
    return (paddlex_download_dir() / name / "inference.yml").is_file()


def runtime_kwargs(settings: PaddleSettings) -> dict[str, Any]:
    """The device and inference-engine arguments every PaddleOCR pipeline class takes."""
    kwargs: dict[str, Any] = {"device": settings.device}
    if settings.inference_engine == "onnxruntime":
        kwargs["engine"] = "onnxruntime"
        # ONNX Runtime's own default is the physical core count, which is 1 where the vCPUs are
        # hyperthreads of one core; the Lambda's vCPUs are what the function pays for.
        kwargs["engine_config"] = {"intra_op_num_threads": settings.cpu_threads}
    elif settings.device == "cpu":
        kwargs.update(enable_mkldnn=settings.enable_mkldnn, cpu_threads=settings.cpu_threads)
    return kwargs


def paddleocr_version() -> str:
    """``paddleocr <version>`` of the installed package, for ``engine.version`` in result.json."""
    try:
        return f"paddleocr {version('paddleocr')}"
    except PackageNotFoundError:
        return "paddleocr"
