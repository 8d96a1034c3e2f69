"""What the layout-parsing engines (``pp-structurev3``, ``paddleocr-vl``) share: pages of blocks in reading
order, tables as HTML, Markdown and the OCR lines the pipeline saw, and what happens when the pipeline
cannot be built here.

A subclass names its pipeline and models and builds it (``_build``). When that fails (weights or
dependencies missing), the job fails ``engine_unavailable`` unless fallback is on
(``PaddleSettings.allow_fallback``, ``OCR_ENGINE_FALLBACK=on``: the local stack and the ``ocr`` command,
never a deployed stage by default). Then a real substitute runs (``_fallback_engine``: PP-OCRv5 unless
a subclass has a better one), ``engine`` in the result names it and an ``engine_fallback`` warning says
what was asked for, what ran and why; output is never fabricated.

The layout pipelines run on Paddle Inference (CPU or GPU) whatever ``inference_engine`` says; only
the PP-OCR routes run on ONNX Runtime. Pages are turned upright before the pipeline sees them
(``page_loop`` with the shared page orientation classifier) unless the job says ``"orientation": false``.
"""

from __future__ import annotations

import logging
import os
import queue
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ocr_platform.core import defaults
from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.results import ENGINE_FALLBACK, EngineInfo, engine_fallback_warning
from ocr_platform.core.tables import merge_continued_tables
from ocr_platform.document.intake import PageImage
from ocr_platform.document.layer_text import repaired_warning
from ocr_platform.document.text_layer import layer_labels
from ocr_platform.engines import Engine, EngineOutput
from ocr_platform.engines.conversion import layout_page_content, raw_result
from ocr_platform.engines.options import EngineOptions, parse_options
from ocr_platform.engines.orientation import TEXTLINE_ORIENTATION_MODEL, PageOrientation, shared_page_orientation
from ocr_platform.engines.page_loop import (
    PageReading,
    ProgressCallback,
    read_pages,
)
from ocr_platform.engines.resolver import ModelResolver, paddleocr_version
from ocr_platform.engines.settings import PaddleSettings
from ocr_platform.engines.text_layer_choice import TextLayerChoice

logger = logging.getLogger(__name__)

PipelineFactory = Callable[..., Any]

#: Seconds a model hub has to accept a connection before ``unreachable_hub`` says that none answers.
HUB_CHECK_TIMEOUT = 1.5
#: PaddleX's model hosters besides Hugging Face (``paddlex.inference.utils.official_models``).
PADDLEX_HOSTERS = ("aistudio.baidu.com", "modelscope.cn", "paddle-model-ecology.bj.bcebos.com")


def hub_addresses() -> list[tuple[str, int]]:
    """Where PaddleX would download a model from: its hosters (the Hugging Face endpoint as
    ``PADDLE_PDX_HUGGING_FACE_ENDPOINT`` sets it), or the HTTPS proxy when one is set."""
    proxy = os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy")
    if proxy:
        parts = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
        return [(parts.hostname or "", parts.port or 80)]
    hugging_face = urlsplit(os.environ.get("PADDLE_PDX_HUGGING_FACE_ENDPOINT", "https://huggingface.co"))
    return [(hugging_face.hostname or "huggingface.co", hugging_face.port or 443), *((host, 443) for host in PADDLEX_HOSTERS)]


def unreachable_hub(timeout: float = HUB_CHECK_TIMEOUT, addresses: Sequence[tuple[str, int]] | None = None) -> str | None:
    """``None`` when some model hub (``hub_addresses``) accepts a TCP connection within ``timeout`` seconds;
    else why none does, per host. PaddleX would otherwise spend about 25 s failing to download on an offline
    machine. The hosts are tried at once on daemon threads, so a name lookup that hangs costs ``timeout``."""
    addresses = list(addresses if addresses is not None else hub_addresses())
    answers: queue.Queue[tuple[str, str | None]] = queue.Queue()

    def connect(host: str, port: int) -> None:
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            answers.put((host, None))
        except OSError as err:
            answers.put((host, str(err) or type(err).__name__))

    for host, port in addresses:
        threading.Thread(target=connect, args=(host, port), daemon=True).start()
    deadline = time.monotonic() + timeout
    failures: dict[str, str] = {}
    while len(failures) < len(addresses):
        try:
            host, error = answers.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            break
        if error is None:
            return None
        failures[host] = error
    by_error: dict[str, list[str]] = {}
    for host, _ in addresses:
        by_error.setdefault(failures.get(host, f"no answer within {timeout:g} s"), []).append(host)
    return "; ".join(f"{', '.join(hosts)}: {error}" for error, hosts in by_error.items())


class LayoutPipelineEngine:
    """A PaddleOCR layout-parsing pipeline behind the ``Engine`` interface, with the fallback described above.

    Args:
        settings: how the pipeline runs (default: ``PaddleSettings.from_env()``; ``inference_engine`` is
            set to ``paddle``).
        pipeline_factory: the pipeline class (default: the subclass's PaddleOCR class).
        resolver: where model weights come from (default: ``ModelResolver(settings)``).

    Attributes:
        pipeline: the built pipeline; ``None`` when a fallback runs instead.
        fallback: the engine that runs in its place, or ``None``.
        fallback_reason: why the pipeline could not be built, for the ``engine_fallback`` warning.
    """

    #: The pipeline and its models, for ``engine`` and the fallback warning: class attributes, or set per
    #: instance before ``__init__`` runs where they depend on configuration (``paddleocr-vl``'s version).
    name: str = ""
    models: Sequence[str] = ()
    #: Whether every job on this pipeline reads forms (``key_values``, ``selection_marks``), asked or not.
    forms: bool = False

    def __init__(
        self,
        settings: PaddleSettings | None = None,
        *,
        pipeline_factory: PipelineFactory | None = None,
        resolver: ModelResolver | None = None,
    ) -> None:
        self.settings = replace(settings or PaddleSettings.from_env(), inference_engine="paddle")
        self.resolver = resolver or ModelResolver(self.settings)
        self.pipeline: Any = None
        self.fallback: Engine | None = None
        self.fallback_reason = ""
        self.orientation: PageOrientation | None = None
        started = time.perf_counter()
        try:
            self.pipeline = self._build(pipeline_factory)
            self.resolver.publish_downloaded()
            self.orientation = shared_page_orientation(self.settings)
        except Exception as err:
            if not self.settings.allow_fallback:
                raise JobError(ErrorCode.ENGINE_UNAVAILABLE, f"{self.name} cannot run here: {err}") from err
            self.fallback_reason = f"{type(err).__name__}: {err}"[:600]
            self.fallback = self._fallback_engine()
            logger.warning("%s unavailable (%s); %s runs instead", self.name, err, self.fallback.info["name"])
        self.load_seconds = time.perf_counter() - started
        self.info = EngineInfo(name=self.name, models=list(self.models), version=paddleocr_version())

    def _build(self, factory: PipelineFactory | None) -> Any:
        """The pipeline, built with the resolved models; raises when it cannot be built here."""
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

    def _predict_kwargs(self, language: str, options: EngineOptions) -> dict[str, Any]:
        """Extra keyword arguments for the pipeline's ``predict`` (none by default)."""
        return {}

    def _engine_info(self, options: EngineOptions, *, layers: Sequence[str] = ()) -> EngineInfo:
        """``engine`` for a job: the pipeline's models, the page orientation model when it ran, and the PDF text
        layer's readers when some page's text came from it (``layers``)."""
        models = [model for model in self.models if options.orientation or model != TEXTLINE_ORIENTATION_MODEL]
        if options.orientation and self.orientation is not None:
            models.append(self.orientation.label)
        models += layers
        return EngineInfo(name=self.name, models=models, version=self.info["version"])

    def predict(
        self,
        path: Path,
        *,
        language: str = defaults.LANGUAGE,
        pages: str | None = None,
        options: dict[str, Any] | None = None,
        on_page: ProgressCallback | None = None,
    ) -> EngineOutput:
        """Read ``pages`` of the document at ``path``; ``on_page(done, total)`` reports progress."""
        if self.fallback is not None:
            if self.forms:  # the substitute reads forms too, as this pipeline would have
                options = {**(options or {}), "features": sorted({*(options or {}).get("features", []), "forms"})}
            return self._predict_with(self.fallback, path, language=language, pages=pages, options=options, on_page=on_page)
        chosen = parse_options(options)
        pipeline, predict_kwargs = self.pipeline, self._predict_kwargs(language, chosen)

        def read_page(image: PageImage) -> PageReading:
            [res] = list(pipeline.predict(image.bgr(), **predict_kwargs))
            return PageReading(content=layout_page_content(res), raw={"result": raw_result(res)})

        choice = TextLayerChoice(layout=True) if chosen.text_layer == "auto" else None
        read = read_pages(
            path, pages=pages, limits=self.settings.intake, read_page=read_page, on_page=on_page,
            orientation=self.orientation if chosen.orientation else None, text_layer=choice,
            forms=self.forms or chosen.forms,
        )
        merge_continued_tables(read.pages)  # a table that runs on over pages: one table (core.tables)
        return EngineOutput(
            pages=read.pages, raw={"pipeline": self.name, "pages": read.raw_pages},
            engine=self._engine_info(chosen, layers=layer_labels(read.pages, read.raw_pages)), timings=read.timings,
            pages_failed=read.pages_failed, warnings=repaired_warning(choice.repaired if choice is not None else {}),
        )

    def _predict_with(self, fallback: Engine, path: Path, **kwargs: Any) -> EngineOutput:
        """``fallback``'s output, its ``engine`` naming what ran and an ``engine_fallback`` warning saying why."""
        output = fallback.predict(path, **kwargs)
        ran = output.engine or fallback.info
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
