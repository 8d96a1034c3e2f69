"""Admission control against moto: the stage's processor slots bound how many CPU jobs and chunks run at once,
and the work beyond them waits (in the job queue, or in its job's launch counter) without failing.

The processor's ``Invoke`` calls are recorded, as in test_fan_out, and handed to the processor handler as
Lambda would deliver them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from ocr_platform.core.settings import ENV
from ocr_platform.handlers import _services
from ocr_platform.handlers.completion import handler as completion_handler
from ocr_platform.jobs.admission import ProcessorSlots
from tests.aws_events import FakeLambdaContext, lambda_failure_record
from tests.conftest import Platform
from tests.handlers.test_fan_out import RecordedInvokes, _split_job
from tests.handlers.test_fan_out import invokes as invokes  # noqa: F401 - the fixture
from tests.handlers.test_processor import PlumbingEngine
from tests.handlers.test_processor import engine as engine  # noqa: F401 - the fixture


def _with_slots(monkeypatch: pytest.MonkeyPatch, count: int) -> None:
    monkeypatch.setenv(ENV.PROCESSOR_SLOTS, str(count))
    monkeypatch.setenv(ENV.ADMISSION_RETRY_SECONDS, "0")
    _services.reset()


@pytest.fixture
def one_slot(monkeypatch: pytest.MonkeyPatch, platform: Platform) -> Iterator[ProcessorSlots]:
    _with_slots(monkeypatch, 1)
    yield _services.services().slots  # type: ignore[misc]
    _services.reset()


@pytest.fixture
def two_slots(monkeypatch: pytest.MonkeyPatch, platform: Platform) -> Iterator[ProcessorSlots]:
    _with_slots(monkeypatch, 2)
    yield _services.services().slots  # type: ignore[misc]
    _services.reset()


def _queued_message(platform: Platform, job_id: str) -> dict[str, str]:
    message = {"job_id": job_id, "model": "pp-ocrv5", "input": platform.put_document(job_id)}
    platform.enqueue(message)
    return message


def test_a_job_that_finds_every_slot_taken_waits_queued_and_runs_once_one_frees_up(
    platform: Platform, engine: PlumbingEngine, one_slot: ProcessorSlots, invokes: RecordedInvokes
) -> None:
    _queued_message(platform, "job-a1")
    _queued_message(platform, "job-a2")

    assert platform.run_invoker() == {"batchItemFailures": []}  # job-a1 takes the only slot
    assert platform.run_invoker() == {"batchItemFailures": []}  # job-a2 waits: not a failure, not retried

    assert [event["job_id"] for event in invokes.events] == ["job-a1"]
    assert platform.job("job-a2")["status"] == "QUEUED"  # written, so a poller sees the job
    assert dict(one_slot.holders()).keys() == {"job-a1"}
    # Its message went back on the queue as a new one, so waiting never counts towards the DLQ.
    waiting = platform.sqs.receive_message(QueueUrl=platform.queue_url, AttributeNames=["All"], VisibilityTimeout=0)["Messages"]
    assert [json.loads(m["Body"])["job_id"] for m in waiting] == ["job-a2"]
    assert waiting[0]["Attributes"]["ApproximateReceiveCount"] == "1"

    assert platform.run_invoker() == {"batchItemFailures": []}  # still taken: waits again
    assert [event["job_id"] for event in invokes.events] == ["job-a1"]

    assert platform.run_processor(invokes.events[0])["outcome"] == "completed"
    assert one_slot.holders() == {}  # the processor gave its slot back
    assert platform.run_invoker() == {"batchItemFailures": []}
    assert [event["job_id"] for event in invokes.events] == ["job-a1", "job-a2"]
    assert platform.run_processor(invokes.events[1])["outcome"] == "completed"
    assert platform.job("job-a2")["status"] == "COMPLETED"
    assert one_slot.holders() == {}


def test_a_split_job_runs_at_most_its_slots_of_chunks_at_once_and_hands_them_on(
    platform: Platform, engine: PlumbingEngine, two_slots: ProcessorSlots, invokes: RecordedInvokes
) -> None:
    message = _split_job(platform, "job-a3", page_count=26)  # 5 chunks of at most 6 pages
    assert two_slots.acquire("job-a3")  # as the invoker did before handing it over
    assert platform.run_processor({**message, "slot": "job-a3"})["outcome"] == "fanned_out"

    # The run handed its slot to chunk 1 and took the other free one for chunk 2; three chunks wait.
    assert [event["chunk"]["index"] for event in invokes.events] == [0, 1]
    assert set(two_slots.holders()) == {event["slot"] for event in invokes.events}
    assert platform.job("job-a3")["chunks_launched"] == 2

    running = list(invokes.events)
    peak = len(two_slots.holders())
    while running:
        event = running.pop(0)
        before = len(invokes.events)
        platform.run_processor(event)
        running.extend(invokes.events[before:])  # the chunk that ended launched the next one(s)
        peak = max(peak, len(two_slots.holders()))

    assert peak == 2
    assert sorted(event["chunk"]["index"] for event in invokes.events) == [0, 1, 2, 3, 4]
    job = platform.job("job-a3")
    assert job["status"] == "COMPLETED" and job["page_count"] == 26
    assert two_slots.holders() == {}


def test_a_crashed_processor_run_gives_its_slot_back_through_the_completion_function(
    platform: Platform, engine: PlumbingEngine, one_slot: ProcessorSlots, invokes: RecordedInvokes
) -> None:
    _queued_message(platform, "job-a4")
    platform.run_invoker()
    [payload] = invokes.events
    assert dict(one_slot.holders()).keys() == {"job-a4"}

    record = lambda_failure_record(
        payload, error_type="Runtime.ExitError", error_message="signal: killed", function_arn="arn:aws:lambda:us-east-1:123456789012:function:ocr-processor",
    )
    completion_handler(record, FakeLambdaContext(function_name="ocr-completion"))

    assert platform.job("job-a4")["status"] == "FAILED"
    assert one_slot.holders() == {}


def test_without_a_semaphore_every_chunk_starts_at_once(
    monkeypatch: pytest.MonkeyPatch, platform: Platform, engine: PlumbingEngine, invokes: RecordedInvokes
) -> None:
    _with_slots(monkeypatch, 0)  # reserved mode: the function's reserved concurrency bounds the processor
    message = _split_job(platform, "job-a5", page_count=26)

    assert platform.run_processor(message)["outcome"] == "fanned_out"

    assert [event["chunk"]["index"] for event in invokes.events] == [0, 1, 2, 3, 4]
    assert all("slot" not in event for event in invokes.events)
