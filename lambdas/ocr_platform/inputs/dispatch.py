"""Route a queued job to its backend exactly once (what the invoker Lambda does per SQS message).

``pp-ocrv5`` / ``pp-structurev3`` -> asynchronous (``Event``) invoke of the CPU processor Lambda.
``paddleocr-vl`` -> scale the endpoint out (0 -> 1, no-op at 1), then an async inference request on the job's
document with its parameters in ``CustomAttributes`` (``ocr_platform.gpu.sagemaker_async.AsyncInference``). A job whose
parameters do not fit them fails ``invalid_message`` at once. An endpoint that takes no requests (``Creating``,
``Failed``; seen before the claim, or as InvokeEndpointAsync's ``ValidationError``) raises ``RetryLaterError``
(``EndpointNotInServiceError``): seen before the claim the job stays QUEUED; either way its message comes back after
the visibility timeout, and only on its last receive is the job FAILED ``capacity_unavailable``.

Exactly-once effect over at-least-once delivery. Each delivery claims the hand-over with its own attempt id
and a lease (``JobStore.claim_dispatch``; the lease is ``defaults.dispatch_lease_seconds``: the invoker's
timeout, shorter than the queue's visibility timeout), hands the job over, then records ``dispatched_at``:

- a delivery for a dispatched or finished job is a duplicate and does nothing;
- a delivery that arrives while another one's lease holds (SQS gave one message to two invocations at once)
  does not dispatch: it raises :class:`HandOverInProgressError`, so the message comes back after the
  visibility timeout and then finds ``dispatched_at``;
- a delivery that arrives after the lease ran out with no ``dispatched_at`` takes the claim over and
  dispatches: the earlier holder crashed or timed out before it handed the job over. A holder whose
  hand-over raised releases its lease at once, so the retry of the message need not wait for it.

A job submitted by URL is fetched by the holder of the claim, once, into ``documents/{job_id}/`` before the
hand-over (``ocr_platform.document.url_input``); the backend then reads it as it reads an upload. A ``callback_url``
the stage's URL policy refuses (``http://`` in a deployed stage) fails the job ``invalid_message`` at once,
rather than after a day of failed deliveries.

A CPU job takes a slot of the stage's processor semaphore (``ocr_platform.jobs.admission``) before it is claimed:
one that finds every slot taken stays QUEUED (its item is written, so a poller sees it) and raises
:class:`AdmissionDeferredError`; the invoker puts its message back on the queue to wait. The slot's token
travels to the processor in the event's ``slot`` field, and the processor gives it back when it ends.
"""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass, replace
from typing import Any, Literal

from botocore.exceptions import ClientError

from ocr_platform.core import defaults
from ocr_platform.core.errors import ErrorCode, JobError, RetryLaterError
from ocr_platform.core.routing import Backend, route
from ocr_platform.core.s3_layout import S3Uri, StorageLayout
from ocr_platform.core.safe_http import BlockedUrlError, UrlPolicy, check_url
from ocr_platform.document.native_files import head_refusal
from ocr_platform.document.url_input import FetchedInput, fetch_input, is_url_input
from ocr_platform.gpu.sagemaker_async import AsyncInference, EndpointCapacity
from ocr_platform.jobs.admission import ProcessorSlots, slot_token
from ocr_platform.jobs.messages import JobMessage
from ocr_platform.jobs.store import TERMINAL_STATUSES, JobAlreadyExistsError, JobItem, JobStore

logger = logging.getLogger(__name__)

DispatchOutcome = Literal["dispatched", "duplicate", "failed"]


class HandOverInProgressError(Exception):
    """Another delivery of the same message holds the hand-over's lease: retry later, and never give the job up
    for it (the holder hands it over, or its lease runs out and a later delivery takes over)."""


class AdmissionDeferredError(Exception):
    """Every processor slot of the stage is taken: the job stays QUEUED and its message waits in the queue."""


@dataclass(frozen=True)
class UrlInputs:
    """How the invoker fetches a document submitted by URL: into ``layout``'s ``documents/{job_id}/`` with
    ``s3``, at most ``max_bytes`` (the upload limit), within ``timeout_seconds`` and ``max_redirects``."""

    s3: Any
    layout: StorageLayout
    timeout_seconds: float = defaults.URL_FETCH_TIMEOUT_SECONDS
    max_redirects: int = defaults.URL_FETCH_MAX_REDIRECTS
    max_bytes: int = defaults.MAX_DOCUMENT_BYTES

    def fetch(self, job_id: str, url: str, policy: UrlPolicy) -> FetchedInput:
        return fetch_input(
            url, s3=self.s3, bucket=self.layout.bucket, key_for=lambda name: self.layout.document_uri(job_id, name).key,
            max_bytes=self.max_bytes, timeout_seconds=self.timeout_seconds, max_redirects=self.max_redirects, policy=policy,
        )


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
        dispatch_lease_seconds: how long a delivery's claim on the hand-over holds.
        url_inputs: how documents submitted by URL are fetched; ``None``: such a job fails ``input_unreachable``.
        url_policy: which callback URLs the stage accepts.
        slots: the stage's processor semaphore; ``None``: the processor's reserved concurrency bounds it.
    """

    def __init__(
        self,
        store: JobStore,
        *,
        lambda_client: Any,
        processor_function: str,
        capacity: EndpointCapacity,
        inference: AsyncInference,
        dispatch_lease_seconds: float = defaults.dispatch_lease_seconds(),
        url_inputs: UrlInputs | None = None,
        url_policy: UrlPolicy = UrlPolicy.PUBLIC_HTTPS,
        slots: ProcessorSlots | None = None,
    ) -> None:
        self.store = store
        self.lambda_client = lambda_client
        self.processor_function = processor_function
        self.capacity = capacity
        self.inference = inference
        self.dispatch_lease_seconds = dispatch_lease_seconds
        self.url_inputs = url_inputs
        self.url_policy = url_policy
        self.slots = slots

    def dispatch(self, message: JobMessage, *, attempt_id: str | None = None) -> DispatchResult:
        """Route one job, as the delivery ``attempt_id`` (default: a new id).

        Raises:
            HandOverInProgressError: another delivery is handing the job over right now.
            AdmissionDeferredError: every processor slot is taken; the job stays QUEUED.
            RetryLaterError: the endpoint is busy; AWS errors: for the caller to retry.
        """
        try:
            spec = route(message.model)
            self._check_deployed(spec.backend, message.model)
            self._check_callback_url(message)
            if spec.backend == "sagemaker":
                self.inference.parameters(message)  # they must fit the request's CustomAttributes
                self._check_gpu_input(message)
        except JobError as err:
            self.store.mark_failed(message.job_id, err, job=message.as_new_job())
            return DispatchResult("failed", error=err)

        job = self.store.get(message.job_id)
        if job and (job.get("status") in TERMINAL_STATUSES or job.get("dispatched_at")):
            logger.warning("Duplicate delivery of job %s (%s); ignored", message.job_id, job.get("status"))
            return DispatchResult("duplicate", backend=job.get("backend"))

        # Capacity first: a job waiting for the endpoint, or for a processor slot, stays QUEUED (scaling out
        # twice, or taking the slot a job's earlier delivery took, is harmless).
        scaled_out = self.capacity.ensure_capacity() if spec.backend == "sagemaker" else False
        slot = self._take_slot(message, job) if spec.backend == "lambda" else None
        attempt_id = attempt_id or uuid.uuid4().hex
        try:
            return self._hand_over(message, spec.backend, job, attempt_id=attempt_id, slot=slot, scaled_out=scaled_out)
        except HandOverInProgressError:
            raise  # the slot is the job's (its token is the job id): the delivery handing it over keeps it
        except Exception:
            self._give_back(slot)
            raise

    def _hand_over(
        self, message: JobMessage, backend: Backend, job: JobItem | None, *, attempt_id: str, slot: str | None, scaled_out: bool
    ) -> DispatchResult:
        claim = self.store.claim_dispatch(
            message.job_id, backend, attempt_id=attempt_id, lease_seconds=self.dispatch_lease_seconds,
            job=message.as_new_job(),
        )
        if not claim.acquired:
            if claim.held_by_another("dispatch", self.store.clock().timestamp()):
                raise HandOverInProgressError(
                    f"Job {message.job_id} is being handed over by another delivery of its message; "
                    "this one comes back after the visibility timeout."
                )
            current = claim.job or {}
            if current.get("status") in TERMINAL_STATUSES:
                self._give_back(slot)
            return DispatchResult("duplicate", backend=current.get("backend"))
        if job and job.get("dispatch_attempt") and job.get("dispatch_attempt") != attempt_id:
            logger.info("Job %s was claimed by an earlier delivery that did not hand it over; taking over", message.job_id)
        if is_url_input(message.input):
            try:
                message = self._fetch_input(message)
            except JobError as err:
                self.store.mark_failed(message.job_id, err)
                self._give_back(slot)
                return DispatchResult("failed", error=err)
            except Exception:  # an S3 or DynamoDB error, not the document's: the next delivery fetches again
                self.store.release_claim(message.job_id, "dispatch", attempt_id=attempt_id)
                raise

        submitted = None
        try:
            if backend == "lambda":
                payload = {**message.to_body(), **({"slot": slot} if slot else {})}
                self.lambda_client.invoke(
                    FunctionName=self.processor_function, InvocationType="Event", Payload=json.dumps(payload).encode()
                )
            else:
                submitted = self.inference.submit(message)
        except Exception:
            self.store.release_claim(message.job_id, "dispatch", attempt_id=attempt_id)
            raise
        self.store.mark_dispatched(
            message.job_id, attempt_id=attempt_id,
            output_location=submitted.output_location if submitted else None,
            failure_location=submitted.failure_location if submitted else None,
        )
        return DispatchResult("dispatched", backend=backend, scaled_out=scaled_out)

    def _take_slot(self, message: JobMessage, job: JobItem | None) -> str | None:
        """A processor slot for the job (its token), or ``AdmissionDeferredError`` with the job left QUEUED."""
        if self.slots is None:
            return None
        token = slot_token(message.job_id)
        if self.slots.acquire(token):
            return token
        if job is None:
            try:
                self.store.create(message.as_new_job())
            except JobAlreadyExistsError:
                pass
        raise AdmissionDeferredError(
            f"All {self.slots.limit} processor slots of the stage are taken; job {message.job_id} waits in the queue."
        )

    def _give_back(self, slot: str | None) -> None:
        if slot and self.slots is not None:
            self.slots.release(slot)

    def _check_callback_url(self, message: JobMessage) -> None:
        if message.callback_url:
            try:
                check_url(message.callback_url, self.url_policy)
            except BlockedUrlError as err:
                raise JobError(ErrorCode.INVALID_MESSAGE, f"'callback_url' is refused: {err}") from None

    def _fetch_input(self, message: JobMessage) -> JobMessage:
        """Fetch the job's document from its URL into the bucket; the message from here on names the S3 object."""
        if self.url_inputs is None:
            raise JobError(ErrorCode.INPUT_UNREACHABLE, "This function cannot fetch documents by URL; upload the file to S3.")
        fetched = self.url_inputs.fetch(message.job_id, message.input, self.url_policy)
        file_name = S3Uri.parse(fetched.uri).key.rsplit("/", 1)[-1]
        self.store.record_fetched_input(message.job_id, uri=fetched.uri, url=message.input, file_name=file_name)
        logger.info("Job %s: fetched %d bytes from its URL into %s", message.job_id, fetched.size, fetched.uri)
        return replace(message, input=fetched.uri)

    def _check_gpu_input(self, message: JobMessage) -> None:
        """Refuse an Office or HTML file uploaded for the GPU route before the endpoint scales out for it (its first
        KiB tells); only the CPU routes read them. A document by URL is checked by the endpoint once fetched."""
        if self.url_inputs is None or is_url_input(message.input):
            return
        location = S3Uri.parse(message.input)
        try:
            head = self.url_inputs.s3.get_object(Bucket=location.bucket, Key=location.key, Range="bytes=0-1023")["Body"].read()
        except ClientError:
            return  # a missing object: the endpoint's input_not_found, as before
        refusal = head_refusal(head)
        if refusal is not None:
            raise refusal

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
