"""The ``pp-ocrv5`` engine: text lines from PaddleOCR's ``PaddleOCR`` pipeline with PP-OCRv5 mobile
detection and the recognition model for the job's language (``engines.languages``).

One pipeline is built per recognition model, on first use, and kept for the life of the process: the
English one in the constructor (so a Lambda's init phase loads it, ``engines.preload_engines``), any
other when a job first asks for a language it reads. The other engines share this one for their text
lines: PP-StructureV3's local substitute calls ``read_image``, and a layout engine with fallback on runs
it in place of its own pipeline.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ocr_platform.engines import EngineOutput, collector_paused
from ocr_platform.engines.conversion import ocr_lines, raw_result
from ocr_platform.engines.languages import (
    DET_MODEL,
    MULTILINGUAL_REC_MODEL,
    recognition_model_for,
)
from ocr_platform.engines.page_loop import (
    PageReading,
    ProgressCallback,
    bgr_array,
    read_pages,
)
from ocr_platform.engines.resolver import (
    ModelResolver,
    ModelUnavailableError,
    paddleocr_version,
    runtime_kwargs,
)
from ocr_platform.engines.settings import PaddleSettings
from ocr_platform.errors import ErrorCode, JobError
from ocr_platform.intake import PageImage
from ocr_platform.results import EngineInfo, Line

ENGINE_NAME = "PP-OCRv5"


class PPOCRv5Engine:
    """PP-OCRv5 text detection + recognition through PaddleOCR's ``PaddleOCR`` pipeline.

    Args:
        settings: how the pipeline runs (default: ``PaddleSettings.from_env()``).
        resolver: where model weights come from (default: ``ModelResolver(settings)``).
        pipeline_factory: the pipeline class (default: ``paddleocr.PaddleOCR``).
        preload_languages: languages whose pipelines are built now rather than on their first job.

    >>> engine = PPOCRv5Engine()                                     # doctest: +SKIP
    >>> out = engine.predict(Path("scan.pdf"), language="en", pages="1")  # doctest: +SKIP
    >>> out.pages[0]["lines"][0]["text"]                             # doctest: +SKIP
    'Invoice 2026-001'
    """

    def __init__(
        self,
        settings: PaddleSettings | None = None,
        *,
        resolver: ModelResolver | None = None,
        pipeline_factory: Callable[..., Any] | None = None,
        preload_languages: tuple[str, ...] = ("en",),
    ) -> None:
        self.settings = settings or PaddleSettings.from_env()
        self.resolver = resolver or ModelResolver(self.settings)
        self._factory = pipeline_factory
        self._pipelines: dict[str, Any] = {}
        started = time.perf_counter()
        for language in preload_languages:
            self._pipeline(recognition_model_for(language))
        self.load_seconds = time.perf_counter() - started
        self.info = self._info(MULTILINGUAL_REC_MODEL)

    def _info(self, rec_model: str) -> EngineInfo:
        version = f"{paddleocr_version()} ({self.settings.inference_engine})"
        return EngineInfo(name=ENGINE_NAME, models=[DET_MODEL, rec_model], version=version)

    def _pipeline(self, rec_model: str) -> Any:
        if rec_model not in self._pipelines:
            with collector_paused():  # PaddleOCR's imports and the model load: see collector_paused
                self._pipelines[rec_model] = self._build_pipeline(rec_model)
            self.resolver.publish_downloaded()
        return self._pipelines[rec_model]

    def _build_pipeline(self, rec_model: str) -> Any:
        factory = self._factory
        if factory is None:
            from paddleocr import PaddleOCR

            factory = PaddleOCR
        try:
            kwargs = {
                **self.resolver.kwargs("text_detection", DET_MODEL),
                **self.resolver.kwargs("text_recognition", rec_model),
            }
        except ModelUnavailableError as err:
            raise JobError(ErrorCode.ENGINE_UNAVAILABLE, f"PP-OCRv5 cannot run here: {err}.") from None
        return factory(
            **kwargs,
            use_doc_orientation_classify=False,
            use_doc_unwarping=False,
            use_textline_orientation=False,
            text_det_limit_side_len=self.settings.det_limit_side_len,
            text_det_limit_type=self.settings.det_limit_type,
            text_recognition_batch_size=self.settings.rec_batch_size,
            **runtime_kwargs(self.settings),
        )

    def read_image(self, image_bgr: Any, language: str = "en") -> tuple[list[Line], Any]:
        """The lines of one page image (a BGR ``numpy`` array) and PaddleOCR's raw result for it."""
        [res] = list(self._pipeline(recognition_model_for(language)).predict(image_bgr))
        return ocr_lines(res), raw_result(res)

    def predict(
        self,
        path: Path,
        *,
        language: str = "en",
        pages: str | None = None,
        options: dict[str, Any] | None = None,
        on_page: ProgressCallback | None = None,
    ) -> EngineOutput:
        """Read ``pages`` of the document at ``path``; ``on_page(done, total)`` reports progress."""
        rec_model = recognition_model_for(language)
        pipeline = self._pipeline(rec_model)

        def read_page(image: PageImage) -> PageReading:
            [res] = list(pipeline.predict(bgr_array(image)))
            return PageReading(content={"lines": ocr_lines(res)}, raw={"result": raw_result(res)})

        read = read_pages(path, pages=pages, limits=self.settings.intake, read_page=read_page, on_page=on_page)
        return EngineOutput(
            pages=read.pages,
            raw={"pipeline": "OCR", "pages": read.raw_pages},
            engine=self._info(rec_model),
            timings=read.timings,
        )
