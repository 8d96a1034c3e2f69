"""DLQ consumer and sweeper against moto: no job is left QUEUED or PROCESSING forever."""

from __future__ import annotations

import json
from datetime import timedelta

import boto3
import pytest

from ocr_platform.core import defaults
from ocr_platform.jobs.store import JobStore, NewJob, utc_now
from tests.aws_events import FakeLambdaContext, sqs_event
from tests.conftest import BUCKET, TABLE, Platform


def _dead_letter(platform: Platform, body: str) -> dict:
    platform.sqs.send_message(QueueUrl=platform.dlq_url, MessageBody=body)
    messages = platform.sqs.receive_message(QueueUrl=platform.dlq_url, AttributeNames=["All"])["Messages"]
    return sqs_event(messages, "arn:aws:sqs:us-east-1:123456789012:ocr-test-dlq")


def test_dead_lettered_message_fails_its_job_and_is_archived(platform: Platform) -> None:
    from ocr_platform.handlers import dlq_consumer

    platform.store.create(NewJob("job-dead", "pp-ocrv5", "s3://b/documents/job-dead/a.png"))
    event = _dead_letter(platform, json.dumps({"job_id": "job-dead", "model": "pp-ocrv5", "input": "s3://b/documents/job-dead/a.png"}))

    assert dlq_consumer.handler(event, FakeLambdaContext()) == {"batchItemFailures": []}

    job = platform.job("job-dead")
    assert job["status"] == "FAILED" and job["error"]["code"] == "dead_lettered"
    message_id = event["Records"][0]["messageId"]
    archived = platform.read_json(f"dead-letters/{message_id}.json")
    assert json.loads(archived["body"])["job_id"] == "job-dead"
    assert f"s3://{BUCKET}/dead-letters/{message_id}.json" in job["error"]["message"]


def test_dead_lettered_message_without_a_job_id_is_archived_only(platform: Platform) -> None:
    from ocr_platform.handlers import dlq_consumer

    event = _dead_letter(platform, "{broken")

    assert dlq_consumer.handler(event, FakeLambdaContext()) == {"batchItemFailures": []}
    assert platform.keys("dead-letters/") == [f"dead-letters/{event['Records'][0]['messageId']}.json"]
    assert platform.store.table.scan()["Items"] == []


def test_dead_letter_of_a_finished_job_changes_nothing(platform: Platform) -> None:
    from ocr_platform.handlers import dlq_consumer

    platform.store.create(NewJob("job-ok", "pp-ocrv5", "s3://b/documents/job-ok/a.png"))
    platform.store.mark_processing("job-ok", "lambda")
    platform.store.mark_completed("job-ok", result_uri="s3://b/results/job-ok/result.json", page_count=1)

    dlq_consumer.handler(_dead_letter(platform, json.dumps({"job_id": "job-ok"})), FakeLambdaContext())

    assert platform.job("job-ok")["status"] == "COMPLETED"


@pytest.fixture
def past(platform: Platform):
    def store_at(hours_ago: float) -> JobStore:
        return JobStore(TABLE, dynamodb=boto3.resource("dynamodb"), clock=lambda: utc_now() - timedelta(hours=hours_ago))

    return store_at


def test_sweeper_fails_jobs_past_their_deadline_and_only_those(platform: Platform, past) -> None:
    from ocr_platform.handlers import sweeper

    # Older than the longest deadline the sweeper falls back on (QUEUED: the queue's 4-day retention).
    longest = max(defaults.queued_deadline_seconds(), defaults.lambda_deadline_seconds(), defaults.sagemaker_deadline_seconds())
    old, recent = past(longest / 3600 + 1), past(0.01)
    for store, job_id, backend in ((old, "stuck-gpu", "sagemaker"), (recent, "busy-gpu", "sagemaker"), (old, "stuck-cpu", "lambda")):
        store.create(NewJob(job_id, "m", "s3://b/k"))
        store.mark_processing(job_id, backend)
    old.create(NewJob("stuck-queued", "m", "s3://b/k"))
    recent.create(NewJob("fresh-queued", "m", "s3://b/k"))
    old.create(NewJob("done", "m", "s3://b/k"))
    old.mark_processing("done", "lambda")
    old.mark_completed("done", result_uri="s3://b/r", page_count=1)

    response = sweeper.handler({"source": "aws.events", "detail-type": "Scheduled Event"}, FakeLambdaContext())

    assert sorted(response["failed"]) == ["stuck-cpu", "stuck-gpu", "stuck-queued"]
    for job_id in ("stuck-cpu", "stuck-gpu", "stuck-queued"):
        job = platform.job(job_id)
        assert job["status"] == "FAILED" and job["error"]["code"] == "timed_out"
    assert "PROCESSING on sagemaker" in platform.job("stuck-gpu")["error"]["message"]
    assert [platform.job(j)["status"] for j in ("busy-gpu", "fresh-queued", "done")] == ["PROCESSING", "QUEUED", "COMPLETED"]


def test_the_sweeper_leaves_a_gpu_job_that_sagemaker_may_still_run(platform: Platform, past) -> None:
    """A request may wait out its whole TTL in SageMaker's queue and then run to its invocation timeout."""
    from ocr_platform.handlers import sweeper

    still_billable = defaults.REQUEST_TTL_SECONDS + defaults.INVOCATION_TIMEOUT_SECONDS
    waiting, gone = past((still_billable - 60) / 3600), past((defaults.sagemaker_deadline_seconds() + 60) / 3600)
    for store, job_id in ((waiting, "queued-at-endpoint"), (gone, "past-every-limit")):
        store.create(NewJob(job_id, "paddleocr-vl", "s3://b/k"))
        store.mark_processing(job_id, "sagemaker")

    response = sweeper.handler({"source": "aws.events", "detail-type": "Scheduled Event"}, FakeLambdaContext())

    assert response["failed"] == ["past-every-limit"]
    assert platform.job("queued-at-endpoint")["status"] == "PROCESSING"


def test_the_sweeper_leaves_a_queued_job_that_is_only_waiting_its_turn(platform: Platform, past) -> None:
    """Processors holding the account's concurrency throttle the invoker; the message waits on the queue."""
    from ocr_platform.handlers import sweeper

    past(1.0).create(NewJob("waiting-an-hour", "pp-ocrv5", "s3://b/k"))

    response = sweeper.handler({"source": "aws.events", "detail-type": "Scheduled Event"}, FakeLambdaContext())

    assert response["failed"] == []
    assert platform.job("waiting-an-hour")["status"] == "QUEUED"


# ----- a finished inference is never lost with its notification ------------------------------------


def _finished_vl_job(platform: Platform, job_id: str, *, output: dict | None = None, error: dict | None = None) -> None:
    from ocr_platform.jobs.store import NewJob

    platform.store.create(NewJob(job_id, "paddleocr-vl", platform.put_document(job_id, "scan.pdf")))
    platform.store.mark_processing(job_id, "sagemaker")
    out, fail = f"async/outputs/{job_id}.out", f"async/failures/{job_id}-error.out"
    platform.store.mark_dispatched(job_id, output_location=f"s3://{BUCKET}/{out}", failure_location=f"s3://{BUCKET}/{fail}")
    if output is not None:
        platform.s3.put_object(Bucket=BUCKET, Key=out, Body=json.dumps(output).encode())
    if error is not None:
        platform.s3.put_object(Bucket=BUCKET, Key=fail, Body=json.dumps({"error": error}).encode())


def _completion_fails_every_retry(platform: Platform, job_id: str, kind: str) -> None:
    """SageMaker's notification reaches the completion function while DynamoDB throttles it: Lambda's first
    attempt and both retries fail, and the event is parked."""
    from botocore.exceptions import ClientError

    from ocr_platform.handlers import _services, completion
    from tests.aws_events import sagemaker_notification

    def throttled(**_: object) -> None:
        raise ClientError({"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "throttled"}}, "UpdateItem")

    location = {"output_location": f"s3://{BUCKET}/async/outputs/{job_id}.out"} if kind == "success" else {
        "failure_reason": "ClientError: Received server error (500) from model.",
        "failure_location": f"s3://{BUCKET}/async/failures/{job_id}-error.out"}
    note = sagemaker_notification(job_id, endpoint="ocr-test-vl", input_location=f"s3://{BUCKET}/async/requests/{job_id}.json", **location)
    event = platform.sns_delivery(kind, note)
    dynamodb_events = _services.services().store.table.meta.client.meta.events
    dynamodb_events.register("before-call.dynamodb.UpdateItem", throttled, unique_id="throttle")
    try:
        for _attempt in range(3):
            with pytest.raises(ClientError):
                completion.handler(event, FakeLambdaContext(function_name="ocr-completion"))
    finally:
        dynamodb_events.unregister("before-call.dynamodb.UpdateItem", unique_id="throttle")
    assert platform.job(job_id)["status"] == "PROCESSING"


def test_a_finished_inference_whose_completion_failed_every_retry_is_completed_from_s3(platform: Platform) -> None:
    from ocr_platform.recovery.job_recovery import settle_finished_inferences
    from tests.handlers.test_completion import VALID_OUTPUT

    output = {**VALID_OUTPUT, "job_id": "lost-success"}
    _finished_vl_job(platform, "lost-success", output=output)
    _completion_fails_every_retry(platform, "lost-success", "success")

    soon = settle_finished_inferences(platform.store, platform.s3, platform.layout)
    later = settle_finished_inferences(platform.store, platform.s3, platform.layout, now=utc_now() + timedelta(hours=1))

    assert soon == {}  # within the grace, the notification may still come
    assert later == {"lost-success": "completed"}
    job = platform.job("lost-success")
    assert job["status"] == "COMPLETED" and job["page_count"] == 1
    assert platform.read_json("results/lost-success/result.json") == {**output, "warnings": []}


def test_a_failed_inference_whose_error_notification_was_lost_fails_with_the_endpoints_error(platform: Platform) -> None:
    from ocr_platform.recovery.job_recovery import settle_finished_inferences

    _finished_vl_job(platform, "lost-error", error={"code": "encrypted_pdf", "message": "The PDF is password protected."})
    _completion_fails_every_retry(platform, "lost-error", "error")

    assert settle_finished_inferences(platform.store, platform.s3, platform.layout, now=utc_now() + timedelta(hours=1)) == {"lost-error": "failed"}
    job = platform.job("lost-error")
    assert job["status"] == "FAILED"
    assert job["error"] == {"code": "encrypted_pdf", "message": "The PDF is password protected."}


def test_a_gpu_job_still_running_is_not_settled(platform: Platform) -> None:
    from ocr_platform.recovery.job_recovery import settle_finished_inferences

    _finished_vl_job(platform, "still-running")
    assert settle_finished_inferences(platform.store, platform.s3, platform.layout, now=utc_now() + timedelta(hours=1)) == {}
    assert platform.job("still-running")["status"] == "PROCESSING"


def test_the_sweeper_settles_after_the_grace_its_setting_gives(platform: Platform, monkeypatch: pytest.MonkeyPatch) -> None:
    """``OCR_SETTLE_GRACE_SECONDS`` decides when the scheduled sweeper stops waiting for the notification."""
    from ocr_platform.core.settings import ENV
    from ocr_platform.handlers import _services, sweeper
    from tests.handlers.test_completion import VALID_OUTPUT

    _finished_vl_job(platform, "grace-job", output={**VALID_OUTPUT, "job_id": "grace-job"})
    event = {"source": "aws.events", "detail-type": "Scheduled Event"}

    assert sweeper.handler(event, FakeLambdaContext())["settled"] == {}  # the default grace: 10 minutes
    assert platform.job("grace-job")["status"] == "PROCESSING"

    monkeypatch.setenv(ENV.SETTLE_GRACE_SECONDS, "0")
    _services.reset()
    assert sweeper.handler(event, FakeLambdaContext())["settled"] == {"grace-job": "completed"}
    assert platform.job("grace-job")["status"] == "COMPLETED"
