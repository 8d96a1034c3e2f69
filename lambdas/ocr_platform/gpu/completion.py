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

The endpoint runs network-isolated and stores nothing itself (``ocr_platform.gpu.model_server``): a result arrives as
the ZIP answer of ``ocr_platform.gpu.endpoint_payloads``, and this module stores its members where they belong,
``results/{job_id}/pages/{page:05d}.jpg``, ``results/{job_id}/figures/{page:05d}-{n:02d}.png`` and
``results/{job_id}/result.pdf`` (recorded as the item's
``result_pdf``), before result.json is published. A JSON output (a split plan; or a result, from a container of the
earlier contract, whose ``result_pdf`` field names the PDF it wrote) is read as such.

Every request of a job names itself (``ocr_platform.gpu.sagemaker_async.RequestName``): its InferenceId is the job id,
``{job_id}.c{N:05d}`` for a chunk request, and its outcome objects are ``async/outputs/{job_id}/c{N:05d}.out`` (or
``job.out``) and their failure beside them. So a notification's chunk is read from its ``inferenceId``, else from its
``outputLocation`` / ``failureLocation``; a notification of an older request (named by the job id alone) is told apart
as before: the ``chunk`` of the answer's ``answer.json`` or of the error body, else the ``failureLocation`` among the
item's ``chunk_requests``, else the ``inputLocation`` the sweeper gives (``async/requests/{job_id}.c{N:05d}.json``).
A split job's failure that names no chunk in any of these fails the job without naming the chunk.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import uuid
from dataclasses import dataclass
from typing import Any, Literal

from botocore.exceptions import ClientError

from ocr_platform.core import defaults
from ocr_platform.core.chunks import Chunk, InvalidChunkError, read_split_plan
from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.page_failures import check_failed_share
from ocr_platform.core.results import validate_result
from ocr_platform.core.s3_layout import S3Uri, StorageLayout
from ocr_platform.core.tables import merge_continued_tables
from ocr_platform.gpu.endpoint_payloads import EndpointAnswer, is_answer_archive
from ocr_platform.gpu.sagemaker_async import AsyncInference, RequestName
from ocr_platform.jobs.messages import InvalidMessageError, JobMessage, parse_job_message
from ocr_platform.jobs.store import TERMINAL_STATUSES, ChunkRequest, JobItem, JobStore
from ocr_platform.outputs.fan_in import record_chunk_result
from ocr_platform.outputs.formats import format_locations, requested_formats
from ocr_platform.outputs.result_store import publish_result

logger = logging.getLogger(__name__)

#: The largest result.json (or JSON output) admitted; the completion function's memory is sized for it (``defaults``).
MAX_OUTPUT_BYTES = defaults.MAX_ENDPOINT_OUTPUT_BYTES
#: The largest answer archive admitted (``defaults.MAX_ENDPOINT_ANSWER_BYTES``): spooled to the function's /tmp, which
#: the stack sizes for it (``defaults.answer_spool_storage_mb``), never held in memory.
MAX_ANSWER_BYTES = defaults.MAX_ENDPOINT_ANSWER_BYTES


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

    @property
    def request(self) -> RequestName:
        """The request this notification is for: its InferenceId, else the name of its output or failure object."""
        name = RequestName.from_inference_id(self.inference_id)
        if name.chunk_index is None:
            located = RequestName.from_location(self.output_location or self.failure_location)
            if located is not None and located.job_id == name.job_id:
                return located
        return name

    @property
    def job_id(self) -> str:
        return self.request.job_id


Outcome = Literal["completed", "failed", "ignored", "split", "chunk_done"]


@dataclass
class EndpointOutput:
    """One inference's output: its document (a result or a split plan) and, for a result answer, its archive."""

    document: Any
    answer: EndpointAnswer | None = None

    @property
    def chunk_index(self) -> int | None:
        return self.answer.chunk_index if self.answer is not None else None

    def close(self) -> None:
        if self.answer is not None:
            self.answer.close()


def finish_async_inference(
    notification: AsyncInferenceNotification,
    *,
    store: JobStore,
    s3: Any,
    layout: StorageLayout,
    attempt_id: str | None = None,
    lease_seconds: float = defaults.COMPLETION_TIMEOUT_SECONDS,
    inference: AsyncInference | None = None,
    max_failed_percent: int = defaults.MAX_FAILED_PAGE_PERCENT,
) -> Outcome:
    """Act on one inference's outcome: finish the job, split it, or record one chunk of it.

    - The job's own request. Its ``finish`` step is claimed first as ``attempt_id`` for ``lease_seconds`` (the
      completion function passes its request id, which Lambda keeps across the retries of one event, and the
      time its invocation has left). So of two notifications for one inference that arrive together (SNS
      delivered one twice, or a success and an error), one acts and the other is ignored. The output is either
      the result (its page images and result.pdf stored, result.json published, the job COMPLETED) or, for a
      long document, the endpoint's split plan: the job's chunks are recorded once and one request per chunk is
      sent through ``inference`` (``split``).
    - A chunk request (see the module's docstring for how it is recognised): the chunk's claim is taken, its
      partial result and page images recorded; the chunk that completes the set merges the job's result
      (``ocr_platform.outputs.fan_in``). A failed chunk fails the job once, naming the chunk and its pages.

    A result whose ``pages_failed`` are more than ``max_failed_percent`` of the job's pages fails the job
    naming them (``ocr_platform.core.page_failures``); below that share the job completes without them.
    """
    name = notification.request
    job_id = name.job_id
    job = store.get(job_id)
    if job is None:
        logger.warning("Notification for unknown job %s ignored", job_id)
        return "ignored"
    if job.get("status") in TERMINAL_STATUSES:
        logger.warning("Repeated notification for job %s (already %s) ignored", job_id, job["status"])
        return "ignored"
    attempt_id = attempt_id or uuid.uuid4().hex
    request = layout.parse_async_request(notification.input_location) if notification.input_location else None
    index = name.chunk_index if name.chunk_index is not None else request.chunk_index if request is not None else None
    output: EndpointOutput | None = None
    try:
        if job.get("chunk_count") and index is None:
            if notification.succeeded:
                output = _read_output(s3, notification)
                index = output.chunk_index
                if index is None and read_split_plan(output.document) is not None:
                    logger.warning("Repeated plan of job %s ignored: it was split into %s chunks already", job_id, job["chunk_count"])
                    return "ignored"
            else:
                index = _failed_chunk_index(notification, job, s3)
            if index is None:
                return _fail_unnamed_chunk(notification, job_id, store=store, s3=s3)
        if index is not None:
            return _finish_chunk(notification, index, job, output, store=store, s3=s3, layout=layout,
                                 attempt_id=attempt_id, lease_seconds=lease_seconds, max_failed_percent=max_failed_percent)
        return _finish_job(notification, job, store=store, s3=s3, layout=layout, attempt_id=attempt_id,
                           lease_seconds=lease_seconds, inference=inference, max_failed_percent=max_failed_percent)
    except JobError as err:  # the output of a split job's request could not be read: which chunk is unknown
        store.mark_failed(job_id, err)
        return "failed"
    finally:
        if output is not None:
            output.close()


def _finish_job(
    notification: AsyncInferenceNotification, job: JobItem, *, store: JobStore, s3: Any, layout: StorageLayout,
    attempt_id: str, lease_seconds: float, inference: AsyncInference | None, max_failed_percent: int,
) -> Outcome:
    job_id = job["job_id"]
    claim = store.claim_step(job_id, "finish", attempt_id=attempt_id, lease_seconds=lease_seconds)
    if not claim.acquired:
        current = claim.job or {}
        logger.warning("Notification for job %s ignored: it is %s and %s is finishing it", job_id,
                       current.get("status"), current.get("finish_attempt"))
        return "ignored"
    if not notification.succeeded:
        store.mark_failed(job_id, _inference_error(notification, s3))
        return "failed"
    output = None
    try:
        output = _read_output(s3, notification)
        chunks = read_split_plan(output.document)
        if chunks is not None:
            message = _job_message(output.document, job, notification, layout)
            return _send_chunk_requests(job_id, chunks, message, store=store, inference=inference, attempt_id=attempt_id)
        result_pdf = _reported_pdf(output.document, job_id, layout)
        result = validate_result(output.document, job_id=job_id)
        check_failed_share(result.get("pages_failed", []), read=result["page_count"], max_percent=max_failed_percent)
        merge_continued_tables(result["pages"])  # tables over pages as one, whatever the endpoint's image did (core.tables)
        formats = _requested_formats(job, output)
        if output.answer is not None:
            result_pdf = store_answer_files(s3, layout, job_id, output.answer)
    except JobError as err:
        store.mark_failed(job_id, err)
        return "failed"
    except InvalidChunkError as err:
        store.mark_failed(job_id, JobError(ErrorCode.INVALID_RESULT, f"The endpoint's split plan is invalid: {err}"))
        return "failed"
    finally:
        if output is not None:
            output.close()
    result_uri = publish_result(s3, layout, result, formats=formats)
    store.mark_completed(job_id, result_uri=result_uri, page_count=result["page_count"], warnings=result["warnings"],
                         result_pdf=result_pdf, pages_failed=result.get("pages_failed"),
                         formats=format_locations(layout, result, formats))
    return "completed"


def _requested_formats(job: JobItem, output: Any) -> list[str]:
    """The formats the job asked for beside result.json: its item's options, or, for a job sent to the queue
    directly (whose item holds none), what the endpoint's answer says its request asked for."""
    answer = getattr(output, "answer", None)
    told = answer.manifest.get("outputs") if answer is not None else None
    asked = list((job.get("options") or {}).get("outputs") or []) + (list(told) if isinstance(told, list) else [])
    return requested_formats({"outputs": asked})


def store_answer_files(s3: Any, layout: StorageLayout, job_id: str, answer: EndpointAnswer) -> str | None:
    """Store the page images, figure crops and result.pdf of the endpoint's answer where the job's result lives; the PDF's URI."""
    for page, stream in answer.page_images():
        s3.upload_fileobj(stream, layout.bucket, layout.page_image_key(job_id, page), ExtraArgs={"ContentType": "image/jpeg"})
    for page, number, stream in answer.figures():
        s3.upload_fileobj(stream, layout.bucket, layout.figure_key(job_id, page, number), ExtraArgs={"ContentType": "image/png"})
    pdf = answer.pdf()
    if pdf is None:
        return None
    with pdf:
        key = layout.result_pdf_key(job_id)
        s3.upload_fileobj(pdf, layout.bucket, key, ExtraArgs={"ContentType": "application/pdf"})
    return str(S3Uri(layout.bucket, key))


def _reported_pdf(document: Any, job_id: str, layout: StorageLayout) -> str | None:
    """Take an earlier container's ``result_pdf`` off its JSON output (result.json has no such field): the job's
    result.pdf location, which must be the one the layout gives the job; ``None`` when it wrote none."""
    location = document.pop("result_pdf", None) if isinstance(document, dict) else None
    if location is None:
        return None
    expected = str(S3Uri(layout.bucket, layout.result_pdf_key(job_id)))
    if location != expected:
        raise JobError(ErrorCode.INVALID_RESULT, f"The endpoint reports result.pdf at {location!r}, not at {expected}.")
    return expected


def _job_message(plan: Any, job: JobItem, notification: AsyncInferenceNotification, layout: StorageLayout) -> JobMessage:
    """The job message the chunk requests are built from: the parameters the endpoint was sent (its plan echoes
    them, whatever the item holds), and the document the job's request named."""
    parameters = plan.get("parameters") if isinstance(plan, dict) else None
    if not isinstance(parameters, dict):
        parameters = {key: job[key] for key in ("job_id", "model", "language", "pages", "options") if job.get(key)}
    location = notification.input_location
    if not location or layout.parse_async_request(location) is not None:  # the sweeper names the request, not the document
        location = job.get("input")
    try:
        return parse_job_message({**parameters, "job_id": job["job_id"], "input": location})
    except InvalidMessageError as err:
        raise JobError(ErrorCode.INTERNAL_ERROR, f"The job's request cannot be rebuilt for its chunks: {err}") from None


def _send_chunk_requests(
    job_id: str, chunks: list[Chunk], message: JobMessage, *, store: JobStore, inference: AsyncInference | None,
    attempt_id: str,
) -> Outcome:
    """Record the endpoint's split once (with each chunk's pages), then send one async request per chunk and
    record where each lands, as each is accepted (so a chunk's failure can be matched to it at once)."""
    if inference is None:
        raise JobError(ErrorCode.INTERNAL_ERROR, "The endpoint split the job, but this function cannot send requests to it "
                       "(OCR_ENDPOINT_NAME is not set here).")
    store.record_page_count(job_id, sum(len(chunk.pages) for chunk in chunks))
    if not store.start_chunks(job_id, len(chunks), attempt_id=attempt_id, step="finish",
                              chunk_pages=[chunk.page_spec for chunk in chunks]):
        logger.warning("Job %s was split by another notification; not sending its chunks again", job_id)
        return "ignored"
    requests: list[ChunkRequest] = []
    for chunk in chunks:
        try:
            submitted = inference.submit(message, chunk)
        except Exception as err:
            logger.exception("Could not send %s of job %s", chunk.label, job_id)
            store.mark_failed(job_id, JobError(
                err.code if isinstance(err, JobError) else ErrorCode.INTERNAL_ERROR,
                f"The job could not send its {chunk.label} to the endpoint: {type(err).__name__}: {err}",
            ))
            return "failed"
        requests.append({"output_location": submitted.output_location, "failure_location": submitted.failure_location})
        store.record_chunk_requests(job_id, requests)
    store.release_claim(job_id, "finish", attempt_id=attempt_id)
    logger.info("Job %s split by the endpoint into %d chunk requests", job_id, len(chunks))
    return "split"


def _finish_chunk(
    notification: AsyncInferenceNotification, index: int, job: JobItem, output: EndpointOutput | None, *,
    store: JobStore, s3: Any, layout: StorageLayout, attempt_id: str, lease_seconds: float, max_failed_percent: int,
) -> Outcome:
    job_id = job["job_id"]
    try:
        chunk = _chunk_of_job(job, index)
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
        output = output or _read_output(s3, notification)
        if output.chunk_index not in (None, index):
            raise JobError(ErrorCode.INVALID_RESULT, f"The endpoint answered for chunk {output.chunk_index}, not for this one.")
        result = validate_result(output.document, job_id=job_id)
        formats = _requested_formats(job, output)
        if output.answer is not None:
            store_answer_files(s3, layout, job_id, output.answer)
    except JobError as err:
        store.mark_failed(job_id, JobError(err.code, f"{chunk.label}: {err.message}"))
        return "failed"
    store.add_pages_done(job_id, len(chunk.pages))
    outcome, _ = record_chunk_result(chunk, result, store=store, s3=s3, layout=layout, max_failed_percent=max_failed_percent, formats=formats)
    return "ignored" if outcome == "skipped" else outcome


def _chunk_of_job(job: JobItem, index: int) -> Chunk:
    """Chunk ``index`` of a split job, from the pages the completion function recorded when it split it."""
    count, pages = int(job.get("chunk_count") or 0), job.get("chunk_pages") or []
    try:
        return Chunk.from_payload({"index": index, "count": count, "pages": pages[index]})
    except (IndexError, InvalidChunkError) as err:
        raise JobError(ErrorCode.INTERNAL_ERROR, f"Chunk {index} of job {job['job_id']} is not one it was split into: {err}") from None


def _failed_chunk_index(notification: AsyncInferenceNotification, job: JobItem, s3: Any) -> int | None:
    """Which chunk request of a split job failed: the one its error body names, else the one SageMaker was to write
    the failure to; ``None`` when neither says (a timeout, an expired request)."""
    body = _failure_body(notification, s3)
    chunk = body.get("chunk") if isinstance(body, dict) else None
    if isinstance(chunk, dict) and isinstance(chunk.get("index"), int):
        return int(chunk["index"])
    for index, request in enumerate(job.get("chunk_requests") or []):
        if notification.failure_location and request.get("failure_location") == notification.failure_location:
            return index
    return None


def _fail_unnamed_chunk(notification: AsyncInferenceNotification, job_id: str, *, store: JobStore, s3: Any) -> Outcome:
    error = _inference_error(notification, s3) if not notification.succeeded else JobError(
        ErrorCode.INVALID_RESULT, "The endpoint answered a chunk request of the job without naming the chunk.")
    store.mark_failed(job_id, JobError(error.code, f"a chunk request of the job failed: {error.message}"))
    return "failed"


def _read_output(s3: Any, notification: AsyncInferenceNotification) -> EndpointOutput:
    """The endpoint's output of a successful inference: a result archive, or JSON (a split plan)."""
    if not notification.output_location:
        raise JobError(ErrorCode.INVALID_RESULT, "SageMaker reported success without an output location.")
    uri = notification.output_location
    obj = _get(s3, uri, MAX_ANSWER_BYTES)
    spool = tempfile.TemporaryFile()  # an answer holds page images and result.pdf: on disk, not in memory
    try:
        shutil.copyfileobj(obj["Body"], spool)
        spool.seek(0)
        if is_answer_archive(spool.read(4)):
            spool.seek(0)
            answer = EndpointAnswer(spool, max_result_bytes=MAX_OUTPUT_BYTES)
            return EndpointOutput(answer.result, answer)
        if spool.seek(0, 2) > MAX_OUTPUT_BYTES:
            raise JobError(ErrorCode.INVALID_RESULT, f"The endpoint's output {uri} is larger than {MAX_OUTPUT_BYTES} bytes.")
        spool.seek(0)
        try:
            document = json.loads(spool.read().decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as err:
            raise JobError(ErrorCode.INVALID_RESULT, f"The endpoint's output is not JSON: {err}") from None
        spool.close()
        return EndpointOutput(document)
    except BaseException:
        spool.close()
        raise


def _failure_body(notification: AsyncInferenceNotification, s3: Any) -> Any:
    """The endpoint's error body (JSON) where SageMaker wrote one; ``None`` otherwise."""
    if not notification.failure_location:
        return None
    try:
        return json.loads(_get(s3, notification.failure_location, MAX_OUTPUT_BYTES)["Body"].read().decode("utf-8"))
    except (ClientError, ValueError, UnicodeDecodeError, JobError) as err:
        logger.warning("Could not read failure body %s: %s", notification.failure_location, err)
        return None


def _inference_error(notification: AsyncInferenceNotification, s3: Any) -> JobError:
    """The endpoint's own ``{code, message}`` when its error body has one, else SageMaker's reason."""
    body = _failure_body(notification, s3)
    error = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("code") and error.get("message"):
        return JobError(str(error["code"]), str(error["message"]))
    return JobError(ErrorCode.INFERENCE_FAILED, notification.failure_reason or "The inference failed.")


def _get(s3: Any, uri: str, limit: int) -> Any:
    location = S3Uri.parse(uri)
    try:
        obj = s3.get_object(Bucket=location.bucket, Key=location.key)
    except ClientError as err:
        raise JobError(ErrorCode.INVALID_RESULT, f"The endpoint's output {uri} cannot be read: {err}") from None
    if obj.get("ContentLength", 0) > limit:
        raise JobError(ErrorCode.INVALID_RESULT, f"The endpoint's output {uri} is larger than {limit} bytes.")
    return obj
