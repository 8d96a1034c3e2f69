"""Completion events and the webhook hand-off against moto: a job finished by the completion handler publishes
one EventBridge event (recorded by a rule on the default bus) and queues its webhook, exactly once; an event
EventBridge refused stays in the outbox until the sweeper publishes it, with the same ``event_id``."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError

from ocr_platform.core import defaults
from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.handlers import _services, sweeper
from ocr_platform.jobs.store import NewJob, utc_now
from ocr_platform.outputs.notifications import event_id
from tests.aws_events import FakeLambdaContext, sagemaker_notification
from tests.conftest import BUCKET, ENDPOINT, Platform
from tests.handlers.test_completion import VALID_OUTPUT

CALLBACK = "https://hooks.example.com/ocr"
#: The detail fields docs/contracts.md ("Completion events") lists; nothing internal may leak beside them.
DOCUMENTED_DETAIL_FIELDS = {
    "event_id", "job_id", "status", "model", "language", "pages", "file_name", "input", "input_url", "created_at",
    "finished_at", "page_count", "pages_done", "result", "error", "warnings",
}
SCHEDULED = {"source": "aws.events", "detail-type": "Scheduled Event"}


def _gpu_job(platform: Platform, job_id: str, *, callback_url: str | None = None) -> None:
    input_uri = platform.put_document(job_id, "scan.pdf")
    platform.store.create(NewJob(job_id, "paddleocr-vl", input_uri, file_name="scan.pdf", callback_url=callback_url))
    platform.store.mark_processing(job_id, "sagemaker")


def _success(platform: Platform, job_id: str) -> str:
    key = f"async/outputs/{job_id}.out"
    platform.s3.put_object(Bucket=BUCKET, Key=key, Body=json.dumps({**VALID_OUTPUT, "job_id": job_id}).encode())
    return sagemaker_notification(job_id, endpoint=ENDPOINT, input_location=f"s3://{BUCKET}/async/requests/{job_id}.json",
                                  output_location=f"s3://{BUCKET}/{key}")


def _error(platform: Platform, job_id: str) -> str:
    key = f"async/failures/{job_id}-error.out"
    body = {"error": {"code": "encrypted_pdf", "message": "The PDF is password protected."}}
    platform.s3.put_object(Bucket=BUCKET, Key=key, Body=json.dumps(body).encode())
    return sagemaker_notification(job_id, endpoint=ENDPOINT, input_location=f"s3://{BUCKET}/async/requests/{job_id}.json",
                                  failure_reason="ClientError: Received client error (400) from model.",
                                  failure_location=f"s3://{BUCKET}/{key}")


def _webhook_requests(platform: Platform) -> list[dict[str, Any]]:
    """The webhook queue's messages, left on the queue (received with no visibility timeout)."""
    messages = platform.sqs.receive_message(
        QueueUrl=platform.webhook_queue_url, MaxNumberOfMessages=10, VisibilityTimeout=0
    ).get("Messages", [])
    return [json.loads(m["Body"]) for m in messages]


def test_a_completed_job_publishes_one_event_and_queues_its_webhook(platform: Platform) -> None:
    _gpu_job(platform, "job-ev1", callback_url=CALLBACK)

    assert platform.publish("success", _success(platform, "job-ev1")) == {"outcomes": ["completed"]}

    [event] = platform.events()
    assert (event["source"], event["detail-type"]) == ("ocr-platform", "OCR Job Completed")
    detail = event["detail"]
    assert set(detail) <= DOCUMENTED_DETAIL_FIELDS  # no owner, claims, leases or callback_url
    job = platform.job("job-ev1")
    assert detail["event_id"] == event_id("job-ev1", "COMPLETED") and uuid.UUID(detail["event_id"])
    assert detail == {
        "event_id": detail["event_id"], "job_id": "job-ev1", "status": "COMPLETED", "model": "paddleocr-vl",
        "language": "en", "file_name": "scan.pdf", "input": f"s3://{BUCKET}/documents/job-ev1/scan.pdf",
        "created_at": job["created_at"], "finished_at": job["finished_at"], "page_count": 1, "pages_done": 1,
        "result": f"s3://{BUCKET}/results/job-ev1/result.json",
    }
    assert _webhook_requests(platform) == [
        {"job_id": "job-ev1", "event_id": detail["event_id"], "callback_url": CALLBACK, "detail": detail}
    ]
    assert "notification_pending" not in job


def test_a_failed_job_without_a_callback_url_publishes_its_error_and_queues_no_webhook(platform: Platform) -> None:
    _gpu_job(platform, "job-ev2")

    assert platform.publish("error", _error(platform, "job-ev2")) == {"outcomes": ["failed"]}

    [event] = platform.events()
    assert (event["source"], event["detail-type"]) == ("ocr-platform", "OCR Job Failed")
    detail = event["detail"]
    assert set(detail) <= DOCUMENTED_DETAIL_FIELDS
    assert (detail["job_id"], detail["status"]) == ("job-ev2", "FAILED")
    assert detail["event_id"] == event_id("job-ev2", "FAILED") != event_id("job-ev2", "COMPLETED")
    assert detail["error"] == {"code": "encrypted_pdf", "message": "The PDF is password protected."}
    assert "result" not in detail
    assert _webhook_requests(platform) == []
    assert "notification_pending" not in platform.job("job-ev2")


def test_a_repeated_terminal_write_publishes_nothing_more(platform: Platform) -> None:
    _gpu_job(platform, "job-ev3", callback_url=CALLBACK)
    success = _success(platform, "job-ev3")
    platform.publish("success", success)

    assert platform.publish("success", success) == {"outcomes": ["ignored"]}  # SNS delivered it twice
    assert platform.publish("error", _error(platform, "job-ev3")) == {"outcomes": ["ignored"]}
    assert _services.services().store.mark_failed("job-ev3", JobError(ErrorCode.INTERNAL_ERROR, "late")) is False

    assert [e["detail"]["status"] for e in platform.events()] == ["COMPLETED"]
    assert len(_webhook_requests(platform)) == 1


class _RefusingEvents:
    """An EventBridge client whose ``put_events`` fails (an API error, or an entry it refused); it remembers
    the entries it was given."""

    def __init__(self, how: str) -> None:
        self.how = how
        self.entries: list[dict[str, Any]] = []

    def put_events(self, Entries: list[dict[str, Any]]) -> dict[str, Any]:  # noqa: N803 - boto3's name
        self.entries.extend(Entries)
        if self.how == "raises":
            raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, "PutEvents")
        return {"FailedEntryCount": 1, "Entries": [{"ErrorCode": "InternalFailure", "ErrorMessage": "try again"}]}


@pytest.mark.parametrize("how", ["raises", "refuses-the-entry"])
def test_an_event_eventbridge_did_not_take_is_published_by_the_sweeper_with_the_same_id(
    platform: Platform, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    notifier = _services.services().notifier
    real_events, refusing = notifier.events, _RefusingEvents(how)
    monkeypatch.setattr(notifier, "events", refusing)
    _gpu_job(platform, "job-ev4", callback_url=CALLBACK)

    assert platform.publish("success", _success(platform, "job-ev4")) == {"outcomes": ["completed"]}  # not undone

    job = platform.job("job-ev4")
    assert job["status"] == "COMPLETED" and job["notification_pending"] == "COMPLETED"
    [tried] = [json.loads(entry["Detail"]) for entry in refusing.entries]
    assert platform.events() == [] and _webhook_requests(platform) == []  # no webhook ahead of its event

    monkeypatch.setattr(notifier, "events", real_events)  # EventBridge is back
    assert sweeper.handler(SCHEDULED, FakeLambdaContext())["republished"] == []  # its writer may still publish it
    assert platform.events() == []

    store = _services.services().store
    later = utc_now() + timedelta(seconds=defaults.NOTIFICATION_GRACE_SECONDS + 5)
    monkeypatch.setattr(store, "clock", lambda: later)
    assert sweeper.handler(SCHEDULED, FakeLambdaContext())["republished"] == ["job-ev4"]

    [event] = platform.events()
    assert event["detail-type"] == "OCR Job Completed"
    assert event["detail"] == tried and event["detail"]["event_id"] == event_id("job-ev4", "COMPLETED")
    [request] = _webhook_requests(platform)
    assert request["event_id"] == tried["event_id"] and request["callback_url"] == CALLBACK
    assert "notification_pending" not in platform.job("job-ev4")

    assert sweeper.handler(SCHEDULED, FakeLambdaContext())["republished"] == []  # out of the outbox: once only
    assert len(platform.events()) == 1 and len(_webhook_requests(platform)) == 1


class _RefusingOneJob:
    """EventBridge that refuses one job's event (say, a detail it will never take) and passes the rest on."""

    def __init__(self, real: Any, job_id: str) -> None:
        self.real, self.job_id = real, job_id

    def put_events(self, Entries: list[dict[str, Any]]) -> dict[str, Any]:  # noqa: N803 - boto3's name
        if json.loads(Entries[0]["Detail"])["job_id"] == self.job_id:
            raise ClientError({"Error": {"Code": "ValidationException", "Message": "Total size exceeds 256KB"}}, "PutEvents")
        return dict(self.real.put_events(Entries=Entries))


def test_one_event_eventbridge_keeps_refusing_does_not_hold_up_the_others(platform: Platform, monkeypatch: pytest.MonkeyPatch) -> None:
    notifier = _services.services().notifier
    real_events = notifier.events
    monkeypatch.setattr(notifier, "events", _RefusingEvents("raises"))
    for job_id in ("job-ev5", "job-ev6"):
        _gpu_job(platform, job_id)
        assert platform.publish("success", _success(platform, job_id)) == {"outcomes": ["completed"]}
    monkeypatch.setattr(notifier, "events", _RefusingOneJob(real_events, "job-ev5"))
    later = utc_now() + timedelta(seconds=defaults.NOTIFICATION_GRACE_SECONDS + 5)
    monkeypatch.setattr(_services.services().store, "clock", lambda: later)

    assert sweeper.handler(SCHEDULED, FakeLambdaContext())["republished"] == ["job-ev6"]

    assert [event["detail"]["job_id"] for event in platform.events()] == ["job-ev6"]
    assert platform.job("job-ev5")["notification_pending"] == "COMPLETED"  # the next sweep tries again
