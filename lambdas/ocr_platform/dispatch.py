"""Route a queued job to its backend exactly once (what the invoker Lambda does per SQS message).

``pp-ocrv5`` / ``pp-structurev3`` -> asynchronous (``Event``) invoke of the CPU processor Lambda.
``paddleocr-vl`` -> scale the endpoint out (0 -> 1, no-op at 1), then an async inference request.

Exactly-once effect over at-least-once delivery: the job is claimed with a conditional QUEUED -> PROCESSING
write, and ``dispatched_at`` is recorded after the backend accepted it. A redelivered message for a
dispatched or finished job is skipped; one whose earlier attempt claimed the job but failed to hand it
over (no ``dispatched_at``) is dispatched again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal

from ocr_platform.errors import ErrorCode, JobError, RetryLaterError
from ocr_platform.jobs import TERMINAL_STATUSES, JobStatus, JobStore
from ocr_platform.messages import JobMessage
from ocr_platform.routing import route
from ocr_platform.sagemaker_async import AsyncInference, EndpointCapacity

logger = logging.getLogger(__name__)

DispatchOutcome = Literal["dispatched", "duplicate", "failed"]


@dataclass(frozen=True)
class DispatchResult:
    outcome: DispatchOutcome
    backend: str | None = None
    scaled_out: bool = False
    error: JobError | None = None


class JobDispatcher:
    """Hands jobs to the CPU processor or the SageMaker endpoint.

    Args:
        store: the job store.
        lambda_client: boto3 ``lambda`` client used for the processor's async invoke.
        processor_function: name or ARN of the CPU processor function.
        capacity: the endpoint's capacity control (for ``sagemaker`` models).
        inference: the endpoint's async request submitter (for ``sagemaker`` models).
    """

    def __init__(
        self,
        store: JobStore,
        *,
        lambda_client: Any,
        processor_function: str,
        capacity: EndpointCapacity,
        inference: AsyncInference,
    ) -> None:
        self.store = store
        self.lambda_client = lambda_client
        self.processor_function = processor_function
        self.capacity = capacity
        self.inference = inference

    def dispatch(self, message: JobMessage) -> DispatchResult:
        """Route one job. Raises ``RetryLaterError`` (endpoint busy) or AWS errors for the caller to retry."""
        try:
            spec = route(message.model)
            self._check_deployed(spec.backend, message.model)
        except JobError as err:
            self.store.mark_failed(message.job_id, err, job=message.as_new_job())
            return DispatchResult("failed", error=err)

        job = self.store.get(message.job_id)
        if job and (job.get("status") in TERMINAL_STATUSES or job.get("dispatched_at")):
            logger.warning("Duplicate delivery of job %s (%s); ignored", message.job_id, job.get("status"))
            return DispatchResult("duplicate", backend=job.get("backend"))

        scaled_out = False
        if spec.backend == "sagemaker":
            scaled_out = self.capacity.ensure_capacity()

        if not self.store.mark_processing(message.job_id, spec.backend, job=message.as_new_job()):
            current = self.store.get(message.job_id) or {}
            if current.get("status") != JobStatus.PROCESSING or current.get("dispatched_at"):
                return DispatchResult("duplicate", backend=current.get("backend"))
            logger.info("Job %s was claimed by an earlier attempt that did not dispatch it; dispatching", message.job_id)

        if spec.backend == "lambda":
            self.lambda_client.invoke(
                FunctionName=self.processor_function,
                InvocationType="Event",
                Payload=message.to_json().encode(),
            )
        else:
            self.inference.submit(message)
        self.store.mark_dispatched(message.job_id)
        return DispatchResult("dispatched", backend=spec.backend, scaled_out=scaled_out)

    def _check_deployed(self, backend: str, model: str) -> None:
        deployed = self.processor_function if backend == "lambda" else self.capacity.endpoint_name
        if not deployed:
            raise JobError(
                ErrorCode.UNKNOWN_MODEL,
                f"Model {model!r} is not deployed in this stage (its {backend} backend is missing); "
                "add it to the stage's `models` setting and redeploy.",
            )

    def give_up(self, message: JobMessage, error: Exception) -> None:
        """End a job whose last delivery still could not be dispatched, instead of losing it to the DLQ."""
        if isinstance(error, RetryLaterError):
            failure = JobError(ErrorCode.CAPACITY_UNAVAILABLE, f"The GPU endpoint did not become available: {error}")
        else:
            failure = JobError(ErrorCode.INTERNAL_ERROR, f"The job could not be dispatched: {type(error).__name__}: {error}")
        self.store.mark_failed(message.job_id, failure, job=message.as_new_job())
