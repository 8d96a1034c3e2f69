"""The ``paddleocr-vl`` engine: document parsing with the PaddleOCR-VL vision-language model, through
PaddleOCR's ``PaddleOCRVL`` pipeline on the GPU of the SageMaker endpoint (``model_server``).

``OCR_VL_BACKEND`` picks the VLM runtime: ``native`` (in-process, one page at a time) or ``vllm-server``
with ``OCR_VL_SERVER_URL`` (PaddleOCR's vLLM generation server, up to ``OCR_VL_MAX_CONCURRENCY`` regions
in flight at once, 8 by default).
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

from ocr_platform.engines.layout import LayoutPipelineEngine, PipelineFactory


class PaddleOCRVLEngine(LayoutPipelineEngine):
    """Blocks and Markdown from PaddleOCR-VL (PP-DocLayoutV2 layout + the PaddleOCR-VL-0.9B VLM)."""

    name = "PaddleOCR-VL"
    models: ClassVar[list[str]] = ["PP-DocLayoutV2", "PaddleOCR-VL-0.9B"]

    def _build(self, factory: PipelineFactory | None) -> Any:
        if factory is None:
            from paddleocr import PaddleOCRVL

            factory = PaddleOCRVL
        backend = os.environ.get("OCR_VL_BACKEND", "native")
        kwargs: dict[str, Any] = {
            **self.resolver.kwargs("layout_detection", "PP-DocLayoutV2"),
            **self.resolver.kwargs("vl_rec", "PaddleOCR-VL-0.9B"),
            "vl_rec_backend": backend,
            "use_doc_orientation_classify": False,
            "use_doc_unwarping": False,
            "device": self.settings.device,
        }
        if backend != "native":
            kwargs["vl_rec_server_url"] = os.environ["OCR_VL_SERVER_URL"]
            kwargs["vl_rec_max_concurrency"] = int(os.environ.get("OCR_VL_MAX_CONCURRENCY", "8"))
        return factory(pipeline_version="v1", **kwargs)
