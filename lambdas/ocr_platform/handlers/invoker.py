"""Invoker Lambda: SQS OCR queue -> route each job to the CPU processor or the SageMaker endpoint.

Reports partial batch failures (``ReportBatchItemFailures``), so only a message that must be retried
(endpoint busy, an AWS call that failed, another delivery of it handing the job over right now) comes
back after the visibility timeout. A CPU job that finds every processor slot taken waits: its message goes
back on the queue as a new one (``admission.wait_in_queue``) and this one is done. A malformed message
never comes back: with a job id its job is FAILED ``invalid_message``, without one it is logged and
dropped. On the last receive before the DLQ a job that still cannot be dispatched is FAILED instead.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.metrics import count_started_job, metrics
from ocr_platform.core.tracing import annotate_job, tracer
from ocr_platform.handlers._services import services
from ocr_platform.inputs.dispatch import AdmissionDeferredError, HandOverInProgressError
from ocr_platform.jobs.admission import wait_in_queue
from ocr_platform.jobs.messages import InvalidMessageError, parse_job_message

logger = Logger(service="ocr-invoker")
# A fully failed batch is reported item by item (not raised): the queue retries it the same way, and an
# expected "endpoint busy" does not count as a function error.
batch = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


@tracer.capture_method
def handle_record(record: SQSRecord) -> str:
    svc = services()
    try:
        message = parse_job_message(record.body)
    except InvalidMessageError as err:
        if err.job_id is None:
            logger.error("Dropped a malformed message without a usable job id", reason=str(err), message_id=record.message_id)
            return "dropped"
        svc.store.mark_failed(
            err.job_id, JobError(ErrorCode.INVALID_MESSAGE, f"The job message is invalid: {err}"), callback_url=err.callback_url
        )
        return "invalid"

    logger.append_keys(job_id=message.job_id, model=message.model)
    annotate_job(message.job_id, model=message.model)
    dispatcher = svc.dispatcher
    try:
        result = dispatcher.dispatch(message)
    except HandOverInProgressError as err:
        # Never given up: the holder hands the job over, or a later delivery takes over from it; past the
        # last receive the DLQ consumer fails the job only if it was never handed over.
        logger.warning("Another delivery is handing the job over; this one is retried", error=str(err))
        raise
    except AdmissionDeferredError as err:
        if not svc.settings.queue_url:
            raise
        delay = wait_in_queue(svc.sqs, svc.settings.queue_url, record.body, delay_seconds=svc.settings.admission_retry_seconds)
        logger.info("Job waits for a processor slot", reason=str(err), delay_seconds=delay)
        return "deferred"
    except Exception as err:
        receives = int(record.attributes.approximate_receive_count or 1)
        if receives >= svc.settings.max_receive_count:
            logger.error("Giving up on job after %d receives", receives, error=str(err))
            dispatcher.give_up(message, err)
            return "gave_up"
        logger.warning("Dispatch failed; the message will be retried", error=str(err), receives=receives)
        raise
    logger.info("Job routed", outcome=result.outcome, backend=result.backend, scaled_out=result.scaled_out)
    if result.outcome == "dispatched":
        count_started_job(message.model)
    return result.outcome


@metrics.log_metrics
@tracer.capture_lambda_handler
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return process_partial_response(event=event, record_handler=handle_record, processor=batch, context=context)
