"""The client API: submit a document, poll its job, fetch its result.

Works against a deployed stack (resource names read from the CloudFormation stack outputs), against
any endpoint set with the standard boto3 variables (``AWS_ENDPOINT_URL``, ``AWS_ENDPOINT_URL_S3``, ...)
with the resource names given by ``OCR_BUCKET_NAME``, ``OCR_QUEUE_URL`` and ``OCR_TABLE_NAME``, or against
the running local stack; ``resolve_target`` picks one in that order. Problems a user can fix raise
``PlatformClientError`` (``ocr_platform.core.client_errors``).

>>> client = OcrClient(resolve_target().resources)     # a deployed stack, OCR_* variables or the local stack  # doctest: +SKIP
>>> job = client.submit("scan.pdf", model="pp-ocrv5", pages="1-3")          # doctest: +SKIP
>>> client.wait(job["job_id"])["status"]                                     # doctest: +SKIP
'COMPLETED'
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import boto3
import botocore.exceptions

from ocr_platform.core import defaults
from ocr_platform.core.client_errors import ExitStatus, PlatformClientError, describe_aws_error
from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.results import OcrResult
from ocr_platform.core.routing import route
from ocr_platform.core.s3_layout import S3Uri, StorageLayout
from ocr_platform.document.url_input import input_file_name, is_url_input
from ocr_platform.inputs.inbox import InboxUpload
from ocr_platform.jobs.messages import JobMessage, parse_job_message
from ocr_platform.jobs.store import TERMINAL_STATUSES, JobItem, JobStatus, JobStore

STACK_ENV = "OCR_STACK_NAME"
RESOURCE_ENV = {"bucket": "OCR_BUCKET_NAME", "queue_url": "OCR_QUEUE_URL", "table": "OCR_TABLE_NAME"}
OUTPUT_KEYS = {"bucket": "BucketName", "queue_url": "QueueUrl", "table": "TableName", "endpoint": "EndpointName"}

NO_PLATFORM_HINT = (
    "Nothing to talk to: start the local stack with `ocr-platform local up` (or `ocr-platform run FILE --model M`), "
    "or point at a deployed stack with --stack NAME --region REGION (or OCR_STACK_NAME), "
    f"or set {', '.join(RESOURCE_ENV.values())}."
)


@dataclass(frozen=True)
class PlatformResources:
    """The names a client needs: bucket, queue URL, jobs table (and the endpoint, informational)."""

    bucket: str
    queue_url: str
    table: str
    endpoint: str | None = None

    @classmethod
    def from_stack(cls, stack_name: str, *, region: str | None = None, cloudformation: Any = None) -> PlatformResources:
        """The resource names in a deployed stack's CloudFormation outputs."""
        outputs = stack_outputs(stack_name, region=region, cloudformation=cloudformation)
        missing = [key for field, key in OUTPUT_KEYS.items() if field != "endpoint" and key not in outputs]
        if missing:
            raise PlatformClientError(
                "not_a_platform_stack", f"Stack {stack_name!r} has no output(s) {', '.join(missing)}; is it an OCR platform stack?"
            )
        return cls(outputs["BucketName"], outputs["QueueUrl"], outputs["TableName"], outputs.get("EndpointName"))

    @classmethod
    def from_env(cls) -> PlatformResources | None:
        """The names in ``OCR_BUCKET_NAME`` / ``OCR_QUEUE_URL`` / ``OCR_TABLE_NAME``; None when none is set."""
        values = {field: os.environ.get(name) for field, name in RESOURCE_ENV.items()}
        if not any(values.values()):
            return None
        if not all(values.values()):
            missing = [RESOURCE_ENV[f] for f, v in values.items() if not v]
            raise PlatformClientError(
                "incomplete_configuration", f"Set all of {', '.join(RESOURCE_ENV.values())} (missing: {', '.join(missing)})."
            )
        return cls(values["bucket"] or "", values["queue_url"] or "", values["table"] or "")


@dataclass(frozen=True)
class PlatformTarget:
    """Where the client's calls go: the resource names, what chose them, and the environment boto3 needs.

    Attributes:
        resources: the bucket, queue and table.
        source: for people: ``stack ocr-platform-dev (eu-west-1)``, ``OCR_* variables`` or ``local stack``.
        environment: variables that point boto3 at the platform (the local stack's endpoints and dummy
            credentials); empty for a deployed stack, whose credentials are the caller's own.
    """

    resources: PlatformResources
    source: str
    environment: dict[str, str] = field(default_factory=dict)


def stack_outputs(stack_name: str, *, region: str | None = None, cloudformation: Any = None) -> dict[str, str]:
    """A deployed stack's CloudFormation outputs; ``stack_not_found`` / ``no_region`` when there is none."""
    try:
        cfn = cloudformation or boto3.client("cloudformation", region_name=region or None)
        stack = cfn.describe_stacks(StackName=stack_name)["Stacks"][0]
    except botocore.exceptions.ClientError as err:
        if "does not exist" in str(err.response.get("Error", {}).get("Message", "")):
            raise PlatformClientError(
                "stack_not_found",
                f"No stack {stack_name!r} in region {cfn.meta.region_name}; deploy it with `npx cdk deploy`, "
                "or pass the right --stack/--region.",
            ) from None
        raise describe_aws_error(err) from None
    except ValueError as err:  # botocore's "Invalid endpoint" for an empty region name
        raise PlatformClientError("no_region", f"{err}; pass --region or set AWS_DEFAULT_REGION.") from None
    return {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}


def resolve_target(stack_name: str | None = None, *, region: str | None = None) -> PlatformTarget:
    """The platform a client command talks to, in the order the CLI documents.

    1. a deployed stack named by ``stack_name`` or ``$OCR_STACK_NAME`` (its CloudFormation outputs);
    2. the ``OCR_BUCKET_NAME`` / ``OCR_QUEUE_URL`` / ``OCR_TABLE_NAME`` variables (with the standard
       ``AWS_ENDPOINT_URL*`` variables, any S3/SQS/DynamoDB-compatible endpoint);
    3. the running local stack (``ocr-platform local up``);
    otherwise ``PlatformClientError("no_platform")`` saying what to do.
    """
    stack_name = stack_name or os.environ.get(STACK_ENV) or None
    if stack_name:
        region = region or boto3.session.Session().region_name
        if not region:
            raise PlatformClientError(
                "no_region", f"Stack {stack_name!r} was named but no AWS region is set; pass --region or set AWS_DEFAULT_REGION."
            )
        return PlatformTarget(PlatformResources.from_stack(stack_name, region=region), f"stack {stack_name} ({region})",
                              {"AWS_DEFAULT_REGION": region})
    from_env = PlatformResources.from_env()
    if from_env is not None:
        return PlatformTarget(from_env, "OCR_* variables", {"AWS_DEFAULT_REGION": region} if region else {})
    from ocr_platform.local.supervisor import running_stack

    local = running_stack()
    if local is not None:
        return PlatformTarget(
            PlatformResources(local.bucket, local.queue_url, local.table, local.endpoint),
            f"local stack (pid {local.pid})",
            local.client_environment(),
        )
    raise PlatformClientError("no_platform", NO_PLATFORM_HINT)


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
        language: str = defaults.LANGUAGE,
        pages: str | None = None,
        options: dict[str, Any] | None = None,
        job_id: str | None = None,
        owner: str | None = None,
        callback_url: str | None = None,
    ) -> JobItem:
        """Upload ``path``, write the QUEUED job item and enqueue the job. Every call is a new job.

        ``path`` may also be an ``https://`` URL: nothing is uploaded, and the platform fetches the document.
        ``owner``: the jobs API user (a Cognito ``sub``) the job belongs to, so it shows in their console.
        ``callback_url``: gets one signed POST when the job ends (docs/contracts.md, "Webhooks").
        """
        from_url = is_url_input(str(path))
        source = Path(path)
        if not from_url and not source.is_file():
            raise PlatformClientError("file_not_found", f"{source} is not a readable file.")
        try:
            route(model)
        except JobError as err:
            raise PlatformClientError(err.code, err.message) from None
        job_id = job_id or uuid.uuid4().hex
        file_name = input_file_name(str(path)) if from_url else source.name
        document = str(path) if from_url else str(self.layout.document_uri(job_id, source.name))
        try:
            message = parse_job_message(
                JobMessage(job_id, model, document, language, pages, options or {}, callback_url).to_body()
            )
        except ValueError as err:
            raise PlatformClientError(ErrorCode.INVALID_MESSAGE, str(err)) from None
        if not from_url:
            uploaded = S3Uri.parse(document)
            self.s3.upload_file(str(source), uploaded.bucket, uploaded.key)
        item = self.store.create(replace(message.as_new_job(file_name=file_name), owner=owner))
        try:
            self.sqs.send_message(QueueUrl=self.resources.queue_url, MessageBody=message.to_json())
        except Exception as err:
            self.store.mark_failed(job_id, JobError(ErrorCode.INTERNAL_ERROR, f"The job could not be enqueued: {err}"))
            raise
        return item

    def inbox_job_id(self, uri: str) -> str:
        """The job of a file dropped in the inbox (``s3://bucket/inbox/<model>/...``): its id comes from the
        object's key and ETag or version (``ocr_platform.inputs.inbox``), read with one HeadObject."""
        try:
            location = S3Uri.parse(uri)
            head = self.s3.head_object(Bucket=location.bucket, Key=location.key)
        except ValueError as err:
            raise PlatformClientError("invalid_uri", f"{err}", ExitStatus.USAGE) from None
        except botocore.exceptions.ClientError as err:
            raise PlatformClientError(
                "job_not_found", f"No object {uri} to find the job of ({err.response.get('Error', {}).get('Code')}).",
                ExitStatus.NOT_FOUND,
            ) from None
        return InboxUpload(location.bucket, location.key, etag=head.get("ETag", ""), version_id=head.get("VersionId")).job_id

    def status(self, job_id: str) -> JobItem:
        job = self.store.get(job_id)
        if job is None:
            raise PlatformClientError(
                "job_not_found", f"No job {job_id!r} in table {self.resources.table}; check the id and the platform you point at.",
                ExitStatus.NOT_FOUND,
            )
        return job

    def result(self, job_id: str) -> OcrResult:
        """The job's result.json; ``PlatformClientError`` unless the job is COMPLETED (``job_failed`` when it FAILED)."""
        location = S3Uri.parse(self._completed(job_id)["result"])
        return json.loads(self.s3.get_object(Bucket=location.bucket, Key=location.key)["Body"].read())

    def _completed(self, job_id: str) -> JobItem:
        """The job's item once it is COMPLETED; ``PlatformClientError`` before (``job_failed`` when it FAILED)."""
        job = self.status(job_id)
        if job["status"] != JobStatus.COMPLETED:
            detail = f": {job['error']['code']}: {job['error']['message']}" if job.get("error") else ""
            if job["status"] == JobStatus.FAILED:
                raise PlatformClientError("job_failed", f"Job {job_id} is FAILED{detail}; it has no result.", ExitStatus.JOB_FAILED)
            raise PlatformClientError(
                "result_not_ready", f"Job {job_id} is {job['status']}; a result exists only once it is COMPLETED.", ExitStatus.NOT_FOUND
            )
        return job

    def formatted(self, job_id: str, name: str) -> bytes:
        """The COMPLETED job's result in format ``name`` (``ocr_platform.outputs.formats``): the file the job stored
        when it asked for it (``options.outputs``), else made here from its result.json (the document is not read again)."""
        from ocr_platform.outputs.formats import STORED_FORMATS, FormatUnavailable, render

        job = self._completed(job_id)
        if name in STORED_FORMATS and name in ((job.get("options") or {}).get("outputs") or []):
            try:
                return bytes(self.s3.get_object(Bucket=self.layout.bucket, Key=self.layout.output_key(job_id, name))["Body"].read())
            except botocore.exceptions.ClientError as err:
                if err.response.get("Error", {}).get("Code") not in ("NoSuchKey", "404"):
                    raise
        location = S3Uri.parse(job["result"])
        try:
            return render(name, json.loads(self.s3.get_object(Bucket=location.bucket, Key=location.key)["Body"].read()))
        except FormatUnavailable as err:
            raise PlatformClientError(err.code, str(err), ExitStatus.NOT_FOUND) from None

    def save_searchable_pdf(self, job_id: str, target: Path) -> Path:
        """Download the COMPLETED job's result.pdf to ``target``; ``PlatformClientError`` when the job has none."""
        job = self._completed(job_id)
        if not job.get("result_pdf"):
            why = next((str(w.get("message")) for w in job.get("warnings", []) if w.get("code") == "output_unavailable"), None)
            asked = "pdf" in ((job.get("options") or {}).get("outputs") or [])
            raise PlatformClientError(
                "no_searchable_pdf",
                f"Job {job_id} has no result.pdf: " + (
                    why or "it asked for one, but none was written" if asked or why
                    else "submit it with --pdf (options.outputs [\"pdf\"])"
                ) + ".",
                ExitStatus.NOT_FOUND,
            )
        location = S3Uri.parse(str(job["result_pdf"]))
        self.s3.download_file(location.bucket, location.key, str(target))
        return target

    def wait(
        self,
        job_id: str,
        *,
        timeout: float = 900.0,
        poll_seconds: float = 1.0,
        on_change: Callable[[JobItem], None] | None = None,
        progress: Callable[[JobItem], Hashable] = lambda job: job["status"],
        until_written: bool = False,
    ) -> JobItem:
        """Poll until the job is COMPLETED or FAILED (after ``timeout`` seconds: ``PlatformClientError("wait_timed_out")``).

        ``on_change(job)`` is called with the first item and whenever ``progress(job)`` changes: by default the
        status; ``ocr-platform run`` also follows the GPU capacity a queued SageMaker job waits for.
        ``until_written``: a job with no item yet is polled for too (the drop folder's ingest function or the
        invoker writes it a moment after the file or message arrives).
        """
        deadline = time.monotonic() + timeout
        last_seen: Hashable = object()
        while True:
            job = self.store.get(job_id) if until_written and time.monotonic() < deadline else self.status(job_id)
            if job is None:
                time.sleep(poll_seconds)
                continue
            seen = progress(job)
            if seen != last_seen:
                last_seen = seen
                if on_change:
                    on_change(job)
            if job["status"] in TERMINAL_STATUSES:
                return job
            if time.monotonic() >= deadline:
                raise PlatformClientError(
                    "wait_timed_out", f"Job {job_id} is still {job['status']} after {timeout:.0f} s; poll it again with `ocr-platform status {job_id}`.",
                    ExitStatus.TIMED_OUT,
                )
            time.sleep(poll_seconds)

