"""The last line of "every job ends": jobs whose message died, and jobs stuck past their deadline.

- ``fail_dead_lettered``: a job message that reached the DLQ (the invoker could not process it in
  ``maxReceiveCount`` receives, e.g. while DynamoDB was unavailable) fails its job ``dead_lettered`` and is
  archived under ``dead-letters/`` in the bucket, so nothing is lost and an operator can inspect or
  resubmit it.
- ``settle_finished_inferences``: a GPU job still PROCESSING whose output (or error body) SageMaker wrote
  long ago, but whose notification never finished it (the completion function failed its retries, the
  event was parked), is finished from S3 through the same code as a notification (chunk by chunk for a
  job the endpoint split).
- ``sweep_stuck_jobs``: a job still QUEUED or PROCESSING long after any backend could still be working on
  it (a lost notification, a crashed runtime that reported nothing) fails ``timed_out``, unless a live
  claim shows a processor running it or the completion function publishing its result right now.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from ocr_platform.core import defaults
from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.s3_layout import S3Uri, StorageLayout, is_valid_job_id
from ocr_platform.gpu.completion import AsyncInferenceNotification, finish_async_inference
from ocr_platform.gpu.sagemaker_async import AsyncInference, RequestName
from ocr_platform.jobs.store import JobStatus, JobStore

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Deadlines:
    """How long a job may stay in a non-terminal state before the sweeper fails it.

    Attributes:
        queued_seconds: QUEUED for longer than the queue could ever hold the message (receives x
            visibility timeout, plus margin).
        lambda_seconds: PROCESSING on the CPU processor past its timeout (plus margin).
        sagemaker_seconds: PROCESSING on the endpoint past the invocation timeout (plus margin).
    """

    queued_seconds: int = defaults.queued_deadline_seconds()
    lambda_seconds: int = defaults.lambda_deadline_seconds()
    sagemaker_seconds: int = defaults.sagemaker_deadline_seconds()

    def for_job(self, job: Mapping[str, Any]) -> tuple[str, int]:
        """The timestamp attribute the deadline counts from, and the deadline, for ``job``'s state."""
        if job.get("status") == JobStatus.QUEUED:
            return "created_at", self.queued_seconds
        return "started_at", self.sagemaker_seconds if job.get("backend") == "sagemaker" else self.lambda_seconds


def fail_dead_lettered(
    message_id: str,
    body: str,
    *,
    attributes: dict[str, Any],
    store: JobStore,
    s3: Any,
    layout: StorageLayout,
) -> str | None:
    """Archive a dead-lettered message and fail its job; returns the job id (``None`` if it has none)."""
    s3.put_object(
        Bucket=layout.bucket,
        Key=layout.dead_letter_key(message_id),
        Body=json.dumps({"message_id": message_id, "body": body, "attributes": attributes}).encode(),
        ContentType="application/json",
    )
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    job_id = data.get("job_id") if isinstance(data, dict) else None
    if not isinstance(job_id, str) or not is_valid_job_id(job_id):
        logger.error("Dead-lettered message %s has no usable job id; archived only", message_id)
        return None
    store.mark_failed(
        job_id,
        JobError(
            ErrorCode.DEAD_LETTERED,
            "The job could not be started after the queue's maximum number of attempts; its message is kept as "
            f"s3://{layout.bucket}/{layout.dead_letter_key(message_id)} for inspection. Submit the file again.",
        ),
        unless_dispatched=True,  # a copy of the message handed it over: its backend (or the sweeper) ends it
    )
    return job_id


def sweep_stuck_jobs(store: JobStore, deadlines: Deadlines, *, now: datetime | None = None) -> list[str]:
    """Fail every QUEUED or PROCESSING job older than its deadline; returns the ids it failed."""
    now = now or store.clock()
    failed = []
    for status in (JobStatus.QUEUED, JobStatus.PROCESSING):
        for job in store.list_by_status(status):
            attribute, seconds = deadlines.for_job(job)
            since = str(job.get(attribute) or job.get("created_at") or "")
            if not since or datetime.fromisoformat(since.replace("Z", "+00:00")) > now - timedelta(seconds=seconds):
                continue
            where = f" on {job['backend']}" if job.get("backend") else ""
            error = JobError(ErrorCode.TIMED_OUT, f"The job was {status}{where} for more than {seconds} s without finishing.")
            if store.mark_failed(job["job_id"], error, unless_claimed=True):
                failed.append(job["job_id"])
    if failed:
        logger.warning("Swept %d stuck job(s): %s", len(failed), ", ".join(failed[:20]))
    return failed


def settle_finished_inferences(
    store: JobStore, s3: Any, layout: StorageLayout, *, grace_seconds: int = defaults.SETTLE_GRACE_SECONDS,
    now: datetime | None = None, inference: AsyncInference | None = None, max_failed_percent: int = defaults.MAX_FAILED_PAGE_PERCENT,
) -> dict[str, str]:
    """Finish GPU jobs whose outcome is in S3 but whose notification never finished them.

    For each PROCESSING job on ``sagemaker`` whose ``output_location`` (or ``failure_location``) object
    was written more than ``grace_seconds`` ago (the notification had its chance), the job is finished
    by :func:`ocr_platform.gpu.completion.finish_async_inference`, as a success (or error) notification would
    have. A split job is settled chunk by chunk, from each undone chunk's ``chunk_requests`` entry; an
    unsplit job whose output is the endpoint's split plan is split (its chunks sent through ``inference``).
    Returns ``{job_id: outcome}`` of the jobs it acted on (the last chunk's outcome for a split job).
    """
    cutoff = (now or store.clock()) - timedelta(seconds=grace_seconds)
    settled: dict[str, str] = {}
    for job in store.list_by_status(JobStatus.PROCESSING):
        if job.get("backend") != "sagemaker":
            continue
        job_id = job["job_id"]
        pending: list[tuple[int | None, Mapping[str, Any]]]
        if job.get("chunk_count"):
            done = set(job.get("chunks_done") or ())
            pending = [
                (index, request) for index, request in enumerate(job.get("chunk_requests") or []) if index not in done
            ]
        else:
            pending = [(None, {"output_location": job.get("output_location"), "failure_location": job.get("failure_location")})]
        for index, request in pending:
            notification = _notification_from_s3(
                s3, job_id, request, cutoff, input_location=str(layout.async_request_uri(job_id, index)), chunk_index=index
            )
            if notification is not None:
                settled[job_id] = finish_async_inference(
                    notification, store=store, s3=s3, layout=layout, attempt_id=f"settle-{uuid.uuid4().hex}",
                    inference=inference, max_failed_percent=max_failed_percent,
                )
    if settled:
        logger.warning("Settled %d GPU job(s) from S3 whose notification never finished them: %s", len(settled), settled)
    return settled


def _notification_from_s3(
    s3: Any, job_id: str, request: Mapping[str, Any], cutoff: datetime, *, input_location: str, chunk_index: int | None
) -> AsyncInferenceNotification | None:
    """The notification SageMaker would have sent for a request whose outcome was written before ``cutoff``."""
    output, failure = request.get("output_location"), request.get("failure_location")
    inference_id = RequestName(job_id, chunk_index).inference_id  # the request's own name, as its notification has it
    if _written_before(s3, output, cutoff):
        return AsyncInferenceNotification(inference_id, succeeded=True, output_location=output, input_location=input_location)
    if _written_before(s3, failure, cutoff):
        return AsyncInferenceNotification(
            inference_id, succeeded=False, failure_location=failure, input_location=input_location,
            failure_reason="The endpoint failed; its error notification never finished the job (settled from S3).",
        )
    return None


def _written_before(s3: Any, uri: str | None, cutoff: datetime) -> bool:
    """Whether the object at ``uri`` exists and was last written before ``cutoff``."""
    if not uri:
        return False
    location = S3Uri.parse(uri)
    try:
        head = s3.head_object(Bucket=location.bucket, Key=location.key)
    except ClientError:
        return False
    return bool(head["LastModified"] <= cutoff)
