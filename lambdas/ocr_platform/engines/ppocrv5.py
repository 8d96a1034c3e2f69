"""The ``pp-ocrv5`` engine: PP-OCRv5 mobile detection and the PP-OCRv5 recognition model for the job's
language (``engines.languages``), through the shared PP-OCR engine (``engines.ppocr``).

The English pipeline is built in the constructor (a Lambda's init phase loads it), any other when a job
first asks for a language it reads. The other engines share this one for their text lines:
PP-StructureV3's local substitute calls ``read_image``, and a layout engine with fallback on runs it in
place of its own pipeline.

>>> engine = PPOCRv5Engine()                                          # doctest: +SKIP
>>> out = engine.predict(Path("scan.pdf"), language="en", pages="1")  # doctest: +SKIP
>>> out.pages[0]["lines"][0]["text"], out.pages[0]["rotation"]        # doctest: +SKIP
('Invoice 2026-001', 0)
"""

from __future__ import annotations

from typing import ClassVar

from ocr_platform.engines.languages import DET_MODEL, MULTILINGUAL_REC_MODEL, recognition_model_for
from ocr_platform.engines.options import EngineOptions
from ocr_platform.engines.ppocr import ModelPair, PPOCREngine

ENGINE_NAME = "PP-OCRv5"


class PPOCRv5Engine(PPOCREngine):
    """PP-OCRv5 text detection + recognition, the recogniser chosen by the job's language."""

    name: ClassVar[str] = ENGINE_NAME
    default_pairs: ClassVar[tuple[ModelPair, ...]] = ((DET_MODEL, MULTILINGUAL_REC_MODEL),)

    def models_for(self, language: str, options: EngineOptions) -> ModelPair:
        return DET_MODEL, recognition_model_for(language)
