"""The SageMaker async endpoint as the platform uses it: capacity 0 <-> 1 and per-job async requests.

An ``InvokeEndpointAsync`` that SageMaker refuses because the endpoint is not serving (``Creating``, ``Failed``:
a ``ValidationError``) raises ``EndpointNotInServiceError``, a ``RetryLaterError``: the invoker leaves the job
QUEUED and its message comes back after the visibility timeout.

Scaling goes through ``UpdateEndpointWeightsAndCapacities`` on the variant's DesiredInstanceCount, which
is idempotent here: asking for 1 when 1 is already desired is a no-op, and an endpoint that is busy
updating raises ``RetryLaterError`` so the caller retries later instead of losing the request.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

import boto3
from botocore.exceptions import ClientError

from ocr_platform.core import defaults
from ocr_platform.core.chunks import Chunk
from ocr_platform.core.errors import RetryLaterError
from ocr_platform.core.s3_layout import (
    ASYNC_FAILURES_PREFIX,
    ASYNC_OUTPUTS_PREFIX,
    JOB_ID_MAX_LENGTH,
    S3Uri,
    StorageLayout,
    is_valid_job_id,
)
from ocr_platform.gpu.endpoint_payloads import ANSWER_CONTENT_TYPE, EndpointParameters
from ocr_platform.jobs.messages import JobMessage

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class VariantState:
    endpoint_status: str
    desired_instances: int
    current_instances: int


class EndpointNotInServiceError(RetryLaterError):
    """InvokeEndpointAsync was refused because the endpoint cannot take requests yet (``Creating``) or now
    (``Failed``, ``OutOfService``, ``Deleting``): the job waits in the queue and is sent again later."""


#: Statuses in which an endpoint takes requests: InService, and the updates during which it keeps serving its
#: current configuration (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DescribeEndpoint.html).
SERVING_STATUSES = frozenset({"InService", "Updating", "SystemUpdating", "RollingBack", "UpdateRollbackFailed"})


class EndpointCapacity:
    """Reads and sets the instance count of one endpoint variant.

    Args:
        endpoint_name: the async endpoint.
        variant_name: its production variant (``AllTraffic`` by default).
        sagemaker: a boto3 ``sagemaker`` client; the default honours ``AWS_ENDPOINT_URL*``.
    """

    def __init__(self, endpoint_name: str, variant_name: str = "AllTraffic", *, sagemaker: Any = None) -> None:
        self.endpoint_name = endpoint_name
        self.variant_name = variant_name
        self.sagemaker = sagemaker or boto3.client("sagemaker")

    def state(self) -> VariantState:
        try:
            desc = self.sagemaker.describe_endpoint(EndpointName=self.endpoint_name)
        except ClientError as err:
            # SageMaker answers DescribeEndpoint for an unknown endpoint with a ValidationException "Could not find
            # endpoint": the GPU stack is not deployed (yet, or it rolled back). Its jobs wait as for a Creating one.
            if err.response["Error"]["Code"].startswith("Validation") and "could not find" in str(err).lower():
                raise EndpointNotInServiceError(
                    f"Endpoint {self.endpoint_name} does not exist: deploy the GPU stack, whose endpoint it is."
                ) from err
            raise
        for variant in desc.get("ProductionVariants", []):
            if variant.get("VariantName") == self.variant_name:
                current = int(variant.get("CurrentInstanceCount", 0))
                desired = int(variant.get("DesiredInstanceCount", current))
                return VariantState(desc["EndpointStatus"], desired, current)
        raise RuntimeError(f"Endpoint {self.endpoint_name} has no variant {self.variant_name!r}; check OCR_VARIANT_NAME.")

    def ensure_capacity(self) -> bool:
        """Ask for one instance unless one is already desired; return True when this call scaled out.

        ``EndpointNotInServiceError`` when the endpoint takes no requests now (``Creating``, ``Failed``, ...): the
        caller leaves the job QUEUED rather than send a request SageMaker would refuse.
        """
        state = self.state()
        if state.endpoint_status not in SERVING_STATUSES:
            raise EndpointNotInServiceError(
                f"Endpoint {self.endpoint_name} is {state.endpoint_status}; it takes requests only when InService."
            )
        if state.desired_instances >= 1:
            return False
        self._set_desired(1, state)
        logger.info("Scaled out %s/%s: DesiredInstanceCount 0 -> 1", self.endpoint_name, self.variant_name)
        return True

    def release_capacity(self) -> bool:
        """Set the variant to zero instances; return False when it already was at zero."""
        state = self.state()
        if state.desired_instances == 0:
            return False
        self._set_desired(0, state)
        logger.info("Scaled in %s/%s: DesiredInstanceCount %d -> 0", self.endpoint_name, self.variant_name, state.desired_instances)
        return True

    def _set_desired(self, count: int, state: VariantState) -> None:
        if state.endpoint_status != "InService":
            raise RetryLaterError(f"Endpoint {self.endpoint_name} is {state.endpoint_status}; capacity can change only when InService.")
        try:
            self.sagemaker.update_endpoint_weights_and_capacities(
                EndpointName=self.endpoint_name,
                DesiredWeightsAndCapacities=[{"VariantName": self.variant_name, "DesiredInstanceCount": count}],
            )
        except ClientError as err:
            code = err.response.get("Error", {}).get("Code", "")
            if code in {"ValidationException", "ThrottlingException", "ResourceInUse"}:
                raise RetryLaterError(f"Endpoint {self.endpoint_name} refused the capacity update ({code}): {err}") from err
            raise


#: SageMaker's InferenceId limit (``InvokeEndpointAsync``: 1-64 printable characters).
MAX_INFERENCE_ID = 64
_CHUNK_ID = re.compile(r"^(?P<job_id>[A-Za-z0-9][A-Za-z0-9_-]*)\.c(?P<chunk>\d{5})$")
_OUTCOME_KEY = re.compile(
    rf"^(?:{ASYNC_OUTPUTS_PREFIX}|{ASYNC_FAILURES_PREFIX})(?P<job_id>[A-Za-z0-9][A-Za-z0-9_-]{{0,{JOB_ID_MAX_LENGTH - 1}}})/"
    r"(?:job|c(?P<chunk>\d{5}))(?:[-.][^/]*)?$"
)


@dataclass(frozen=True)
class RequestName:
    """The identity of one async request of a job: which job, and which chunk of a split job.

    SageMaker names a request's outcome objects after its InferenceId unless the request gives a ``Filename``
    (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_runtime_InvokeEndpointAsync.html), so two requests
    with one InferenceId could share an output. Every request of a job therefore carries its own name twice:

    - its InferenceId, which every notification carries, even one with no output or error body (a timeout, an
      expired request): the job id, ``{job_id}.c{index:05d}`` for a chunk. A job id has no dot, so the suffix reads
      back unambiguously. A chunk's id must fit SageMaker's 64 characters: for a job id longer than
      ``64 - len(".c00000") = 57`` characters a chunk request keeps the job id, and its name is read from its outcome
      objects alone;
    - its outcome objects: ``S3OutputPathExtension`` = the job id and ``Filename`` = ``job.out`` or ``c{index:05d}.out``,
      so the output is ``async/outputs/{job_id}/c00003.out`` (and its failure lies beside it under
      ``async/failures/{job_id}/``).

    >>> RequestName("j1", 3).inference_id, RequestName("j1", 3).filename
    ('j1.c00003', 'c00003.out')
    >>> RequestName.from_inference_id("j1.c00003")
    RequestName(job_id='j1', chunk_index=3)
    >>> RequestName.from_location("s3://b/async/failures/j1/c00003-error.out")
    RequestName(job_id='j1', chunk_index=3)
    >>> RequestName.from_location("s3://b/async/outputs/j1/job.out")
    RequestName(job_id='j1', chunk_index=None)
    """

    job_id: str
    chunk_index: int | None = None

    @property
    def inference_id(self) -> str:
        if self.chunk_index is None:
            return self.job_id
        named = f"{self.job_id}.c{self.chunk_index:05d}"
        return named if len(named) <= MAX_INFERENCE_ID else self.job_id

    @property
    def output_path_extension(self) -> str:
        return self.job_id

    @property
    def filename(self) -> str:
        return "job.out" if self.chunk_index is None else f"c{self.chunk_index:05d}.out"

    @classmethod
    def from_inference_id(cls, inference_id: str) -> RequestName:
        """The request an InferenceId names: a chunk's ``{job_id}.c{index:05d}``, else the job id itself."""
        match = _CHUNK_ID.match(inference_id)
        return cls(match.group("job_id"), int(match.group("chunk"))) if match else cls(inference_id)

    @classmethod
    def from_location(cls, uri: str | None) -> RequestName | None:
        """The request an output or failure object is named for; ``None`` for a location this platform did not name."""
        try:
            key = S3Uri.parse(uri).key if uri else ""
        except ValueError:
            return None
        match = _OUTCOME_KEY.match(key)
        if match is None or not is_valid_job_id(match.group("job_id")):
            return None
        chunk = match.group("chunk")
        return cls(match.group("job_id"), None if chunk is None else int(chunk))


@dataclass(frozen=True)
class SubmittedInference:
    """Where SageMaker will put an accepted request's outcome (``InvokeEndpointAsync``'s answer).

    Attributes:
        request: the request's ``InputLocation``: the job's document.
        output_location: where the output appears when the inference succeeds.
        failure_location: where the model's error body appears when it fails.
    """

    request: str
    output_location: str | None = None
    failure_location: str | None = None


class AsyncInference:
    """Submits a job, or one chunk of a split job, to the async endpoint.

    The request's ``InputLocation`` is the job's document itself (no copy; every chunk request of a split job
    names the same object), and its parameters travel in ``CustomAttributes``
    (``ocr_platform.gpu.endpoint_payloads.EndpointParameters``), which SageMaker forwards to the container as the
    ``X-Amzn-SageMaker-Custom-Attributes`` header
    (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_runtime_InvokeEndpointAsync.html). The job id is
    the InferenceId of every request of the job, so each notification names the job; the container's answer names
    the chunk. The answer is a ZIP (``Accept: application/zip``) that the completion function unpacks.
    """

    def __init__(
        self,
        endpoint_name: str,
        layout: StorageLayout,
        *,
        invocation_timeout_seconds: int = defaults.INVOCATION_TIMEOUT_SECONDS,
        request_ttl_seconds: int = defaults.REQUEST_TTL_SECONDS,
        runtime: Any = None,
        sagemaker: Any = None,
    ) -> None:
        self.endpoint_name = endpoint_name
        self.layout = layout
        self.invocation_timeout_seconds = invocation_timeout_seconds
        self.request_ttl_seconds = request_ttl_seconds
        self.runtime = runtime or boto3.client("sagemaker-runtime")
        self._sagemaker = sagemaker

    @staticmethod
    def parameters(message: JobMessage, chunk: Chunk | None = None) -> str:
        """The request's ``CustomAttributes``; ``ParametersTooLargeError`` (``invalid_message``) when they do not fit."""
        return EndpointParameters.of(message, chunk).to_attributes()

    def submit(self, message: JobMessage, chunk: Chunk | None = None) -> SubmittedInference:
        """Call InvokeEndpointAsync on the job's document; return where its outcome will appear.

        Raises ``ParametersTooLargeError`` before calling when the parameters do not fit, and
        ``EndpointNotInServiceError`` when SageMaker refused the request because the endpoint is not serving.
        """
        attributes = self.parameters(message, chunk)
        name = RequestName(message.job_id, None if chunk is None else chunk.index)
        try:
            answer = self.runtime.invoke_endpoint_async(
                EndpointName=self.endpoint_name,
                InputLocation=message.input,
                InferenceId=name.inference_id,
                S3OutputPathExtension=name.output_path_extension,
                Filename=name.filename,
                ContentType="application/octet-stream",
                Accept=ANSWER_CONTENT_TYPE,
                CustomAttributes=attributes,
                InvocationTimeoutSeconds=self.invocation_timeout_seconds,
                RequestTTLSeconds=self.request_ttl_seconds,
            )
        except ClientError as err:
            if err.response.get("Error", {}).get("Code") == "ValidationError":
                self._raise_if_not_serving(err)
            raise
        return SubmittedInference(message.input, answer.get("OutputLocation"), answer.get("FailureLocation"))

    def _raise_if_not_serving(self, err: ClientError) -> None:
        """A ``ValidationError`` is what InvokeEndpointAsync answers for an endpoint that is not serving, as for a
        bad request: ask the control plane which one it is."""
        if self._sagemaker is None:
            self._sagemaker = boto3.client("sagemaker")
        try:
            status = self._sagemaker.describe_endpoint(EndpointName=self.endpoint_name)["EndpointStatus"]
        except ClientError:
            return  # no such endpoint, or no permission to look: the original error stands
        if status not in SERVING_STATUSES:
            raise EndpointNotInServiceError(
                f"Endpoint {self.endpoint_name} is {status} and refused the request ({err}); the job is sent again later."
            ) from err
