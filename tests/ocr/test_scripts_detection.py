"""The script check's choice between recognisers (``engines.script_detection.ScriptCheck``), with stand-in crop
readers: plumbing only (which recogniser wins, what the page and the warning say). The real recognisers' scores
that ``SCRIPT_SCORE`` separates are measured in tests/ocr/test_scripts_auto.py and benchmarks/scripts.py."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ocr_platform.engines.script_detection import SAMPLE_LINES, SCRIPT_SCORE, UNKNOWN_SCRIPT, ScriptCheck

MULTILINGUAL, KOREAN, LATIN = "PP-OCRv5_mobile_rec", "korean_PP-OCRv5_mobile_rec", "latin_PP-OCRv5_mobile_rec"
PAGE = np.full((400, 600, 3), 255, dtype=np.uint8)


def _lines(score: float, count: int = 8) -> list[dict[str, Any]]:
    return [{"text": "QS一≠□L", "score": score, "polygon": [[10, 40 * i + 5], [500, 40 * i + 5], [500, 40 * i + 30], [10, 40 * i + 30]]} for i in range(count)]


def _reader(text: str, score: float, seen: list[int]):
    def read(crops: Sequence[Any]) -> list[tuple[str, float]]:
        seen.append(len(crops))
        return [(text, score)] * len(crops)

    return lambda: read


def test_auto_reads_a_page_with_the_recogniser_that_reads_its_sample_best() -> None:
    seen: list[int] = []
    check = ScriptCheck("auto", {MULTILINGUAL: _reader("??", 0.5, seen), KOREAN: _reader("한글 문서", 0.97, seen), LATIN: _reader("HaL", 0.6, seen)})

    verdict = check.check(1, PAGE, _lines(0.52), MULTILINGUAL)

    assert (verdict.recognizer, verdict.script) == (KOREAN, "Hangul")
    assert verdict.page_content([])["language"] == "korean"
    assert seen == [SAMPLE_LINES, SAMPLE_LINES]  # the job's own recogniser is not asked again
    assert verdict.raw["probes"] == {MULTILINGUAL: 0.52, KOREAN: 0.97, LATIN: 0.6}
    assert check.warnings({}) == []


def test_a_named_language_keeps_its_reading_and_warns_naming_the_script_another_recogniser_reads() -> None:
    check = ScriptCheck("en", {MULTILINGUAL: _reader("??", 0.5, []), KOREAN: _reader("한글 문서", 0.97, [])})

    verdict = check.check(2, PAGE, _lines(0.52), MULTILINGUAL)

    assert (verdict.recognizer, verdict.script) == (MULTILINGUAL, "Hangul")
    [warning] = check.warnings({"Hangul": [1]})  # a page read from its text layer, in the same script
    assert (warning["code"], warning["ran"]) == ("language_mismatch", "Hangul")
    assert warning["message"].startswith("Pages 1, 2 are in Hangul script") and "--lang korean" in warning["message"]


def test_a_page_no_recogniser_reads_is_unknown_and_a_poor_page_in_the_jobs_script_is_no_mismatch() -> None:
    check = ScriptCheck("en", {MULTILINGUAL: _reader("??", 0.5, []), LATIN: _reader("Rechnung", SCRIPT_SCORE - 0.1, [])})
    assert check.check(1, PAGE, _lines(0.5), MULTILINGUAL).script == UNKNOWN_SCRIPT
    [warning] = check.warnings({})
    assert warning["ran"] == UNKNOWN_SCRIPT and "every recogniser installed here" in warning["message"]

    latin = ScriptCheck("en", {MULTILINGUAL: _reader("??", 0.5, []), LATIN: _reader("Rechnung über", 0.95, [])})
    assert latin.check(1, PAGE, _lines(0.6), MULTILINGUAL).script == "Latin"
    assert latin.warnings({}) == []  # the job's recogniser reads Latin: a poor page, not a mismatch


def test_a_page_read_well_or_with_too_little_text_is_not_probed() -> None:
    seen: list[int] = []
    check = ScriptCheck("auto", {MULTILINGUAL: _reader("x", 0.5, seen), KOREAN: _reader("한", 0.99, seen)})
    assert check.check(1, PAGE, [{**line, "text": "Invoice"} for line in _lines(0.97)], MULTILINGUAL).script == "Latin"
    assert check.check(2, PAGE, _lines(0.3, count=1), MULTILINGUAL).recognizer == MULTILINGUAL
    assert seen == [] and check.seconds == 0.0


def test_a_right_to_left_recogniser_gives_each_line_in_the_order_it_is_typed() -> None:
    """PaddleX reads a line from the left of its image to the right: an Arabic-script line comes out mirrored. Every
    line of a real Persian page (persian-pure-words.pdf page 2, its text layer), mirrored as the recogniser gives it,
    is put back as typed; a Latin line is left alone."""
    from pathlib import Path

    import pypdfium2 as pdfium
    from bidi import get_display

    from ocr_platform.document.text_layer import read_text_layer
    from ocr_platform.engines.scripts import reads_right_to_left
    from ocr_platform.engines.text_pipeline import LogicalOrder

    pdf = pdfium.PdfDocument(str(Path(__file__).resolve().parents[1] / "documents" / "public" / "persian-pure-words.pdf"))
    try:
        page = pdf[1]
        typed = [line.text for line in read_text_layer(page, page.get_textpage(), scale=1.0).lines] + ["Invoice 2026"]
    finally:
        pdf.close()
    mirrored = [{"rec_text": str(get_display(text, base_dir="R")), "rec_score": 0.95} for text in typed]
    assert mirrored[1]["rec_text"] != typed[1]

    read = LogicalOrder(lambda crops, **_: [dict(result) for result in mirrored])([None] * len(typed))

    assert [result["rec_text"] for result in read] == typed
    assert reads_right_to_left("arabic_PP-OCRv5_mobile_rec") and not reads_right_to_left("korean_PP-OCRv5_mobile_rec")


def test_lines_of_a_right_to_left_page_are_read_from_the_right() -> None:
    def line(text: str, x0: float, y0: float) -> dict[str, Any]:
        return {"text": text, "score": 0.95, "polygon": [[x0, y0], [x0 + 90, y0], [x0 + 90, y0 + 24], [x0, y0 + 24]]}

    check = ScriptCheck("auto", {MULTILINGUAL: _reader("??", 0.4, []), "arabic_PP-OCRv5_mobile_rec": _reader("انواع الخطوط", 0.95, [])})
    verdict = check.check(1, PAGE, _lines(0.4), MULTILINGUAL)
    assert verdict.script == "Arabic"

    detected = [line("سوم", 0, 0), line("دوم", 100, 3), line("اول", 200, 0), line("چهارم", 200, 50)]  # the detector: left first
    assert [item["text"] for item in verdict.page_content(detected)["lines"]] == ["اول", "دوم", "سوم", "چهارم"]


def test_a_region_read_beside_a_text_layer_warns_of_nothing() -> None:
    """A picture region OCR'd beside a page's layer may read poorly; the page's text and script are the layer's."""
    check = ScriptCheck("en", {MULTILINGUAL: _reader("??", 0.5, [])})
    check.check(4, PAGE, _lines(0.45), MULTILINGUAL)  # a region of page 4, whose layer was used
    check.check(5, PAGE, _lines(0.45), MULTILINGUAL)  # page 5, a scan

    [warning] = check.warnings({}, scanned={5})
    assert warning["ran"] == UNKNOWN_SCRIPT and warning["message"].startswith("Page 5 ")
    assert check.warnings({}, scanned=set()) == []
