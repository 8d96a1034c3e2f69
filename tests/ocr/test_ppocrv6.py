"""The ``pp-ocrv6`` route on real PP-OCRv6 weights: tiny and small as faster-paddle carries them (the default
backend), small on PaddleOCR's own pipeline from the ONNX files rapidocr 3.9.2 ships."""

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


@pytest.mark.parametrize(("options", "models", "version"), [
    ({}, ["PP-OCRv6_tiny_det", "PP-OCRv6_tiny_rec"], "faster-paddle 1.0.4"),
    ({"variant": "small"}, ["PP-OCRv6_small_det", "PP-OCRv6_small_rec"], "faster-paddle 1.0.4"),
    ({"backend": "paddleocr", "variant": "small"}, ["PP-OCRv6_small_det", "PP-OCRv6_small_rec"], "paddleocr 3.7"),
])
def test_reads_every_page_of_a_pdf_on_each_backend_and_names_the_one_that_ran(
    ppocr_v6, docs: dict[str, Path], options: dict, models: list[str], version: str
) -> None:
    result = _read(ppocr_v6, docs["image_pdf"], options=options)

    assert result["model"] == "pp-ocrv6"
    assert result["engine"]["name"] == "PP-OCRv6"
    assert result["engine"]["models"][:2] == models
    assert result["engine"]["version"].startswith(version)
    for page, expected in zip(result["pages"], ENGLISH_PAGES, strict=False):
        got = "\n".join(line["text"] for line in page["lines"])
        assert character_error_rate(got, "\n".join(expected)) <= 0.02, got
        assert page["rotation"] == 0
        assert all(len(line["polygon"]) == 4 and 0.0 < line["score"] <= 1.0 for line in page["lines"])


@pytest.mark.parametrize("options", [{}, {"backend": "paddleocr", "variant": "small"}])
def test_a_born_digital_pdf_is_read_from_its_text_layer_on_either_backend(ppocr_v6, docs: dict[str, Path], options: dict) -> None:
    result = _read(ppocr_v6, docs["vector_pdf"], options=options)

    assert [page["text_source"] for page in result["pages"]] == ["text_layer"] * len(ENGLISH_PAGES)
    assert result["engine"]["models"][-1].startswith("PDF text layer")


@pytest.mark.parametrize("options", [{}, {"backend": "paddleocr", "variant": "small"}])
def test_an_upside_down_report_reads_as_the_upright_one(ppocr_v6, tmp_path: Path, options: dict) -> None:
    from tests.documents import render_report_page

    reference = " ".join([REPORT_TITLE, *REPORT_PARAGRAPH, *(cell for row in REPORT_TABLE for cell in row)])
    upright = _read(ppocr_v6, _png(render_report_page(), tmp_path / "up.png"), options=options)
    turned = _read(ppocr_v6, _png(render_report_page().transpose(Image.Transpose.ROTATE_180), tmp_path / "down.png"), options=options)

    text = {name: "\n".join(line["text"] for line in r["pages"][0]["lines"]) for name, r in (("up", upright), ("down", turned))}
    assert turned["pages"][0]["rotation"] == 180
    assert word_f1(reference, text["down"]) >= word_f1(reference, text["up"]) - 0.02 >= 0.9
    # The lines are on the page as submitted: upside down, the title's line sits near the page's foot.
    title = next(line for line in turned["pages"][0]["lines"] if REPORT_TITLE.split()[0] in line["text"])
    assert min(y for _, y in title["polygon"]) > turned["pages"][0]["height"] / 2


@pytest.mark.parametrize(("options", "language", "code", "message"), [
    ({"variant": "huge"}, "en", "invalid_options", "must be one of tiny, small, medium"),
    ({"backend": "openvino"}, "en", "invalid_options", "must be one of faster-paddle, paddleocr"),
    # faster-paddle would download medium from a hub at first use: refused, never another size instead.
    ({"variant": "medium"}, "en", "engine_unavailable", "does not run on the faster-paddle backend"),
    # A model that cannot be had here (no cache holds it, no hub answers) is model_unavailable, named with the fixes.
    ({"backend": "paddleocr", "variant": "medium"}, "en", "model_unavailable", "PP-OCRv6_medium_rec is not on this machine"),
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
