"""Finish SageMaker async jobs from the endpoint's success and error notifications.

SageMaker posts one JSON notification per inference to the success or the error SNS topic. Its shape
(the contract this module parses) is::

    {"awsRegion": "...", "eventTime": "...", "receivedTime": "...", "invocationStatus": "Completed",
     "requestParameters": {"endpointName": "...", "inputLocation": "s3://...", "contentType": "..."},
     "responseParameters": {"contentType": "...", "outputLocation": "s3://..."},
     "inferenceId": "<job id>", "eventVersion": "1.0", "eventSource": "aws:sagemaker",
     "eventName": "InferenceResult"}

and on error ``invocationStatus: "Failed"`` with ``failureReason`` (and, where SageMaker wrote the model's
error body, ``responseParameters.failureLocation``).
"""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass
from typing import Any, Literal

from botocore.exceptions import ClientError

from ocr_platform import defaults
from ocr_platform.errors import ErrorCode, JobError
from ocr_platform.job_runner import publish_result
from ocr_platform.jobs import TERMINAL_STATUSES, JobStore
from ocr_platform.results import validate_result
from ocr_platform.s3_layout import S3Uri, StorageLayout

logger = logging.getLogger(__name__)

#: The largest output admitted; the completion function's memory is sized for it (``defaults``).
MAX_OUTPUT_BYTES = defaults.MAX_ENDPOINT_OUTPUT_BYTES


@dataclass(frozen=True)
class AsyncInferenceNotification:
    """One SageMaker async inference notification."""

    inference_id: str
    succeeded: bool
    output_location: str | None = None
    failure_location: str | None = None
    failure_reason: str | None = None
    input_location: str | None = None

    @classmethod
    def parse(cls, message: str | dict[str, Any]) -> AsyncInferenceNotification:
        data = json.loads(message) if isinstance(message, str) else message
        if not isinstance(data, dict) or not data.get("inferenceId"):
            raise ValueError("not a SageMaker async inference notification (no inferenceId)")
        status = data.get("invocationStatus")
        response = data.get("responseParameters") or {}
        request = data.get("requestParameters") or {}
        return cls(
            inference_id=data["inferenceId"],
            succeeded=status == "Completed",
            output_location=response.get("outputLocation"),
            failure_location=response.get("failureLocation"),
            failure_reason=data.get("failureReason") or (None if status == "Completed" else f"invocationStatus {status}"),
            input_location=request.get("inputLocation"),
        )


Outcome = Literal["completed", "failed", "ignored"]


def finish_async_inference(
    notification: AsyncInferenceNotification,
    *,
    store: JobStore,
    s3: Any,
    layout: StorageLayout,
    attempt_id: str | None = None,
    lease_seconds: float = defaults.COMPLETION_TIMEOUT_SECONDS,
) -> Outcome:
    """Publish the endpoint's result (or record its error) and move the job to its terminal state.

    The job's ``finish`` step is claimed first as ``attempt_id`` for ``lease_seconds`` (the completion
    function passes its request id, which Lambda keeps across the retries of one event, and the time its
    invocation has left). So of two notifications for one inference that arrive together (SNS delivered one
    twice, or a success and an error), one publishes and the other is ignored: one ``result.json`` write,
    one terminal state.
    """
    job_id = notification.inference_id
    job = store.get(job_id)
    if job is None:
        logger.warning("Notification for unknown job %s ignored", job_id)
        return "ignored"
    if job.get("status") in TERMINAL_STATUSES:
        logger.warning("Repeated notification for job %s (already %s) ignored", job_id, job["status"])
        return "ignored"
    claim = store.claim_step(job_id, "finish", attempt_id=attempt_id or uuid.uuid4().hex, lease_seconds=lease_seconds)
    if not claim.acquired:
        current = claim.job or {}
        logger.warning("Notification for job %s ignored: it is %s and %s is finishing it", job_id,
                       current.get("status"), current.get("finish_attempt"))
        return "ignored"

    if not notification.succeeded:
        store.mark_failed(job_id, _inference_error(notification, s3))
        return "failed"
    try:
        if not notification.output_location:
            raise JobError(ErrorCode.INVALID_RESULT, "SageMaker reported success without an output location.")
        document = json.loads(_read_s3_text(s3, notification.output_location))
        result = validate_result(document, job_id=job_id)
    except JobError as err:
        store.mark_failed(job_id, err)
        return "failed"
    except (ValueError, UnicodeDecodeError) as err:
        store.mark_failed(job_id, JobError(ErrorCode.INVALID_RESULT, f"The endpoint's output is not JSON: {err}"))
        return "failed"
    result_uri = publish_result(s3, layout, result)
    store.mark_completed(job_id, result_uri=result_uri, page_count=result["page_count"], warnings=result["warnings"])
    return "completed"


def _inference_error(notification: AsyncInferenceNotification, s3: Any) -> JobError:
    """The endpoint's own ``{code, message}`` when its error body has one, else SageMaker's reason."""
    reason = notification.failure_reason or "The inference failed."
    if notification.failure_location:
        try:
            body = json.loads(_read_s3_text(s3, notification.failure_location))
            error = body.get("error", body) if isinstance(body, dict) else None
            if isinstance(error, dict) and error.get("code") and error.get("message"):
                return JobError(str(error["code"]), str(error["message"]))
        except (ClientError, ValueError, UnicodeDecodeError, JobError) as err:
            logger.warning("Could not read failure body %s: %s", notification.failure_location, err)
    return JobError(ErrorCode.INFERENCE_FAILED, reason)


def _read_s3_text(s3: Any, uri: str) -> str:
    location = S3Uri.parse(uri)
    try:
        obj = s3.get_object(Bucket=location.bucket, Key=location.key)
    except ClientError as err:
        raise JobError(ErrorCode.INVALID_RESULT, f"The endpoint's output {uri} cannot be read: {err}") from None
    if obj.get("ContentLength", 0) > MAX_OUTPUT_BYTES:
        raise JobError(ErrorCode.INVALID_RESULT, f"The endpoint's output {uri} is larger than {MAX_OUTPUT_BYTES} bytes.")
    return obj["Body"].read().decode("utf-8")
