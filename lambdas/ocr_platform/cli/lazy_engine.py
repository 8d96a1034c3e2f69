"""The engine of ``ocr-platform ocr``, built only when a page needs it.

The command decides a file's type and reads an Office or HTML file's own text before any model is wanted, so a
file no route reads is refused at once and a DOCX without pictures loads no model. A job's processor keeps its
engine warm instead; this is for a process that reads one file and exits.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ocr_platform.core import defaults
from ocr_platform.core.environment import patched_environment
from ocr_platform.core.results import EngineInfo
from ocr_platform.engines import Engine, EngineOutput, engine_class_name, get_engine


class LazyEngine:
    """Stands in for ``get_engine(model)`` (under ``environment``) until ``predict`` first needs the engine."""

    def __init__(self, model: str, environment: Mapping[str, str]) -> None:
        self.model = model
        self.environment = dict(environment)
        self.load_seconds = 0.0
        self._engine: Engine | None = None

    def _loaded(self) -> Engine:
        if self._engine is None:
            started = time.perf_counter()
            with patched_environment(self.environment):
                self._engine = get_engine(self.model)
            self.load_seconds = time.perf_counter() - started
        return self._engine

    @property
    def info(self) -> EngineInfo:
        """The engine's own info once loaded; before that its name with no model (none has run)."""
        if self._engine is not None:
            return self._engine.info
        return EngineInfo(name=engine_class_name(self.model), models=[], version="")

    @info.setter
    def info(self, value: EngineInfo) -> None:
        self._loaded().info = value

    def predict(
        self,
        path: Path,
        *,
        language: str = defaults.LANGUAGE,
        pages: str | None = None,
        options: dict[str, Any] | None = None,
        on_page: Callable[[int, int], None] | None = None,
    ) -> EngineOutput:
        kwargs: dict[str, Any] = {"language": language, "pages": pages, "options": options}
        if on_page is not None:
            kwargs["on_page"] = on_page
        return self._loaded().predict(path, **kwargs)
