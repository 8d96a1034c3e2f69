"""Scale-in Lambda: the backlog alarm says the GPU endpoint is idle -> DesiredInstanceCount 0.

Two triggers: the scale-in SNS topic with CloudWatch's alarm notification (``AlarmName``,
``NewStateValue``, ...), where only a transition to ALARM acts; and an EventBridge schedule, which acts
while the idle alarm is still in ALARM (a scale-in skipped earlier is retried). Either way it scales in
only when no SageMaker job is in flight.
"""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.data_classes import SNSEvent
from aws_lambda_powertools.utilities.typing import LambdaContext

from ocr_platform.core.tracing import tracer
from ocr_platform.gpu.scaling import idle_alarm_is_firing, scale_in_when_idle
from ocr_platform.handlers._services import _client, services

logger = Logger(service="ocr-scale-in")


@tracer.capture_lambda_handler
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    svc = services()
    if event.get("source") == "aws.events":
        return {"outcomes": [recheck_on_schedule()]}
    outcomes = []
    for record in SNSEvent(event).records:
        try:
            alarm = json.loads(record.sns.message)
            state = alarm["NewStateValue"]
        except (ValueError, KeyError, TypeError):
            logger.error("Ignored an SNS message that is not a CloudWatch alarm notification")
            outcomes.append("ignored")
            continue
        if state != "ALARM":
            logger.info("Alarm is %s; nothing to do", state, alarm=alarm.get("AlarmName"))
            outcomes.append("ignored")
            continue
        result = scale_in_when_idle(svc.store, svc.capacity, inflight_window_seconds=svc.settings.inflight_window_seconds)
        logger.info("Scale-in evaluated", outcome=result.outcome, in_flight=list(result.in_flight))
        outcomes.append(result.outcome)
    return {"outcomes": outcomes}


def recheck_on_schedule() -> str:
    """The scheduled trigger: scale in while the idle alarm is (still) firing."""
    svc = services()
    if not svc.settings.idle_alarm_name or not idle_alarm_is_firing(_client("cloudwatch"), svc.settings.idle_alarm_name):
        return "ignored"
    result = scale_in_when_idle(svc.store, svc.capacity, inflight_window_seconds=svc.settings.inflight_window_seconds)
    logger.info("Scheduled scale-in evaluated", outcome=result.outcome, in_flight=list(result.in_flight))
    return result.outcome
