"""The client API: submit a document, poll its job, fetch its result.

Works against a deployed stack (resource names read from the CloudFormation stack outputs) or against
any endpoint set with the standard boto3 variables (``AWS_ENDPOINT_URL``, ``AWS_ENDPOINT_URL_S3``, ...)
with the resource names given by ``OCR_BUCKET_NAME``, ``OCR_QUEUE_URL`` and ``OCR_TABLE_NAME``.

>>> client = OcrClient(PlatformResources.from_stack("ocr-platform-dev"))   # doctest: +SKIP
>>> job = client.submit("scan.pdf", model="pp-ocrv5", pages="1-3")          # doctest: +SKIP
>>> client.wait(job["job_id"])["status"]                                     # doctest: +SKIP
'COMPLETED'
"""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import boto3

from ocr_platform.errors import ErrorCode, JobError
from ocr_platform.jobs import TERMINAL_STATUSES, JobItem, JobStatus, JobStore
from ocr_platform.messages import JobMessage, parse_job_message
from ocr_platform.models import route
from ocr_platform.results import OcrResult
from ocr_platform.storage import S3Uri, StorageLayout

DEFAULT_STACK_NAME = "ocr-platform-dev"
STACK_ENV = "OCR_STACK_NAME"
RESOURCE_ENV = {"bucket": "OCR_BUCKET_NAME", "queue_url": "OCR_QUEUE_URL", "table": "OCR_TABLE_NAME"}
OUTPUT_KEYS = {"bucket": "BucketName", "queue_url": "QueueUrl", "table": "TableName", "endpoint": "EndpointName"}


class ClientError(Exception):
    """A client-side problem with a message that says what to do."""


@dataclass(frozen=True)
class PlatformResources:
    """The names a client needs: bucket, queue URL, jobs table (and the endpoint, informational)."""

    bucket: str
    queue_url: str
    table: str
    endpoint: str | None = None

    @classmethod
    def from_stack(cls, stack_name: str, *, cloudformation: Any = None) -> "PlatformResources":
        cfn = cloudformation or boto3.client("cloudformation")
        try:
            stack = cfn.describe_stacks(StackName=stack_name)["Stacks"][0]
        except Exception as err:
            raise ClientError(
                f"Cannot read stack {stack_name!r} ({err}). Deploy it with `npx cdk deploy`, pass --stack, "
                f"or set {', '.join(RESOURCE_ENV.values())}."
            ) from None
        outputs = {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}
        missing = [key for field, key in OUTPUT_KEYS.items() if field != "endpoint" and key not in outputs]
        if missing:
            raise ClientError(f"Stack {stack_name!r} has no output(s) {', '.join(missing)}; is it an OCR platform stack?")
        return cls(outputs["BucketName"], outputs["QueueUrl"], outputs["TableName"], outputs.get("EndpointName"))

    @classmethod
    def from_env(cls) -> "PlatformResources | None":
        values = {field: os.environ.get(name) for field, name in RESOURCE_ENV.items()}
        if not any(values.values()):
            return None
        if not all(values.values()):
            missing = [RESOURCE_ENV[f] for f, v in values.items() if not v]
            raise ClientError(f"Set all of {', '.join(RESOURCE_ENV.values())} (missing: {', '.join(missing)}).")
        return cls(values["bucket"], values["queue_url"], values["table"])  # type: ignore[arg-type]

    @classmethod
    def discover(cls, stack_name: str | None = None) -> "PlatformResources":
        """Explicit stack name first, then the ``OCR_*`` variables, then ``$OCR_STACK_NAME`` or the default stack."""
        if stack_name:
            return cls.from_stack(stack_name)
        return cls.from_env() or cls.from_stack(os.environ.get(STACK_ENV, DEFAULT_STACK_NAME))


class OcrClient:
    """Submits jobs and reads their state and results.

    Args:
        resources: where the platform lives.
        s3, sqs, dynamodb: boto3 clients/resource; defaults honour ``AWS_ENDPOINT_URL*``.
    """

    def __init__(self, resources: PlatformResources, *, s3: Any = None, sqs: Any = None, dynamodb: Any = None) -> None:
        self.resources = resources
        self.s3 = s3 or boto3.client("s3")
        self.sqs = sqs or boto3.client("sqs")
        self.store = JobStore(resources.table, dynamodb=dynamodb or boto3.resource("dynamodb"))
        self.layout = StorageLayout(resources.bucket)

    def submit(
        self,
        path: str | Path,
        *,
        model: str,
        language: str = "en",
        pages: str | None = None,
        options: dict[str, Any] | None = None,
        job_id: str | None = None,
    ) -> JobItem:
        """Upload ``path``, write the QUEUED job item and enqueue the job. Every call is a new job."""
        source = Path(path)
        if not source.is_file():
            raise ClientError(f"{source} is not a readable file.")
        try:
            route(model)
        except JobError as err:
            raise ClientError(err.message) from None
        job_id = job_id or uuid.uuid4().hex
        document = self.layout.document_uri(job_id, source.name)
        try:
            message = parse_job_message(
                JobMessage(job_id, model, str(document), language, pages, options or {}).to_body()
            )
        except ValueError as err:
            raise ClientError(str(err)) from None
        self.s3.upload_file(str(source), document.bucket, document.key)
        item = self.store.create(message.as_new_job(file_name=source.name))
        try:
            self.sqs.send_message(QueueUrl=self.resources.queue_url, MessageBody=message.to_json())
        except Exception as err:
            self.store.mark_failed(job_id, JobError(ErrorCode.INTERNAL_ERROR, f"The job could not be enqueued: {err}"))
            raise
        return item

    def status(self, job_id: str) -> JobItem:
        job = self.store.get(job_id)
        if job is None:
            raise ClientError(f"No job {job_id!r} in table {self.resources.table}.")
        return job

    def result(self, job_id: str) -> OcrResult:
        """The job's result.json; raises ``ClientError`` unless the job is COMPLETED."""
        job = self.status(job_id)
        if job["status"] != JobStatus.COMPLETED:
            detail = f": {job['error']['code']}: {job['error']['message']}" if job.get("error") else ""
            raise ClientError(f"Job {job_id} is {job['status']}{detail}; a result exists only once it is COMPLETED.")
        location = S3Uri.parse(job["result"])
        return json.loads(self.s3.get_object(Bucket=location.bucket, Key=location.key)["Body"].read())

    def wait(
        self,
        job_id: str,
        *,
        timeout: float = 900.0,
        poll_seconds: float = 1.0,
        on_change: Callable[[JobItem], None] | None = None,
    ) -> JobItem:
        """Poll until the job is COMPLETED or FAILED (or ``timeout`` seconds pass: ``TimeoutError``)."""
        deadline = time.monotonic() + timeout
        last_status = None
        while True:
            job = self.status(job_id)
            if job["status"] != last_status:
                last_status = job["status"]
                if on_change:
                    on_change(job)
            if job["status"] in TERMINAL_STATUSES:
                return job
            if time.monotonic() >= deadline:
                raise TimeoutError(f"Job {job_id} is still {job['status']} after {timeout:.0f} s.")
            time.sleep(poll_seconds)

