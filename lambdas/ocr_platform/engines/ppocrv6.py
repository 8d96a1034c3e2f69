"""The ``pp-ocrv6`` engine: PaddleOCR's current text detection and recognition generation, one model
pair per size (``tiny``, ``small``, ``medium``), through the shared PP-OCR engine (``engines.ppocr``),
run by one of two backends (the ``backend`` option).

- ``faster-paddle`` (the default): faster-paddle's Rust pipeline over ONNX Runtime, which carries the
  ``tiny`` and ``small`` weights in its wheel (``engines.faster_paddle``). ``tiny`` is the default size: on
  real dense pages it reads 4-6 times as fast as PaddleOCR's pipeline runs ``small``, at a word F1 above
  PP-OCRv5's (docs/performance/real-pages.md, "Real pages").
- ``paddleocr``: PaddleOCR 3.7's own pipeline on ONNX Runtime, with the weights as files (``model_packages``:
  the ONNX files of ``rapidocr`` 3.9.2 for ``small``; the deployed image bakes all three sizes).

Both run behind the same page loop (orientation, text layers, the page as submitted), and ``engine`` in
result.json names the one that ran (``version``). A size a backend cannot run here fails the job
``engine_unavailable`` or ``model_unavailable`` rather than reading with another size or backend.

>>> variant_models("medium")
('PP-OCRv6_medium_det', 'PP-OCRv6_medium_rec')
>>> backend_models("tiny", "faster-paddle")
('faster-paddle:PP-OCRv6_tiny_det', 'faster-paddle:PP-OCRv6_tiny_rec')
>>> (DEFAULT_BACKEND, DEFAULT_VARIANT)
('faster-paddle', 'tiny')
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from ocr_platform.core import defaults
from ocr_platform.core.results import EngineInfo
from ocr_platform.engines import EngineOutput
from ocr_platform.engines.faster_paddle import BACKEND, BACKEND_SIZES, FasterPaddlePipeline, backend_version, installed
from ocr_platform.engines.languages import check_ppocrv6_language
from ocr_platform.engines.options import MODEL_BACKENDS, MODEL_VARIANTS, EngineOptions, parse_options
from ocr_platform.engines.orientation import line_orientation_classifier
from ocr_platform.engines.ppocr import ModelPair, PPOCREngine
from ocr_platform.engines.text_layer_choice import Recognize

ENGINE_NAME = "PP-OCRv6"
VARIANTS = MODEL_VARIANTS["pp-ocrv6"]
BACKENDS = MODEL_BACKENDS["pp-ocrv6"]
DEFAULT_BACKEND = BACKENDS[0]
DEFAULT_VARIANT = "tiny"
_PREFIX = f"{BACKEND}:"


def variant_models(variant: str) -> ModelPair:
    """PaddleX's names of the detection and recognition models of one PP-OCRv6 size."""
    return f"PP-OCRv6_{variant}_det", f"PP-OCRv6_{variant}_rec"


def backend_models(variant: str, backend: str) -> ModelPair:
    """The engine's key for one size on one backend: PaddleX's names, marked when faster-paddle runs them."""
    det, rec = variant_models(variant)
    return (f"{_PREFIX}{det}", f"{_PREFIX}{rec}") if backend == BACKEND else (det, rec)


def _on_faster_paddle(name: str) -> bool:
    return name.startswith(_PREFIX)


class PPOCRv6Engine(PPOCREngine):
    """PP-OCRv6 text detection + recognition, the size chosen by the job's ``variant`` option and what runs
    it by its ``backend`` option."""

    name: ClassVar[str] = ENGINE_NAME
    variants: ClassVar[tuple[str, ...]] = VARIANTS
    backends: ClassVar[tuple[str, ...]] = BACKENDS
    default_pairs: ClassVar[tuple[ModelPair, ...]] = (backend_models(DEFAULT_VARIANT, DEFAULT_BACKEND),)

    def models_for(self, language: str, options: EngineOptions) -> ModelPair:
        check_ppocrv6_language(language)
        return backend_models(options.variant or DEFAULT_VARIANT, options.backend or DEFAULT_BACKEND)

    def engine_info(self, pair: ModelPair, options: EngineOptions, *, layers: Sequence[str] = ()) -> EngineInfo:
        info = super().engine_info(pair, options, layers=layers)
        if _on_faster_paddle(pair[1]):
            info["models"][:2] = [name.removeprefix(_PREFIX) for name in pair]
            info["version"] = backend_version()
        return info

    def predict(self, path: Path, *, language: str = defaults.LANGUAGE, options: dict[str, Any] | None = None, **kwargs: Any) -> EngineOutput:
        pair = self.models_for(language, parse_options(options, variants=self.variants, backends=self.backends))
        if _on_faster_paddle(pair[1]):
            self._pipeline(pair)  # built here: its weights are in faster-paddle, not in a model cache
        return super().predict(path, language=language, options=options, **kwargs)

    def _pipeline(self, pair: ModelPair) -> Any:
        if _on_faster_paddle(pair[1]) and self._factory is None and pair not in self._pipelines:
            self._pipelines[pair] = self._build_pipeline(pair)  # no PaddleX to import or configs to read
        return super()._pipeline(pair)

    def _build_pipeline(self, pair: ModelPair) -> Any:
        if not _on_faster_paddle(pair[1]) or self._factory is not None:
            return super()._build_pipeline(pair)
        if self._line_classifier is None:
            self._line_classifier, self._line_classifier_label = line_orientation_classifier(self.settings)
        size = pair[1].removeprefix(_PREFIX).split("_")[1]
        return FasterPaddlePipeline(size, threads=self.settings.cpu_threads, line_classifier=self._line_classifier)

    def _run(self, pair: ModelPair, image_bgr: Any, orientation: bool) -> Any:
        pipeline = self._pipeline(pair)
        if isinstance(pipeline, FasterPaddlePipeline):
            pipeline.enabled = orientation
        return super()._run(pair, image_bgr, orientation)

    def _recognizer(self, pair: ModelPair) -> Recognize:
        if _on_faster_paddle(pair[1]) and self._factory is None:
            return self._pipeline(pair).read_crops
        return super()._recognizer(pair)

    def has_model(self, name: str) -> bool:
        if _on_faster_paddle(name):
            return installed() and name.removeprefix(_PREFIX).split("_")[1] in BACKEND_SIZES
        return super().has_model(name)

    def crop_reader(self, rec_model: str) -> Recognize:
        if _on_faster_paddle(rec_model):
            return self._recognizer((rec_model.removesuffix("_rec") + "_det", rec_model))
        return super().crop_reader(rec_model)
