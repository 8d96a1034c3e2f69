"""The ``paddleocr-vl`` engine: document parsing with the PaddleOCR-VL vision-language model, through
PaddleOCR's ``PaddleOCRVL`` pipeline on the GPU of the SageMaker endpoint (``model_server``).

``OCR_VL_VERSION`` picks the pipeline version (``v1``, ``v1.5`` or ``v1.6``, ``defaults.VL_VERSION_MODELS``;
the stack sets it from ``PlatformConfig.endpoint_vl_version``, whose weights the image bakes). Each version
is a layout model and a VLM, and ``engine`` in the result names the version and both models, so a result
says which one read it: ``PaddleOCR-VL 1.6`` with ``PP-DocLayoutV3`` and ``PaddleOCR-VL-1.6-0.9B``.

``OCR_VL_BACKEND`` picks the VLM runtime: ``native`` (in-process, one page at a time) or ``vllm-server``
with ``OCR_VL_SERVER_URL`` (PaddleOCR's vLLM generation server, up to ``OCR_VL_MAX_CONCURRENCY`` regions
in flight at once, 8 by default).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ocr_platform.core import defaults
from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.settings import ENV
from ocr_platform.engines.layout import LayoutPipelineEngine, PipelineFactory
from ocr_platform.engines.resolver import ModelResolver
from ocr_platform.engines.settings import PaddleSettings


@dataclass(frozen=True)
class VLVersion:
    """One PaddleOCR-VL pipeline version and the two models it runs.

    >>> VLVersion.named("v1.5")
    VLVersion(pipeline_version='v1.5', layout_model='PP-DocLayoutV3', vlm='PaddleOCR-VL-1.5-0.9B')
    >>> VLVersion.named("v1").engine_name, VLVersion.named("v1.6").engine_name
    ('PaddleOCR-VL 1.0', 'PaddleOCR-VL 1.6')
    """

    pipeline_version: str
    layout_model: str
    vlm: str

    @classmethod
    def named(cls, pipeline_version: str) -> VLVersion:
        """The version ``PaddleOCRVL(pipeline_version=...)`` calls ``pipeline_version``.

        Raises ``JobError`` ``engine_unavailable`` for a version the pinned paddleocr does not ship, naming
        the valid ones: a misconfigured endpoint fails ``/ping`` rather than run another version than asked.
        """
        if pipeline_version not in defaults.VL_VERSION_MODELS:
            raise JobError(
                ErrorCode.ENGINE_UNAVAILABLE,
                f"{ENV.VL_VERSION}={pipeline_version!r} is not a PaddleOCR-VL pipeline version; valid: "
                f"{', '.join(defaults.VL_VERSION_MODELS)}",
            )
        layout_model, vlm = defaults.VL_VERSION_MODELS[pipeline_version]
        return cls(pipeline_version, layout_model, vlm)

    @classmethod
    def from_env(cls) -> VLVersion:
        """The version ``OCR_VL_VERSION`` names (unset: ``defaults.ENDPOINT_VL_VERSION``)."""
        return cls.named(os.environ.get(ENV.VL_VERSION) or defaults.ENDPOINT_VL_VERSION)

    @property
    def engine_name(self) -> str:
        """``engine.name`` of a result this version read: ``v1.5`` -> ``PaddleOCR-VL 1.5`` (``v1`` is 1.0,
        the name its successors' reports give it)."""
        number = self.pipeline_version.removeprefix("v")
        return f"PaddleOCR-VL {number if '.' in number else number + '.0'}"

    @property
    def models(self) -> tuple[str, str]:
        """``engine.models`` of the pipeline: the layout model, then the VLM."""
        return (self.layout_model, self.vlm)


class PaddleOCRVLEngine(LayoutPipelineEngine):
    """Blocks and Markdown from one PaddleOCR-VL pipeline version (its layout model + its VLM).

    Args:
        settings / pipeline_factory / resolver: as ``LayoutPipelineEngine``.
        version: the pipeline version (default: ``VLVersion.from_env()``).
    """

    name = "PaddleOCR-VL"

    def __init__(
        self,
        settings: PaddleSettings | None = None,
        *,
        pipeline_factory: PipelineFactory | None = None,
        resolver: ModelResolver | None = None,
        version: VLVersion | None = None,
    ) -> None:
        self.version = version or VLVersion.from_env()
        # Before the base class builds: its fallback warning, error messages and ``engine`` use these.
        self.name = self.version.engine_name
        self.models = self.version.models
        super().__init__(settings, pipeline_factory=pipeline_factory, resolver=resolver)

    def _build(self, factory: PipelineFactory | None) -> Any:
        if factory is None:
            from paddleocr import PaddleOCRVL

            factory = PaddleOCRVL
        backend = os.environ.get("OCR_VL_BACKEND", "native")
        kwargs: dict[str, Any] = {
            **self.resolver.kwargs("layout_detection", self.version.layout_model),
            **self.resolver.kwargs("vl_rec", self.version.vlm),
            "vl_rec_backend": backend,
            "use_doc_orientation_classify": False,
            "use_doc_unwarping": False,
            "device": self.settings.device,
        }
        if backend != "native":
            kwargs["vl_rec_server_url"] = os.environ["OCR_VL_SERVER_URL"]
            kwargs["vl_rec_max_concurrency"] = int(os.environ.get("OCR_VL_MAX_CONCURRENCY", "8"))
        return factory(pipeline_version=self.version.pipeline_version, **kwargs)
