"""What an operator sees of a job: its X-Ray annotations in every function, and its EMF job metrics.

Tracing: the handlers' Powertools ``Tracer`` gets a recording provider in place of X-Ray's recorder (and is
switched on, since Powertools turns it off outside Lambda), so each test reads the subsegments and
annotations an invocation would send. Metrics: the EMF lines the handlers print, as CloudWatch reads them
from the function's log.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import boto3
import pytest

from ocr_platform.core import defaults
from ocr_platform.core.tracing import tracer
from ocr_platform.handlers import api, completion, dlq_consumer, ingest, invoker, sweeper
from ocr_platform.jobs.store import JobStore, NewJob, utc_now
from ocr_platform.local.events import http_api_event, s3_object_created_event
from tests.aws_events import FakeLambdaContext, lambda_failure_record, sagemaker_notification, sqs_event
from tests.conftest import BUCKET, ENDPOINT, TABLE, Platform
from tests.documents import tiny_png
from tests.engine_registry import registered_engine
from tests.handlers.test_processor import PlumbingEngine
from tests.handlers.test_webhook_deliverer import _deliver, _finished_job, _receive, webhooks  # noqa: F401 - a fixture


@dataclass
class Subsegment:
    name: str
    annotations: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    children: list[Subsegment] = field(default_factory=list)

    def put_annotation(self, key: str, value: Any) -> None:
        self.annotations[key] = value

    def put_metadata(self, key: str, value: Any, namespace: str = "default") -> None:
        self.metadata[key] = value


class RecordingProvider:
    """Stands in for X-Ray's recorder: keeps the subsegments Powertools opens, and the annotations put on them."""

    def __init__(self) -> None:
        self.root = Subsegment("(invocation)")
        self._open = [self.root]

    @contextmanager
    def in_subsegment(self, name: str | None = None, **_: Any) -> Iterator[Subsegment]:
        subsegment = Subsegment(name or "")
        self._open[-1].children.append(subsegment)
        self._open.append(subsegment)
        try:
            yield subsegment
        finally:
            self._open.pop()

    def put_annotation(self, key: str, value: Any) -> None:
        self._open[-1].put_annotation(key, value)

    def put_metadata(self, key: str, value: Any, namespace: str = "default") -> None:
        self._open[-1].put_metadata(key, value)

    def subsegments(self, node: Subsegment | None = None) -> Iterator[Subsegment]:
        for child in (node or self.root).children:
            yield child
            yield from self.subsegments(child)

    def annotated(self, job_id: str) -> list[Subsegment]:
        """The subsegments a trace search ``annotation.job_id = "<job_id>"`` finds."""
        return [s for s in self.subsegments() if s.annotations.get("job_id") == job_id]


@pytest.fixture
def traces(monkeypatch: pytest.MonkeyPatch) -> RecordingProvider:
    provider = RecordingProvider()
    monkeypatch.setattr(tracer, "provider", provider)
    monkeypatch.setattr(tracer, "disabled", False)
    return provider


def _emf(output: str) -> list[dict[str, Any]]:
    """The EMF lines among a handler's output: what CloudWatch turns into metrics."""
    return [line for text in output.splitlines() if text.startswith("{") and "_aws" in (line := json.loads(text))]


def _job_lines(output: str, metric: str) -> list[dict[str, Any]]:
    return [line for line in _emf(output) if metric in line]


def _dimensions(line: dict[str, Any]) -> list[list[str]]:
    [directive] = line["_aws"]["CloudWatchMetrics"]
    assert directive["Namespace"] == "OcrPlatform/test"
    return directive["Dimensions"]


def _units(line: dict[str, Any]) -> dict[str, str]:
    [directive] = line["_aws"]["CloudWatchMetrics"]
    return {metric["Name"]: metric["Unit"] for metric in directive["Metrics"]}


def _message(platform: Platform, job_id: str, model: str) -> dict[str, Any]:
    message = {"job_id": job_id, "model": model, "input": platform.put_document(job_id), "language": "en"}
    platform.store.create(NewJob(job_id, model, message["input"]))
    return message


# -- the invoker ----------------------------------------------------------------------------------


def test_the_invoker_annotates_each_job_of_a_batch_in_its_own_subsegment_and_counts_it_started(
    platform: Platform, traces: RecordingProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    for job_id, model in (("job-cpu", "pp-ocrv5"), ("job-gpu", "paddleocr-vl")):
        platform.enqueue(_message(platform, job_id, model))
    messages = platform.sqs.receive_message(QueueUrl=platform.queue_url, MaxNumberOfMessages=10, AttributeNames=["All"])["Messages"]
    assert len(messages) == 2
    capsys.readouterr()

    assert invoker.handler(sqs_event(messages, platform.queue_arn), FakeLambdaContext(function_name="ocr-invoker")) == {"batchItemFailures": []}

    [handler] = traces.root.children
    assert handler.name == "## handler"
    records = [s for s in handler.children if s.name == "## ocr_platform.handlers.invoker.handle_record"]
    assert sorted((s.annotations["job_id"], s.annotations["model"]) for s in records) == [("job-cpu", "pp-ocrv5"), ("job-gpu", "paddleocr-vl")]
    started = _job_lines(capsys.readouterr().out, "JobsStarted")
    assert sorted(line["route"] for line in started) == ["paddleocr-vl", "pp-ocrv5"]
    for line in started:
        assert _dimensions(line) == [["service"], ["service", "route"]] and line["service"] == "jobs"
        assert line["JobsStarted"] == [1.0] and _units(line) == {"JobsStarted": "Count"}


def test_a_job_the_invoker_does_not_hand_over_is_not_counted_started(
    platform: Platform, traces: RecordingProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    platform.enqueue({"job_id": "job-unknown", "model": "no-such-model", "input": platform.put_document("job-unknown")})
    capsys.readouterr()

    platform.run_invoker()

    output = capsys.readouterr().out
    assert _job_lines(output, "JobsStarted") == []
    [failed] = _job_lines(output, "JobsFailed")
    # A model that is no routing key is not a dimension value of its own: anyone could send any string.
    assert (failed["route"], failed["error_code"]) == ("unknown", "unknown_model")
    assert [s.annotations["status"] for s in traces.annotated("job-unknown") if s.name == "## job finished"] == ["FAILED"]


# -- the processor --------------------------------------------------------------------------------


@pytest.fixture
def engine(platform: Platform) -> Iterator[PlumbingEngine]:
    instance = PlumbingEngine()
    with registered_engine("pp-ocrv5", lambda: instance):
        yield instance


def test_the_processor_annotates_its_job_and_counts_it_completed_with_latency_and_pages(
    platform: Platform, engine: PlumbingEngine, traces: RecordingProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    message = _message(platform, "job-p", "pp-ocrv5")
    platform.store.mark_processing("job-p", "lambda")
    capsys.readouterr()

    assert platform.run_processor(message)["outcome"] == "completed"

    [handler, *_] = traces.annotated("job-p")
    assert handler.name == "## handler" and handler.annotations["model"] == "pp-ocrv5"
    [finished] = [s for s in traces.annotated("job-p") if s.name == "## job finished"]
    assert finished.annotations["status"] == "COMPLETED" and "error_code" not in finished.annotations
    [line] = _job_lines(capsys.readouterr().out, "JobsCompleted")
    assert _dimensions(line) == [["service"], ["service", "route"]] and line["route"] == "pp-ocrv5"
    assert _units(line) == {"JobsCompleted": "Count", "JobLatency": "Milliseconds", "PagesProcessed": "Count"}
    job = platform.job("job-p")
    created, finished_at = (time.mktime(time.strptime(job[k][:19], "%Y-%m-%dT%H:%M:%S")) for k in ("created_at", "finished_at"))
    [latency] = line["JobLatency"]
    assert 0 <= latency <= (finished_at - created + 1) * 1000
    assert line["PagesProcessed"] == [1.0] and line["JobsCompleted"] == [1.0]


# -- the completion function ----------------------------------------------------------------------


def _vl_job(platform: Platform, job_id: str) -> str:
    platform.store.create(NewJob(job_id, "paddleocr-vl", platform.put_document(job_id, "scan.pdf")))
    platform.store.mark_processing(job_id, "sagemaker")
    return f"s3://{BUCKET}/async/requests/{job_id}.json"


def test_the_completion_function_annotates_the_job_it_fails_and_counts_it_by_route_and_error_code(
    platform: Platform, traces: RecordingProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    request = _vl_job(platform, "job-vl")
    capsys.readouterr()

    platform.publish("error", sagemaker_notification("job-vl", endpoint=ENDPOINT, input_location=request, failure_reason="ModelError: boom"))

    spans = traces.annotated("job-vl")
    assert spans[0].name == "## handler"
    [finished] = [s for s in spans if s.name == "## job finished"]
    assert finished.annotations == {"job_id": "job-vl", "status": "FAILED", "error_code": "inference_failed"}
    [line] = _job_lines(capsys.readouterr().out, "JobsFailed")
    # The service-only set is the failed-job-rate alarm's; the others are the dashboard's breakdowns.
    assert _dimensions(line) == [["service"], ["service", "route"], ["service", "error_code"]]
    assert (line["service"], line["route"], line["error_code"], line["JobsFailed"]) == ("jobs", "paddleocr-vl", "inference_failed", [1.0])
    assert "JobLatency" not in line and "PagesProcessed" not in line


def test_a_crashed_processor_run_is_annotated_with_its_job(
    platform: Platform, traces: RecordingProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    platform.store.create(NewJob("job-crash", "pp-ocrv5", platform.put_document("job-crash")))
    platform.store.mark_processing("job-crash", "lambda")
    record = lambda_failure_record({"job_id": "job-crash", "model": "pp-ocrv5"}, error_type="Runtime.ExitError",
                                   error_message="Error: Runtime exited with error: signal: killed",
                                   function_arn="arn:aws:lambda:us-east-1:123456789012:function:ocr-processor")
    capsys.readouterr()

    completion.handler(record, FakeLambdaContext())

    assert [s.name for s in traces.annotated("job-crash")] == ["## handler", "## job finished"]
    [line] = _job_lines(capsys.readouterr().out, "JobsFailed")
    assert (line["route"], line["error_code"]) == ("pp-ocrv5", "processor_crashed")


# -- recovery: the DLQ consumer and the sweeper ---------------------------------------------------


def test_the_dlq_consumer_annotates_the_job_of_each_dead_letter(platform: Platform, traces: RecordingProvider) -> None:
    platform.store.create(NewJob("job-dead", "pp-ocrv5", "s3://b/documents/job-dead/a.png"))
    platform.sqs.send_message(QueueUrl=platform.dlq_url, MessageBody=json.dumps({"job_id": "job-dead", "model": "pp-ocrv5", "input": "s3://b/k"}))
    messages = platform.sqs.receive_message(QueueUrl=platform.dlq_url, AttributeNames=["All"])["Messages"]

    dlq_consumer.handler(sqs_event(messages, "arn:aws:sqs:us-east-1:123456789012:ocr-test-dlq"), FakeLambdaContext())

    [record] = traces.annotated("job-dead")[:1]
    assert record.name == "## ocr_platform.handlers.dlq_consumer.handle_record"
    assert [(s.name, s.annotations["error_code"]) for s in record.children] == [("## job finished", "dead_lettered")]


def test_each_job_the_sweeper_fails_has_a_subsegment_and_a_metric_line_of_its_own(
    platform: Platform, traces: RecordingProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    hours = max(defaults.queued_deadline_seconds(), defaults.lambda_deadline_seconds(), defaults.sagemaker_deadline_seconds()) / 3600 + 1
    old = JobStore(TABLE, dynamodb=boto3.resource("dynamodb"), clock=lambda: utc_now() - timedelta(hours=hours))
    for job_id, model, backend in (("stuck-cpu", "pp-structurev3", "lambda"), ("stuck-gpu", "paddleocr-vl", "sagemaker")):
        old.create(NewJob(job_id, model, "s3://b/k"))
        old.mark_processing(job_id, backend)
    capsys.readouterr()

    sweeper.handler({"source": "aws.events", "detail-type": "Scheduled Event"}, FakeLambdaContext())

    for job_id in ("stuck-cpu", "stuck-gpu"):
        [finished] = traces.annotated(job_id)
        assert (finished.name, finished.annotations["error_code"]) == ("## job finished", "timed_out")
    lines = _job_lines(capsys.readouterr().out, "JobsFailed")
    assert sorted((line["route"], line["error_code"]) for line in lines) == [("paddleocr-vl", "timed_out"), ("pp-structurev3", "timed_out")]


# -- the entry points: the drop folder and the jobs API -------------------------------------------


def test_the_ingest_function_annotates_the_job_it_creates(platform: Platform, traces: RecordingProvider) -> None:
    key = "inbox/pp-ocrv5/scan.png"
    platform.s3.put_object(Bucket=BUCKET, Key=key, Body=tiny_png())
    head = platform.s3.head_object(Bucket=BUCKET, Key=key)
    event = s3_object_created_event(bucket=BUCKET, key=key, size=head["ContentLength"], etag=head["ETag"], version_id=None,
                                    event_id=str(uuid.uuid4()), time_iso="2026-11-22T07:00:00Z")

    job_id = ingest.handler(event, FakeLambdaContext(function_name="ocr-ingest"))["job_id"]

    assert [s.name for s in traces.annotated(job_id)] == ["## handler"]


def test_the_jobs_api_annotates_the_job_it_creates_or_reads_and_keeps_responses_out_of_the_trace(
    platform: Platform, traces: RecordingProvider
) -> None:
    def call(method: str, path: str, route: str, body: Any = None) -> dict[str, Any]:
        event = http_api_event(
            method, path, route_key=route, claims={"sub": "alice", "token_use": "id"}, body=None if body is None else json.dumps(body),
            headers={"content-type": "application/json"}, request_id=str(uuid.uuid4()), time_epoch_ms=int(time.time() * 1000),
        )
        return json.loads(api.handler(event, FakeLambdaContext(function_name="ocr-api"))["body"])

    job_id = call("POST", "/jobs", "POST /jobs", {"filename": "scan.png", "model": "pp-ocrv5"})["job_id"]
    call("GET", f"/jobs/{job_id}", "GET /jobs/{job_id}")

    created, read = (s for s in traces.subsegments() if s.name == "## handler")
    assert created.annotations["job_id"] == read.annotations["job_id"] == job_id
    assert created.annotations["model"] == "pp-ocrv5"
    assert not [key for s in traces.subsegments() for key in s.metadata if key.endswith("response")]


# -- the webhook deliverer ------------------------------------------------------------------------


def test_the_webhook_deliverer_annotates_each_delivery_with_its_job(webhooks: Platform, traces: RecordingProvider) -> None:  # noqa: F811
    _finished_job(webhooks, "job-wh", "http://169.254.169.254/latest/meta-data/")  # refused before any connection
    messages = _receive(webhooks)

    assert _deliver(webhooks, messages) == ([], ["dead_lettered"])

    assert [s.name for s in traces.annotated("job-wh") if s.name.endswith("handle_record")] == [
        "## ocr_platform.handlers.webhook_deliverer.handle_record"
    ]
