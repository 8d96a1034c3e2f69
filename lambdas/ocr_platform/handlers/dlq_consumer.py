"""DLQ consumer Lambda: a job message that reached the dead-letter queue fails its job and is archived.

Triggered by an SQS event source on the DLQ with partial batch failures: a record whose archive or
job update failed stays on the DLQ for the next try.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from ocr_platform.core.metrics import metrics
from ocr_platform.core.tracing import annotate_job, tracer
from ocr_platform.handlers._services import services
from ocr_platform.recovery.job_recovery import fail_dead_lettered

logger = Logger(service="ocr-dlq-consumer")
batch = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


@tracer.capture_method
def handle_record(record: SQSRecord) -> str | None:
    svc = services()
    job_id = fail_dead_lettered(
        record.message_id, record.body, attributes=dict(record.raw_event.get("attributes", {})),
        store=svc.store, s3=svc.s3, layout=svc.layout,
    )
    annotate_job(job_id)
    logger.warning("Dead-lettered job message handled", job_id=job_id, message_id=record.message_id)
    return job_id


@metrics.log_metrics
@tracer.capture_lambda_handler
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return process_partial_response(event=event, record_handler=handle_record, processor=batch, context=context)
