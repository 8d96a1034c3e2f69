"""What the ``pp-ocrv5`` and ``pp-ocrv6`` engines share: text lines from PaddleOCR's ``PaddleOCR``
pipeline, with every page and line turned upright first, and recognition on every core.

A route says only which detection and recognition models read a job (``models_for``: by language for
PP-OCRv5, by the ``variant`` option for PP-OCRv6). One pipeline is built per model pair, on first use,
and kept for the life of the process; ``preload`` pairs are built in the constructor, so a Lambda's
init phase loads them (``engines.preload_engines``).

Per page (``page_loop``): the page orientation classifier turns the page upright (``orientation``);
the pipeline detects lines and recognises them on ``rec_workers`` threads, and a line that reads badly
is read turned by 180 degrees where the text-line classifier says so (``text_pipeline``); the polygons
are mapped back to the page as submitted. A job with ``"orientation": false`` skips both classifiers.
With ``text_layer: auto`` (the default), a PDF page's own text is used where the same recogniser agrees
with a sample of it, and only the regions it lacks are detected and recognised (``text_layer_choice``).
Every OCR page gets its ``script`` from what was read; a page the recogniser reads poorly is probed with the
other installed recognisers (``auto_candidates``), and ``language: auto`` reads it again with the best one
(``script_detection``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from ocr_platform.core import defaults
from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.results import EngineInfo, Line
from ocr_platform.document.intake import PageImage
from ocr_platform.document.layer_text import repaired_warning
from ocr_platform.document.text_layer import layer_labels
from ocr_platform.engines import EngineOutput, collector_paused
from ocr_platform.engines.conversion import ocr_lines, raw_result
from ocr_platform.engines.options import EngineOptions, parse_options
from ocr_platform.engines.orientation import PageOrientation, line_orientation_classifier, shared_page_orientation
from ocr_platform.engines.page_loop import PageReading, ProgressCallback, read_pages
from ocr_platform.engines.resolver import ModelResolver, ModelUnavailableError, is_downloaded, paddleocr_version, runtime_kwargs
from ocr_platform.engines.script_detection import ScriptCheck
from ocr_platform.engines.scripts import covered_scripts, logical_order, reads_right_to_left
from ocr_platform.engines.settings import PaddleSettings
from ocr_platform.engines.text_layer_choice import Recognize, TextLayerChoice
from ocr_platform.engines.text_pipeline import (
    LogicalOrder,
    ParallelRecognizer,
    TurnedLineCheck,
    install_recognizer,
    model_configs_read_once,
)
from ocr_platform.engines.word_boxes import install_word_boxes

ModelPair = tuple[str, str]


def _hub_problem() -> str | None:
    """Why no model hub answers (``engines.layout.unreachable_hub``), else ``None``."""
    from ocr_platform.engines.layout import unreachable_hub

    return unreachable_hub()


def _joined(lines: list[Line]) -> tuple[str, float]:
    """Lines read from one crop as one line: their text joined, their lowest score."""
    return " ".join(line["text"] for line in lines), min((line["score"] for line in lines), default=0.0)


class PPOCREngine:
    """PP-OCR text detection + recognition through PaddleOCR's ``PaddleOCR`` pipeline (one route each).

    Args:
        settings: how the pipeline runs (default: ``PaddleSettings.from_env()``).
        resolver: where model weights come from (default: ``ModelResolver(settings)``).
        pipeline_factory: the pipeline class (default: ``paddleocr.PaddleOCR``).
        orientation: the page orientation classifier (default: the process's shared one).

    Subclasses set ``name``, ``variants`` and ``default_pairs`` and implement ``models_for``.
    """

    name: ClassVar[str] = "PP-OCR"
    #: The model sizes a job may pick with the ``variant`` option (none: the option is refused).
    variants: ClassVar[tuple[str, ...]] = ()
    #: What may run the models (the ``backend`` option; none: the option is refused).
    backends: ClassVar[tuple[str, ...]] = ()
    #: The pairs built in the constructor.
    default_pairs: ClassVar[tuple[ModelPair, ...]] = ()

    def __init__(
        self,
        settings: PaddleSettings | None = None,
        *,
        resolver: ModelResolver | None = None,
        pipeline_factory: Callable[..., Any] | None = None,
        orientation: PageOrientation | None = None,
    ) -> None:
        self.settings = settings or PaddleSettings.from_env()
        self.resolver = resolver or ModelResolver(self.settings)
        self._factory = pipeline_factory
        self._pipelines: dict[ModelPair, Any] = {}
        self._line_checks: dict[ModelPair, TurnedLineCheck] = {}
        started = time.perf_counter()
        self.orientation = orientation or shared_page_orientation(self.settings)
        self._line_classifier: Any = None
        self._line_classifier_label = ""
        for pair in self.default_pairs:
            self._pipeline(pair)
        self.load_seconds = time.perf_counter() - started
        self.info = self.engine_info(self.default_pairs[0], EngineOptions())

    def models_for(self, language: str, options: EngineOptions) -> ModelPair:
        """The detection and recognition models that read ``language`` with ``options``."""
        raise NotImplementedError

    def engine_info(self, pair: ModelPair, options: EngineOptions, *, layers: Sequence[str] = ()) -> EngineInfo:
        """``engine`` for result.json: every model that ran, orientation included when it was on, and the
        text layer's readers when some page's text came from it (``layers``, ``document.text_layer.layer_labels``)."""
        models = [self.resolver.label(name) for name in pair]
        if options.orientation:
            models += self.orientation_models()
        models += layers
        version = f"{paddleocr_version()} ({self.settings.inference_engine})"
        return EngineInfo(name=self.name, models=models, version=version)

    def orientation_models(self) -> list[str]:
        """The page and text-line orientation weights that run when a job leaves orientation on."""
        return [label for label in (self.orientation.label, self._line_classifier_label) if label]

    def _pipeline(self, pair: ModelPair) -> Any:
        if pair not in self._pipelines:
            # PaddleOCR's imports and the model load: see collector_paused and model_configs_read_once.
            with collector_paused(), model_configs_read_once():
                self._pipelines[pair] = self._build_pipeline(pair)
            self.resolver.publish_downloaded()
        return self._pipelines[pair]

    def _build_pipeline(self, pair: ModelPair) -> Any:
        factory = self._factory
        if factory is None:
            from paddleocr import PaddleOCR

            factory = PaddleOCR
        det_model, rec_model = pair
        try:
            kwargs = {
                **self.resolver.kwargs("text_detection", det_model),
                **self.resolver.kwargs("text_recognition", rec_model),
            }
            line_check = self._line_check(rec_model) if self._factory is None else None
        except ModelUnavailableError as err:
            raise JobError(ErrorCode.ENGINE_UNAVAILABLE, f"{self.name} cannot run here: {err}.") from None
        pipeline = factory(
            **kwargs,
            use_doc_orientation_classify=False,  # pages are turned by page_loop, for every route alike
            use_doc_unwarping=False,
            use_textline_orientation=False,  # lines are checked by TurnedLineCheck (text_pipeline)
            text_det_limit_side_len=self.settings.det_limit_side_len,
            text_det_limit_type=self.settings.det_limit_type,
            text_recognition_batch_size=self.settings.rec_batch_size,
            **runtime_kwargs(self.settings),
        )
        if line_check is not None:
            install_recognizer(pipeline, line_check)
            install_word_boxes()
            self._line_checks[pair] = line_check
        return pipeline

    def _line_check(self, rec_model: str) -> TurnedLineCheck:
        """``rec_workers`` recognition predictors of one thread each, behind the turned-line check."""
        from paddleocr import TextRecognition

        single = runtime_kwargs(replace(self.settings, cpu_threads=1))
        located = self.resolver.model_kwargs(rec_model)
        workers = [TextRecognition(**located, **single).paddlex_predictor for _ in range(max(1, self.settings.rec_workers))]
        if self._line_classifier is None:
            self._line_classifier, self._line_classifier_label = line_orientation_classifier(self.settings)
        recognizer = ParallelRecognizer(workers, batch_size=self.settings.rec_batch_size)
        return TurnedLineCheck(LogicalOrder(recognizer) if reads_right_to_left(rec_model) else recognizer, self._line_classifier)

    def _run(self, pair: ModelPair, image_bgr: Any, orientation: bool) -> Any:
        pipeline = self._pipeline(pair)
        if pair in self._line_checks:
            self._line_checks[pair].enabled = orientation
        # Word boxes (engines.word_boxes) come from the recogniser this engine installs, not a stand-in's.
        words = {"return_word_box": True} if pair in self._line_checks else {}
        [res] = list(pipeline.predict(image_bgr, **words))
        return res

    def read_image(self, image_bgr: Any, language: str = defaults.LANGUAGE, *, orientation: bool = True) -> tuple[list[Line], Any]:
        """The lines of one upright page image (a BGR ``numpy`` array) and PaddleOCR's raw result for it."""
        res = self._run(self.models_for(language, EngineOptions(orientation=orientation)), image_bgr, orientation)
        return ocr_lines(res), raw_result(res)

    def predict(
        self,
        path: Path,
        *,
        language: str = defaults.LANGUAGE,
        pages: str | None = None,
        options: dict[str, Any] | None = None,
        on_page: ProgressCallback | None = None,
    ) -> EngineOutput:
        """Read ``pages`` of the document at ``path``; ``on_page(done, total)`` reports progress.

        ``language="auto"`` reads each scanned page with the recogniser that reads it best (``script_detection``).
        """
        chosen = parse_options(options, variants=self.variants, backends=self.backends)
        pair = self.models_for(language, chosen)
        if pair not in self._pipelines:
            self.resolver.require(pair[1], hub_check=_hub_problem)
        self._pipeline(pair)
        choice = TextLayerChoice(self._recognizer(pair), scripts=self.scripts_for(pair)) if chosen.text_layer == "auto" else None
        scripts = ScriptCheck(language, self.auto_candidates(pair))
        recognizers = {pair[1]}

        def read_page(image: PageImage) -> PageReading:
            bgr = image.bgr()
            res = self._run(pair, bgr, chosen.orientation)
            verdict = scripts.check(image.page, bgr, ocr_lines(res), pair[1])
            if verdict.recognizer != pair[1]:
                res = self._run((pair[0], verdict.recognizer), bgr, chosen.orientation)
                recognizers.add(verdict.recognizer)
            return PageReading(content=verdict.page_content(ocr_lines(res)), raw={"result": raw_result(res), "script_check": verdict.raw})

        read = read_pages(
            path, pages=pages, limits=self.settings.intake, read_page=read_page, on_page=on_page,
            orientation=self.orientation if chosen.orientation else None,
            text_layer=choice, forms=chosen.forms,
        )
        engine = self.engine_info(pair, chosen, layers=layer_labels(read.pages, read.raw_pages))
        engine["models"][2:2] = [self.resolver.label(name) for name in sorted(recognizers - {pair[1]})]
        return EngineOutput(
            pages=read.pages,
            raw={"pipeline": "OCR", "pages": read.raw_pages},
            engine=engine,
            timings={**read.timings, "script_check": scripts.seconds},
            warnings=scripts.warnings(
                choice.mismatched if choice is not None else {}, scanned={page["page"] for page in read.pages if page.get("text_source") == "ocr"}
            ) + repaired_warning(choice.repaired if choice is not None else {}),
            pages_failed=read.pages_failed,
        )

    def auto_candidates(self, pair: ModelPair) -> dict[str, Callable[[], Recognize]]:
        """The recognition models ``language: auto`` may pick among and a named language is checked against: those
        this machine has without a model hub (``script_detection``), each with what builds its crop reader.
        None here (PP-OCRv6 has one recogniser per size); PP-OCRv5 names its recognisers."""
        return {}

    def has_model(self, name: str) -> bool:
        """Whether the weights of ``name`` are here without a model hub (baked, cached, in the bucket or a package)."""
        try:
            return self.resolver.cache.resolve(name, onnx=self.settings.inference_engine == "onnxruntime") is not None or is_downloaded(name)
        except Exception:  # a cache that cannot be asked (S3 refused) has nothing for a probe; the job's own model is required
            return False

    def crop_reader(self, rec_model: str) -> Recognize:
        """Reads line crops with ``rec_model``: the pipeline's recogniser where one is built, else a recogniser of its own."""
        built = next((pair for pair in self._line_checks if pair[1] == rec_model), None)
        if built is not None:
            return self._recognizer(built)
        from paddleocr import TextRecognition

        predictor = TextRecognition(**self.resolver.model_kwargs(rec_model), **runtime_kwargs(self.settings)).paddlex_predictor
        order = logical_order if reads_right_to_left(rec_model) else str
        return lambda crops: [(order(str(res["rec_text"])), float(res["rec_score"])) for res in predictor.predict(list(crops))] if crops else []

    def line_recognizer(self, language: str, *, orientation: bool = True) -> Recognize:
        """Reads line crops with the recogniser that reads ``language``: ``(text, score)`` per crop (the text layer's
        sample; the structure substitute shares it so both routes judge a layer alike)."""
        pair = self.models_for(language, EngineOptions(orientation=orientation))
        self._pipeline(pair)
        return self._recognizer(pair)

    def scripts_for(self, pair: ModelPair) -> frozenset[str]:
        """The scripts the pair's recogniser reads (``engines.scripts``)."""
        return covered_scripts(pair[1])

    def _recognizer(self, pair: ModelPair) -> Recognize:
        """Reads line crops with the pair's recogniser, for the text layer's sample (a stand-in pipeline reads each crop whole)."""
        check = self._line_checks.get(pair)
        if check is not None:
            recognizer = check.recognizer
            return lambda crops: [(str(result["rec_text"]), float(result["rec_score"])) for result in recognizer(list(crops))] if crops else []
        return lambda crops: [_joined(ocr_lines(self._run(pair, crop, False))) for crop in crops]
