"""How the PaddleOCR engines run on this machine, read once from the ``OCR_*`` environment.

Every engine takes a ``PaddleSettings``; ``PaddleSettings.from_env()`` is what a Lambda, the endpoint
and the ``ocr`` command use, and tests pass their own. Importing this module imports no model library.

>>> settings = PaddleSettings(inference_engine="paddle", cpu_threads=2)
>>> (settings.det_limit_type, settings.det_limit_side_len, settings.allow_fallback)
('max', 1280, False)
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, field, replace

from ocr_platform.core.settings import ENV, engine_fallback_enabled
from ocr_platform.document.intake import IntakeLimits
from ocr_platform.document.work_budget import WorkBudget

# PaddleX checks that its model hosters answer when it is imported, which costs a cold start seconds
# and needs a network; models come from ``ModelCache`` first and the hub only as a last resort.
os.environ.setdefault("PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK", "True")

_TRUE_VALUES = frozenset({"1", "true", "on", "yes"})


def env_flag(name: str, default: bool) -> bool:
    """Whether the environment variable ``name`` is on (``1``, ``true``, ``on``, ``yes``); ``default`` when unset.

    >>> env_flag("OCR_NOT_SET_ANYWHERE", True)
    True
    """
    return os.environ.get(name, "1" if default else "0").strip().lower() in _TRUE_VALUES


def onnx_runtime_available() -> bool:
    """Whether ONNX Runtime and the Paddle-to-ONNX exporter are installed (without importing them)."""
    return all(importlib.util.find_spec(module) is not None for module in ("onnxruntime", "paddle2onnx"))


@dataclass(frozen=True)
class PaddleSettings:
    """How the PaddleOCR pipelines run (each field has an ``OCR_*`` environment override).

    Attributes:
        inference_engine: ``onnxruntime`` (PaddleOCR's ONNX Runtime engine on models exported from the
            Paddle weights; about 2.3x faster per page on 2 CPU cores, see benchmarks/) or ``paddle``
            (Paddle Inference). The default is ``onnxruntime`` when it is installed.
            ``OCR_INFERENCE_ENGINE``.
        det_limit_side_len / det_limit_type: detection input size. ``max`` + 1280 caps the long side,
            which keeps an A4 page at 144-200 DPI fast without losing small text (see benchmarks/).
            ``OCR_DET_LIMIT_SIDE_LEN``, ``OCR_DET_LIMIT_TYPE``.
        rec_batch_size: text lines recognised per batch. 1 is fastest on CPU: a batch is padded to its
            widest line, and recognition cost grows with width. ``OCR_REC_BATCH_SIZE``.
        cpu_threads: threads per inference: Paddle Inference's math library threads, or ONNX Runtime's
            intra-op threads (defaults to the machine's vCPUs, ``os.cpu_count()``). ``OCR_CPU_THREADS``.
        rec_workers: text-line recognisers of one thread each that share a page's lines (defaults to
            ``cpu_threads``; see ``engines.text_pipeline``: 2.40 s a dense page with two, 4.40 s with one
            recogniser of two threads). ``OCR_REC_WORKERS``.
        enable_mkldnn: oneDNN kernels on CPU (needs paddlepaddle 3.2.x; 3.3.1 crashes with it).
            ``OCR_ENABLE_MKLDNN``.
        device: ``cpu`` or ``gpu:0``. ``OCR_DEVICE``.
        allow_hub_download: let PaddleX fetch a model that no cache has (``OCR_MODEL_HUB=off`` forbids).
        allow_fallback: when a layout pipeline cannot be built here, run a substitute and say so in the
            result (``OCR_ENGINE_FALLBACK=on``) instead of failing ``engine_unavailable`` (the default:
            a deployed stage gives the model asked for or an error).
        bucket: the platform bucket whose ``models/`` prefix caches model archives (``OCR_BUCKET_NAME``).
        intake: document limits and render scale (``OCR_RENDER_SCALE``, ``OCR_MAX_PAGES``,
            ``OCR_MAX_PAGE_PIXELS``), and the work budget of an Office or HTML file (``WorkBudget.from_env``:
            ``OCR_MAX_OFFICE_CELLS`` and the others of ``ocr_platform.document.work_budget.BUDGET_ENV``).
    """

    inference_engine: str = field(default_factory=lambda: "onnxruntime" if onnx_runtime_available() else "paddle")
    det_limit_side_len: int = 1280
    det_limit_type: str = "max"
    rec_batch_size: int = 1
    cpu_threads: int = field(default_factory=lambda: os.cpu_count() or 2)
    rec_workers: int = 0
    enable_mkldnn: bool = True
    device: str = "cpu"
    allow_hub_download: bool = True
    allow_fallback: bool = False
    bucket: str | None = None
    intake: IntakeLimits = field(default_factory=IntakeLimits)

    def __post_init__(self) -> None:
        if self.rec_workers <= 0:
            object.__setattr__(self, "rec_workers", self.cpu_threads)

    @classmethod
    def from_env(cls) -> PaddleSettings:
        """The defaults above, each replaced by its ``OCR_*`` variable where that is set."""
        env = os.environ
        base = cls()
        cpu_threads = int(env.get("OCR_CPU_THREADS", base.cpu_threads))
        return replace(
            base,
            inference_engine=env.get("OCR_INFERENCE_ENGINE", base.inference_engine),
            det_limit_side_len=int(env.get("OCR_DET_LIMIT_SIDE_LEN", base.det_limit_side_len)),
            det_limit_type=env.get("OCR_DET_LIMIT_TYPE", base.det_limit_type),
            rec_batch_size=int(env.get("OCR_REC_BATCH_SIZE", base.rec_batch_size)),
            cpu_threads=cpu_threads,
            rec_workers=int(env.get("OCR_REC_WORKERS", cpu_threads)),
            enable_mkldnn=env_flag("OCR_ENABLE_MKLDNN", base.enable_mkldnn),
            device=env.get("OCR_DEVICE", base.device),
            allow_hub_download=env_flag("OCR_MODEL_HUB", base.allow_hub_download),
            allow_fallback=engine_fallback_enabled(env.get(ENV.ENGINE_FALLBACK)),
            bucket=env.get("OCR_BUCKET_NAME") or None,
            intake=replace(
                base.intake,
                render_scale=float(env.get("OCR_RENDER_SCALE", base.intake.render_scale)),
                max_pages=int(env.get("OCR_MAX_PAGES", base.intake.max_pages)),
                max_page_pixels=int(env.get("OCR_MAX_PAGE_PIXELS", base.intake.max_page_pixels)),
                max_page_content_bytes=int(env.get("OCR_MAX_PAGE_CONTENT_BYTES", base.intake.max_page_content_bytes)),
                budget=WorkBudget.from_env(env),
            ),
        )
