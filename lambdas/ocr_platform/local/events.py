"""The one source of the AWS event shapes the local stack delivers and the tests send.

moto does not run the SQS event source, SNS -> Lambda delivery, CloudWatch alarm actions, EventBridge
schedules and Lambda rule targets, Lambda's on-failure destinations or SageMaker's async notifications (and
its S3 -> EventBridge event misnames ``etag``); the local stack does,
and these builders give each the exact shape AWS uses. The handler tests build their events here too,
and ``tests/events/`` holds AWS's documented sample of each shape, against which these builders are
checked key for key.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote_plus

REGION = "us-east-1"


def sqs_event(messages: list[dict[str, Any]], queue_arn: str, region: str = REGION) -> dict[str, Any]:
    """An SQS event source batch from ``receive_message(AttributeNames=["All"])`` results."""
    return {
        "Records": [
            {
                "messageId": m["MessageId"],
                "receiptHandle": m["ReceiptHandle"],
                "body": m["Body"],
                "attributes": m.get("Attributes", {}),
                "messageAttributes": m.get("MessageAttributes", {}),
                "md5OfBody": m["MD5OfBody"],
                "eventSource": "aws:sqs",
                "eventSourceARN": queue_arn,
                "awsRegion": region,
            }
            for m in messages
        ]
    }


def sns_event(envelopes: list[dict[str, Any]], subscription_arn: str) -> dict[str, Any]:
    """An SNS -> Lambda event from SNS notification envelopes (as delivered to an SQS subscriber)."""
    return {
        "Records": [
            {
                "EventSource": "aws:sns",
                "EventVersion": "1.0",
                "EventSubscriptionArn": subscription_arn,
                "Sns": {
                    "Type": env["Type"],
                    "MessageId": env["MessageId"],
                    "TopicArn": env["TopicArn"],
                    "Subject": env.get("Subject"),
                    "Message": env["Message"],
                    "Timestamp": env["Timestamp"],
                    "SignatureVersion": env.get("SignatureVersion", "1"),
                    "Signature": env.get("Signature", "EXAMPLE"),
                    "SigningCertUrl": env.get("SigningCertURL", ""),
                    "UnsubscribeUrl": env.get("UnsubscribeURL", ""),
                    "MessageAttributes": env.get("MessageAttributes", {}),
                },
            }
            for env in envelopes
        ]
    }


def cloudwatch_alarm_message(
    *,
    alarm_name: str,
    alarm_arn: str,
    new_state: str,
    old_state: str,
    reason: str,
    metric_name: str,
    namespace: str,
    dimensions: dict[str, str],
    period: int,
    evaluation_periods: int,
    comparison_operator: str,
    threshold: float,
    treat_missing_data: str,
    statistic: str = "AVERAGE",
    account: str = "123456789012",
    region_name: str = "US East (N. Virginia)",
    state_change_time: str = "",
) -> str:
    """The JSON CloudWatch publishes to an alarm action's SNS topic."""
    return json.dumps(
        {
            "AlarmName": alarm_name,
            "AlarmDescription": None,
            "AWSAccountId": account,
            "AlarmConfigurationUpdatedTimestamp": state_change_time,
            "NewStateValue": new_state,
            "NewStateReason": reason,
            "StateChangeTime": state_change_time,
            "Region": region_name,
            "AlarmArn": alarm_arn,
            "OldStateValue": old_state,
            "OKActions": [],
            "AlarmActions": [],
            "InsufficientDataActions": [],
            "Trigger": {
                "MetricName": metric_name,
                "Namespace": namespace,
                "StatisticType": "Statistic",
                "Statistic": statistic,
                "Unit": None,
                "Dimensions": [{"value": v, "name": k} for k, v in dimensions.items()],
                "Period": period,
                "EvaluationPeriods": evaluation_periods,
                "DatapointsToAlarm": evaluation_periods,
                "ComparisonOperator": comparison_operator,
                "Threshold": threshold,
                "TreatMissingData": treat_missing_data,
                "EvaluateLowSampleCountPercentile": "",
            },
        }
    )


def scheduled_event(rule_arn: str, time_iso: str, *, event_id: str, account: str = "123456789012", region: str = REGION) -> dict[str, Any]:
    """The event an EventBridge schedule rule sends to its Lambda target."""
    return {
        "version": "0",
        "id": event_id,
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": account,
        "time": time_iso,
        "region": region,
        "resources": [rule_arn],
        "detail": {},
    }


def iso_millis(when: datetime | None = None) -> str:
    """``2026-11-22T07:00:00.123Z``: the timestamp format of Lambda's and SageMaker's records."""
    return (when or datetime.now(UTC)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def lambda_destination_record(
    *,
    request_id: str,
    function_arn: str,
    request_payload: Any,
    response_payload: dict[str, Any],
    approximate_invoke_count: int,
    timestamp: str = "",
    condition: str = "RetriesExhausted",
) -> dict[str, Any]:
    """The invocation record Lambda sends to an async invocation's on-failure destination.

    ``function_arn`` is qualified (``...:function:name:$LATEST``); ``response_payload`` is the error
    object of the last attempt (``errorMessage``, ``errorType``, ...).
    """
    return {
        "version": "1.0",
        "timestamp": timestamp or iso_millis(),
        "requestContext": {
            "requestId": request_id,
            "functionArn": function_arn,
            "condition": condition,
            "approximateInvokeCount": approximate_invoke_count,
        },
        "requestPayload": request_payload,
        "responseContext": {"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
        "responsePayload": response_payload,
    }


def sagemaker_async_notification(
    *,
    inference_id: str,
    endpoint_name: str,
    input_location: str | None,
    request_content_type: str = "application/json",
    received_time: str = "",
    event_time: str = "",
    output_location: str | None = None,
    response_content_type: str | None = "application/json",
    failure_reason: str | None = None,
    failure_location: str | None = None,
    region: str = REGION,
) -> str:
    """The JSON SageMaker publishes for one async inference: to the success topic when ``output_location``
    is given (``invocationStatus: Completed``), else to the error topic (``Failed`` with ``failureReason``
    and, where the model's error body was stored, ``responseParameters.failureLocation``)."""
    parameters = {"contentType": request_content_type, "endpointName": endpoint_name}
    if input_location:
        parameters["inputLocation"] = input_location
    succeeded = output_location is not None
    message: dict[str, Any] = {
        "awsRegion": region,
        "eventTime": event_time or iso_millis(),
        "receivedTime": received_time or iso_millis(),
        "invocationStatus": "Completed" if succeeded else "Failed",
        "requestParameters": parameters,
    }
    if not succeeded:
        message["failureReason"] = failure_reason or "ClientError: Received server error (500) from primary."
    if succeeded:
        message["responseParameters"] = {"contentType": response_content_type, "outputLocation": output_location}
    elif failure_location:
        message["responseParameters"] = {"contentType": response_content_type, "failureLocation": failure_location}
    message.update(inferenceId=inference_id, eventVersion="1.0", eventSource="aws:sagemaker", eventName="InferenceResult")
    return json.dumps(message)


def s3_object_created_event(
    *, bucket: str, key: str, size: int, etag: str, version_id: str | None = None, event_id: str, time_iso: str,
    reason: str = "PutObject", sequencer: str = "0000000000000000", account: str = "123456789012", region: str = REGION,
) -> dict[str, Any]:
    """The EventBridge event S3 sends for a new object when the bucket's EventBridge notifications are on.

    The key is URL-encoded as in S3's other event notifications (a space becomes ``+``), which is what
    Powertools' ``S3EventBridgeNotificationObject.key`` decodes; ``version-id`` is there on a versioned bucket.
    """
    obj: dict[str, Any] = {"key": quote_plus(key, safe="/"), "size": size, "etag": etag.strip('"'), "sequencer": sequencer}
    if version_id:
        obj["version-id"] = version_id
    return {
        "version": "0",
        "id": event_id,
        "detail-type": "Object Created",
        "source": "aws.s3",
        "account": account,
        "time": time_iso,
        "region": region,
        "resources": [f"arn:aws:s3:::{bucket}"],
        "detail": {
            "version": "0",
            "bucket": {"name": bucket},
            "object": obj,
            "request-id": event_id.replace("-", "")[:16].upper(),
            "requester": account,
            "source-ip-address": "127.0.0.1",
            "reason": reason,
        },
    }


def http_api_event(
    method: str, path: str, *, route_key: str, claims: dict[str, Any] | None, body: str | None = None,
    query: dict[str, str] | None = None, path_parameters: dict[str, str] | None = None, headers: dict[str, str] | None = None,
    request_id: str, time_epoch_ms: int, api_id: str = "local", account: str = "123456789012", region: str = REGION,
) -> dict[str, Any]:
    """An API Gateway HTTP API request (payload format 2.0) as a Lambda integration receives it; ``claims`` are
    those the JWT authorizer verified (``None``: a route without an authorizer)."""
    when = datetime.fromtimestamp(time_epoch_ms / 1000, UTC)
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": route_key,
        "rawPath": path,
        "rawQueryString": "&".join(f"{k}={quote_plus(v)}" for k, v in (query or {}).items()),
        "headers": {name.lower(): value for name, value in (headers or {}).items()},
        "requestContext": {
            "accountId": account,
            "apiId": api_id,
            "domainName": f"{api_id}.execute-api.{region}.amazonaws.com",
            "domainPrefix": api_id,
            "http": {"method": method, "path": path, "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1", "userAgent": "local"},
            "requestId": request_id,
            "routeKey": route_key,
            "stage": "$default",
            "time": when.strftime("%d/%b/%Y:%H:%M:%S +0000"),
            "timeEpoch": time_epoch_ms,
        },
        "isBase64Encoded": False,
    }
    if claims is not None:
        event["requestContext"]["authorizer"] = {"jwt": {"claims": claims, "scopes": None}}
    if query:
        event["queryStringParameters"] = dict(query)
    if path_parameters:
        event["pathParameters"] = dict(path_parameters)
    if body is not None:
        event["body"] = body
    return event
