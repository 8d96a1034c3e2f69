"""The ``pp-ocrv5`` engine: PP-OCRv5 mobile detection and the PP-OCRv5 recognition model for the job's
language (``engines.languages``), through the shared PP-OCR engine (``engines.ppocr``).

``language: auto`` starts every page with the multilingual recogniser and picks another per page among those
installed (``auto_candidates``; ``engines.script_detection``).

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

from collections.abc import Callable
from functools import partial
from typing import ClassVar

from ocr_platform.engines.languages import DET_MODEL, MULTILINGUAL_REC_MODEL, RECOGNISERS, recognition_model_for
from ocr_platform.engines.options import EngineOptions
from ocr_platform.engines.ppocr import ModelPair, PPOCREngine
from ocr_platform.engines.text_layer_choice import Recognize

ENGINE_NAME = "PP-OCRv5"


class PPOCRv5Engine(PPOCREngine):
    """PP-OCRv5 text detection + recognition, the recogniser chosen by the job's language."""

    name: ClassVar[str] = ENGINE_NAME
    default_pairs: ClassVar[tuple[ModelPair, ...]] = ((DET_MODEL, MULTILINGUAL_REC_MODEL),)

    def models_for(self, language: str, options: EngineOptions) -> ModelPair:
        return DET_MODEL, recognition_model_for(language)

    def auto_candidates(self, pair: ModelPair) -> dict[str, Callable[[], Recognize]]:
        """Every PP-OCRv5 recogniser this machine has (the job's own always; on AWS the image bakes all of them)."""
        if self._factory is not None:  # a stand-in pipeline: no real recognisers to ask
            return {}
        return {name: partial(self.crop_reader, name) for name in RECOGNISERS if name == pair[1] or self.has_model(name)}
