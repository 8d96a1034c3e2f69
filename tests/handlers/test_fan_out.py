"""Page fan-out on the CPU route, against moto: a long document is split into chunks that the processor
launches as asynchronous invocations of itself, and the chunk that completes the set merges the result.

The Lambda ``Invoke`` calls are recorded (moto cannot run our image); each recorded event is then handed to
the processor handler as Lambda would deliver it, in any order and, for duplicates, more than once. The
local stack runs the same path with real invocations (tests/local).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import pytest

from ocr_platform.handlers._services import Services
from tests.aws_events import FakeLambdaContext, lambda_failure_record
from tests.conftest import BUCKET, Platform
from tests.documents import blank_pdf
from tests.handlers.test_processor import PlumbingEngine, _job
from tests.handlers.test_processor import engine as engine  # noqa: F401 - the fixture


class RecordedInvokes:
    """Stands in for the processor's Lambda client: records each ``Invoke``; can refuse the n-th."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.refuse_call: int | None = None

    def invoke(self, **request: Any) -> dict[str, Any]:
        if self.refuse_call == len(self.calls) + 1:
            raise RuntimeError("TooManyRequestsException: Rate exceeded")
        self.calls.append(request)
        return {"StatusCode": 202}

    @property
    def events(self) -> list[dict[str, Any]]:
        return [json.loads(call["Payload"]) for call in self.calls]


@pytest.fixture
def invokes(monkeypatch: pytest.MonkeyPatch) -> Iterator[RecordedInvokes]:
    recorded = RecordedInvokes()
    monkeypatch.setattr(Services, "lambda_client", property(lambda self: recorded))
    yield recorded


def _split_job(platform: Platform, job_id: str, page_count: int = 20, **extra: Any) -> dict[str, Any]:
    return _job(platform, job_id, document=blank_pdf(page_count), **extra)


def test_a_long_document_is_split_into_chunks_and_merged_in_page_order(
    platform: Platform, engine: PlumbingEngine, invokes: RecordedInvokes
) -> None:
    message = _split_job(platform, "job-f1")

    assert platform.run_processor(message)["outcome"] == "fanned_out"

    assert [call["InvocationType"] for call in invokes.calls] == ["Event"] * 4
    assert {call["FunctionName"] for call in invokes.calls} == {"ocr-processor"}
    assert [event["chunk"] for event in invokes.events] == [
        {"index": 0, "count": 4, "pages": "1-6"}, {"index": 1, "count": 4, "pages": "7-12"},
        {"index": 2, "count": 4, "pages": "13-18"}, {"index": 3, "count": 4, "pages": "19-20"},
    ]
    assert all({k: v for k, v in event.items() if k not in ("chunk", "slot")} == message for event in invokes.events)
    # Each chunk runs holding a processor slot of its own (20 by default, so all four start at once).
    assert len({event["slot"] for event in invokes.events}) == 4
    job = platform.job("job-f1")
    assert (job["status"], job["page_count"], job["pages_done"], job["chunk_count"]) == ("PROCESSING", 20, 0, 4)
    assert engine.calls == []  # the run that opened the document read no page

    chunk_events = invokes.events
    for event, pages_done in ((chunk_events[3], 2), (chunk_events[0], 8), (chunk_events[2], 14)):
        assert platform.run_processor(event)["outcome"] == "chunk_done"
        job = platform.job("job-f1")
        assert (job["status"], job["pages_done"]) == ("PROCESSING", pages_done)
    assert platform.run_processor(chunk_events[1])["outcome"] == "completed"

    job = platform.job("job-f1")
    assert (job["status"], job["page_count"], job["pages_done"]) == ("COMPLETED", 20, 20)
    result = platform.read_json("results/job-f1/result.json")
    assert result["page_count"] == 20 and [p["page"] for p in result["pages"]] == list(range(1, 21))
    assert result["text"] == "\f".join(f"plumbing {n}" for n in range(1, 21))
    assert [p["page"] for p in platform.read_json("results/job-f1/raw.json")["pages"]] == list(range(1, 21))
    assert sorted(call["pages"] for call in engine.calls) == ["1-6", "13-18", "19-20", "7-12"]
    assert platform.keys("chunks/") == []


def test_duplicate_deliveries_of_the_job_and_its_chunks_change_nothing(
    platform: Platform, engine: PlumbingEngine, invokes: RecordedInvokes
) -> None:
    message = _split_job(platform, "job-f2", page_count=12)
    platform.run_processor(message)
    first, second = invokes.events

    assert platform.run_processor(message)["outcome"] == "skipped"  # the job's own event, again
    assert platform.run_processor(first)["outcome"] == "chunk_done"
    assert platform.run_processor(first)["outcome"] == "skipped"  # a finished chunk, again
    assert platform.run_processor(second)["outcome"] == "completed"
    etag = platform.s3.head_object(Bucket=BUCKET, Key="results/job-f2/result.json")["ETag"]
    for event in (message, first, second):
        assert platform.run_processor(event)["outcome"] == "skipped"

    assert len(invokes.calls) == 2 and len(engine.calls) == 2
    assert platform.s3.head_object(Bucket=BUCKET, Key="results/job-f2/result.json")["ETag"] == etag
    job = platform.job("job-f2")
    assert (job["status"], job["pages_done"]) == ("COMPLETED", 12)


def test_a_small_document_keeps_the_single_invocation_path(platform: Platform, engine: PlumbingEngine, invokes: RecordedInvokes) -> None:
    message = _split_job(platform, "job-f3", pages="2-6,19")  # 6 of the 20 pages

    assert platform.run_processor(message)["outcome"] == "completed"

    assert invokes.calls == [] and [call["pages"] for call in engine.calls] == ["2-6,19"]
    job = platform.job("job-f3")
    assert (job["status"], job["page_count"], job["pages_done"]) == ("COMPLETED", 6, 6)
    assert "chunk_count" not in job


def test_a_failing_chunk_fails_the_job_once_with_its_pages(platform: Platform, engine: PlumbingEngine, invokes: RecordedInvokes) -> None:
    message = _split_job(platform, "job-f4", options={"explode_on_page": 10})
    platform.run_processor(message)
    first, failing, *rest = invokes.events

    assert platform.run_processor(first)["outcome"] == "chunk_done"
    assert platform.run_processor(failing)["outcome"] == "failed"
    assert [platform.run_processor(event)["outcome"] for event in rest] == ["skipped"] * 2  # the job is over

    job = platform.job("job-f4")
    assert job["status"] == "FAILED" and job["error"]["code"] == "engine_failed"
    assert job["error"]["message"].startswith("chunk 2 of 4 (pages 7-12): OCR failed")
    assert "engine blew up on page 10" in job["error"]["message"]
    # No result; the images of the pages the first chunk read stay (each chunk writes its own as it reads).
    assert platform.keys("results/") == [f"results/job-f4/pages/{page:05d}.jpg" for page in range(1, 7)]
    assert len(engine.calls) == 2


def test_a_crashed_chunk_fails_the_job_through_the_on_failure_destination(
    platform: Platform, engine: PlumbingEngine, invokes: RecordedInvokes
) -> None:
    from ocr_platform.handlers import completion

    platform.run_processor(_split_job(platform, "job-f5"))
    first, crashed, *_ = invokes.events
    record = lambda_failure_record(crashed, error_type="Sandbox.Timedout", error_message="Task timed out after 900.00 seconds",
                                   function_arn=FakeLambdaContext().invoked_function_arn)

    assert completion.handler(record, FakeLambdaContext()) == {"outcomes": ["failed"]}
    assert completion.handler(record, FakeLambdaContext()) == {"outcomes": ["ignored"]}  # delivered twice
    assert platform.run_processor(first)["outcome"] == "skipped"

    job = platform.job("job-f5")
    assert job["status"] == "FAILED" and job["error"]["code"] == "timed_out"
    assert job["error"]["message"].startswith("chunk 2 of 4 (pages 7-12): The CPU processor stopped before finishing")
    assert engine.calls == []


def test_a_chunk_that_cannot_be_launched_fails_the_job(platform: Platform, engine: PlumbingEngine, invokes: RecordedInvokes) -> None:
    invokes.refuse_call = 2

    assert platform.run_processor(_split_job(platform, "job-f6"))["outcome"] == "failed"
    assert platform.run_processor(invokes.events[0])["outcome"] == "skipped"

    job = platform.job("job-f6")
    assert job["status"] == "FAILED" and job["error"]["code"] == "internal_error"
    assert "chunk 2 of 4 (pages 7-12)" in job["error"]["message"] and "Rate exceeded" in job["error"]["message"]


def test_a_document_over_max_pages_fails_before_any_chunk(
    platform: Platform, engine: PlumbingEngine, invokes: RecordedInvokes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OCR_MAX_PAGES", "15")

    assert platform.run_processor(_split_job(platform, "job-f7"))["outcome"] == "failed"

    job = platform.job("job-f7")
    assert job["status"] == "FAILED" and job["error"]["code"] == "too_many_pages"
    assert invokes.calls == [] and engine.calls == []


def test_born_digital_pages_are_priced_by_their_text_layer_so_fewer_chunks_carry_them(
    platform: Platform, engine: PlumbingEngine, invokes: RecordedInvokes, tmp_path
) -> None:
    from tests.documents import write_born_digital_pdf

    report = write_born_digital_pdf(tmp_path / "report.pdf", [["Page heading", f"Body line of page {n} with its text"] for n in range(1, 21)])
    auto = _job(platform, "job-layered", document=report.read_bytes())
    ignore = _job(platform, "job-layered-ocr", document=report.read_bytes(), options={"text_layer": "ignore"})

    assert platform.run_processor(auto)["outcome"] == "fanned_out"
    assert platform.run_processor(ignore)["outcome"] == "fanned_out"

    chunks = {event["job_id"]: [] for event in invokes.events}
    for event in invokes.events:
        chunks[event["job_id"]].append(event["chunk"]["pages"])
    # 20 pages with a text layer cost 2 OCR pages' worth; a chunk still holds at most 6 x 3 of them.
    assert chunks["job-layered"] == ["1-18", "19-20"]
    assert chunks["job-layered-ocr"] == ["1-6", "7-12", "13-18", "19-20"]


def test_a_split_job_that_asks_for_a_pdf_gets_it_from_the_chunk_that_merges(
    platform: Platform, engine: PlumbingEngine, invokes: RecordedInvokes
) -> None:
    from pypdf import PdfReader

    message = _split_job(platform, "job-f8", page_count=12, options={"outputs": ["pdf"]})
    assert platform.run_processor(message)["outcome"] == "fanned_out"
    first, second = invokes.events

    assert platform.run_processor(second)["outcome"] == "chunk_done"
    assert platform.keys("results/job-f8/result.") == []
    assert platform.run_processor(first)["outcome"] == "completed"

    job = platform.job("job-f8")
    assert (job["status"], job["result_pdf"]) == ("COMPLETED", f"s3://{BUCKET}/results/job-f8/result.pdf")
    pdf = platform.s3.get_object(Bucket=BUCKET, Key="results/job-f8/result.pdf")
    assert pdf["ContentType"] == "application/pdf"
    body = pdf["Body"].read()
    assert body.startswith(b"%PDF")
    # Written by the real writer from the merged result: every page of the document, each with its own line.
    reader = PdfReader(io.BytesIO(body))
    assert len(reader.pages) == 12
    assert [reader.pages[n - 1].extract_text().strip() for n in (1, 7, 12)] == ["plumbing 1", "plumbing 7", "plumbing 12"]
    assert "pdf" in platform.read_json("results/job-f8/result.json")["timings"]
    assert platform.keys("chunks/") == []


def test_a_split_job_whose_pdf_cannot_be_written_fails_instead_of_completing_without_it(
    platform: Platform, engine: PlumbingEngine, invokes: RecordedInvokes, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ocr_platform.outputs.searchable_pdf

    def refuse(source: Any, result: Any, target: Any) -> Any:
        raise ValueError("Result page 13 is not in doc.pdf, which has 12 page(s).")

    monkeypatch.setattr(ocr_platform.outputs.searchable_pdf, "write_searchable_pdf", refuse)
    platform.run_processor(_split_job(platform, "job-f9", page_count=12, options={"outputs": ["pdf"]}))
    first, second = invokes.events

    assert platform.run_processor(first)["outcome"] == "chunk_done"
    assert platform.run_processor(second)["outcome"] == "failed"

    job = platform.job("job-f9")
    assert job["status"] == "FAILED" and "result_pdf" not in job
    assert job["error"] == {"code": "engine_failed", "message": "The searchable result.pdf could not be written: "
                                                                "ValueError: Result page 13 is not in doc.pdf, which has 12 page(s)."}
    assert [key for key in platform.keys("results/job-f9/") if "/pages/" not in key] == []  # no result.json either
