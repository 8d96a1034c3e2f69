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
