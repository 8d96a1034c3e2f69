"""Scale-in Lambda: the backlog alarm says the GPU endpoint is idle -> DesiredInstanceCount 0.

Triggered through the scale-in SNS topic with CloudWatch's alarm notification (``AlarmName``,
``NewStateValue``, ...). Only a transition to ALARM acts, and only when no SageMaker job is in flight.
"""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.data_classes import SNSEvent
from aws_lambda_powertools.utilities.typing import LambdaContext

from ocr_platform.handlers._services import services
from ocr_platform.scaling import scale_in_when_idle

logger = Logger(service="ocr-scale-in")


@logger.inject_lambda_context
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    svc = services()
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
