"""A document with a bad page still comes back: the real PP-OCRv5 engine on a public four-page PDF
(tests/documents/public/pikepdf-fourpages.pdf) whose page objects are damaged byte by byte here
(``tests.documents.with_corrupt_pages``: pdfium refuses to load such a page and reads the others).
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pypdf
import pytest

from ocr_platform.cli import commands as cli
from ocr_platform.core.results import validate_result
from ocr_platform.gpu.model_server import EndpointApp
from ocr_platform.handlers import _services
from ocr_platform.jobs.store import NewJob
from tests.conftest import BUCKET, TABLE, Platform
from tests.documents import with_corrupt_pages
from tests.handlers.test_fan_out import RecordedInvokes
from tests.handlers.test_fan_out import invokes as invokes  # noqa: F401 - the fixture

FOUR_PAGES = Path(__file__).parents[1] / "documents/public/pikepdf-fourpages.pdf"
PAGE_TEXT = {1: "First page", 2: "Second page", 3: "Third page", 4: "Last page"}


def _job(platform: Platform, job_id: str, document: bytes, options: dict[str, Any] | None = None) -> dict[str, Any]:
    # text_layer: ignore by default, so the engine reads every page (the file has a text layer).
    message = {"job_id": job_id, "model": "pp-ocrv5", "input": platform.put_document(job_id, "four.pdf", document),
               "language": "en", "options": {"text_layer": "ignore"} if options is None else options}
    platform.store.create(NewJob(job_id, "pp-ocrv5", message["input"], options=message["options"]))
    platform.store.mark_processing(job_id, "lambda")
    return message


def _texts(result: dict[str, Any]) -> dict[int, str]:
    return {page["page"]: " ".join(line["text"] for line in page["lines"]) for page in result["pages"]}


def test_a_document_with_one_corrupt_page_completes_with_the_others_and_status_says_so(
    platform: Platform, ppocr: object, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    message = _job(platform, "job-pf1", with_corrupt_pages(FOUR_PAGES.read_bytes(), [3]), options={"text_layer": "ignore", "outputs": ["pdf"]})

    assert platform.run_processor(message)["outcome"] == "completed"

    failed = [{"page": 3, "code": "corrupt_document", "message": "Page 3 cannot be rendered: PdfiumError: Failed to load page."}]
    job = platform.job("job-pf1")
    assert (job["status"], job["page_count"], job["pages_failed"]) == ("COMPLETED", 3, failed)
    result = platform.read_json("results/job-pf1/result.json")
    assert result["pages_failed"] == failed
    assert _texts(result) == {1: PAGE_TEXT[1], 2: PAGE_TEXT[2], 4: PAGE_TEXT[4]}
    warning = "1 of 4 pages could not be read (page 3); the result holds the other 3."
    assert [(w["code"], w["message"]) for w in result["warnings"]] == [("pages_failed", warning)]
    assert job["warnings"] == result["warnings"]
    # The searchable PDF holds the pages of the result, each its own page of the source (page 4 is not shifted
    # onto the damaged page 3, which pypdf's page list leaves out), its own text read once: the OCR line that
    # repeats it in place is not drawn again.
    searchable = pypdf.PdfReader(io.BytesIO(platform.s3.get_object(Bucket=BUCKET, Key="results/job-pf1/result.pdf")["Body"].read()))
    assert [page.extract_text().strip() for page in searchable.pages] == [PAGE_TEXT[n] for n in (1, 2, 4)]

    for name, value in {"OCR_BUCKET_NAME": BUCKET, "OCR_QUEUE_URL": platform.queue_url, "OCR_TABLE_NAME": TABLE}.items():
        monkeypatch.setenv(name, value)
    capsys.readouterr()
    assert cli.main(["status", "job-pf1"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["pages_failed"] == failed
    assert captured.err.splitlines()[-1] == f"warning: pages_failed: {warning}"


def test_with_the_default_text_layer_auto_the_corrupt_page_fails_alone(platform: Platform, ppocr: object) -> None:
    """The processor prices each page's text layer before it splits a job: a page it cannot load is priced as
    an OCR page, and the page loop fails it alone."""
    message = _job(platform, "job-pf7", with_corrupt_pages(FOUR_PAGES.read_bytes(), [1]), options={})

    assert platform.run_processor(message)["outcome"] == "completed"

    result = platform.read_json("results/job-pf7/result.json")
    assert [f["page"] for f in result["pages_failed"]] == [1]
    assert _texts(result) == {2: PAGE_TEXT[2], 3: PAGE_TEXT[3], 4: PAGE_TEXT[4]}
    assert {page["text_source"] for page in result["pages"]} == {"text_layer"}


def test_past_the_share_of_failed_pages_the_job_fails_naming_them(platform: Platform, ppocr: object) -> None:
    message = _job(platform, "job-pf2", with_corrupt_pages(FOUR_PAGES.read_bytes(), [2, 3]))

    assert platform.run_processor(message)["outcome"] == "failed"

    job = platform.job("job-pf2")
    assert job["status"] == "FAILED"
    assert job["error"] == {
        "code": "corrupt_document",
        "message": "2 of 4 pages could not be read (50%, more than the 25% a job may lose): "
                   "page 2: Page 2 cannot be rendered: PdfiumError: Failed to load page.; "
                   "page 3: Page 3 cannot be rendered: PdfiumError: Failed to load page.",
    }
    assert platform.keys("results/job-pf2/") == []


def test_the_share_is_the_stages_setting(platform: Platform, ppocr: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OCR_MAX_FAILED_PAGE_PERCENT", "0")
    _services.reset()
    message = _job(platform, "job-pf3", with_corrupt_pages(FOUR_PAGES.read_bytes(), [4]))

    assert platform.run_processor(message)["outcome"] == "failed"

    assert platform.job("job-pf3")["error"]["message"].startswith("1 of 4 pages could not be read (25%, more than the 0% a job may lose): page 4: ")


def test_a_chunk_with_a_corrupt_page_returns_its_other_pages_and_the_merge_names_it(
    platform: Platform, ppocr: object, invokes: RecordedInvokes, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    monkeypatch.setenv("OCR_CPU_PAGES_PER_CHUNK", "2")
    _services.reset()
    message = _job(platform, "job-pf4", with_corrupt_pages(FOUR_PAGES.read_bytes(), [3]))

    assert platform.run_processor(message)["outcome"] == "fanned_out"
    assert [event["chunk"]["pages"] for event in invokes.events] == ["1-2", "3-4"]
    second, first = invokes.events[1], invokes.events[0]
    assert platform.run_processor(second)["outcome"] == "chunk_done"  # its page 3 failed, page 4 was read
    assert platform.run_processor(first)["outcome"] == "completed"

    job = platform.job("job-pf4")
    assert (job["status"], job["page_count"]) == ("COMPLETED", 3)
    assert [failure["page"] for failure in job["pages_failed"]] == [3]
    result = platform.read_json("results/job-pf4/result.json")
    assert _texts(result) == {1: PAGE_TEXT[1], 2: PAGE_TEXT[2], 4: PAGE_TEXT[4]}
    assert [w["message"] for w in result["warnings"]] == ["1 of 4 pages could not be read (page 3); the result holds the other 3."]


def test_a_split_job_past_the_share_fails_at_the_merge_naming_the_pages(
    platform: Platform, ppocr: object, invokes: RecordedInvokes, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    monkeypatch.setenv("OCR_CPU_PAGES_PER_CHUNK", "2")
    _services.reset()
    message = _job(platform, "job-pf5", with_corrupt_pages(FOUR_PAGES.read_bytes(), [1, 4]))

    assert platform.run_processor(message)["outcome"] == "fanned_out"
    assert [platform.run_processor(event)["outcome"] for event in invokes.events] == ["chunk_done", "failed"]

    job = platform.job("job-pf5")
    assert job["status"] == "FAILED" and job["error"]["code"] == "corrupt_document"
    assert "2 of 4 pages could not be read (50%" in job["error"]["message"]
    assert "page 1: " in job["error"]["message"] and "page 4: " in job["error"]["message"]
    assert platform.keys("chunks/") == [] and "results/job-pf5/result.json" not in platform.keys("results/job-pf5/")


def test_the_gpu_endpoint_answers_with_the_pages_it_read_and_names_the_failed_one(ppocr: object) -> None:
    """The endpoint reads a request's pages with the same page loop (here its engine is the real PP-OCRv5,
    the VL weights are not on this machine); the completion function checks the share (test_completion)."""
    app = EndpointApp(lambda: ppocr)  # type: ignore[arg-type, return-value]
    app.load()
    parameters = {"job_id": "job-pf6", "model": "paddleocr-vl", "language": "en", "options": {"text_layer": "ignore"}}

    response = app.invoke(with_corrupt_pages(FOUR_PAGES.read_bytes(), [2]), json.dumps(parameters))

    assert response.status == 200
    with zipfile.ZipFile(io.BytesIO(response.body)) as answer:
        result = validate_result(json.loads(answer.read("result.json")), job_id="job-pf6")
    assert [(f["page"], f["code"]) for f in result["pages_failed"]] == [(2, "corrupt_document")]
    assert _texts(result) == {1: PAGE_TEXT[1], 3: PAGE_TEXT[3], 4: PAGE_TEXT[4]}


def test_ocr_applies_the_jobs_share_of_failed_pages(tmp_path: Path, ppocr: object, capsys: pytest.CaptureFixture[str]) -> None:
    """``ocr-platform ocr`` on the document a job fails (pages 2 and 3 of 4 damaged): exit 1 with the job's code, no
    result written; one damaged page of four is within the share, so that document completes with a warning."""
    past = tmp_path / "past.pdf"
    past.write_bytes(with_corrupt_pages(FOUR_PAGES.read_bytes(), [2, 3]))
    output = tmp_path / "result.json"
    assert cli.main(["ocr", str(past), "--model", "pp-ocrv5", "--text-layer", "ignore", "--output", str(output)]) == 1
    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if not line.startswith("  page ")] == [  # the progress, then one error line
        "error: corrupt_document: 2 of 4 pages could not be read (50%, more than the 25% a job may lose): "
        "page 2: Page 2 cannot be rendered: PdfiumError: Failed to load page.; "
        "page 3: Page 3 cannot be rendered: PdfiumError: Failed to load page."
    ]
    assert not output.exists()

    within = tmp_path / "within.pdf"
    within.write_bytes(with_corrupt_pages(FOUR_PAGES.read_bytes(), [3]))
    assert cli.main(["ocr", str(within), "--model", "pp-ocrv5", "--text-layer", "ignore", "--output", str(output)]) == 0
    assert [page["page"] for page in json.loads(output.read_text())["pages"]] == [1, 2, 4]
    assert "warning: pages_failed: 1 of 4 pages could not be read (page 3)" in capsys.readouterr().err
