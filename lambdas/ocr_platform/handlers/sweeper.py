"""Sweeper Lambda (EventBridge schedule): settles GPU jobs from S3 whose notification was lost, fails jobs
stuck QUEUED or PROCESSING past their deadline, and publishes the completion events that a crashed writer
left in the outbox (``CompletionNotifier.republish_pending``)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from ocr_platform.core import defaults
from ocr_platform.core.metrics import metrics
from ocr_platform.core.tracing import tracer
from ocr_platform.handlers._services import services
from ocr_platform.recovery.job_recovery import Deadlines, settle_finished_inferences, sweep_stuck_jobs

logger = Logger(service="ocr-sweeper")


@metrics.log_metrics
# Its response lists every job a sweep touched: it could outgrow a trace segment (64 KB), so it stays in the log.
@tracer.capture_lambda_handler(capture_response=False)
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    svc = services()
    settings = svc.settings
    deadlines = Deadlines(settings.queued_deadline_seconds, settings.lambda_deadline_seconds, settings.sagemaker_deadline_seconds)
    settled = settle_finished_inferences(
        svc.store, svc.s3, svc.layout, grace_seconds=settings.settle_grace_seconds, inference=svc.inference,
        max_failed_percent=settings.max_failed_page_percent,
    )
    failed = sweep_stuck_jobs(svc.store, deadlines)
    republished = svc.notifier.republish_pending(grace_seconds=defaults.NOTIFICATION_GRACE_SECONDS)
    logger.info("Sweep done", settled=settled, failed=failed, republished=republished)
    return {"settled": settled, "failed": failed, "republished": republished}
