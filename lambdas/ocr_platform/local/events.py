"""Lambda event envelopes built from what the services really hold, in the shapes Lambda delivers.

The SQS event source and SNS -> Lambda delivery are not executed by moto; the local stack (and the
tests) take real received SQS messages and SNS envelopes and wrap them exactly as Lambda does.
"""

from __future__ import annotations

from typing import Any

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
    import json

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
