"""Finish SageMaker async jobs from the endpoint's success and error notifications, and split long ones.

SageMaker posts one JSON notification per inference to the success or the error SNS topic. Its shape
(the contract this module parses) is::

    {"awsRegion": "...", "eventTime": "...", "receivedTime": "...", "invocationStatus": "Completed",
     "requestParameters": {"endpointName": "...", "inputLocation": "s3://...", "contentType": "..."},
     "responseParameters": {"contentType": "...", "outputLocation": "s3://..."},
     "inferenceId": "<job id>", "eventVersion": "1.0", "eventSource": "aws:sagemaker",
     "eventName": "InferenceResult"}

and on error ``invocationStatus: "Failed"`` with ``failureReason`` (and, where SageMaker wrote the model's
error body, ``responseParameters.failureLocation``).

An endpoint output that is a result may carry ``result_pdf``: where the endpoint wrote the searchable PDF a job
asked for (``outputs: ["pdf"]``, ``ocr_platform.model_server``). It is taken off before result.json is published
and recorded as the job item's ``result_pdf``.
"""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass
from typing import Any, Literal

from botocore.exceptions import ClientError

from ocr_platform import defaults
from ocr_platform.chunks import Chunk, InvalidChunkError, read_split_plan
from ocr_platform.errors import ErrorCode, JobError
from ocr_platform.fan_in import record_chunk_result
from ocr_platform.jobs import TERMINAL_STATUSES, ChunkRequest, JobItem, JobStore
from ocr_platform.messages import InvalidMessageError, parse_job_message
from ocr_platform.result_store import publish_result
from ocr_platform.results import validate_result
from ocr_platform.s3_layout import S3Uri, StorageLayout
from ocr_platform.sagemaker_async import AsyncInference

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


Outcome = Literal["completed", "failed", "ignored", "split", "chunk_done"]


def finish_async_inference(
    notification: AsyncInferenceNotification,
    *,
    store: JobStore,
    s3: Any,
    layout: StorageLayout,
    attempt_id: str | None = None,
    lease_seconds: float = defaults.COMPLETION_TIMEOUT_SECONDS,
    inference: AsyncInference | None = None,
) -> Outcome:
    """Act on one inference's outcome: finish the job, split it, or record one chunk of it.

    - The job's own request (``async/requests/{job_id}.json``). Its ``finish`` step is claimed first as
      ``attempt_id`` for ``lease_seconds`` (the completion function passes its request id, which Lambda
      keeps across the retries of one event, and the time its invocation has left). So of two
      notifications for one inference that arrive together (SNS delivered one twice, or a success and an
      error), one acts and the other is ignored. The output is either the result (published, the job
      COMPLETED) or, for a long document, the endpoint's split plan: the job's chunks are recorded once and
      one request per chunk is sent through ``inference`` (``split``).
    - A chunk request (``async/requests/{job_id}.c{index}.json``, told apart by the notification's
      ``inputLocation``): the chunk's claim is taken, its partial result recorded; the chunk that completes
      the set merges the job's result (``ocr_platform.fan_in``). A failed chunk fails the job once, naming
      the chunk and its pages.
    """
    job_id = notification.inference_id
    job = store.get(job_id)
    if job is None:
        logger.warning("Notification for unknown job %s ignored", job_id)
        return "ignored"
    if job.get("status") in TERMINAL_STATUSES:
        logger.warning("Repeated notification for job %s (already %s) ignored", job_id, job["status"])
        return "ignored"
    attempt_id = attempt_id or uuid.uuid4().hex
    request = layout.parse_async_request(notification.input_location) if notification.input_location else None
    if request is not None and request.chunk_index is not None:
        return _finish_chunk(notification, request.chunk_index, job, store=store, s3=s3, layout=layout,
                             attempt_id=attempt_id, lease_seconds=lease_seconds)
    if job.get("chunk_count"):
        logger.warning("Repeated notification for job %s ignored: it was split into %s chunks already", job_id, job["chunk_count"])
        return "ignored"
    claim = store.claim_step(job_id, "finish", attempt_id=attempt_id, lease_seconds=lease_seconds)
    if not claim.acquired:
        current = claim.job or {}
        logger.warning("Notification for job %s ignored: it is %s and %s is finishing it", job_id,
                       current.get("status"), current.get("finish_attempt"))
        return "ignored"

    if not notification.succeeded:
        store.mark_failed(job_id, _inference_error(notification, s3))
        return "failed"
    try:
        document = _read_output(s3, notification)
        chunks = read_split_plan(document)
        if chunks is not None:
            request_location = notification.input_location or str(layout.async_request_uri(job_id))
            return _send_chunk_requests(job_id, chunks, request_location, store=store, s3=s3, inference=inference,
                                        attempt_id=attempt_id)
        result_pdf = _reported_pdf(document, job_id, layout)
        result = validate_result(document, job_id=job_id)
    except JobError as err:
        store.mark_failed(job_id, err)
        return "failed"
    except InvalidChunkError as err:
        store.mark_failed(job_id, JobError(ErrorCode.INVALID_RESULT, f"The endpoint's split plan is invalid: {err}"))
        return "failed"
    result_uri = publish_result(s3, layout, result)
    store.mark_completed(job_id, result_uri=result_uri, page_count=result["page_count"], warnings=result["warnings"],
                         result_pdf=result_pdf)
    return "completed"


def _reported_pdf(document: Any, job_id: str, layout: StorageLayout) -> str | None:
    """Take the endpoint's ``result_pdf`` off its output (result.json has no such field): the job's result.pdf
    location, which must be the one the layout gives the job; ``None`` when the endpoint wrote none."""
    location = document.pop("result_pdf", None) if isinstance(document, dict) else None
    if location is None:
        return None
    expected = str(S3Uri(layout.bucket, layout.result_pdf_key(job_id)))
    if location != expected:
        raise JobError(ErrorCode.INVALID_RESULT, f"The endpoint reports result.pdf at {location!r}, not at {expected}.")
    return expected


def _send_chunk_requests(
    job_id: str, chunks: list[Chunk], request_location: str, *, store: JobStore, s3: Any,
    inference: AsyncInference | None, attempt_id: str,
) -> Outcome:
    """Record the endpoint's split once, then send one async request per chunk and record where each lands.

    Each chunk request is the job's own request (the message the invoker sent, read back from
    ``request_location``: its options and language, whatever the item holds) plus the chunk.
    """
    if inference is None:
        raise JobError(ErrorCode.INTERNAL_ERROR, "The endpoint split the job, but this function cannot send requests to it "
                       "(OCR_ENDPOINT_NAME is not set here).")
    try:
        message = parse_job_message(_read_s3_text(s3, request_location))
    except (JobError, InvalidMessageError) as err:
        raise JobError(ErrorCode.INTERNAL_ERROR, f"The job's request {request_location} cannot be read back: {err}") from None
    store.record_page_count(job_id, sum(len(chunk.pages) for chunk in chunks))
    if not store.start_chunks(job_id, len(chunks), attempt_id=attempt_id, step="finish"):
        logger.warning("Job %s was split by another notification; not sending its chunks again", job_id)
        return "ignored"
    requests: list[ChunkRequest] = []
    for chunk in chunks:
        try:
            submitted = inference.submit(message, chunk)
        except Exception as err:
            logger.exception("Could not send %s of job %s", chunk.label, job_id)
            store.mark_failed(job_id, JobError(
                ErrorCode.INTERNAL_ERROR, f"The job could not send its {chunk.label} to the endpoint: {type(err).__name__}: {err}"
            ))
            return "failed"
        requests.append({"output_location": submitted.output_location, "failure_location": submitted.failure_location})
    store.record_chunk_requests(job_id, requests)
    store.release_claim(job_id, "finish", attempt_id=attempt_id)
    logger.info("Job %s split by the endpoint into %d chunk requests", job_id, len(chunks))
    return "split"


def _finish_chunk(
    notification: AsyncInferenceNotification, index: int, job: JobItem, *, store: JobStore, s3: Any,
    layout: StorageLayout, attempt_id: str, lease_seconds: float,
) -> Outcome:
    job_id = job["job_id"]
    try:
        chunk = _chunk_of_request(s3, notification.input_location or "")
    except JobError as err:
        store.mark_failed(job_id, err)
        return "failed"
    claim = store.claim_chunk(job_id, index, attempt_id=attempt_id, lease_seconds=lease_seconds)
    if not claim.acquired:
        logger.warning("Notification for %s of job %s ignored: the chunk is done or being finished", chunk.label, job_id)
        return "ignored"
    try:
        if not notification.succeeded:
            raise _inference_error(notification, s3)
        result = validate_result(_read_output(s3, notification), job_id=job_id)
    except JobError as err:
        store.mark_failed(job_id, JobError(err.code, f"{chunk.label}: {err.message}"))
        return "failed"
    store.add_pages_done(job_id, len(chunk.pages))
    outcome, _ = record_chunk_result(chunk, result, store=store, s3=s3, layout=layout)
    return "ignored" if outcome == "skipped" else outcome


def _chunk_of_request(s3: Any, input_location: str) -> Chunk:
    """The chunk a chunk request object carries (its ``chunk`` field, as the completion function sent it)."""
    try:
        body = json.loads(_read_s3_text(s3, input_location))
        return Chunk.from_payload(body["chunk"])
    except (JobError, ValueError, KeyError, TypeError, AttributeError) as err:
        raise JobError(ErrorCode.INTERNAL_ERROR, f"The chunk request {input_location} cannot be read back: {err}") from None


def _read_output(s3: Any, notification: AsyncInferenceNotification) -> Any:
    """The endpoint's output document of a successful inference."""
    if not notification.output_location:
        raise JobError(ErrorCode.INVALID_RESULT, "SageMaker reported success without an output location.")
    try:
        return json.loads(_read_s3_text(s3, notification.output_location))
    except (ValueError, UnicodeDecodeError) as err:
        raise JobError(ErrorCode.INVALID_RESULT, f"The endpoint's output is not JSON: {err}") from None


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
