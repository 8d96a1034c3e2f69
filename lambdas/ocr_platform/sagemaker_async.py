"""The SageMaker async endpoint as the platform uses it: capacity 0 <-> 1 and per-job async requests.

Scaling goes through ``UpdateEndpointWeightsAndCapacities`` on the variant's DesiredInstanceCount, which
is idempotent here: asking for 1 when 1 is already desired is a no-op, and an endpoint that is busy
updating raises ``RetryLaterError`` so the caller retries later instead of losing the request.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

import boto3
from botocore.exceptions import ClientError

from ocr_platform import defaults
from ocr_platform.chunks import Chunk
from ocr_platform.errors import RetryLaterError
from ocr_platform.messages import JobMessage
from ocr_platform.s3_layout import StorageLayout

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class VariantState:
    endpoint_status: str
    desired_instances: int
    current_instances: int


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
        desc = self.sagemaker.describe_endpoint(EndpointName=self.endpoint_name)
        for variant in desc.get("ProductionVariants", []):
            if variant.get("VariantName") == self.variant_name:
                current = int(variant.get("CurrentInstanceCount", 0))
                desired = int(variant.get("DesiredInstanceCount", current))
                return VariantState(desc["EndpointStatus"], desired, current)
        raise RuntimeError(f"Endpoint {self.endpoint_name} has no variant {self.variant_name!r}; check OCR_VARIANT_NAME.")

    def ensure_capacity(self) -> bool:
        """Ask for one instance unless one is already desired; return True when this call scaled out."""
        state = self.state()
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


@dataclass(frozen=True)
class SubmittedInference:
    """Where SageMaker will put an accepted request's outcome (``InvokeEndpointAsync``'s answer).

    Attributes:
        request: the request object's S3 URI.
        output_location: where the output appears when the inference succeeds.
        failure_location: where the model's error body appears when it fails.
    """

    request: str
    output_location: str | None = None
    failure_location: str | None = None


class AsyncInference:
    """Submits a job, or one chunk of a split job, to the async endpoint through a request object in S3.

    The request object is the job message itself (``async/requests/{job_id}.json``); a chunk's is the message
    with a ``chunk`` field (``async/requests/{job_id}.c{index}.json``). The job id is the InferenceId of
    every request of the job, so each notification names the job, and its ``inputLocation`` the chunk.
    """

    def __init__(
        self,
        endpoint_name: str,
        layout: StorageLayout,
        *,
        invocation_timeout_seconds: int = defaults.INVOCATION_TIMEOUT_SECONDS,
        request_ttl_seconds: int = defaults.REQUEST_TTL_SECONDS,
        s3: Any = None,
        runtime: Any = None,
    ) -> None:
        self.endpoint_name = endpoint_name
        self.layout = layout
        self.invocation_timeout_seconds = invocation_timeout_seconds
        self.request_ttl_seconds = request_ttl_seconds
        self.s3 = s3 or boto3.client("s3")
        self.runtime = runtime or boto3.client("sagemaker-runtime")

    def submit(self, message: JobMessage, chunk: Chunk | None = None) -> SubmittedInference:
        """Write the request object and call InvokeEndpointAsync; return where its outcome will appear."""
        request = self.layout.async_request_uri(message.job_id, None if chunk is None else chunk.index)
        body: dict[str, Any] = dict(message.to_body())
        if chunk is not None:
            body["chunk"] = chunk.to_payload()
        self.s3.put_object(
            Bucket=request.bucket,
            Key=request.key,
            Body=json.dumps(body).encode(),
            ContentType="application/json",
        )
        answer = self.runtime.invoke_endpoint_async(
            EndpointName=self.endpoint_name,
            InputLocation=str(request),
            InferenceId=message.job_id,
            ContentType="application/json",
            Accept="application/json",
            InvocationTimeoutSeconds=self.invocation_timeout_seconds,
            RequestTTLSeconds=self.request_ttl_seconds,
        )
        return SubmittedInference(str(request), answer.get("OutputLocation"), answer.get("FailureLocation"))
