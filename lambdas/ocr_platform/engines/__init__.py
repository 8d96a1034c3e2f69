"""The engine interface: how the processor and the endpoint run a model on a document.

An engine is built once per process (models load in the constructor) and reused by every warm
invocation. ``predict`` takes a local file and returns result pages plus the engine's raw output.

Engines are registered by model name; the real PaddleOCR engines live in their own modules and are
imported only when first asked for, so the zip Lambdas never import paddle:

- ``ppocrv5`` (``pp-ocrv5``), ``ppocrv6`` (``pp-ocrv6``), ``ppstructurev3`` (``pp-structurev3``),
  ``paddleocr_vl`` (``paddleocr-vl``): one module per engine; the two PP-OCR engines share ``ppocr``
  (with ``text_pipeline``; ``pp-ocrv6`` runs on ``faster_paddle`` by default), the two layout engines share ``layout`` (and its fallback), and
  ``local_structure`` (with ``regions``) is PP-StructureV3's local substitute;
- what they share: ``settings`` (``PaddleSettings``, the ``OCR_*`` environment), ``options`` (the job's
  engine options), ``languages`` (the language -> recognition model table), ``resolver`` (model
  directories and pipeline arguments), ``orientation`` (pages turned upright, by ``onnx_classifier`` where the weights are ONNX), ``page_loop`` (intake,
  orientation, timing and progress for every page), ``conversion`` (PaddleOCR results to result.json
  lines, blocks and Markdown) and ``native_reading`` (Office and HTML files: their text from the file, their
  embedded pictures through the job's engine).

>>> class Echo:
...     info = EngineInfo(name="echo", models=[], version="0")
...     def predict(self, path, *, language="en", pages=None, options=None):
...         return EngineOutput(pages=[], raw={})
>>> register_engine("echo-model", Echo)
>>> get_engine("echo-model").info["name"]
'echo'
"""

from __future__ import annotations

import gc
import importlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ocr_platform.core import defaults
from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.page_failures import PageFailure
from ocr_platform.core.results import EngineInfo, Page, ResultWarning


@dataclass
class EngineOutput:
    """What one ``predict`` call produced.

    Attributes:
        pages: result pages in the result.json page shape.
        raw: the engine's own output, saved beside result.json as raw.json.
        engine: the engine that really ran, when it differs from ``Engine.info`` (e.g. a fallback model).
        timings: named durations in seconds.
        warnings: what the caller must know about this output, copied to result.json and the job item;
            an engine that ran in place of the requested one says so with an ``engine_fallback`` warning
            (``ocr_platform.core.results.engine_fallback_warning``).
        pages_failed: the pages that could not be read (``page_loop.ReadPages.pages_failed``); the result names
            them and the job completes without them, up to a share (``ocr_platform.core.page_failures``).
    """

    pages: list[Page]
    raw: Any = None
    engine: EngineInfo | None = None
    timings: dict[str, float] = field(default_factory=dict)
    warnings: list[ResultWarning] = field(default_factory=list)
    pages_failed: list[PageFailure] = field(default_factory=list)


class Engine(Protocol):
    info: EngineInfo

    def predict(
        self,
        path: Path,
        *,
        language: str = defaults.LANGUAGE,
        pages: str | None = None,
        options: dict[str, Any] | None = None,
        on_page: Callable[[int, int], None] | None = None,
    ) -> EngineOutput:
        """Read ``pages`` of the document at ``path``; ``on_page(done, total)`` reports progress."""
        ...


EngineFactory = Callable[[], Engine]

# model name -> "module:attribute" of the factory, imported on first use.
_LAZY_FACTORIES: dict[str, str] = {
    "pp-ocrv5": "ocr_platform.engines.ppocrv5:PPOCRv5Engine",
    "pp-ocrv6": "ocr_platform.engines.ppocrv6:PPOCRv6Engine",
    "pp-structurev3": "ocr_platform.engines.ppstructurev3:PPStructureV3Engine",
    "paddleocr-vl": "ocr_platform.engines.paddleocr_vl:PaddleOCRVLEngine",
}
#: Models whose engines ``preload_engines`` builds by default (comma-separated), e.g. ``pp-ocrv5``.
PRELOAD_ENV = "OCR_PRELOAD_MODELS"
logger = logging.getLogger(__name__)
_factories: dict[str, EngineFactory] = {}
_instances: dict[str, Engine] = {}
_lock = threading.RLock()  # re-entrant: an engine may build its fallback engine through the registry


def register_engine(model: str, factory: EngineFactory) -> None:
    """Use ``factory`` to build the engine for ``model`` (replaces any engine already built)."""
    with _lock:
        _factories[model] = factory
        _instances.pop(model, None)


def get_engine(model: str) -> Engine:
    """The engine for ``model``, built on first use and cached for the life of the process."""
    with _lock:
        if model in _instances:
            return _instances[model]
        with collector_paused():
            factory = _factories.get(model) or _import_factory(model)
            try:
                engine = factory()
            except JobError:
                raise
            except Exception as err:  # a model that cannot load fails the job, it does not crash the runtime
                raise JobError(ErrorCode.ENGINE_UNAVAILABLE, f"The {model} engine could not start: {err}") from err
        _instances[model] = engine
        return engine


@contextmanager
def collector_paused() -> Iterator[None]:
    """Collect, pause Python's cyclic garbage collector while an engine loads, then freeze what it loaded.

    Loading PP-OCRv5 creates about 400,000 long-lived objects, because PaddleX imports most of its
    library at module level. With the collector on, the collections that all those allocations trigger
    walk them again and again and find about 3,000 objects to free. That costs about 0.4 s of a 3 s
    cold start (benchmarks/cold_start.py). ``gc.freeze`` then moves everything loaded out of every later
    collection, so the first page does not pay for the pause either, and the process exits 0.5 s
    sooner. The collection first (about 0.01 s in a new process) keeps the garbage that a freeze makes
    permanent to what the load itself left, those 3,000 objects. A nested use, or a collector that is
    already off, is left alone.
    """
    if not gc.isenabled():
        yield
        return
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def preload_engines(models: Iterable[str] | None = None) -> dict[str, str | None]:
    """Build the engines for ``models`` now; returns each model's error message, ``None`` when it is ready.

    For a Lambda's init phase: ``models`` defaults to ``$OCR_PRELOAD_MODELS`` (comma-separated; the
    processor image sets ``pp-ocrv5``), so the imports and the model load happen before the first
    invocation instead of inside it. An engine that cannot be built is logged, not raised: the container
    still takes jobs, ``get_engine`` tries again when a job asks for that model, and the job fails
    ``engine_unavailable`` if it still cannot start.

    >>> preload_engines(["no-such-model"])
    {'no-such-model': "unknown_model: No engine is registered for model 'no-such-model'."}
    """
    if models is None:
        models = [m.strip() for m in os.environ.get(PRELOAD_ENV, "").split(",") if m.strip()]
    outcome: dict[str, str | None] = {}
    for model in models:
        started = time.perf_counter()
        try:
            get_engine(model)
        except JobError as err:
            logger.warning("Engine %s not preloaded; jobs for it will try again: %s", model, err)
            outcome[model] = str(err)
        else:
            logger.info("Engine %s preloaded in %.2f s", model, time.perf_counter() - started)
            outcome[model] = None
    return outcome


def engine_class_name(model: str) -> str:
    """The name ``model``'s engine gives in ``EngineInfo``, read from its factory without building it (the model's
    own name when the factory has none or cannot be imported here)."""
    try:
        factory = _factories.get(model) or _import_factory(model)
    except JobError:
        return model
    name = getattr(factory, "name", None)
    return name if isinstance(name, str) and name else model


def _import_factory(model: str) -> EngineFactory:
    target = _LAZY_FACTORIES.get(model)
    if target is None:
        raise JobError(ErrorCode.UNKNOWN_MODEL, f"No engine is registered for model {model!r}.")
    module_name, _, attribute = target.partition(":")
    try:
        return getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as err:
        raise JobError(
            ErrorCode.ENGINE_UNAVAILABLE,
            f"The {model} engine is not installed in this runtime ({err}); run it in the processor image.",
        ) from err
