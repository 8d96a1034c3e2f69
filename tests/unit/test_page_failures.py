"""Pages that failed, in the result and across chunks (``core.page_failures``, ``core.results``, ``core.chunks``)."""

from __future__ import annotations

from typing import Any

import pytest

from ocr_platform.core.chunks import merge_chunk_results
from ocr_platform.core.errors import JobError
from ocr_platform.core.page_failures import PageFailure, check_failed_share
from ocr_platform.core.results import EngineInfo, Page, build_result, validate_result

ENGINE = EngineInfo(name="PP-OCRv5", models=[], version="0")


def _page(number: int) -> Page:
    line = {"text": f"p{number}", "polygon": [[0, 0], [1, 0], [1, 1], [0, 1]], "score": 1.0}
    return {"page": number, "width": 10, "height": 10, "scale": 1.0, "lines": [line]}  # type: ignore[list-item]


def _failure(number: int, code: str = "corrupt_document") -> PageFailure:
    return {"page": number, "code": code, "message": f"Page {number} cannot be rendered."}


def test_a_result_without_failed_pages_has_no_pages_failed_field_nor_warning() -> None:
    result = build_result("j", "pp-ocrv5", ENGINE, [_page(1)])
    assert "pages_failed" not in result and result["warnings"] == []


def test_the_chunks_failed_pages_join_into_one_list_and_one_warning() -> None:
    first = build_result("j", "pp-ocrv5", ENGINE, [_page(1), _page(3)], pages_failed=[_failure(2)])
    second = build_result("j", "pp-ocrv5", ENGINE, [_page(5), _page(6)], pages_failed=[_failure(4, "engine_failed")])
    third = build_result("j", "pp-ocrv5", ENGINE, [_page(7)])

    merged = merge_chunk_results("j", [first, second, third])

    assert [p["page"] for p in merged["pages"]] == [1, 3, 5, 6, 7] and merged["text"] == "p1\fp3\fp5\fp6\fp7"
    assert merged["pages_failed"] == [_failure(2), _failure(4, "engine_failed")]
    assert [(w["code"], w["message"]) for w in merged["warnings"]] == [
        ("pages_failed", "2 of 7 pages could not be read (pages 2, 4); the result holds the other 5.")
    ]
    assert merged["warnings"][0]["reason"] == "page 2: corrupt_document; page 4: engine_failed"


@pytest.mark.parametrize(
    ("failed", "read", "percent", "fails"),
    [(1, 3, 25, False), (1, 2, 25, True), (0, 5, 0, False), (1, 99, 0, True), (3, 0, 100, True), (3, 1, 100, False)],
)
def test_the_share_decides_whether_the_job_fails(failed: int, read: int, percent: int, fails: bool) -> None:
    failures = [_failure(n) for n in range(1, failed + 1)]
    if not fails:
        check_failed_share(failures, read=read, max_percent=percent)
        return
    with pytest.raises(JobError) as info:
        check_failed_share(failures, read=read, max_percent=percent)
    assert info.value.code == "corrupt_document" and f"{failed} of {failed + read} pages could not be read" in info.value.message


def test_a_long_list_of_failed_pages_is_named_in_part() -> None:
    with pytest.raises(JobError) as info:
        check_failed_share([_failure(n) for n in range(1, 15)], read=1, max_percent=25)
    assert info.value.message.endswith("page 10: Page 10 cannot be rendered.; and 4 more")


@pytest.mark.parametrize("bad", [{"page": "2"}, [{"code": "x"}], "page 2"])
def test_endpoint_output_with_a_malformed_pages_failed_is_refused(bad: Any) -> None:
    document = dict(build_result("j", "paddleocr-vl", ENGINE, [_page(1)]))
    document["pages_failed"] = bad
    with pytest.raises(JobError, match="pages_failed"):
        validate_result(document)
