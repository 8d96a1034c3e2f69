"""The boto3 clients and domain objects a warm Lambda reuses across invocations.

Built on first use from ``RuntimeSettings.from_env()``; every client honours the standard boto3
endpoint variables (``AWS_ENDPOINT_URL``, ``AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME``, ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import boto3
from botocore.config import Config

from ocr_platform.core.metrics import count_finished_job
from ocr_platform.core.s3_layout import StorageLayout
from ocr_platform.core.safe_http import UrlPolicy
from ocr_platform.core.settings import RuntimeSettings
from ocr_platform.core.tracing import job_subsegment
from ocr_platform.gpu.sagemaker_async import AsyncInference, EndpointCapacity
from ocr_platform.inputs.dispatch import JobDispatcher, UrlInputs
from ocr_platform.jobs.admission import ProcessorSlots
from ocr_platform.jobs.store import JobItem, JobStore
from ocr_platform.outputs.notifications import CompletionNotifier


@dataclass(frozen=True)
class Services:
    settings: RuntimeSettings
    store: JobStore
    layout: StorageLayout
    s3: object
    notifier: CompletionNotifier

    @property
    def lambda_client(self) -> object:
        return _client("lambda")

    @property
    def sqs(self) -> object:
        return _client("sqs")

    @property
    def capacity(self) -> EndpointCapacity:
        return EndpointCapacity(self.settings.endpoint_name, self.settings.variant_name, sagemaker=_client("sagemaker"))

    @property
    def inference(self) -> AsyncInference | None:
        """Sends requests to the endpoint; ``None`` in a function that is not given one (``OCR_ENDPOINT_NAME``)."""
        if not self.settings.endpoint_name:
            return None
        return AsyncInference(
            self.settings.endpoint_name,
            self.layout,
            invocation_timeout_seconds=self.settings.invocation_timeout_seconds,
            request_ttl_seconds=self.settings.request_ttl_seconds,
            runtime=_client("sagemaker-runtime"),
            sagemaker=_client("sagemaker"),
        )

    @property
    def slots(self) -> ProcessorSlots | None:
        """The stage's processor semaphore; ``None`` where reserved concurrency bounds the processor instead."""
        if self.settings.processor_slots < 1:
            return None
        return ProcessorSlots(
            self.store.table, limit=self.settings.processor_slots, lease_seconds=self.settings.admission_lease_seconds
        )

    @property
    def dispatcher(self) -> JobDispatcher:
        return JobDispatcher(
            self.store,
            lambda_client=self.lambda_client,
            processor_function=self.settings.processor_function,
            capacity=self.capacity,
            inference=self.inference or AsyncInference("", self.layout, runtime=_client("sagemaker-runtime")),
            dispatch_lease_seconds=self.settings.dispatch_lease_seconds,
            url_inputs=UrlInputs(self.s3, self.layout, timeout_seconds=self.settings.url_fetch_timeout_seconds),
            url_policy=UrlPolicy(self.settings.url_policy),
            slots=self.slots,
        )


@cache
def _client(service: str) -> object:
    if service == "s3":  # presigned URLs and POST forms signed with SigV4, the only version new buckets accept
        return boto3.client("s3", config=Config(signature_version="s3v4"))
    return boto3.client(service)


@cache
def services() -> Services:
    """The process-wide services; ``services.cache_clear()`` rebuilds them from the environment."""
    settings = RuntimeSettings.from_env()
    store = JobStore(settings.table_name, ttl_days=settings.job_ttl_days, dynamodb=boto3.resource("dynamodb"))
    notifier = CompletionNotifier(
        store, events=_client("events"), sqs=_client("sqs"), bus_name=settings.event_bus_name,
        webhook_queue_url=settings.webhook_queue_url,
    )

    def finished(job: JobItem) -> None:
        error = job.get("error")
        with job_subsegment("job finished", job["job_id"], status=job["status"], error_code=error["code"] if error else ""):
            count_finished_job(job)
            notifier.notify_or_leave_pending(job)

    store.on_finished = finished
    return Services(settings=settings, store=store, layout=StorageLayout(settings.bucket_name), s3=_client("s3"), notifier=notifier)


def reset() -> None:
    """Forget cached clients and settings (after the environment changed)."""
    services.cache_clear()
    _client.cache_clear()
