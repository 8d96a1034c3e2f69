"""Completion handler Lambda: finishes jobs that ran somewhere else.

Two triggers, two event shapes:

- the SageMaker success and error SNS topics (``Records[].Sns.Message`` holds the async inference
  notification) -> result.json published and the job COMPLETED, or the job FAILED with the reason; for
  a long document, the endpoint's split plan -> one request per chunk, and each chunk's result recorded
  until the last one merges the job's result;
- the CPU processor's on-failure destination (a Lambda invocation record with ``requestPayload`` and
  ``responsePayload``), sent when the processor crashed or timed out -> the job FAILED (naming the chunk
  and its pages when the invocation ran one chunk of a split job), and the run's processor slot given back.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.data_classes import SNSEvent
from aws_lambda_powertools.utilities.typing import LambdaContext

from ocr_platform.core.chunks import Chunk, InvalidChunkError
from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.metrics import metrics
from ocr_platform.core.tracing import annotate_job, tracer
from ocr_platform.gpu.completion import AsyncInferenceNotification, finish_async_inference
from ocr_platform.handlers._services import services

logger = Logger(service="ocr-completion")


@metrics.log_metrics
@tracer.capture_lambda_handler
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    if "requestContext" in event and "requestPayload" in event:
        return {"outcomes": [finish_crashed_processor_run(event)]}
    svc = services()
    outcomes = []
    for record in SNSEvent(event).records:
        try:
            notification = AsyncInferenceNotification.parse(record.sns.message)
        except ValueError as err:
            logger.error("Ignored an SNS message that is not a SageMaker notification", reason=str(err))
            outcomes.append("ignored")
            continue
        logger.append_keys(job_id=notification.job_id)
        annotate_job(notification.job_id)
        outcome = finish_async_inference(
            notification, store=svc.store, s3=svc.s3, layout=svc.layout,
            attempt_id=context.aws_request_id, lease_seconds=context.get_remaining_time_in_millis() / 1000,
            inference=svc.inference, max_failed_percent=svc.settings.max_failed_page_percent,
        )
        logger.info("Async inference finished", outcome=outcome, succeeded=notification.succeeded)
        outcomes.append(outcome)
    return {"outcomes": outcomes}


def finish_crashed_processor_run(record: dict[str, Any]) -> str:
    """Fail the job of a processor invocation that ended in an unhandled error, a crash or a timeout (or whose
    event expired in Lambda's queue). For a chunk of a split job the job fails once, with the chunk's pages."""
    payload = record.get("requestPayload") or {}
    job_id = payload.get("job_id") if isinstance(payload, dict) else None
    if not isinstance(job_id, str):
        logger.error("Processor failure record without a job id", record=record)
        return "ignored"
    annotate_job(job_id)
    response = record.get("responsePayload") or {}
    condition = record.get("requestContext", {}).get("condition", "unknown")
    error_type = response.get("errorType", "Unknown") if isinstance(response, dict) else "Unknown"
    error_message = response.get("errorMessage", "") if isinstance(response, dict) else str(response)
    timed_out = "timed out" in error_message.lower() or "timedout" in error_type.lower()
    code = ErrorCode.TIMED_OUT if timed_out else ErrorCode.PROCESSOR_CRASHED
    text = f"The CPU processor stopped before finishing ({condition}): {error_type}: {error_message}".rstrip(": ")
    if isinstance(payload.get("chunk"), dict):
        try:
            text = f"{Chunk.from_payload(payload['chunk']).label}: {text}"
        except InvalidChunkError:
            pass
    svc = services()
    finished = svc.store.mark_failed(job_id, JobError(code, text))
    slot, slots = payload.get("slot"), svc.slots
    if isinstance(slot, str) and slot and slots is not None:
        slots.release(slot)  # the crashed run cannot give its processor slot back itself
    logger.warning("Processor run failed", job_id=job_id, code=code, applied=finished)
    return "failed" if finished else "ignored"
