"""The GPU route's pages that failed: the endpoint's answer names them (tests/ocr/test_page_failures.py runs
the endpoint on a real damaged PDF) and the completion function applies the share, as the processor does."""

from __future__ import annotations

from typing import Any

from ocr_platform.core.results import build_result
from tests.conftest import Platform
from tests.handlers.test_completion import VALID_OUTPUT, _success, _vl_job

FAILED_PAGE = {"page": 2, "code": "corrupt_document", "message": "Page 2 cannot be rendered: PdfiumError: Failed to load page."}


def _output(read: list[int]) -> dict[str, Any]:
    pages = [{**VALID_OUTPUT["pages"][0], "page": number} for number in read]  # type: ignore[index, dict-item]
    return dict(build_result("job-vl", "paddleocr-vl", VALID_OUTPUT["engine"], pages, pages_failed=[FAILED_PAGE]))  # type: ignore[arg-type]


def test_a_gpu_job_with_one_failed_page_of_four_completes_naming_it(platform: Platform) -> None:
    _vl_job(platform)

    assert platform.publish("success", _success(platform, "job-vl", _output([1, 3, 4]))) == {"outcomes": ["completed"]}

    job = platform.job("job-vl")
    assert (job["status"], job["page_count"], job["pages_failed"]) == ("COMPLETED", 3, [FAILED_PAGE])
    assert [w["code"] for w in job["warnings"]] == ["pages_failed"]
    assert platform.read_json("results/job-vl/result.json")["pages_failed"] == [FAILED_PAGE]


def test_a_gpu_job_past_the_share_fails_naming_the_page(platform: Platform) -> None:
    _vl_job(platform)

    assert platform.publish("success", _success(platform, "job-vl", _output([1]))) == {"outcomes": ["failed"]}

    job = platform.job("job-vl")
    assert job["status"] == "FAILED"
    assert job["error"] == {"code": "corrupt_document", "message": "1 of 2 pages could not be read (50%, more than the 25% a job may "
                            "lose): page 2: Page 2 cannot be rendered: PdfiumError: Failed to load page."}
    assert platform.keys("results/job-vl/") == []
