"""Registering a test's engine for a model without losing what was registered before.

A session-scoped fixture (tests/ocr/conftest.py) registers the real PP-OCRv5 engine; a handler test that registers
its own engine for the same model must put the real one back, or an OCR test that runs after it gets none.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ocr_platform import engines
from ocr_platform.engines import EngineFactory


@contextmanager
def registered_engine(model: str, factory: EngineFactory) -> Iterator[None]:
    """``factory`` builds the engine for ``model`` inside the block; the registration before it is restored after."""
    previous_factory = engines._factories.get(model)
    previous_instance = engines._instances.get(model)
    engines.register_engine(model, factory)
    try:
        yield
    finally:
        engines._factories.pop(model, None)
        engines._instances.pop(model, None)
        if previous_factory is not None:
            engines._factories[model] = previous_factory
        if previous_instance is not None:
            engines._instances[model] = previous_instance
