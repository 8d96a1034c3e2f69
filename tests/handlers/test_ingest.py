"""The drop folder against moto: an object written under ``inbox/<model>/[<language>/]`` becomes one job.

Each test writes the object to moto's S3 and hands the ingest handler the EventBridge event S3 sends for it
(``ocr_platform.local.events.s3_object_created_event``, checked against AWS's sample in tests/unit), then
follows the job through the invoker as the queue would deliver it.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from ocr_platform.handlers import ingest
from ocr_platform.local.events import s3_object_created_event
from tests.aws_events import FakeLambdaContext
from tests.conftest import BUCKET, Platform
from tests.documents import tiny_png


def _drop(platform: Platform, key: str, data: bytes | None = None, metadata: dict[str, str] | None = None) -> dict[str, Any]:
    """Write ``key`` and return the event S3 sends to EventBridge for it."""
    platform.s3.put_object(Bucket=BUCKET, Key=key, Body=tiny_png() if data is None else data, Metadata=metadata or {})
    head = platform.s3.head_object(Bucket=BUCKET, Key=key)
    return s3_object_created_event(bucket=BUCKET, key=key, size=head["ContentLength"], etag=head["ETag"],
                                   version_id=head.get("VersionId"), event_id=str(uuid.uuid4()), time_iso="2026-11-22T07:00:00Z")


def _ingest(event: dict[str, Any]) -> dict[str, Any]:
    return ingest.handler(event, FakeLambdaContext(function_name="ocr-ingest"))


def _queued_messages(platform: Platform) -> list[dict[str, Any]]:
    messages = platform.sqs.receive_message(QueueUrl=platform.queue_url, MaxNumberOfMessages=10).get("Messages", [])
    for message in messages:
        platform.sqs.change_message_visibility(QueueUrl=platform.queue_url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0)
    return [json.loads(message["Body"]) for message in messages]


def test_a_file_dropped_in_a_models_language_folder_becomes_a_queued_job_and_reaches_the_processor(platform: Platform) -> None:
    answer = _ingest(_drop(platform, "inbox/pp-ocrv5/fr/scan 1.png"))

    job_id = answer["job_id"]
    assert answer["outcome"] == "queued" and job_id.startswith("inbox-") and len(job_id) == 46
    document = f"documents/{job_id}/scan_1.png"
    job = platform.job(job_id)
    assert (job["status"], job["model"], job["language"], job["file_name"]) == ("QUEUED", "pp-ocrv5", "fr", "scan 1.png")
    assert job["input"] == f"s3://{BUCKET}/{document}"
    assert platform.s3.get_object(Bucket=BUCKET, Key=document)["Body"].read() == tiny_png()
    assert _queued_messages(platform) == [{"job_id": job_id, "model": "pp-ocrv5", "input": f"s3://{BUCKET}/{document}", "language": "fr"}]

    platform.run_invoker()
    assert [payload["job_id"] for payload in platform.processor_payloads()] == [job_id]
    assert platform.job(job_id)["status"] == "PROCESSING"


def test_the_same_object_reported_twice_or_late_is_one_job_and_a_new_version_another(platform: Platform) -> None:
    event = _drop(platform, "inbox/pp-ocrv5/page.png")
    first, again = _ingest(event), _ingest(event)  # S3 delivers at least once; a job still QUEUED is sent again
    assert (first["outcome"], again["outcome"], again["job_id"]) == ("queued", "queued", first["job_id"])
    platform.run_invoker()
    platform.run_invoker()
    assert len(platform.processor_payloads()) == 1  # handed over once
    assert _ingest(event) == {"job_id": first["job_id"], "outcome": "duplicate"}  # later: nothing more is sent
    assert _queued_messages(platform) == []

    rewritten = _ingest(_drop(platform, "inbox/pp-ocrv5/page.png", tiny_png() + b"\0"))  # new content, new ETag
    assert rewritten["outcome"] == "queued" and rewritten["job_id"] != first["job_id"]


def test_a_key_without_a_model_folder_or_with_a_bad_language_fails_its_job_with_the_reason(platform: Platform) -> None:
    loose = _ingest(_drop(platform, "inbox/scan.png"))
    assert loose["outcome"] == "failed"
    error = platform.job(loose["job_id"])["error"]
    assert error["code"] == "invalid_inbox_key" and "inbox/<model>/<file>" in error["message"]

    shouting = _ingest(_drop(platform, "inbox/pp-ocrv5/FR!/a.png"))
    job = platform.job(shouting["job_id"])
    assert (job["status"], job["error"]["code"], job["model"]) == ("FAILED", "invalid_message", "pp-ocrv5")
    assert "'language'" in job["error"]["message"]
    assert _queued_messages(platform) == []


def test_an_unknown_model_folder_fails_at_the_invoker_and_a_folder_marker_is_no_job(platform: Platform) -> None:
    assert _ingest(_drop(platform, "inbox/pp-ocrv5/", b""))["outcome"] == "ignored"
    assert _queued_messages(platform) == []

    unknown = _ingest(_drop(platform, "inbox/tesseract/a.png"))
    assert unknown["outcome"] == "queued"
    platform.run_invoker()
    job = platform.job(unknown["job_id"])
    assert (job["status"], job["error"]["code"]) == ("FAILED", "unknown_model")


def test_a_dropped_file_asks_for_forms_with_its_metadata(platform: Platform) -> None:
    """``aws s3 cp scan.png s3://bucket/inbox/pp-ocrv5/ --metadata ocr-features=forms``."""
    answer = _ingest(_drop(platform, "inbox/pp-ocrv5/form.png", metadata={"ocr-features": "forms"}))

    [message] = _queued_messages(platform)
    assert message["options"] == {"features": ["forms"]}
    assert platform.job(answer["job_id"])["options"] == {"features": ["forms"]}
