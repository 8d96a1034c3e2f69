"""Two deliveries of one event that really race, against moto: one hand-over, one run, one result.

SQS, SNS and Lambda's asynchronous invocations deliver at least once, and two copies can be in flight at the
same time (an SQS message handed to two invocations under scale-out, an SNS notification delivered twice).
Each test starts the first delivery in a thread and holds it at the point where the work happens (the
hand-over to the backend, the engine run, the read of the endpoint's output) with a botocore hook or an
engine that waits on an event, runs the second delivery to its end there, then lets the first go on. So the
interleaving is the same on every machine, without sleeps.

After each race: the backend was called once, the job is in its one right terminal state, and S3 holds at
most one ``result.json`` write, only for a ``COMPLETED`` job.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from ocr_platform.core.results import EngineInfo
from ocr_platform.engines import EngineOutput
from ocr_platform.inputs.dispatch import HandOverInProgressError
from ocr_platform.jobs.store import JobStore, NewJob, utc_now
from tests.aws_events import FakeLambdaContext, sagemaker_notification, sqs_event
from tests.conftest import BUCKET, ENDPOINT, TABLE, Platform
from tests.engine_registry import registered_engine
from tests.handlers.test_completion import VALID_OUTPUT

#: Generous: a held delivery waits at most this long for the other one (a broken test fails, it never hangs).
WAIT_SECONDS = 30.0


class HeldFirst:
    """Holds the first call that reaches a point until ``release``; later calls pass straight through."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self._released = threading.Event()
        self._lock = threading.Lock()
        self.calls = 0

    def __call__(self, **_: Any) -> None:
        with self._lock:
            self.calls += 1
            first = self.calls == 1
        if first:
            self.reached.set()
            assert self._released.wait(WAIT_SECONDS), "the second delivery never finished"

    def release(self) -> None:
        self._released.set()


@contextmanager
def held_at(client: Any, event_name: str) -> Iterator[HeldFirst]:
    """Hold the first ``event_name`` call (e.g. ``before-call.lambda.Invoke``) made with ``client``."""
    hold = HeldFirst()
    client.meta.events.register(event_name, hold, unique_id="race-hold")
    try:
        yield hold
    finally:
        hold.release()
        client.meta.events.unregister(event_name, unique_id="race-hold")


def race(first: Callable[[], Any], second: Callable[[], Any], hold: HeldFirst) -> tuple[Any, Any]:
    """Run ``first`` until it reaches ``hold``, run ``second`` to its end, then let ``first`` finish.

    Returns both outcomes: a return value, or the exception raised.
    """
    outcomes: dict[str, Any] = {}

    def run_first() -> None:
        try:
            outcomes["first"] = first()
        except Exception as err:  # noqa: BLE001 - the outcome under test
            outcomes["first"] = err
        finally:
            hold.reached.set()  # a first delivery that never reaches the point must not block the test

    thread = threading.Thread(target=run_first, daemon=True)
    thread.start()
    assert hold.reached.wait(WAIT_SECONDS), "the first delivery never reached the point of the race"
    try:
        outcomes["second"] = second()
    except Exception as err:  # noqa: BLE001
        outcomes["second"] = err
    finally:
        hold.release()
    thread.join(WAIT_SECONDS)
    assert not thread.is_alive(), "the first delivery did not finish"
    return outcomes["first"], outcomes["second"]


def result_writes(platform: Platform, job_id: str) -> Callable[[], int]:
    """Counts the ``PutObject`` calls of ``results/{job_id}/result.json`` the handlers make from now on."""
    from ocr_platform.handlers import _services

    writes: list[str] = []

    def record(params: dict[str, Any], **_: Any) -> None:
        if params.get("Key") == f"results/{job_id}/result.json":
            writes.append(params["Key"])

    _services._client("s3").meta.events.register("provide-client-params.s3.PutObject", record)
    return lambda: len(writes)


def assert_one_right_ending(platform: Platform, job_id: str, status: str, writes: int) -> None:
    job = platform.job(job_id)
    assert job["status"] == status
    assert writes == (1 if status == "COMPLETED" else 0)
    assert (f"results/{job_id}/result.json" in platform.keys(f"results/{job_id}/")) == (status == "COMPLETED")


# ----- the invoker: one SQS message, two invocations ---------------------------------------------


@pytest.mark.parametrize(
    ("model", "hand_over"),
    [("pp-ocrv5", "before-call.lambda.Invoke"), ("paddleocr-vl", "before-call.sagemaker-runtime.InvokeEndpointAsync")],
)
def test_one_message_delivered_to_two_invocations_at_once_is_handed_over_once(platform: Platform, model: str, hand_over: str) -> None:
    from ocr_platform.handlers import _services, invoker

    platform.set_desired_instances(1)
    job_id = f"race-{model}"
    uri = platform.put_document(job_id)
    platform.store.create(NewJob(job_id, model, uri))
    platform.enqueue({"job_id": job_id, "model": model, "input": uri})
    [message] = platform.sqs.receive_message(QueueUrl=platform.queue_url, AttributeNames=["All"])["Messages"]
    record = sqs_event([message], platform.queue_arn)["Records"][0]
    client = _services._client("lambda" if model == "pp-ocrv5" else "sagemaker-runtime")

    with held_at(client, hand_over) as hold:
        first, second = race(lambda: invoker.handle_record(SQSRecord(record)), lambda: invoker.handle_record(SQSRecord(record)), hold)

    assert first == "dispatched"
    assert isinstance(second, HandOverInProgressError)  # reported as a batch item failure: SQS brings it back
    assert hold.calls == 1
    calls = platform.calls.get("Invoke" if model == "pp-ocrv5" else "InvokeEndpointAsync", [])
    assert len(calls) == 1
    job = platform.job(job_id)
    assert job["status"] == "PROCESSING" and job["dispatched_at"]

    # The second copy comes back after the visibility timeout and finds the job handed over.
    assert invoker.handle_record(SQSRecord(record)) == "duplicate"
    assert len(platform.calls.get("Invoke" if model == "pp-ocrv5" else "InvokeEndpointAsync", [])) == 1


def test_a_delivery_past_the_lease_of_a_crashed_one_takes_the_hand_over_over(platform: Platform) -> None:
    """Crash recovery is kept: a claim whose holder died without handing over expires with its lease."""

    job_id = "race-crashed"
    uri = platform.put_document(job_id)
    platform.store.create(NewJob(job_id, "pp-ocrv5", uri))
    an_hour_ago = JobStore(TABLE, dynamodb=boto3.resource("dynamodb"), clock=lambda: utc_now() - timedelta(hours=1))
    assert an_hour_ago.claim_dispatch(job_id, "lambda", attempt_id="crashed-delivery", lease_seconds=60).acquired

    platform.enqueue({"job_id": job_id, "model": "pp-ocrv5", "input": uri})
    assert platform.run_invoker() == {"batchItemFailures": []}

    assert len(platform.calls["Invoke"]) == 1
    job = platform.job(job_id)
    assert job["dispatched_at"] and job["dispatch_attempt"] != "crashed-delivery"


# ----- the processor: one asynchronous event, two invocations ------------------------------------


class HeldEngine:
    """A plumbing engine (not OCR) whose first run waits until released: the point where a run races."""

    info = EngineInfo(name="plumbing-race-engine", models=["none"], version="0")

    def __init__(self) -> None:
        self.hold = HeldFirst()
        self.runs = 0

    def predict(self, path: Path, **_: Any) -> EngineOutput:
        self.runs += 1
        self.hold()
        page = {"page": 1, "width": 10, "height": 10, "scale": 1.0,
                "lines": [{"text": "raced", "polygon": [[0, 0], [5, 0], [5, 5], [0, 5]], "score": 0.9}]}
        return EngineOutput(pages=[page], raw={"engine": "raw"}, timings={"predict": 0.0})


@pytest.fixture
def held_engine(platform: Platform) -> Iterator[HeldEngine]:
    instance = HeldEngine()
    with registered_engine("pp-ocrv5", lambda: instance):
        yield instance
        instance.hold.release()


def test_one_processor_event_delivered_twice_at_once_runs_the_engine_once(platform: Platform, held_engine: HeldEngine) -> None:
    job_id = "race-run"
    payload = {"job_id": job_id, "model": "pp-ocrv5", "input": platform.put_document(job_id)}
    platform.store.create(NewJob(job_id, "pp-ocrv5", payload["input"]))
    platform.store.mark_processing(job_id, "lambda")
    writes = result_writes(platform, job_id)

    first, second = race(lambda: platform.run_processor(payload), lambda: platform.run_processor(payload), held_engine.hold)

    assert (first["outcome"], second["outcome"]) == ("completed", "skipped")
    assert held_engine.runs == 1
    assert_one_right_ending(platform, job_id, "COMPLETED", writes())


# ----- the completion function: two notifications for one inference -----------------------------


def _vl_job(platform: Platform, job_id: str) -> str:
    uri = platform.put_document(job_id, "scan.pdf")
    platform.store.create(NewJob(job_id, "paddleocr-vl", uri))
    platform.store.mark_processing(job_id, "sagemaker")
    platform.store.mark_dispatched(job_id)
    return f"s3://{BUCKET}/async/requests/{job_id}.json"


def _notification(platform: Platform, job_id: str, kind: str) -> dict[str, Any]:
    """An SNS event carrying SageMaker's success (the output is in S3) or error (with its error body) notification."""
    request = f"s3://{BUCKET}/async/requests/{job_id}.json"
    if kind == "success":
        key = f"async/outputs/{job_id}.out"
        platform.s3.put_object(Bucket=BUCKET, Key=key, Body=json.dumps({**VALID_OUTPUT, "job_id": job_id}).encode())
        body = sagemaker_notification(job_id, endpoint=ENDPOINT, input_location=request, output_location=f"s3://{BUCKET}/{key}")
    else:
        key = f"async/failures/{job_id}-error.out"
        platform.s3.put_object(Bucket=BUCKET, Key=key, Body=json.dumps({"error": {"code": "engine_failed", "message": "GPU out of memory"}}).encode())
        body = sagemaker_notification(job_id, endpoint=ENDPOINT, input_location=request,
                                      failure_reason="ClientError: Received server error (500) from model.",
                                      failure_location=f"s3://{BUCKET}/{key}")
    return platform.sns_delivery(kind, body)


def _complete(event: dict[str, Any]) -> str:
    from ocr_platform.handlers import completion

    [outcome] = completion.handler(event, FakeLambdaContext(function_name="ocr-completion"))["outcomes"]
    return outcome


@pytest.mark.parametrize(
    ("first_kind", "second_kind", "status"),
    [("success", "success", "COMPLETED"), ("error", "error", "FAILED"), ("success", "error", "COMPLETED"), ("error", "success", "FAILED")],
)
def test_two_notifications_for_one_inference_at_once_finish_the_job_once(
    platform: Platform, first_kind: str, second_kind: str, status: str
) -> None:
    from ocr_platform.handlers import _services

    job_id = f"race-{first_kind}-{second_kind}"
    _vl_job(platform, job_id)
    first_event, second_event = _notification(platform, job_id, first_kind), _notification(platform, job_id, second_kind)
    writes = result_writes(platform, job_id)

    with held_at(_services._client("s3"), "before-call.s3.GetObject") as hold:
        first, second = race(lambda: _complete(first_event), lambda: _complete(second_event), hold)

    assert (first, second) == ("completed" if status == "COMPLETED" else "failed", "ignored")
    assert_one_right_ending(platform, job_id, status, writes())
    if status == "FAILED":
        assert platform.job(job_id)["error"] == {"code": "engine_failed", "message": "GPU out of memory"}


# ----- recovery against a late completion ------------------------------------------------------


def test_a_dead_lettered_copy_does_not_fail_a_job_whose_result_is_being_published(platform: Platform) -> None:
    from ocr_platform.handlers import _services, dlq_consumer

    job_id = "race-dlq"
    _vl_job(platform, job_id)
    success = _notification(platform, job_id, "success")
    writes = result_writes(platform, job_id)
    platform.sqs.send_message(QueueUrl=platform.dlq_url, MessageBody=json.dumps({"job_id": job_id, "model": "paddleocr-vl", "input": "s3://x/y"}))
    dead = platform.sqs.receive_message(QueueUrl=platform.dlq_url, AttributeNames=["All"])["Messages"]

    with held_at(_services._client("s3"), "before-call.s3.GetObject") as hold:
        first, second = race(
            lambda: _complete(success),
            lambda: dlq_consumer.handler(sqs_event(dead, "arn:aws:sqs:us-east-1:123456789012:ocr-test-dlq"), FakeLambdaContext()),
            hold,
        )

    assert first == "completed"
    assert second == {"batchItemFailures": []}
    assert_one_right_ending(platform, job_id, "COMPLETED", writes())
    assert platform.keys("dead-letters/")  # the copy is archived all the same


def test_the_sweeper_does_not_fail_a_job_whose_result_is_being_published(platform: Platform, monkeypatch: pytest.MonkeyPatch) -> None:
    from ocr_platform.core.settings import ENV
    from ocr_platform.handlers import _services, sweeper

    job_id = "race-sweeper"
    _vl_job(platform, job_id)
    success = _notification(platform, job_id, "success")
    writes = result_writes(platform, job_id)
    monkeypatch.setenv(ENV.SAGEMAKER_DEADLINE_SECONDS, "0")  # the job is past its deadline as far as the sweeper knows
    _services.services.cache_clear()

    with held_at(_services._client("s3"), "before-call.s3.GetObject") as hold:
        first, second = race(lambda: _complete(success), lambda: sweeper.handler({"source": "aws.events"}, FakeLambdaContext()), hold)

    assert first == "completed"
    assert second["failed"] == [] and second["settled"] == {}
    assert_one_right_ending(platform, job_id, "COMPLETED", writes())


# ----- scale-in against an invoker that is scaling out -------------------------------------------


def test_a_scale_in_racing_a_dispatch_leaves_the_request_to_the_backlog_without_capacity_alarm(platform: Platform) -> None:
    """SageMaker has no conditional capacity update, so the check and the scale-in cannot be one atomic step.

    The scale-in function finds nothing in flight and is held just before it sets the endpoint to 0; the
    invoker meanwhile finds the endpoint at 1 instance (nothing to scale) and sends its request; then the
    scale-in goes through. The request now waits at 0 instances, which is exactly what the stack's
    ``HasBacklogWithoutCapacity`` alarm and its step scaling policy exist for: one period later the endpoint
    is back at 1 instance and serves it. The local stack evaluates that alarm with the function below.
    """
    from ocr_platform.handlers import _services, invoker, scale_in
    from ocr_platform.local.alarms import scale_out_on_backlog_without_capacity
    from tests.aws_events import idle_alarm_message
    from tests.conftest import VARIANT

    platform.set_desired_instances(1)
    job_id = "race-scale-in"
    uri = platform.put_document(job_id)
    platform.store.create(NewJob(job_id, "paddleocr-vl", uri))
    platform.enqueue({"job_id": job_id, "model": "paddleocr-vl", "input": uri})
    [message] = platform.sqs.receive_message(QueueUrl=platform.queue_url, AttributeNames=["All"])["Messages"]
    record = sqs_event([message], platform.queue_arn)["Records"][0]
    alarm_event = platform.sns_delivery("scale-in", idle_alarm_message("ocr-test-vl-idle", "ALARM", ENDPOINT))

    with held_at(_services._client("sagemaker"), "before-call.sagemaker.UpdateEndpointWeightsAndCapacities") as hold:
        first, second = race(
            lambda: scale_in.handler(alarm_event, FakeLambdaContext(function_name="ocr-scale-in")),
            lambda: invoker.handle_record(SQSRecord(record)),
            hold,
        )

    assert first == {"outcomes": ["scaled_in"]} and second == "dispatched"
    assert len(platform.calls["InvokeEndpointAsync"]) == 1
    assert platform.variant()["DesiredInstanceCount"] == 0  # the request waits without capacity

    outstanding = len(platform.calls["InvokeEndpointAsync"])  # no output or failure yet: all still in the backlog
    assert scale_out_on_backlog_without_capacity(platform.sagemaker, ENDPOINT, VARIANT, desired=0, backlog=outstanding)
    assert platform.variant()["DesiredInstanceCount"] == 1
    job = platform.job(job_id)
    assert job["status"] == "PROCESSING" and job["dispatched_at"]
