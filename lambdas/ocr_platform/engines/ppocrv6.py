"""The ``pp-ocrv6`` engine: PaddleOCR's current text detection and recognition generation, one model
pair per size (``tiny``, ``small``, ``medium``), through the shared PP-OCR engine (``engines.ppocr``).

``small`` is the default: on real dense pages it reads better than PP-OCRv5 mobile (word F1 0.978
against 0.968, at about a third more time a page; README, "Real pages"), and its weights are the ones
this environment has too (``model_packages``: the ONNX files of ``rapidocr`` 3.9.2). The deployed image bakes all three sizes; a job picks another with
``{"variant": "tiny"}`` or ``{"variant": "medium"}``, and where that size is not installed the job fails
``engine_unavailable`` rather than reading with another one.

>>> variant_models("medium")
('PP-OCRv6_medium_det', 'PP-OCRv6_medium_rec')
"""

from __future__ import annotations

from typing import ClassVar

from ocr_platform.engines.languages import check_ppocrv6_language
from ocr_platform.engines.options import MODEL_VARIANTS, EngineOptions
from ocr_platform.engines.ppocr import ModelPair, PPOCREngine

ENGINE_NAME = "PP-OCRv6"
VARIANTS = MODEL_VARIANTS["pp-ocrv6"]
DEFAULT_VARIANT = "small"


def variant_models(variant: str) -> ModelPair:
    """PaddleX's names of the detection and recognition models of one PP-OCRv6 size."""
    return f"PP-OCRv6_{variant}_det", f"PP-OCRv6_{variant}_rec"


class PPOCRv6Engine(PPOCREngine):
    """PP-OCRv6 text detection + recognition, the size chosen by the job's ``variant`` option."""

    name: ClassVar[str] = ENGINE_NAME
    variants: ClassVar[tuple[str, ...]] = VARIANTS
    default_pairs: ClassVar[tuple[ModelPair, ...]] = (variant_models(DEFAULT_VARIANT),)

    def models_for(self, language: str, options: EngineOptions) -> ModelPair:
        check_ppocrv6_language(language)
        return variant_models(options.variant or DEFAULT_VARIANT)
