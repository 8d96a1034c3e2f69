"""Async hand-overs that fail park their event, as on AWS: the local stack's parked-events queue.

Why a module of its own: issue 20 asks that an asynchronously invoked function that keeps raising, and an
SNS delivery the Lambda service refuses, end on a queue an operator can read, and not only in a moto
test of the handlers. These tests run the local Lambda runtime and the SNS delivery loop against a moto
server, and read what was parked with SQS's ReceiveMessage.
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
from ocr_platform.local.lambda_runtime import LambdaRuntime
from ocr_platform.local.moto_account import moto_client
from tests.local.moto_server import moto_server

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = "tests.local.fixture_handlers"
PARKED = "parked-events"
WAIT_SECONDS = 60


@pytest.fixture
def moto_url() -> Iterator[str]:
    with moto_server() as url:
        yield url


def _runtime(moto_url: str, record_path: Path, faults: FaultInjector | None = None) -> LambdaRuntime:
    functions = [
        FunctionSpec("always-fails", f"{FIXTURES}.fail", retry_attempts=2, on_failure_queue=PARKED),
        FunctionSpec("recorder", f"{FIXTURES}.record", {"FIXTURE_RECORD_PATH": str(record_path)}, on_failure_queue=PARKED),
    ]
    base = {
        "AWS_DEFAULT_REGION": "us-east-1",
        "PYTHONPATH": os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p),
    }
    return LambdaRuntime(functions, base_environment=base, retry_delays_seconds=(0.0,), faults=faults, sqs=moto_client("sqs", moto_url))


def _parked(sqs: Any, url: str, expected: int) -> list[dict[str, Any]]:
    """Receives until ``expected`` messages came (or the deadline passed); deletes none."""
    messages: list[dict[str, Any]] = []
    deadline = time.monotonic() + WAIT_SECONDS
    while len(messages) < expected and time.monotonic() < deadline:
        messages += sqs.receive_message(
            QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1, VisibilityTimeout=300, MessageAttributeNames=["All"],
        ).get("Messages", [])
    return messages


def test_an_async_function_that_always_fails_is_tried_three_times_then_parked(moto_url: str, tmp_path: Path) -> None:
    sqs = moto_client("sqs", moto_url)
    url = sqs.create_queue(QueueName=PARKED)["QueueUrl"]
    event = {"Records": [{"EventSource": "aws:sns", "Sns": {"Message": "job-9"}}]}

    with _runtime(moto_url, tmp_path / "records.jsonl") as lambdas:
        request_id = lambdas.invoke_async("always-fails", event)
        assert lambdas.wait_idle(timeout=WAIT_SECONDS)
        stats = lambdas.stats()["always-fails"]

    assert stats == {"invocations": 3, "errors": 3}  # the first attempt and Lambda's two retries
    [message] = _parked(sqs, url, 1)
    record = json.loads(message["Body"])
    assert record["requestPayload"] == event
    assert record["requestContext"] == {
        "requestId": request_id, "functionArn": "arn:aws:lambda:us-east-1:123456789012:function:always-fails:$LATEST",
        "condition": "RetriesExhausted", "approximateInvokeCount": 3,
    }
    assert record["responsePayload"]["errorType"] == "ValueError"
    assert _parked(sqs, url, 1) == []  # parked once, not once per attempt


def test_an_sns_delivery_the_lambda_service_refuses_goes_to_the_subscriptions_dlq(moto_url: str, tmp_path: Path) -> None:
    sqs, sns = moto_client("sqs", moto_url), moto_client("sns", moto_url)
    parked_url = sqs.create_queue(QueueName=PARKED)["QueueUrl"]
    tap_url = sqs.create_queue(QueueName="success-delivery")["QueueUrl"]
    tap_arn = sqs.get_queue_attributes(QueueUrl=tap_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    topic = sns.create_topic(Name="success")["TopicArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=tap_arn)
    faults = FaultInjector([Fault("success-topic", "delivery-refused", match="job-refused")])
    record_path = tmp_path / "records.jsonl"
    stop = threading.Event()

    with _runtime(moto_url, record_path, faults) as lambdas:
        sources = EventSources(moto_url=moto_url, lambdas=lambdas, faults=faults, stop=stop, parked_events_url=parked_url)
        delivery = threading.Thread(target=sources.sns_delivery, args=(tap_url, topic, "recorder", "success-topic"), daemon=True)
        delivery.start()
        try:
            sns.publish(TopicArn=topic, Message=json.dumps({"job_id": "job-refused"}))
            sns.publish(TopicArn=topic, Message=json.dumps({"job_id": "job-delivered"}))
            [message] = _parked(sqs, parked_url, 1)
            deadline = time.monotonic() + WAIT_SECONDS
            while not record_path.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert lambdas.wait_idle(timeout=WAIT_SECONDS)
        finally:
            stop.set()
            delivery.join(timeout=10)

    envelope = json.loads(message["Body"])  # SNS parks the notification itself, not a Lambda event
    assert envelope["TopicArn"] == topic and json.loads(envelope["Message"]) == {"job_id": "job-refused"}
    assert "refused" in message["MessageAttributes"]["ErrorMessage"]["StringValue"]
    delivered = [json.loads(r["Sns"]["Message"]) for line in record_path.read_text().splitlines() for r in json.loads(line)["Records"]]
    assert delivered == [{"job_id": "job-delivered"}]
    assert faults.counts() == {"success-topic:delivery-refused": 1}


def test_the_stacks_async_functions_park_their_failed_events_as_deployed() -> None:
    """Completion and scale-in (SNS) and ingest (S3 events) retry twice, the sweeper (a schedule) not at all; all
    park on one queue."""
    from ocr_infra.config import PlatformConfig
    from ocr_platform.core.settings import ENV
    from ocr_platform.local.function_specs import function_specs
    from ocr_platform.local.provisioning import resource_names

    config = PlatformConfig(stage="local", settle_grace_seconds=5)
    names = resource_names(config)
    specs = {spec.name: spec for spec in function_specs(config, names)}

    parked = {name: spec.retry_attempts for name, spec in specs.items() if spec.on_failure_queue == names["parked_events"]}
    assert parked == {names["completion"]: 2, names["scale_in"]: 2, names["sweeper"]: 0, names["ingest"]: 2}
    assert names["parked_events"] == "ocr-local-parked-events"
    assert specs[names["sweeper"]].environment[ENV.SETTLE_GRACE_SECONDS] == "5"
