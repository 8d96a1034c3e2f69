"""A born-digital PDF's text layer in a script the job's recogniser does not read (Hangul, Arabic, Persian with
the default language ``en``) is used as it is, with the page's ``script`` and a ``language_mismatch`` warning;
a layer with symbols (®) is used where it is true; a recogniser that cannot be had fails ``model_unavailable``."""

from __future__ import annotations

import json
import time
import unicodedata
from pathlib import Path

import pytest

from ocr_platform.core.text_metrics import word_f1
from ocr_platform.cpu.job_runner import ocr_document
from tests.documents import PUBLIC, SCRIPT_LAYER_PDFS


def _layer_text(path: Path, page: int) -> str:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        return str(pdf[page - 1].get_textpage().get_text_range())
    finally:
        pdf.close()


def _read(ppocr, path: Path, pages: str) -> tuple[dict, dict, float]:
    started = time.perf_counter()
    result, raw = ocr_document(path, job_id="t", model="pp-ocrv5", engine=ppocr, pages=pages)
    return result, raw, time.perf_counter() - started


@pytest.mark.parametrize(
    ("name", "pages", "script", "language"),
    SCRIPT_LAYER_PDFS,
)
def test_a_layer_in_a_script_the_recogniser_cannot_read_is_used_with_its_script_and_a_warning(
    ppocr, name: str, pages: str, script: str, language: str | None
) -> None:
    path = PUBLIC / name
    result, raw, seconds = _read(ppocr, path, pages)

    for page, raw_page in zip(result["pages"], raw["pages"], strict=True):
        assert page["text_source"] == "text_layer", raw_page
        assert page["script"] == script and page.get("language") == language
        assert raw_page["text_layer"]["layer_check"] == "script_not_covered"
        reference = _layer_text(path, page["page"])
        text = "\n".join(line["text"] for line in page["lines"])
        assert word_f1(reference, text) >= 0.95
        assert all(line["score"] == 1.0 for line in page["lines"])
    [warning] = result["warnings"]
    assert (warning["code"], warning["requested"], warning["ran"]) == ("language_mismatch", "en", script)
    print(json.dumps({"document": name, "script": script, "seconds_per_page": round(seconds / len(result["pages"]), 3)}))


def test_right_to_left_lines_are_in_logical_order_and_read_right_to_left(ppocr) -> None:
    result, _, _ = _read(ppocr, PUBLIC / "persian-pure-words.pdf", "2-3")
    prose, table = result["pages"]
    # Logical order, as typed: the first letter of a line is its rightmost on the page.
    assert prose["lines"][1]["text"].startswith("زبان فارسی زنده و پویا")
    assert all(unicodedata.bidirectional(line["text"][0]) in ("AL", "R") for line in prose["lines"] if line["text"][0].isalpha())
    # Reading order: the cells of the table's header row come from right to left.
    # (the first two header cells stand closer than ``LINE_GAP`` line heights: one line, as in a left-to-right table)
    # (``عربی‌زده`` with its zero-width non-joiner, as typed: XeLaTeX draws it as a space glyph inside the word)
    header = next(i for i, line in enumerate(table["lines"]) if line["text"].startswith("عربی\u200cزده"))
    row = table["lines"][header : header + 3]
    assert [line["text"] for line in row] == ["عربی\u200cزده فارسی خالص", "انگلیسی", "توضیح کاربرد"]
    lefts = [min(x for x, _ in line["polygon"]) for line in row]
    assert lefts == sorted(lefts, reverse=True)


def test_a_true_layer_with_registered_signs_is_used_and_keeps_them(ppocr) -> None:
    path = PUBLIC / "pypdf-issue-604-cover.pdf"
    result, raw, _ = _read(ppocr, path, "1")

    [page] = result["pages"]
    assert page["text_source"] == "text_layer", raw["pages"][0]
    assert page["script"] == "Latin" and "language" not in page
    assert "(NCCN®)" in result["text"] and "NCCN°" not in result["text"]
    assert word_f1(_layer_text(path, 1), result["text"]) >= 0.95
    assert result["warnings"] == []


def test_a_language_whose_recogniser_is_not_here_fails_model_unavailable_in_one_line(ppocr, tmp_path: Path, capsys) -> None:
    from ocr_platform.cli.commands import main

    started = time.perf_counter()
    status = main(["ocr", str(PUBLIC / "hangul-jamo.pdf"), "--model", "pp-ocrv5", "--lang", "korean"])

    err = capsys.readouterr().err.strip().splitlines()
    assert status == 1
    assert len(err) == 1 and err[0].startswith("error: model_unavailable: The model korean_PP-OCRv5_mobile_rec "), err
    assert "processor_bake_models" in err[0] and "ocr-platform models seed" in err[0]
    assert time.perf_counter() - started < 10
