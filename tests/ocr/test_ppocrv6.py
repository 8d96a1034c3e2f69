"""The ``pp-ocrv6`` route on real PP-OCRv6 small weights (the ONNX files rapidocr 3.9.2 ships)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from ocr_platform.core.errors import JobError
from ocr_platform.core.text_metrics import word_f1
from ocr_platform.cpu.job_runner import ocr_document
from tests.documents import ENGLISH_PAGES, REPORT_PARAGRAPH, REPORT_TABLE, REPORT_TITLE, character_error_rate


def _read(engine, path: Path, **kwargs) -> dict:
    result, _ = ocr_document(path, job_id="t", model="pp-ocrv6", engine=engine, **kwargs)
    return result


def test_reads_every_page_of_a_pdf_with_the_small_models(ppocr_v6, docs: dict[str, Path]) -> None:
    result = _read(ppocr_v6, docs["image_pdf"])

    assert result["model"] == "pp-ocrv6"
    assert result["engine"]["name"] == "PP-OCRv6"
    assert result["engine"]["models"][:2] == ["PP-OCRv6_small_det", "PP-OCRv6_small_rec"]
    for page, expected in zip(result["pages"], ENGLISH_PAGES, strict=False):
        got = "\n".join(line["text"] for line in page["lines"])
        assert character_error_rate(got, "\n".join(expected)) <= 0.02, got
        assert page["rotation"] == 0


def test_an_upside_down_report_reads_as_the_upright_one(ppocr_v6, tmp_path: Path) -> None:
    from tests.documents import render_report_page

    reference = " ".join([REPORT_TITLE, *REPORT_PARAGRAPH, *(cell for row in REPORT_TABLE for cell in row)])
    upright = _read(ppocr_v6, _png(render_report_page(), tmp_path / "up.png"))
    turned = _read(ppocr_v6, _png(render_report_page().transpose(Image.Transpose.ROTATE_180), tmp_path / "down.png"))

    text = {name: "\n".join(line["text"] for line in r["pages"][0]["lines"]) for name, r in (("up", upright), ("down", turned))}
    assert turned["pages"][0]["rotation"] == 180
    assert word_f1(reference, text["down"]) >= word_f1(reference, text["up"]) - 0.02 >= 0.9


@pytest.mark.parametrize(("options", "language", "code", "message"), [
    ({"variant": "huge"}, "en", "invalid_options", "must be one of tiny, small, medium"),
    # A model that cannot be had here (no cache holds it, no hub answers) is model_unavailable, named with the fixes.
    ({"variant": "medium"}, "en", "model_unavailable", "PP-OCRv6_medium_rec is not on this machine"),
    ({}, "ru", "unsupported_language", "use pp-ocrv5"),
])
def test_what_it_cannot_read_fails_with_a_reason(ppocr_v6, docs: dict[str, Path], options: dict, language: str, code: str, message: str) -> None:
    with pytest.raises(JobError) as caught:
        _read(ppocr_v6, docs["png"], options=options, language=language)
    assert caught.value.code == code
    assert message in caught.value.message


def _png(image: Image.Image, path: Path) -> Path:
    image.save(path, format="PNG")
    return path
