"""Page fan-out on the GPU route, against moto: the endpoint container answers a long job with a split plan,
the completion function sends one async request per chunk, and the chunk whose notification completes the
set merges the result.

The container is the real ``EndpointApp`` with a plumbing engine (not OCR), and it has no S3 client: each request
the platform sent is posted to it as SageMaker would (the bytes of its InputLocation, the job's document, and its
CustomAttributes), and its answer (a ZIP, or JSON) becomes the output the notification points at.
moto accepts the ``InvokeEndpointAsync`` calls; the notifications are delivered through its SNS topics. The
local stack runs the same path with its SageMaker runtime (tests/local).
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from ocr_platform.core.s3_layout import S3Uri
from ocr_platform.gpu.model_server import EndpointApp, split_pdf_warning
from ocr_platform.gpu.sagemaker_async import AsyncInference
from ocr_platform.handlers._services import services
from ocr_platform.jobs.messages import parse_job_message
from ocr_platform.jobs.store import NewJob, utc_now
from tests.aws_events import sagemaker_notification
from tests.conftest import BUCKET, ENDPOINT, Platform
from tests.documents import blank_pdf
from tests.handlers.test_processor import PlumbingEngine

PAGES_PER_CHUNK = 10


@pytest.fixture
def endpoint(platform: Platform) -> Iterator[EndpointApp]:
    app = EndpointApp(PlumbingEngine, pages_per_chunk=PAGES_PER_CHUNK)
    app.load()
    yield app


def _vl_job(platform: Platform, job_id: str, pages: int, **extra: Any) -> dict[str, Any]:
    message = {"job_id": job_id, "model": "paddleocr-vl",
               "input": platform.put_document(job_id, "doc.pdf", blank_pdf(pages)), "language": "en", **extra}
    # The item holds no options: chunk requests carry the job's own request's (a message sent to the queue
    # without a registered job gets an item with only model, language and input).
    platform.store.create(NewJob(job_id, "paddleocr-vl", message["input"]))
    platform.store.mark_processing(job_id, "sagemaker")
    return message


def _request(message: dict[str, Any]) -> dict[str, Any]:
    """The job's own request as the invoker sends it."""
    return {"InputLocation": message["input"], "CustomAttributes": AsyncInference.parameters(parse_job_message(message))}


def _invoke(platform: Platform, endpoint: EndpointApp, call: dict[str, Any]) -> Any:
    location = S3Uri.parse(call["InputLocation"])
    return endpoint.invoke(platform.s3.get_object(Bucket=location.bucket, Key=location.key)["Body"].read(),
                           call["CustomAttributes"])


def _serve(platform: Platform, endpoint: EndpointApp, call: dict[str, Any], *, n: int) -> str:
    """Post one request to the container as SageMaker does; write its answer as the inference's output (200) or
    failure (4xx/5xx) and return the notification SageMaker would publish."""
    response = _invoke(platform, endpoint, call)
    job_id = json.loads(call["CustomAttributes"])["job_id"]
    key = f"async/{'outputs' if response.status == 200 else 'failures'}/{job_id}-{n}.out"
    platform.s3.put_object(Bucket=BUCKET, Key=key, Body=response.body)
    if response.status == 200:
        return sagemaker_notification(job_id, endpoint=ENDPOINT, input_location=call["InputLocation"],
                                      output_location=f"s3://{BUCKET}/{key}")
    return sagemaker_notification(job_id, endpoint=ENDPOINT, input_location=call["InputLocation"],
                                  failure_reason=f"ClientError: Received client error ({response.status}) from model.",
                                  failure_location=f"s3://{BUCKET}/{key}")


def _chunk_requests(platform: Platform) -> list[dict[str, Any]]:
    return platform.calls.get("InvokeEndpointAsync", [])


def test_the_endpoint_answers_a_long_job_with_a_plan_and_a_chunk_request_with_its_pages(
    platform: Platform, endpoint: EndpointApp
) -> None:
    message = _vl_job(platform, "job-g0", 25)

    response = _invoke(platform, endpoint, _request(message))
    assert (response.status, response.content_type) == (200, "application/json")
    plan = response.json()
    assert plan["job_id"] == "job-g0" and plan["plan"] == {"page_count": 25, "chunks": [
        {"index": 0, "count": 3, "pages": "1-10"}, {"index": 1, "count": 3, "pages": "11-20"},
        {"index": 2, "count": 3, "pages": "21-25"}]}
    assert plan["parameters"] == {"job_id": "job-g0", "model": "paddleocr-vl", "language": "en"}

    chunk = {"index": 1, "count": 3, "pages": "11-20"}
    response = _invoke(platform, endpoint, {**_request(message), "CustomAttributes": json.dumps({**plan["parameters"], "chunk": chunk})})
    assert (response.status, response.content_type) == (200, "application/zip")
    with zipfile.ZipFile(io.BytesIO(response.body)) as answer:
        partial = json.loads(answer.read("result.json"))
        assert json.loads(answer.read("answer.json"))["chunk"] == chunk
        assert sorted(n for n in answer.namelist() if n.startswith("pages/")) == [f"pages/{p:05d}.jpg" for p in range(11, 21)]
    assert [page["page"] for page in partial["pages"]] == list(range(11, 21))

    response = _invoke(platform, endpoint, _request({**message, "pages": "3-9"}))
    assert response.status == 200 and response.content_type == "application/zip"  # 7 selected pages: one request, no plan

    bad = {**_request(message), "CustomAttributes": json.dumps({**plan["parameters"], "chunk": {"index": 3, "count": 3, "pages": "1"}})}
    response = _invoke(platform, endpoint, bad)
    assert (response.status, response.json()["error"]["code"]) == (400, "invalid_message")
    # No parameters: the container cannot know the job.
    response = endpoint.invoke(b"%PDF-1.4", None)
    assert (response.status, response.json()["error"]["code"]) == (400, "invalid_message")


def test_a_split_plan_becomes_one_request_per_chunk_and_the_last_chunk_merges_in_page_order(
    platform: Platform, endpoint: EndpointApp
) -> None:
    message = _vl_job(platform, "job-g1", 25)

    assert platform.publish("success", _serve(platform, endpoint, _request(message), n=0)) == {
        "outcomes": ["split"]}

    sent = _chunk_requests(platform)
    # Every chunk request names the job's document itself: no copy of it, no request object.
    assert [call["InputLocation"] for call in sent] == [message["input"]] * 3
    # Each names itself: the InferenceId and the output object say the job and the chunk.
    assert [call["InferenceId"] for call in sent] == ["job-g1.c00000", "job-g1.c00001", "job-g1.c00002"]
    assert [(call["S3OutputPathExtension"], call["Filename"]) for call in sent] == [
        ("job-g1", "c00000.out"), ("job-g1", "c00001.out"), ("job-g1", "c00002.out")]
    assert {call["EndpointName"] for call in sent} == {ENDPOINT}
    assert json.loads(sent[2]["CustomAttributes"])["chunk"] == {"index": 2, "count": 3, "pages": "21-25"}
    assert platform.keys("async/requests/") == []
    job = platform.job("job-g1")
    assert (job["status"], job["page_count"], job["pages_done"], job["chunk_count"]) == ("PROCESSING", 25, 0, 3)
    assert len(job["chunk_requests"]) == 3 and all(r["output_location"] for r in job["chunk_requests"])

    for index, outcome, pages_done in ((2, "chunk_done", 5), (0, "chunk_done", 15), (1, "completed", 25)):
        note = _serve(platform, endpoint, sent[index], n=index + 1)
        assert platform.publish("success", note) == {"outcomes": [outcome]}
        assert platform.job("job-g1")["pages_done"] == pages_done

    result = platform.read_json("results/job-g1/result.json")
    assert [page["page"] for page in result["pages"]] == list(range(1, 26))
    assert result["page_count"] == 25 and result["text"].startswith("plumbing 1\fplumbing 2\f")
    job = platform.job("job-g1")
    assert (job["status"], job["page_count"], job["result"]) == ("COMPLETED", 25, f"s3://{BUCKET}/results/job-g1/result.json")
    assert platform.keys("chunks/") == []
    # Each chunk request left the images of the pages it read beside the result.
    assert platform.keys("results/job-g1/pages/") == [f"results/job-g1/pages/{page:05d}.jpg" for page in range(1, 26)]


def test_repeated_notifications_of_the_plan_or_a_chunk_change_nothing(platform: Platform, endpoint: EndpointApp) -> None:
    message = _vl_job(platform, "job-g2", 12)
    plan_note = _serve(platform, endpoint, _request(message), n=0)
    assert platform.publish("success", plan_note) == {"outcomes": ["split"]}
    assert platform.publish("success", plan_note) == {"outcomes": ["ignored"]}
    sent = _chunk_requests(platform)
    assert len(sent) == 2  # 10 + 2 pages, sent once

    first = _serve(platform, endpoint, sent[0], n=1)
    assert platform.publish("success", first) == {"outcomes": ["chunk_done"]}
    assert platform.publish("success", first) == {"outcomes": ["ignored"]}
    assert platform.job("job-g2")["pages_done"] == 10

    assert platform.publish("success", _serve(platform, endpoint, sent[1], n=2)) == {"outcomes": ["completed"]}
    assert platform.publish("success", first) == {"outcomes": ["ignored"]}
    assert platform.job("job-g2")["status"] == "COMPLETED"
    assert platform.read_json("results/job-g2/result.json")["page_count"] == 12


def test_a_failed_chunk_request_fails_the_job_once_naming_its_pages(platform: Platform, endpoint: EndpointApp) -> None:
    message = _vl_job(platform, "job-g3", 25, options={"explode_on_page": 14})
    assert platform.publish("success", _serve(platform, endpoint, _request(message), n=0)) == {
        "outcomes": ["split"]}
    sent = _chunk_requests(platform)

    assert platform.publish("success", _serve(platform, endpoint, sent[0], n=1)) == {"outcomes": ["chunk_done"]}
    assert platform.publish("error", _serve(platform, endpoint, sent[1], n=2)) == {"outcomes": ["failed"]}
    assert platform.publish("success", _serve(platform, endpoint, sent[2], n=3)) == {"outcomes": ["ignored"]}

    job = platform.job("job-g3")
    assert job["status"] == "FAILED"
    assert job["error"]["code"] == "engine_failed"
    assert job["error"]["message"].startswith("chunk 2 of 3 (pages 11-20): ")
    assert "blew up on page 14" in job["error"]["message"]
    assert [key for key in platform.keys("results/job-g3/") if "/pages/" not in key] == []  # no result


def test_the_sweeper_settles_a_chunk_whose_notification_was_lost(platform: Platform, endpoint: EndpointApp) -> None:
    from ocr_platform.recovery.job_recovery import settle_finished_inferences

    message = _vl_job(platform, "job-g4", 15)
    assert platform.publish("success", _serve(platform, endpoint, _request(message), n=0)) == {
        "outcomes": ["split"]}
    sent = _chunk_requests(platform)
    assert platform.publish("success", _serve(platform, endpoint, sent[0], n=1)) == {"outcomes": ["chunk_done"]}
    # The second chunk's output lands where SageMaker said it would; its notification never comes.
    lost = S3Uri.parse(platform.job("job-g4")["chunk_requests"][1]["output_location"])
    platform.s3.put_object(Bucket=lost.bucket, Key=lost.key, Body=_invoke(platform, endpoint, sent[1]).body)

    svc = services()
    assert settle_finished_inferences(svc.store, svc.s3, svc.layout, inference=svc.inference) == {}  # within the grace period
    later = utc_now() + timedelta(hours=1)
    assert settle_finished_inferences(svc.store, svc.s3, svc.layout, inference=svc.inference, now=later) == {"job-g4": "completed"}

    job = platform.job("job-g4")
    assert (job["status"], job["page_count"]) == ("COMPLETED", 15)
    assert [p["page"] for p in platform.read_json("results/job-g4/result.json")["pages"]] == list(range(1, 16))


def test_a_job_that_asks_for_a_pdf_gets_it_from_the_endpoint_and_the_item_records_it(
    platform: Platform, endpoint: EndpointApp
) -> None:
    from pypdf import PdfReader

    message = _vl_job(platform, "job-g5", 3, options={"outputs": ["pdf"]})
    # The plumbing engine reads the page selection, not the document: select every page.
    note = _serve(platform, endpoint, _request({**message, "pages": "1-3"}), n=0)
    # The carrier: result.pdf travels in the endpoint's answer, which SageMaker writes; the container wrote nothing.
    with zipfile.ZipFile(io.BytesIO(platform.s3.get_object(Bucket=BUCKET, Key="async/outputs/job-g5-0.out")["Body"].read())) as answer:
        assert "result.pdf" in answer.namelist()
    assert platform.keys("results/job-g5/") == []

    assert platform.publish("success", note) == {"outcomes": ["completed"]}

    job = platform.job("job-g5")
    assert (job["status"], job["result_pdf"]) == ("COMPLETED", f"s3://{BUCKET}/results/job-g5/result.pdf")
    result = platform.read_json("results/job-g5/result.json")
    assert "result_pdf" not in result and "pdf" in result["timings"]  # result.json keeps its contract
    body = platform.s3.get_object(Bucket=BUCKET, Key="results/job-g5/result.pdf")["Body"].read()
    assert body.startswith(b"%PDF")
    reader = PdfReader(io.BytesIO(body))
    assert [page.extract_text().strip() for page in reader.pages] == ["plumbing 1", "plumbing 2", "plumbing 3"]
    assert platform.keys("results/job-g5/pages/") == [f"results/job-g5/pages/{p:05d}.jpg" for p in (1, 2, 3)]


def test_a_split_job_that_asks_for_a_pdf_completes_with_an_output_unavailable_warning(
    platform: Platform, endpoint: EndpointApp
) -> None:
    message = _vl_job(platform, "job-g6", 15, options={"outputs": ["pdf"]})
    assert platform.publish("success", _serve(platform, endpoint, _request(message), n=0)) == {
        "outcomes": ["split"]}
    sent = _chunk_requests(platform)
    assert [platform.publish("success", _serve(platform, endpoint, call, n=i + 1))["outcomes"]
            for i, call in enumerate(sent)] == [["chunk_done"], ["completed"]]

    warning = split_pdf_warning()
    assert warning["code"] == "output_unavailable"
    assert platform.read_json("results/job-g6/result.json")["warnings"] == [warning]  # once, though each chunk had it
    job = platform.job("job-g6")
    assert (job["status"], job["warnings"]) == ("COMPLETED", [warning])
    assert "result_pdf" not in job and platform.keys("results/job-g6/result.pdf") == []


def test_an_endpoint_that_cannot_write_the_pdf_fails_the_job_instead_of_completing_without_it(
    platform: Platform, endpoint: EndpointApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ocr_platform.gpu.model_server
    import ocr_platform.outputs.searchable_pdf

    message = _vl_job(platform, "job-g7", 2, options={"outputs": ["pdf"]})
    request = _request(message)

    # Refused before the model reads a page: an image without the PDF writer's libraries.
    with monkeypatch.context() as patch:
        patch.setattr(ocr_platform.gpu.model_server, "PDF_MODULES", ("pypdf", "reportlab", "no_such_pdf_module"))
        response = _invoke(platform, endpoint, request)
    assert (response.status, response.json()["error"]["code"]) == (500, "engine_unavailable")
    assert response.json()["error"]["message"].endswith("its image lacks no_such_pdf_module.")
    assert platform.keys("results/job-g7/") == []

    # A PDF that cannot be written fails the request, and so the job.
    def refuse(source: Any, result: Any, target: Any) -> Any:
        raise ValueError("Result page 3 is not in doc.pdf, which has 2 page(s).")

    monkeypatch.setattr(ocr_platform.outputs.searchable_pdf, "write_searchable_pdf", refuse)
    note = _serve(platform, endpoint, request, n=0)
    assert platform.publish("error", note) == {"outcomes": ["failed"]}
    job = platform.job("job-g7")
    assert job["status"] == "FAILED" and "result_pdf" not in job
    assert job["error"] == {"code": "engine_failed", "message": "The searchable result.pdf could not be written: "
                                                                "ValueError: Result page 3 is not in doc.pdf, which has 2 page(s)."}
