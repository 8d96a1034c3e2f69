"""Test conveniences over the one source of AWS event shapes, ``ocr_platform.local.events``.

The builders themselves live in the package because the local stack delivers the same events; here are
only the defaults a handler test wants (the test account, fixed timestamps), a Lambda context, and
``load_event`` for AWS's documented samples under ``tests/events/``.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ocr_platform.local import events
from ocr_platform.local.events import sns_event, sqs_event  # noqa: F401 - the shapes the local stack delivers

REGION = "us-east-1"
ACCOUNT = "123456789012"
EVENTS_DIR = Path(__file__).resolve().parent / "events"


def load_event(name: str) -> Any:
    """One of AWS's documented sample events, e.g. ``load_event("sqs_event")``."""
    return json.loads((EVENTS_DIR / f"{name}.json").read_text())


@dataclass
class FakeLambdaContext:
    """The attributes of ``LambdaContext`` the handlers (and Powertools) read."""

    function_name: str = "test-function"
    memory_limit_in_mb: int = 256
    invoked_function_arn: str = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:test-function"
    #: Each invocation has its own request id (Lambda keeps it only across the retries of one async event).
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))

    def get_remaining_time_in_millis(self) -> int:
        return 60_000


def lambda_failure_record(payload: dict[str, Any], *, error_type: str, error_message: str, function_arn: str) -> dict[str, Any]:
    """The record Lambda sends to the on-failure destination after one failed attempt of ``payload``."""
    return events.lambda_destination_record(
        request_id=str(uuid.uuid4()), function_arn=f"{function_arn}:$LATEST", request_payload=payload,
        response_payload={"errorMessage": error_message, "errorType": error_type, "requestId": "", "stackTrace": []},
        approximate_invoke_count=1, timestamp="2026-11-22T07:00:00.000Z",
    )


def sagemaker_notification(
    job_id: str,
    *,
    endpoint: str,
    input_location: str,
    output_location: str | None = None,
    failure_reason: str | None = None,
    failure_location: str | None = None,
) -> str:
    """A SageMaker async inference success (``output_location``) or error notification body."""
    return events.sagemaker_async_notification(
        inference_id=job_id, endpoint_name=endpoint, input_location=input_location,
        received_time="2026-11-22T07:00:00.000Z", event_time="2026-11-22T07:00:05.000Z",
        output_location=output_location, failure_reason=failure_reason, failure_location=failure_location,
    )


def idle_alarm_message(alarm_name: str, state: str, endpoint: str) -> str:
    """What CloudWatch publishes when the endpoint's idle alarm enters ``state``."""
    return events.cloudwatch_alarm_message(
        alarm_name=alarm_name, alarm_arn=f"arn:aws:cloudwatch:{REGION}:{ACCOUNT}:alarm:{alarm_name}",
        new_state=state, old_state="OK" if state == "ALARM" else "ALARM",
        reason="Threshold Crossed: 10 datapoints were less than the threshold (0.1).",
        metric_name="ApproximateBacklogSizePerInstance", namespace="AWS/SageMaker",
        dimensions={"EndpointName": endpoint}, period=60, evaluation_periods=10,
        comparison_operator="LessThanThreshold", threshold=0.1, treat_missing_data="breaching",
        state_change_time="2026-11-22T07:10:00.000+0000",
    )
