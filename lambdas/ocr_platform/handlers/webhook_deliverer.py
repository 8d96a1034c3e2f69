"""Webhook deliverer Lambda: the webhook queue -> one signed POST per finished job (``ocr_platform.outputs.webhook_delivery``).

Partial batch failures: a delivery to retry has its message's visibility set to the schedule's next wait and is
reported failed, so SQS brings it back then; a dead-lettered one is sent to the webhook DLQ with its last error
and deleted. The queue's own redrive (``defaults.webhook_delivery_attempts`` receives, doubled) only catches
a message this function keeps crashing on.
"""

from __future__ import annotations

import json
import uuid
from functools import cache
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities import parameters
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from ocr_platform.core.safe_http import UrlPolicy
from ocr_platform.core.tracing import annotate_job, tracer
from ocr_platform.handlers._services import services
from ocr_platform.outputs.notifications import WebhookRequest
from ocr_platform.outputs.webhook_delivery import RetrySchedule, WebhookDeliverer

logger = Logger(service="ocr-webhooks")
batch = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
#: The signing secret is read once per execution environment and again after this long (a rotation reaches
#: every environment within it).
SECRET_MAX_AGE_SECONDS = 300


class RetryLater(Exception):
    """This delivery failed or is held by another invocation; SQS brings the message back."""


@cache
def deliverer() -> WebhookDeliverer:
    settings = services().settings
    return WebhookDeliverer(
        services().store,
        secret=lambda: str(parameters.get_secret(settings.webhook_secret_arn, max_age=SECRET_MAX_AGE_SECONDS)).encode(),
        policy=UrlPolicy(settings.url_policy),
        schedule=RetrySchedule(
            settings.webhook_first_retry_seconds, settings.webhook_max_retry_interval_seconds,
            settings.webhook_retry_window_seconds,
        ),
    )


@tracer.capture_method
def handle_record(record: SQSRecord) -> str:
    svc = services()
    webhook: WebhookRequest = json.loads(record.body)
    logger.append_keys(job_id=webhook["job_id"], event_id=webhook["event_id"])
    annotate_job(webhook["job_id"])
    attempt = int(record.attributes.approximate_receive_count or 1)
    first_sent_at = int(record.attributes.sent_timestamp) / 1000
    result = deliverer().deliver(webhook, attempt=attempt, first_sent_at=first_sent_at, attempt_id=uuid.uuid4().hex)
    sqs: Any = svc.sqs
    if result.outcome == "retry":
        sqs.change_message_visibility(
            QueueUrl=svc.settings.webhook_queue_url, ReceiptHandle=record.receipt_handle,
            VisibilityTimeout=result.retry_in_seconds,
        )
        raise RetryLater(f"attempt {attempt} failed: {(result.attempt or {}).get('error')}; next in {result.retry_in_seconds} s")
    if result.outcome == "in_progress":
        raise RetryLater("another invocation is POSTing this webhook now")
    if result.outcome == "dead_lettered":
        sqs.send_message(
            QueueUrl=svc.settings.webhook_dlq_url, MessageBody=record.body,
            MessageAttributes={
                "LastError": {"DataType": "String", "StringValue": str((result.attempt or {}).get("error"))[:1000]},
                "Attempts": {"DataType": "Number", "StringValue": str(attempt)},
            },
        )
        logger.error("Webhook dead-lettered after %d attempts", attempt, last_error=(result.attempt or {}).get("error"))
    return result.outcome


@tracer.capture_lambda_handler
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return process_partial_response(event=event, record_handler=handle_record, processor=batch, context=context)
