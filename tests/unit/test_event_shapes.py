"""The events the local stack delivers (and the handler tests send) have AWS's own shapes.

Each builder in ``ocr_platform.local.events`` is compared, key for key and down to nested objects, with
AWS's documented sample of the same event under ``tests/events/``. A key the builder drops or invents
fails here before a handler written against the local stack meets the real service.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ocr_platform.local import events
from tests.aws_events import idle_alarm_message, lambda_failure_record, load_event, sagemaker_notification


def shape(value: Any) -> Any:
    """The key structure of a JSON value: dicts keep their keys (recursively), lists their first item's shape."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value and isinstance(value[0], (dict, list)) else []
    return None


SQS_MESSAGE = {
    "MessageId": "m-1", "ReceiptHandle": "r-1", "Body": "{}", "MD5OfBody": "99914b932bd37a50b983c5e7c90ae93b",
    "Attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": "1", "SenderId": "A", "ApproximateFirstReceiveTimestamp": "1"},
}
SNS_ENVELOPE = {
    "Type": "Notification", "MessageId": "n-1", "TopicArn": "arn:aws:sns:us-east-1:123456789012:t", "Message": "{}",
    "Timestamp": "2026-11-22T07:00:00.000Z", "SignatureVersion": "1", "Signature": "s", "SigningCertURL": "c",
    "UnsubscribeURL": "u",
}

BUILT = {
    "sqs_event": lambda: events.sqs_event([SQS_MESSAGE], "arn:aws:sqs:us-east-1:123456789012:q"),
    "sns_event": lambda: events.sns_event([SNS_ENVELOPE], "arn:aws:sns:us-east-1:123456789012:t:sub"),
    "cloudwatch_alarm_sns_message": lambda: json.loads(idle_alarm_message("idle", "ALARM", "vl")),
    "eventbridge_scheduled_event": lambda: events.scheduled_event("arn:aws:events:us-east-1:123456789012:rule/r", "t", event_id="e"),
    "lambda_destination_failure": lambda: lambda_failure_record(
        load_event("lambda_destination_failure")["requestPayload"],
        error_type="Runtime.ExitError",
        error_message="killed",
        function_arn="arn:aws:lambda:us-east-1:123456789012:function:f",
    ),
    "sagemaker_async_success": lambda: json.loads(sagemaker_notification("j", endpoint="vl", input_location="s3://b/in", output_location="s3://b/out")),
    "s3_eventbridge_object_created": lambda: events.s3_object_created_event(
        bucket="b", key="inbox/pp-ocrv5/a b.pdf", size=5, etag="e", version_id="v", event_id="e-1", time_iso="t"
    ),
    "http_api_jwt_event": lambda: events.http_api_event(
        "GET", "/jobs/8f2c", route_key="GET /jobs/{job_id}", claims={"sub": "u", "token_use": "id"}, body="",
        query={"limit": "5"}, path_parameters={"job_id": "8f2c"}, headers={"Accept": "application/json", "Authorization": "Bearer x"},
        request_id="r", time_epoch_ms=0,
    ),
    "sagemaker_async_error": lambda: json.loads(
        sagemaker_notification("j", endpoint="vl", input_location="s3://b/in", failure_reason="boom", failure_location="s3://b/err")
    ),
}


@pytest.mark.parametrize("name", sorted(BUILT))
def test_builder_matches_aws_sample(name: str) -> None:
    sample, built = load_event(name), BUILT[name]()
    if name == "lambda_destination_failure":  # AWS's sample shows a subset of the runtime's error object
        built["responsePayload"] = {k: built["responsePayload"][k] for k in sample["responsePayload"]}
    assert shape(built) == shape(sample)


def test_every_sample_has_a_builder() -> None:
    from tests.aws_events import EVENTS_DIR

    assert {p.stem for p in EVENTS_DIR.glob("*.json")} == set(BUILT)
