"""Lambda event envelopes built from real (moto) service data, the way the Lambda service builds them.

The SQS event source and SNS -> Lambda delivery are not executed by moto; these helpers take what moto
really holds (received SQS messages, SNS envelopes delivered to an SQS subscriber) and wrap it in the
exact record shapes Lambda passes to a handler.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

from ocr_platform.local.events import sns_event, sqs_event  # noqa: F401 - the shapes the local stack delivers

REGION = "us-east-1"
ACCOUNT = "123456789012"


@dataclass
class FakeLambdaContext:
    """The attributes of ``LambdaContext`` the handlers (and Powertools) read."""

    function_name: str = "test-function"
    memory_limit_in_mb: int = 256
    invoked_function_arn: str = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:test-function"
    aws_request_id: str = "00000000-0000-0000-0000-000000000000"

    def get_remaining_time_in_millis(self) -> int:
        return 60_000


def lambda_failure_record(payload: dict[str, Any], *, error_type: str, error_message: str, function_arn: str) -> dict[str, Any]:
    """The invocation record Lambda sends to an on-failure destination after retries are exhausted."""
    return {
        "version": "1.0",
        "timestamp": "2026-11-22T07:00:00.000Z",
        "requestContext": {
            "requestId": str(uuid.uuid4()),
            "functionArn": f"{function_arn}:$LATEST",
            "condition": "RetriesExhausted",
            "approximateInvokeCount": 1,
        },
        "requestPayload": payload,
        "responseContext": {"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
        "responsePayload": {"errorMessage": error_message, "errorType": error_type, "requestId": "", "stackTrace": []},
    }


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
    body: dict[str, Any] = {
        "awsRegion": REGION,
        "eventTime": "2026-11-22T07:00:05.000Z",
        "receivedTime": "2026-11-22T07:00:00.000Z",
        "invocationStatus": "Completed" if output_location else "Failed",
        "requestParameters": {"contentType": "application/json", "endpointName": endpoint, "inputLocation": input_location},
        "inferenceId": job_id,
        "eventVersion": "1.0",
        "eventSource": "aws:sagemaker",
        "eventName": "InferenceResult",
    }
    if output_location:
        body["responseParameters"] = {"contentType": "application/json", "outputLocation": output_location}
    else:
        body["failureReason"] = failure_reason or "ClientError: Received server error (500) from model."
        if failure_location:
            body["responseParameters"] = {"contentType": "application/json", "failureLocation": failure_location}
    return json.dumps(body)


def cloudwatch_alarm_message(alarm_name: str, state: str, endpoint: str) -> str:
    """The JSON CloudWatch publishes to an alarm action topic."""
    return json.dumps(
        {
            "AlarmName": alarm_name,
            "AlarmDescription": "GPU endpoint idle",
            "AWSAccountId": ACCOUNT,
            "NewStateValue": state,
            "NewStateReason": "Threshold Crossed: 10 datapoints were less than the threshold (0.1).",
            "StateChangeTime": "2026-11-22T07:10:00.000+0000",
            "Region": "US East (N. Virginia)",
            "AlarmArn": f"arn:aws:cloudwatch:{REGION}:{ACCOUNT}:alarm:{alarm_name}",
            "OldStateValue": "OK" if state == "ALARM" else "ALARM",
            "Trigger": {
                "MetricName": "ApproximateBacklogSizePerInstance",
                "Namespace": "AWS/SageMaker",
                "StatisticType": "Statistic",
                "Statistic": "AVERAGE",
                "Dimensions": [{"value": endpoint, "name": "EndpointName"}],
                "Period": 60,
                "EvaluationPeriods": 10,
                "ComparisonOperator": "LessThanThreshold",
                "Threshold": 0.1,
                "TreatMissingData": "breaching",
            },
        }
    )
