"""The real engines: PaddleOCR 3.x pipelines behind the ``Engine`` interface.

- ``PPOCRv5Engine``: the ``PaddleOCR`` pipeline with PP-OCRv5 mobile detection + a recognition model
  chosen by language; lines with text, 4-point polygon and score.
- ``PPStructureV3Engine``: the ``PPStructureV3`` pipeline; layout blocks in reading order (tables as
  HTML) and Markdown, plus the OCR lines.
- ``PaddleOCRVLEngine``: the ``PaddleOCRVL`` pipeline (GPU endpoint); blocks and Markdown.

Each pipeline is built once (models load in the constructor) and reused. Model directories come from
``ModelCache`` (baked, local, S3 cache, installed model packages) and PaddleX's hub only as a last resort.
When a layout pipeline cannot be built here (its weights or dependencies are missing), the job fails
``engine_unavailable``, unless fallback is on (``OCR_ENGINE_FALLBACK=on``: the local stack and the
``ocr`` command, never a deployed stage by default). Then a real substitute runs (PP-OCRv5 by default,
``_LayoutEngine._fallback_engine``), ``engine`` in the result names it and an ``engine_fallback`` warning
says what was asked for, what ran and why; output is never fabricated.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from ocr_platform.engines import Engine, EngineOutput, collector_paused
from ocr_platform.errors import ErrorCode, JobError
from ocr_platform.intake import IntakeLimits, PageImage, open_document
from ocr_platform.model_cache import ModelCache
from ocr_platform.results import ENGINE_FALLBACK, Block, EngineInfo, Line, Page, engine_fallback_warning
from ocr_platform.settings import ENV, engine_fallback_enabled

logger = logging.getLogger(__name__)

os.environ.setdefault("PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK", "True")

DET_MODEL = "PP-OCRv5_mobile_det"
MULTILINGUAL_REC_MODEL = "PP-OCRv5_mobile_rec"  # Simplified/Traditional Chinese, English, Japanese
_MULTILINGUAL_LANGS = {"ch", "chinese_cht", "en", "japan"}
_LANG_GROUPS = ("latin", "eslav", "arabic", "cyrillic", "devanagari")
_SINGLE_LANG_REC = {"korean": "korean", "th": "th", "el": "el", "te": "te", "ta": "ta"}

ProgressCallback = Callable[[int, int], None]


def _env_flag(name: str, default: bool) -> bool:
    return os.environ.get(name, "1" if default else "0").strip().lower() in {"1", "true", "on", "yes"}


@dataclass(frozen=True)
class PaddleSettings:
    """How the PaddleOCR pipelines run (each field has an ``OCR_*`` environment override).

    Attributes:
        inference_engine: ``onnxruntime`` (PaddleOCR's ONNX Runtime engine on models exported from the
            Paddle weights; about 2.3x faster per page on 2 CPU cores, see benchmarks/) or ``paddle``
            (Paddle Inference). The default is ``onnxruntime`` when it is installed.
        det_limit_side_len / det_limit_type: detection input size. ``max`` + 1280 caps the long side,
            which keeps an A4 page at 144-200 DPI fast without losing small text (see benchmarks/).
        rec_batch_size: text lines recognised per batch. 1 is fastest on CPU: a batch is padded to its
            widest line, and recognition cost grows with width.
        cpu_threads: threads per inference: Paddle Inference's math library threads, or ONNX Runtime's
            intra-op threads (defaults to the machine's vCPUs, ``os.cpu_count()``).
        enable_mkldnn: oneDNN kernels on CPU (needs paddlepaddle 3.2.x; 3.3.1 crashes with it).
        device: ``cpu`` or ``gpu:0``.
        allow_hub_download: let PaddleX fetch a model that no cache has (``OCR_MODEL_HUB=off`` forbids).
        allow_fallback: when a layout pipeline cannot be built here, run a substitute and say so in the
            result (``OCR_ENGINE_FALLBACK=on``) instead of failing ``engine_unavailable`` (the default:
            a deployed stage gives the model asked for or an error).
        bucket: the platform bucket whose ``models/`` prefix caches model archives (``OCR_BUCKET_NAME``).
        intake: document limits and render scale.
    """

    inference_engine: str = field(default_factory=lambda: "onnxruntime" if _onnx_available() else "paddle")
    det_limit_side_len: int = 1280
    det_limit_type: str = "max"
    rec_batch_size: int = 1
    cpu_threads: int = field(default_factory=lambda: os.cpu_count() or 2)
    enable_mkldnn: bool = True
    device: str = "cpu"
    allow_hub_download: bool = True
    allow_fallback: bool = False
    bucket: str | None = None
    intake: IntakeLimits = field(default_factory=IntakeLimits)

    @classmethod
    def from_env(cls) -> "PaddleSettings":
        env = os.environ
        base = cls()
        return replace(
            base,
            inference_engine=env.get("OCR_INFERENCE_ENGINE", base.inference_engine),
            det_limit_side_len=int(env.get("OCR_DET_LIMIT_SIDE_LEN", base.det_limit_side_len)),
            det_limit_type=env.get("OCR_DET_LIMIT_TYPE", base.det_limit_type),
            rec_batch_size=int(env.get("OCR_REC_BATCH_SIZE", base.rec_batch_size)),
            cpu_threads=int(env.get("OCR_CPU_THREADS", base.cpu_threads)),
            enable_mkldnn=_env_flag("OCR_ENABLE_MKLDNN", base.enable_mkldnn),
            device=env.get("OCR_DEVICE", base.device),
            allow_hub_download=_env_flag("OCR_MODEL_HUB", base.allow_hub_download),
            allow_fallback=engine_fallback_enabled(env.get(ENV.ENGINE_FALLBACK)),
            bucket=env.get("OCR_BUCKET_NAME") or None,
            intake=replace(
                base.intake,
                render_scale=float(env.get("OCR_RENDER_SCALE", base.intake.render_scale)),
                max_pages=int(env.get("OCR_MAX_PAGES", base.intake.max_pages)),
                max_page_pixels=int(env.get("OCR_MAX_PAGE_PIXELS", base.intake.max_page_pixels)),
            ),
        )


def _onnx_available() -> bool:
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "paddle2onnx"))


def recognition_model_for(language: str) -> str:
    """The PP-OCRv5 mobile recognition model that reads ``language`` (a PaddleOCR lang code).

    >>> recognition_model_for("en"), recognition_model_for("korean")
    ('PP-OCRv5_mobile_rec', 'korean_PP-OCRv5_mobile_rec')
    """
    if language in _MULTILINGUAL_LANGS:
        return MULTILINGUAL_REC_MODEL
    if language in _SINGLE_LANG_REC:
        return f"{_SINGLE_LANG_REC[language]}_PP-OCRv5_mobile_rec"
    groups = _paddleocr_language_groups()
    for group in _LANG_GROUPS:
        if language in groups.get(group, ()):
            return f"{group}_PP-OCRv5_mobile_rec"
    raise JobError(
        ErrorCode.UNSUPPORTED_LANGUAGE,
        f"Language {language!r} has no PP-OCRv5 recognition model; use a PaddleOCR code such as en, ch, fr, ru, korean, ar.",
    )


def _paddleocr_language_groups() -> dict[str, set[str]]:
    """PaddleOCR's own language -> script-group table (so 80+ codes are not copied here)."""
    try:
        from paddleocr._pipelines import ocr as table
    except ImportError:
        return {}
    return {
        "latin": set(getattr(table, "LATIN_LANGS", ())),
        "eslav": set(getattr(table, "ESLAV_LANGS", ())),
        "arabic": set(getattr(table, "ARABIC_LANGS", ())),
        "cyrillic": set(getattr(table, "CYRILLIC_LANGS", ())),
        "devanagari": set(getattr(table, "DEVANAGARI_LANGS", ())),
    }


class ModelUnavailableError(Exception):
    """A model no cache has, while hub downloads are off."""


class ModelResolver:
    """Turns model names into PaddleOCR ``*_model_name`` / ``*_model_dir`` keyword arguments."""

    def __init__(self, settings: PaddleSettings, cache: ModelCache | None = None) -> None:
        self.settings = settings
        self.cache = cache or ModelCache(settings.bucket)
        self.from_hub: list[str] = []

    def kwargs(self, role: str, name: str) -> dict[str, str]:
        model_dir = self.cache.resolve(name, onnx=self.settings.inference_engine == "onnxruntime")
        if model_dir is not None:
            return {f"{role}_model_name": name, f"{role}_model_dir": str(model_dir)}
        if not self.settings.allow_hub_download:
            raise ModelUnavailableError(f"model {name} is in no cache and hub downloads are off (OCR_MODEL_HUB)")
        self.from_hub.append(name)
        return {f"{role}_model_name": name}

    def publish_downloaded(self) -> None:
        """After PaddleX fetched models from its hub, keep them in the bucket for the next cold start."""
        if not self.cache.bucket:
            return
        hub_dir = Path(os.environ.get("PADDLE_PDX_CACHE_HOME", Path.home() / ".paddlex")) / "official_models"
        for name in self.from_hub:
            try:
                self.cache.publish(name, hub_dir / name)
            except Exception as err:  # the cache is an optimisation; a failed upload must not fail the job
                logger.warning("Could not cache model %s in S3: %s", name, err)
        self.from_hub.clear()


def _common_kwargs(settings: PaddleSettings) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"device": settings.device}
    if settings.inference_engine == "onnxruntime":
        kwargs["engine"] = "onnxruntime"
        # ONNX Runtime's own default is the physical core count, which is 1 where the vCPUs are
        # hyperthreads of one core; the Lambda's vCPUs are what the function pays for.
        kwargs["engine_config"] = {"intra_op_num_threads": settings.cpu_threads}
    elif settings.device == "cpu":
        kwargs.update(enable_mkldnn=settings.enable_mkldnn, cpu_threads=settings.cpu_threads)
    return kwargs


def _paddleocr_version() -> str:
    try:
        from importlib.metadata import version

        return f"paddleocr {version('paddleocr')}"
    except Exception:
        return "paddleocr"


def _bgr(page: PageImage) -> Any:
    import numpy as np

    return np.ascontiguousarray(np.asarray(page.image)[:, :, ::-1])


def _raw(res: Any) -> Any:
    data = getattr(res, "json", None)
    if isinstance(data, dict):
        return data.get("res", data)
    return dict(res) if isinstance(res, dict) else str(res)


def ocr_lines(res: Any) -> list[Line]:
    """Lines from a PaddleOCR OCR result (``rec_texts``, ``rec_polys``, ``rec_scores``)."""
    texts = list(res.get("rec_texts", []) or [])
    polys = list(res.get("rec_polys", []) or [])
    scores = list(res.get("rec_scores", []) or [])
    lines: list[Line] = []
    for text, poly, score in zip(texts, polys, scores):
        points = [[round(float(x), 1), round(float(y), 1)] for x, y in (poly.tolist() if hasattr(poly, "tolist") else poly)]
        if len(points) != 4:  # a curved text polygon: keep its bounding quadrilateral
            xs, ys = [p[0] for p in points], [p[1] for p in points]
            points = [[min(xs), min(ys)], [max(xs), min(ys)], [max(xs), max(ys)], [min(xs), max(ys)]]
        lines.append({"text": str(text), "polygon": points, "score": round(float(score), 4)})
    return lines


def layout_blocks(parsing_res_list: list[dict[str, Any]]) -> list[Block]:
    """Blocks in reading order from a layout-parsing result's ``parsing_res_list`` (PP-StructureV3, PaddleOCR-VL)."""
    ordered = sorted(
        enumerate(parsing_res_list),
        key=lambda item: (item[1].get("block_order") is None, item[1].get("block_order") or 0, item[0]),
    )
    blocks: list[Block] = []
    for _, raw in ordered:
        label = str(raw.get("block_label", "text"))
        content = str(raw.get("block_content", "") or "")
        block: Block = {"label": label, "bbox": [round(float(v), 1) for v in list(raw.get("block_bbox", []))[:4]]}
        if label == "table" and "<table" in content.lower():
            block["html"] = content
            block["text"] = _html_text(content)
        else:
            block["text"] = content
        blocks.append(block)
    return blocks


def _html_text(html: str) -> str:
    from html.parser import HTMLParser

    class Cells(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.rows: list[list[str]] = []

        def handle_starttag(self, tag: str, attrs: Any) -> None:
            if tag == "tr":
                self.rows.append([])
            elif tag in ("td", "th") and self.rows:
                self.rows[-1].append("")

        def handle_data(self, data: str) -> None:
            if self.rows and self.rows[-1]:
                self.rows[-1][-1] += data

    parser = Cells()
    parser.feed(html)
    return "\n".join("\t".join(cell.strip() for cell in row) for row in parser.rows)


class PPOCRv5Engine:
    """PP-OCRv5 text detection + recognition through PaddleOCR's ``PaddleOCR`` pipeline.

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
        self.info = EngineInfo(name="PP-OCRv5", models=[DET_MODEL, MULTILINGUAL_REC_MODEL], version=self._version())

    def _version(self) -> str:
        return f"{_paddleocr_version()} ({self.settings.inference_engine})"

    def _pipeline(self, rec_model: str) -> Any:
        if rec_model not in self._pipelines:
            with collector_paused():  # PaddleOCR's imports and the model load: see collector_paused
                self._pipelines[rec_model] = self._build_pipeline(rec_model)
            self.resolver.publish_downloaded()
        return self._pipelines[rec_model]

    def _build_pipeline(self, rec_model: str) -> Any:
        factory = self._factory
        if factory is None:
            from paddleocr import PaddleOCR as factory  # noqa: N813
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
            **_common_kwargs(self.settings),
        )

    def read_image(self, image_bgr: Any, language: str = "en") -> tuple[list[Line], Any]:
        """The lines of one page image (a BGR ``numpy`` array) and PaddleOCR's raw result for it."""
        [res] = list(self._pipeline(recognition_model_for(language)).predict(image_bgr))
        return ocr_lines(res), _raw(res)

    def predict(
        self,
        path: Path,
        *,
        language: str = "en",
        pages: str | None = None,
        options: dict[str, Any] | None = None,
        on_page: ProgressCallback | None = None,
    ) -> EngineOutput:
        rec_model = recognition_model_for(language)
        pipeline = self._pipeline(rec_model)
        result_pages: list[Page] = []
        raw_pages: list[Any] = []
        render_s = predict_s = 0.0
        with open_document(path, pages=pages, limits=self.settings.intake) as doc:
            t0 = time.perf_counter()
            for index, page in enumerate(doc.pages(), start=1):
                t1 = time.perf_counter()
                render_s += t1 - t0
                [res] = list(pipeline.predict(_bgr(page)))
                t0 = time.perf_counter()
                predict_s += t0 - t1
                result_pages.append(
                    {"page": page.page, "width": page.width, "height": page.height, "scale": round(page.scale, 4), "lines": ocr_lines(res)}
                )
                raw_pages.append({"page": page.page, "result": _raw(res)})
                if on_page:
                    on_page(index, len(doc.selected_pages))
        return EngineOutput(
            pages=result_pages,
            raw={"pipeline": "OCR", "pages": raw_pages},
            engine=EngineInfo(name="PP-OCRv5", models=[DET_MODEL, rec_model], version=self._version()),
            timings={"render": render_s, "predict": predict_s},
        )


class _LayoutEngine:
    """Shared by the layout-parsing pipelines: pages of blocks + Markdown + the OCR lines they saw."""

    name = ""
    models: list[str] = []

    def __init__(self, settings: PaddleSettings | None, pipeline_factory: Callable[..., Any] | None, resolver: ModelResolver | None) -> None:
        # The layout and VL pipelines run on Paddle Inference (CPU or GPU); only PP-OCRv5 uses ONNX Runtime.
        self.settings = replace(settings or PaddleSettings.from_env(), inference_engine="paddle")
        self.resolver = resolver or ModelResolver(self.settings)
        self.fallback: Any = None
        self.fallback_reason = ""
        started = time.perf_counter()
        try:
            self.pipeline = self._build(pipeline_factory)
            self.resolver.publish_downloaded()
        except Exception as err:
            if not self.settings.allow_fallback:
                raise JobError(ErrorCode.ENGINE_UNAVAILABLE, f"{self.name} cannot run here: {err}") from err
            self.pipeline = None
            self.fallback_reason = f"{type(err).__name__}: {err}"[:300]
            self.fallback = self._fallback_engine()
            logger.warning("%s unavailable (%s); %s runs instead", self.name, err, self.fallback.info["name"])
        self.load_seconds = time.perf_counter() - started
        self.info = EngineInfo(name=self.name, models=list(self.models), version=_paddleocr_version())

    def _build(self, factory: Callable[..., Any] | None) -> Any:
        raise NotImplementedError

    def _fallback_engine(self) -> Engine:
        """The real engine that runs in place of this pipeline when it cannot be built and fallback is on.

        The default is the PP-OCRv5 engine of the ``pp-ocrv5`` route (shared: loaded once per process).
        The contract for an override: its ``predict`` returns real output. If that output already carries
        an ``engine_fallback`` warning, the substitute has described itself and ``predict`` keeps its
        ``engine`` and warnings as they are; otherwise ``predict`` names the engine that ran (with
        "fallback: ... unavailable here") and adds the ``engine_fallback`` warning.
        """
        from ocr_platform.engines import get_engine

        return get_engine("pp-ocrv5")

    def _predict_kwargs(self, language: str) -> dict[str, Any]:
        return {}

    def predict(
        self,
        path: Path,
        *,
        language: str = "en",
        pages: str | None = None,
        options: dict[str, Any] | None = None,
        on_page: ProgressCallback | None = None,
    ) -> EngineOutput:
        if self.fallback is not None:
            output = self.fallback.predict(path, language=language, pages=pages, options=options, on_page=on_page)
            ran = output.engine or self.fallback.info
            if any(warning.get("code") == ENGINE_FALLBACK for warning in output.warnings):
                output.engine = ran
                return output
            output.engine = EngineInfo(
                name=f"{ran['name']} (fallback: {self.name} unavailable here: {self.fallback_reason})",
                models=ran["models"],
                version=ran["version"],
            )
            output.warnings.append(engine_fallback_warning(requested=self.name, ran=ran["name"], reason=self.fallback_reason))
            return output
        result_pages: list[Page] = []
        raw_pages: list[Any] = []
        predict_s = 0.0
        with open_document(path, pages=pages, limits=self.settings.intake) as doc:
            for index, page in enumerate(doc.pages(), start=1):
                t0 = time.perf_counter()
                [res] = list(self.pipeline.predict(_bgr(page), **self._predict_kwargs(language)))
                predict_s += time.perf_counter() - t0
                result_pages.append(layout_page(res, page))
                raw_pages.append({"page": page.page, "result": _raw(res)})
                if on_page:
                    on_page(index, len(doc.selected_pages))
        return EngineOutput(pages=result_pages, raw={"pipeline": self.name, "pages": raw_pages}, timings={"predict": predict_s})


def layout_page(res: Any, page: PageImage) -> Page:
    """A result page from a layout-parsing result (its ``json["res"]`` and ``markdown``)."""
    data = _raw(res)
    blocks = layout_blocks(list(data.get("parsing_res_list", []) or []))
    markdown = getattr(res, "markdown", None)
    text = markdown.get("markdown_texts", "") if isinstance(markdown, dict) else ""
    return {
        "page": page.page,
        "width": page.width,
        "height": page.height,
        "scale": round(page.scale, 4),
        "lines": ocr_lines(data.get("overall_ocr_res", {}) or {}),
        "blocks": blocks,
        "markdown": text or "\n\n".join(b.get("html") or b.get("text", "") for b in blocks),
    }


class PPStructureV3Engine(_LayoutEngine):
    """Layout, tables and Markdown through PaddleOCR's ``PPStructureV3`` pipeline (CPU)."""

    name = "PP-StructureV3"
    models = [
        "PP-DocLayout_plus-L", "PP-DocBlockLayout", DET_MODEL, MULTILINGUAL_REC_MODEL, "PP-LCNet_x1_0_table_cls",
        "SLANeXt_wired", "SLANet_plus", "RT-DETR-L_wired_table_cell_det", "RT-DETR-L_wireless_table_cell_det",
    ]
    _roles = {
        "layout_detection": "PP-DocLayout_plus-L",
        "region_detection": "PP-DocBlockLayout",
        "text_detection": DET_MODEL,
        "text_recognition": MULTILINGUAL_REC_MODEL,
        "table_classification": "PP-LCNet_x1_0_table_cls",
        "wired_table_structure_recognition": "SLANeXt_wired",
        "wireless_table_structure_recognition": "SLANet_plus",
        "wired_table_cells_detection": "RT-DETR-L_wired_table_cell_det",
        "wireless_table_cells_detection": "RT-DETR-L_wireless_table_cell_det",
    }

    def __init__(self, settings: PaddleSettings | None = None, *, pipeline_factory: Callable[..., Any] | None = None, resolver: ModelResolver | None = None) -> None:
        super().__init__(settings, pipeline_factory, resolver)

    def _fallback_engine(self) -> Engine:
        """The local substitute with real layout and table models (``engines.local_structure``) where
        their weights are installed, else plain PP-OCRv5 (the reason then says why)."""
        from ocr_platform.engines.local_structure import LocalStructureEngine, SubstituteUnavailableError

        ocr = super()._fallback_engine()
        try:
            return LocalStructureEngine(ocr, reason=self.fallback_reason)
        except SubstituteUnavailableError as err:
            self.fallback_reason = f"{self.fallback_reason}; its local substitute cannot run either: {err}"
            return ocr

    def _build(self, factory: Callable[..., Any] | None) -> Any:
        if factory is None:
            from paddleocr import PPStructureV3 as factory  # noqa: N813
        kwargs: dict[str, Any] = {}
        missing: list[str] = []
        for role, model in self._roles.items():
            try:
                kwargs.update(self.resolver.kwargs(role, model))
            except ModelUnavailableError:
                missing.append(model)
        if missing:
            raise ModelUnavailableError(
                f"{self.name} weights ({', '.join(missing)}) are not installed here and hub downloads are off (OCR_MODEL_HUB)"
            )
        from_hub = list(self.resolver.from_hub)
        try:
            return factory(
                **kwargs,
                use_doc_orientation_classify=False,
                use_doc_unwarping=False,
                use_textline_orientation=False,
                use_seal_recognition=False,
                use_formula_recognition=False,
                use_chart_recognition=False,
                use_table_recognition=True,
                use_region_detection=True,
                text_det_limit_side_len=self.settings.det_limit_side_len,
                text_det_limit_type=self.settings.det_limit_type,
                text_recognition_batch_size=self.settings.rec_batch_size,
                **_common_kwargs(self.settings),
            )
        except Exception as err:
            if not from_hub or type(err.__cause__).__name__ == "DependencyError":
                raise
            raise ModelUnavailableError(
                f"{self.name} weights ({', '.join(from_hub)}) are not installed here and could not be downloaded from the model hub"
            ) from err


class PaddleOCRVLEngine(_LayoutEngine):
    """Document parsing with the PaddleOCR-VL vision-language model (GPU, SageMaker endpoint).

    ``OCR_VL_BACKEND`` picks the VLM runtime: ``native`` (in-process) or ``vllm-server`` with
    ``OCR_VL_SERVER_URL`` (PaddleOCR's vLLM generation server, several regions in flight at once).
    """

    name = "PaddleOCR-VL"
    models = ["PP-DocLayoutV2", "PaddleOCR-VL-0.9B"]

    def __init__(self, settings: PaddleSettings | None = None, *, pipeline_factory: Callable[..., Any] | None = None, resolver: ModelResolver | None = None) -> None:
        super().__init__(settings, pipeline_factory, resolver)

    def _build(self, factory: Callable[..., Any] | None) -> Any:
        if factory is None:
            from paddleocr import PaddleOCRVL as factory  # noqa: N813
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
