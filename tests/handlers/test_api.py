"""The jobs API against moto: each route as API Gateway's HTTP API delivers it (payload 2.0, the JWT
authorizer's verified claims in ``requestContext``), through the upload that starts the job.

API Gateway itself (the authorizer refusing a missing or expired token before the function runs) is the
stack's; here the function's own checks are tested: a request without a verified user is refused, another
user's job is not found, the upload form is limited to the job's key, type and size.
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from typing import Any

import pytest
import requests

from ocr_platform.core.settings import ENV
from ocr_platform.handlers import _services, api
from ocr_platform.jobs.store import NewJob
from ocr_platform.local.events import http_api_event
from tests.aws_events import FakeLambdaContext
from tests.conftest import BUCKET, Platform
from tests.documents import tiny_png

ALICE, BOB = "alice-sub-0001", "bob-sub-0002"


def call(method: str, path: str, user: str | None, *, body: Any = None, query: dict[str, str] | None = None) -> tuple[int, Any]:
    """One request through the API's handler; returns the status and the decoded JSON body."""
    route = "GET /jobs/{job_id}/result" if path.endswith("/result") else ("GET /jobs/{job_id}" if path.count("/") == 2 else f"{method} /jobs")
    event = http_api_event(
        method, path, route_key=route, claims={"sub": user, "token_use": "id"} if user else None,
        body=None if body is None else (body if isinstance(body, str) else json.dumps(body)), query=query,
        headers={"content-type": "application/json"}, request_id=str(uuid.uuid4()), time_epoch_ms=int(time.time() * 1000),
    )
    response = api.handler(event, FakeLambdaContext(function_name="ocr-api"))
    return response["statusCode"], json.loads(response["body"]) if response.get("body") else None


def upload(platform: Platform, created: dict[str, Any], data: bytes, content_type: str | None = None) -> requests.Response:
    form = created["upload"]
    fields = dict(form["fields"])
    if content_type:
        fields["Content-Type"] = content_type
    return requests.post(form["url"], data=fields, files={"file": ("scan.png", data)}, timeout=30)


def test_create_upload_and_the_job_starts_and_is_its_owners(platform: Platform) -> None:
    status, created = call("POST", "/jobs", ALICE, body={"filename": "scan.png", "model": "pp-ocrv5", "language": "fr", "pages": "1"})
    assert status == 201 and created["status"] == "QUEUED"
    job_id = created["job_id"]
    assert created["upload"]["fields"]["key"] == f"uploads/{job_id}/scan.png"

    assert upload(platform, created, tiny_png()).status_code == 204
    assert platform.run_ingest(f"uploads/{job_id}/scan.png")["outcome"] == "queued"
    [message] = [json.loads(m["Body"]) for m in platform.sqs.receive_message(QueueUrl=platform.queue_url, MaxNumberOfMessages=10)["Messages"]]
    assert message == {"job_id": job_id, "model": "pp-ocrv5", "input": f"s3://{BUCKET}/documents/{job_id}/scan.png", "language": "fr", "pages": "1"}
    assert platform.s3.get_object(Bucket=BUCKET, Key=f"documents/{job_id}/scan.png")["Body"].read() == tiny_png()

    status, job = call("GET", f"/jobs/{job_id}", ALICE)
    assert status == 200
    assert (job["job_id"], job["status"], job["model"], job["file_name"]) == (job_id, "QUEUED", "pp-ocrv5", "scan.png")
    assert "owner" not in job and "input" not in job  # internals stay internal
    assert call("GET", f"/jobs/{job_id}", BOB) == (404, {"error": {"code": "job_not_found", "message": f"No job {job_id!r}."}})
    assert call("GET", f"/jobs/{job_id}/result", BOB)[0] == 404
    assert call("GET", f"/jobs/{job_id}/result", ALICE)[1]["error"]["code"] == "result_not_ready"


def test_the_upload_form_is_limited_to_the_jobs_key_type_and_size(platform: Platform) -> None:
    _, created = call("POST", "/jobs", ALICE, body={"filename": "scan.png", "model": "pp-ocrv5"})
    policy = json.loads(base64.b64decode(created["upload"]["fields"]["policy"]))
    conditions = policy["conditions"]
    assert {"key": f"uploads/{created['job_id']}/scan.png"} in conditions
    assert {"Content-Type": "image/png"} in conditions
    assert ["content-length-range", 1, 200 * 1024 * 1024] in conditions
    assert {"bucket": BUCKET} in conditions


def test_listing_shows_only_the_callers_jobs_newest_first_in_pages(platform: Platform) -> None:
    mine = [call("POST", "/jobs", ALICE, body={"filename": f"p{i}.pdf", "model": "pp-ocrv5"})[1]["job_id"] for i in range(3)]
    call("POST", "/jobs", BOB, body={"filename": "b.pdf", "model": "pp-ocrv5"})

    status, first = call("GET", "/jobs", ALICE, query={"limit": "2"})
    assert status == 200 and len(first["jobs"]) == 2 and first["next"]
    _, second = call("GET", "/jobs", ALICE, query={"limit": "2", "next": first["next"]})
    listed = [job["job_id"] for job in first["jobs"] + second["jobs"]]
    assert sorted(listed) == sorted(mine) and second["next"] is None
    created = [job["created_at"] for job in first["jobs"] + second["jobs"]]
    assert created == sorted(created, reverse=True)
    assert call("GET", "/jobs", BOB, query={"next": first["next"]})[1]["error"]["code"] == "invalid_token"


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"filename": "scan.png", "model": "tesseract"}, 400, "unknown_model"),
        ({"filename": "scan.png", "model": "pp-ocrv5", "pages": "0-3"}, 400, "invalid_message"),
        ({"filename": "scan.png", "model": "pp-ocrv5", "language": "FR!"}, 400, "invalid_message"),
        ({"filename": "../etc/passwd.png", "model": "pp-ocrv5"}, 400, "invalid_file_name"),
        ({"filename": "notes.mp3", "model": "pp-ocrv5"}, 400, "invalid_file_name"),
        ({"model": "pp-ocrv5"}, 400, "invalid_message"),
        ({"filename": "scan.png", "url": "https://example.com/scan.png", "model": "pp-ocrv5"}, 400, "invalid_message"),
        ({"url": "http://example.com/scan.png", "model": "pp-ocrv5"}, 400, "invalid_message"),
        ({"filename": "scan.png", "model": "pp-ocrv5", "callback_url": "https://10.0.0.8/hook"}, 400, "invalid_message"),
        ({"filename": "scan.png", "model": "pp-ocrv5", "options": {"outputs": ["pdf"], "note": "x" * 20_000}}, 400, "invalid_message"),
        ({"url": "https://example.com/scan.png", "model": "pp-ocrv5", "options": {"dpi": float("inf")}}, 400, "invalid_message"),
        ({"filename": "scan.png", "model": "pp-ocrv5", "options": ["pdf"]}, 422, None),
        ({"filename": "scan.png", "model": "pp-ocrv5", "options": "outputs=pdf"}, 422, None),
        ("not json", 422, None),
    ],
)
def test_bad_requests_are_refused_with_the_reason_and_create_nothing(platform: Platform, body: Any, status: int, code: str | None) -> None:
    got, answer = call("POST", "/jobs", ALICE, body=body)
    assert got == status
    if code:
        assert answer["error"]["code"] == code
    assert call("GET", "/jobs", ALICE)[1]["jobs"] == []


def test_a_request_without_a_verified_user_is_refused(platform: Platform) -> None:
    assert call("GET", "/jobs", None)[0] == 401
    assert call("POST", "/jobs", None, body={"filename": "scan.png", "model": "pp-ocrv5"})[0] == 401


def test_a_job_by_url_starts_at_once_with_its_callback(platform: Platform) -> None:
    body = {"url": "https://example.com/scans/invoice.png", "model": "pp-ocrv5", "callback_url": "https://hooks.example.com/ocr"}

    status, created = call("POST", "/jobs", ALICE, body=body)

    assert status == 201 and created["status"] == "QUEUED" and "upload" not in created
    job_id = created["job_id"]
    messages = platform.sqs.receive_message(QueueUrl=platform.queue_url, MaxNumberOfMessages=10)["Messages"]
    assert [json.loads(m["Body"]) for m in messages] == [{
        "job_id": job_id, "model": "pp-ocrv5", "input": "https://example.com/scans/invoice.png", "language": "en",
        "callback_url": "https://hooks.example.com/ocr",
    }]
    status, job = call("GET", f"/jobs/{job_id}", ALICE)
    assert status == 200
    assert (job["status"], job["file_name"], job["callback_url"]) == ("QUEUED", "invoice.png", "https://hooks.example.com/ocr")
    assert "input" not in job and "owner" not in job
    assert call("GET", f"/jobs/{job_id}", BOB)[0] == 404


def test_options_reach_the_message_sent_when_the_upload_arrives(platform: Platform) -> None:
    options = {"outputs": ["pdf"], "text_layer": "ignore"}
    status, created = call("POST", "/jobs", ALICE, body={"filename": "scan.png", "model": "pp-ocrv5", "options": options})
    assert status == 201
    job_id = created["job_id"]
    assert platform.sqs.receive_message(QueueUrl=platform.queue_url, MaxNumberOfMessages=10).get("Messages", []) == []

    assert upload(platform, created, tiny_png()).status_code == 204
    assert platform.run_ingest(f"uploads/{job_id}/scan.png")["outcome"] == "queued"
    [message] = [json.loads(m["Body"]) for m in platform.sqs.receive_message(QueueUrl=platform.queue_url, MaxNumberOfMessages=10)["Messages"]]
    assert message == {"job_id": job_id, "model": "pp-ocrv5", "input": f"s3://{BUCKET}/documents/{job_id}/scan.png", "language": "en", "options": options}


def test_options_the_engine_does_not_know_are_carried_for_it_to_fail_the_job(platform: Platform) -> None:
    """The API checks only that ``options`` is a small JSON object: what they mean is the engine's to judge
    (``invalid_options``), as for a message sent to the queue; a fraction is stored and sent as it came."""
    options = {"outputs": ["docx"], "dpi": 1.5}
    status, created = call("POST", "/jobs", ALICE, body={"filename": "scan.png", "model": "pp-ocrv5", "options": options})
    assert status == 201
    upload(platform, created, tiny_png())
    assert platform.run_ingest(f"uploads/{created['job_id']}/scan.png")["outcome"] == "queued"
    [message] = [json.loads(m["Body"]) for m in platform.sqs.receive_message(QueueUrl=platform.queue_url, MaxNumberOfMessages=10)["Messages"]]
    assert message["options"] == options


def test_a_job_by_url_carries_its_options_in_its_message(platform: Platform) -> None:
    body = {"url": "https://example.com/scans/report.pdf", "model": "pp-ocrv5", "options": {"outputs": ["pdf"]}}

    status, created = call("POST", "/jobs", ALICE, body=body)

    assert status == 201
    messages = platform.sqs.receive_message(QueueUrl=platform.queue_url, MaxNumberOfMessages=10)["Messages"]
    assert [json.loads(m["Body"]) for m in messages] == [{
        "job_id": created["job_id"], "model": "pp-ocrv5", "input": "https://example.com/scans/report.pdf", "language": "en",
        "options": {"outputs": ["pdf"]},
    }]


def _completed_job(platform: Platform, job_id: str, result: dict[str, Any]) -> bytes:
    """A COMPLETED job of ALICE whose result.json is ``result``; returns the bytes stored."""
    platform.store.create(NewJob(job_id, "pp-ocrv5", f"s3://{BUCKET}/documents/{job_id}/scan.png", file_name="scan.png", owner=ALICE))
    platform.store.mark_processing(job_id, "lambda")
    data = json.dumps(result).encode()
    platform.s3.put_object(Bucket=BUCKET, Key=f"results/{job_id}/result.json", Body=data)
    assert platform.store.mark_completed(job_id, result_uri=f"s3://{BUCKET}/results/{job_id}/result.json", page_count=1)
    return data


RESULT = {"job_id": "job-r1", "model": "pp-ocrv5", "page_count": 1, "text": "Invoice 42", "pages": [{"page": 1, "lines": []}]}


@pytest.mark.parametrize("inline_max", [None, "exactly its size"])
def test_a_small_result_comes_inline_beside_its_location_and_link(
    platform: Platform, monkeypatch: pytest.MonkeyPatch, inline_max: str | None
) -> None:
    data = _completed_job(platform, "job-r1", RESULT)
    if inline_max:
        monkeypatch.setenv(ENV.INLINE_RESULT_MAX_BYTES, str(len(data)))
        _services.reset()

    status, answer = call("GET", "/jobs/job-r1/result", ALICE)

    assert status == 200
    assert answer["location"] == f"s3://{BUCKET}/results/job-r1/result.json"
    assert answer["size"] == len(data)
    assert answer["inline"] == RESULT
    assert requests.get(answer["result"], timeout=30).content == data


def test_a_result_over_the_inline_limit_comes_by_link_only(platform: Platform, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _completed_job(platform, "job-r1", RESULT)
    monkeypatch.setenv(ENV.INLINE_RESULT_MAX_BYTES, str(len(data) - 1))
    _services.reset()

    status, answer = call("GET", "/jobs/job-r1/result", ALICE)

    assert status == 200
    assert "inline" not in answer
    assert (answer["location"], answer["size"]) == (f"s3://{BUCKET}/results/job-r1/result.json", len(data))
    assert requests.get(answer["result"], timeout=30).content == data
    assert call("GET", "/jobs/job-r1/result", BOB)[0] == 404
