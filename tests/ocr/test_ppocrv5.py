"""PP-OCRv5 on the real weights: recognised text (character error rate), polygons and page numbering."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ocr_platform.cli import commands as cli
from ocr_platform.cpu.job_runner import ocr_document
from tests.documents import CHINESE_LINES, ENGLISH_PAGES, character_error_rate
from tests.ocr import LOCAL_ORIENTATION_MODELS

MAX_CER = 0.02


def _run(engine, path: Path, **kwargs):
    result, raw = ocr_document(path, job_id="t", model="pp-ocrv5", engine=engine, **kwargs)
    return result, raw


def _assert_page_text(page: dict, expected_lines: list[str]) -> None:
    got = "\n".join(line["text"] for line in page["lines"])
    assert character_error_rate(got, "\n".join(expected_lines)) <= MAX_CER, got


def _assert_polygons_inside(page: dict) -> None:
    for line in page["lines"]:
        assert len(line["polygon"]) == 4
        for x, y in line["polygon"]:
            assert -2 <= x <= page["width"] + 2 and -2 <= y <= page["height"] + 2
        assert 0.5 <= line["score"] <= 1.0


def test_png_text_lines_polygons_and_scores(ppocr, docs: dict[str, Path]) -> None:
    result, raw = _run(ppocr, docs["png"])

    [page] = result["pages"]
    assert (page["page"], page["width"], page["height"], page["scale"]) == (1, 1240, 1754, 1.0)
    _assert_page_text(page, ENGLISH_PAGES[0])
    _assert_polygons_inside(page)
    first = page["lines"][0]["polygon"]
    assert 100 <= first[0][0] <= 140 and 140 <= first[0][1] <= 185  # drawn at (120, 160) on the page
    assert result["engine"] == {
        "name": "PP-OCRv5", "models": ["PP-OCRv5_mobile_det", "PP-OCRv5_mobile_rec", *LOCAL_ORIENTATION_MODELS],
        "version": result["engine"]["version"],
    }
    assert raw["pages"][0]["result"]["rec_texts"]


def test_image_pdf_every_page(ppocr, docs: dict[str, Path]) -> None:
    result, _ = _run(ppocr, docs["image_pdf"])

    assert [p["page"] for p in result["pages"]] == [1, 2]
    for page, expected in zip(result["pages"], ENGLISH_PAGES, strict=False):
        assert page["scale"] == 2.0
        _assert_page_text(page, expected)
    assert result["text"].count("\f") == 1


def test_vector_pdf_selected_pages_keep_their_numbers(ppocr, docs: dict[str, Path]) -> None:
    result, _ = _run(ppocr, docs["vector_pdf"], pages="1,3")

    assert result["page_count"] == 2
    assert [p["page"] for p in result["pages"]] == [1, 3]
    _assert_page_text(result["pages"][0], ENGLISH_PAGES[0])
    _assert_page_text(result["pages"][1], ENGLISH_PAGES[2])
    assert result["pages"][0]["width"] == 1191  # A4 (595.28 pt) at scale 2


def test_multi_page_tiff(ppocr, docs: dict[str, Path]) -> None:
    result, _ = _run(ppocr, docs["tiff"], pages="2-3")

    assert [p["page"] for p in result["pages"]] == [2, 3]
    _assert_page_text(result["pages"][0], ENGLISH_PAGES[1])
    _assert_page_text(result["pages"][1], ENGLISH_PAGES[2])


def test_jpeg(ppocr, docs: dict[str, Path]) -> None:
    result, _ = _run(ppocr, docs["jpeg"])
    _assert_page_text(result["pages"][0], ENGLISH_PAGES[1])


def test_chinese_script(ppocr, docs: dict[str, Path]) -> None:
    result, _ = _run(ppocr, docs["chinese"], language="ch")

    _assert_page_text(result["pages"][0], CHINESE_LINES)
    assert "光学字符识别" in result["text"]


def test_unsupported_language_fails_with_its_code(ppocr, docs: dict[str, Path]) -> None:
    from ocr_platform.core.errors import JobError

    with pytest.raises(JobError) as info:
        _run(ppocr, docs["png"], language="klingon")
    assert info.value.code == "unsupported_language"


def test_cli_ocr_writes_result_json_and_reports_progress(ppocr, docs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "result.json"

    assert cli.main(["ocr", str(docs["vector_pdf"]), "--model", "pp-ocrv5", "--pages", "2-3", "--output", str(output)]) == 0

    result = json.loads(output.read_text())
    assert [p["page"] for p in result["pages"]] == [2, 3]
    _assert_page_text(result["pages"][0], ENGLISH_PAGES[1])
    err = capsys.readouterr().err
    assert "page 2/2" in err and "2 page(s)" in err


@pytest.mark.parametrize(("key", "code"), [("encrypted", "encrypted_pdf")])
def test_cli_ocr_fails_with_the_error_code(ppocr, docs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, code: str) -> None:
    assert cli.main(["ocr", str(docs[key]), "--model", "pp-ocrv5", "--output", str(tmp_path / "r.json")]) == 1
    assert f"error: {code}:" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_cli_ocr_refuses_a_page_range_outside_the_document(ppocr, docs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ocr", str(docs["png"]), "--model", "pp-ocrv5", "--pages", "2"]) == 1
    assert "invalid_pages" in capsys.readouterr().err


def test_paddle_inference_engine_reads_the_same_page(ocr_settings, docs: dict[str, Path]) -> None:
    """The other inference engine (Paddle Inference with oneDNN, paddlepaddle 3.2.2) on the same weights."""
    from dataclasses import replace

    from ocr_platform.engines.ppocrv5 import PPOCRv5Engine

    engine = PPOCRv5Engine(replace(ocr_settings, inference_engine="paddle"))
    result, _ = _run(engine, docs["png"])

    assert result["engine"]["version"].endswith("(paddle)")
    _assert_page_text(result["pages"][0], ENGLISH_PAGES[0])
