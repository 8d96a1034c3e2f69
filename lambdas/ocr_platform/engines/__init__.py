"""The engine interface: how the processor and the endpoint run a model on a document.

An engine is built once per process (models load in the constructor) and reused by every warm
invocation. ``predict`` takes a local file and returns result pages plus the engine's raw output.

Engines are registered by model name; the real PaddleOCR engines live in their own modules and are
imported only when first asked for, so the zip Lambdas never import paddle.

>>> class Echo:
...     info = EngineInfo(name="echo", models=[], version="0")
...     def predict(self, path, *, language="en", pages=None, options=None):
...         return EngineOutput(pages=[], raw={})
>>> register_engine("echo-model", Echo)
>>> get_engine("echo-model").info["name"]
'echo'
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from ocr_platform.errors import ErrorCode, JobError
from ocr_platform.results import EngineInfo, Page


@dataclass
class EngineOutput:
    """What one ``predict`` call produced.

    Attributes:
        pages: result pages in the result.json page shape.
        raw: the engine's own output, saved beside result.json as raw.json.
        engine: the engine that really ran, when it differs from ``Engine.info`` (e.g. a fallback model).
        timings: named durations in seconds.
    """

    pages: list[Page]
    raw: Any = None
    engine: EngineInfo | None = None
    timings: dict[str, float] = field(default_factory=dict)


class Engine(Protocol):
    info: EngineInfo

    def predict(
        self,
        path: Path,
        *,
        language: str = "en",
        pages: str | None = None,
        options: dict[str, Any] | None = None,
        on_page: Callable[[int, int], None] | None = None,
    ) -> EngineOutput:
        """Read ``pages`` of the document at ``path``; ``on_page(done, total)`` reports progress."""
        ...


EngineFactory = Callable[[], Engine]

# model name -> "module:attribute" of the factory, imported on first use.
_LAZY_FACTORIES: dict[str, str] = {
    "pp-ocrv5": "ocr_platform.engines.paddle:PPOCRv5Engine",
    "pp-structurev3": "ocr_platform.engines.paddle:PPStructureV3Engine",
    "paddleocr-vl": "ocr_platform.engines.paddle:PaddleOCRVLEngine",
}
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
        factory = _factories.get(model) or _import_factory(model)
        try:
            engine = factory()
        except JobError:
            raise
        except Exception as err:  # a model that cannot load fails the job, it does not crash the runtime
            raise JobError(ErrorCode.ENGINE_UNAVAILABLE, f"The {model} engine could not start: {err}") from err
        _instances[model] = engine
        return engine


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
