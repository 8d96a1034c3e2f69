"""Concurrent invocations in the local Lambda runtime, and the SQS event source's ``concurrent-duplicate`` fault.

A function with ``max_concurrency`` 2 runs two invocations at the same time, each in an execution
environment of its own; the ``rendezvous`` fixture handler proves it: each invocation waits for the other
to arrive, so two invocations that overlap both return having met, and two run one after the other do
not overlap at all. The fault hands one received SQS message to two such invocations at once, and each
invocation's ``batchItemFailures`` decides on its own whether it deletes the message.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ocr_platform.local.event_sources import EventSources
from ocr_platform.local.faults import Fault, FaultInjector
from ocr_platform.local.function_specs import FunctionSpec
from ocr_platform.local.lambda_runtime import InvocationResult, LambdaRuntime
from ocr_platform.local.moto_account import moto_client
from tests.local.moto_server import moto_server

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = "tests.local.fixture_handlers"
BASE = {
    "AWS_DEFAULT_REGION": "us-east-1",
    "PYTHONPATH": os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p),
    "POWERTOOLS_LOG_LEVEL": "WARNING",
}


def rendezvous_runtime(directory: Path, *, max_concurrency: int, timeout: int = 10, prewarm: bool = True) -> LambdaRuntime:
    directory.mkdir(exist_ok=True)
    spec = FunctionSpec("pair", f"{FIXTURES}.rendezvous", {"FIXTURE_RENDEZVOUS_DIR": str(directory)},
                        timeout_seconds=timeout, max_concurrency=max_concurrency)
    return LambdaRuntime([spec], base_environment=BASE, prewarm=prewarm)


def invoke_together(lambdas: LambdaRuntime, events: list[Any]) -> list[InvocationResult]:
    """Invokes ``pair`` with each event from a thread of its own, all released at once."""
    barrier = threading.Barrier(len(events))
    results: list[InvocationResult | None] = [None] * len(events)

    def run(index: int) -> None:
        barrier.wait()
        results[index] = lambdas.invoke("pair", events[index])

    threads = [threading.Thread(target=run, args=(index,)) for index in range(len(events))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert all(result is not None for result in results)
    return [result for result in results if result is not None]


def overlapped(seen: list[dict[str, Any]]) -> bool:
    """Whether every invocation was running while every other one was."""
    return max(s["started"] for s in seen) < min(s["ended"] for s in seen)


def test_two_invocations_run_at_once_each_in_an_environment_of_its_own(tmp_path: Path) -> None:
    with rendezvous_runtime(tmp_path / "meet", max_concurrency=2, prewarm=False) as lambdas:
        first, second = invoke_together(lambdas, [{"n": 1}, {"n": 2}])
        environments = lambdas.functions["pair"].environments()
        init = lambdas.wait_initialized(timeout=10)
        later = lambdas.invoke("pair", {"n": 3, "parties": 1})
        records = lambdas.invocations("pair")

    assert (first.error, second.error) == (None, None)
    assert first.payload["met"] == second.payload["met"] == 2 and overlapped([first.payload, second.payload])
    # Each ran in its own execution environment, started for it when the other was busy (its init phase).
    assert first.payload["pid"] != second.payload["pid"]
    assert first.payload["log_stream"] != second.payload["log_stream"]
    assert {r.log_stream for r in records[:2]} == {first.payload["log_stream"], second.payload["log_stream"]}
    assert len(environments) == 2 and init["pair"] is not None
    # An idle environment is reused: no third one is started for a later invocation.
    assert later.error is None and later.payload["pid"] in {first.payload["pid"], second.payload["pid"]}
    assert len(records) == 3 and lambdas.stats()["pair"] == {"invocations": 3, "errors": 0}
    # stop() ended every environment.
    assert all(environment.process.poll() is not None for environment in environments)


def test_asynchronous_events_run_as_many_at_once_as_the_functions_concurrency(tmp_path: Path) -> None:
    """Lambda does not queue a function's ``Event`` invocations behind each other while it may scale out:
    the chunks of a long document run at once."""
    for concurrency, expected_overlap in ((2, True), (1, False)):
        meet = tmp_path / f"meet-{concurrency}"
        with rendezvous_runtime(meet, max_concurrency=concurrency, timeout=3) as lambdas:
            for n in (1, 2):
                lambdas.invoke("pair", {"n": n}, invocation_type="Event")
            assert lambdas.wait_idle(timeout=60)
        seen = sorted((json.loads(path.read_text()) for path in meet.glob("*.out")), key=lambda s: s["started"])
        assert len(seen) == 2 and overlapped(seen) is expected_overlap, (concurrency, seen)
        assert [s["met"] for s in seen] == ([2, 2] if expected_overlap else [1, 2])


def test_a_function_of_concurrency_one_runs_them_one_after_the_other(tmp_path: Path) -> None:
    with rendezvous_runtime(tmp_path / "meet", max_concurrency=1, timeout=2) as lambdas:
        first, second = invoke_together(lambdas, [{"n": 1}, {"n": 2}])

    assert (first.error, second.error) == (None, None)
    assert not overlapped([first.payload, second.payload])
    assert first.payload["pid"] == second.payload["pid"]


def test_a_timeout_ends_only_its_own_environment(tmp_path: Path) -> None:
    with rendezvous_runtime(tmp_path / "meet", max_concurrency=2, timeout=3) as lambdas:
        slow, quick = invoke_together(lambdas, [{"then_sleep": 30}, {}])
        ended = {environment.log_stream: environment.ended for environment in lambdas.functions["pair"].environments()}
        # The environment that timed out is gone; the other is warm and serves the next invocation.
        after = lambdas.invoke("pair", {"parties": 1})
        streams = {record.request_id: record.log_stream for record in lambdas.invocations("pair")}

    assert slow.error is not None and slow.error["errorType"] == "Sandbox.Timedout"
    assert quick.error is None and quick.payload["met"] == 2
    assert ended == {streams[slow.request_id]: True, streams[quick.request_id]: False}
    assert after.error is None and after.payload["pid"] == quick.payload["pid"]


# -- the concurrent-duplicate fault ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def moto_url() -> Iterator[str]:
    with moto_server() as url:
        yield url


def queue_counts(sqs: Any, url: str) -> tuple[int, int]:
    """(visible, in flight) messages on the queue."""
    attributes = sqs.get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]), int(attributes["ApproximateNumberOfMessagesNotVisible"])


@pytest.mark.parametrize(
    ("outcome", "left_on_queue"),
    [
        ("succeed", (0, 0)),  # both delete it: the second delete is of a message already gone
        ("claim", (0, 0)),  # one reports it failed, the other deletes it: gone
        ("fail", (0, 1)),  # both report it failed: in flight, back after the visibility timeout
    ],
)
def test_concurrent_duplicate_hands_one_message_to_two_overlapping_invocations(
    tmp_path: Path, moto_url: str, outcome: str, left_on_queue: tuple[int, int]
) -> None:
    sqs = moto_client("sqs", moto_url)
    queue_url = sqs.create_queue(QueueName=f"jobs-{outcome}", Attributes={"VisibilityTimeout": "60"})["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sqs.send_message(QueueUrl=queue_url, MessageBody=json.dumps({"job_id": "job-other", "parties": 1}))
    sent = sqs.send_message(QueueUrl=queue_url, MessageBody=json.dumps({"job_id": "job-42", "outcome": outcome}))
    faults = FaultInjector([Fault("job-queue", "concurrent-duplicate", match="job-42")])
    stop = threading.Event()

    with rendezvous_runtime(tmp_path / "meet", max_concurrency=2) as lambdas:
        sources = EventSources(moto_url=moto_url, lambdas=lambdas, faults=faults, stop=stop)
        poller = threading.Thread(target=sources.sqs_event_source, args=(queue_url, queue_arn, "pair", 1, "job-queue"))
        poller.start()
        deadline = time.monotonic() + 60
        while len(lambdas.invocations("pair")) < 3 and time.monotonic() < deadline:  # job-other alone, job-42 twice
            time.sleep(0.05)
        stop.set()
        poller.join(timeout=30)  # the loop ends after its deliveries (and their deletes) are done
        records = lambdas.invocations("pair")

    assert not poller.is_alive()
    twins = [r for r in records if r.event["Records"][0]["messageId"] == sent["MessageId"]]
    assert len(records) == 3 and len(twins) == 2 and faults.counts() == {"job-queue:concurrent-duplicate": 1}
    # The same received message: same id, body, attributes and receipt handle.
    assert twins[0].event == twins[1].event
    # Two invocations in flight together, each in an environment of its own.
    seen = [json.loads((tmp_path / "meet" / f"{r.request_id}.out").read_text()) for r in twins]
    assert [s["met"] for s in seen] == [2, 2] and overlapped(seen)
    assert len({r.log_stream for r in twins}) == 2
    if outcome == "claim":
        assert sorted(len(s["failed"]) for s in seen) == [0, 1]
    # Each invocation's outcome was honoured on its own.
    assert queue_counts(sqs, queue_url) == left_on_queue
