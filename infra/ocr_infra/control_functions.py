"""The zip-packaged control functions: the routing invoker and the completion handler."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from ocr_infra.platform_function import (
    COMPLETION_HANDLER,
    INVOKER_HANDLER,
    CommonFunctionProps,
    PlatformFunction,
    PlatformFunctionProps,
)
from ocr_infra.secure_defaults import allow
from ocr_platform.core import defaults
from ocr_platform.core.s3_layout import (
    ASYNC_FAILURES_PREFIX,
    ASYNC_OUTPUTS_PREFIX,
    CHUNKS_PREFIX,
    DOCUMENTS_PREFIX,
    RESULTS_PREFIX,
)
from ocr_platform.core.settings import ENV


def allow_finishing_async_inferences(role: iam.IRole, bucket: s3.IBucket, who: str) -> None:
    """What finishing a SageMaker job from its outcome in S3 needs (``completion.finish_async_inference``):
    read the async outputs and failures, write ``results/``. The completion function and the sweeper both do it."""
    allow(
        role,
        ["s3:GetObject"],
        [bucket.arn_for_objects(f"{ASYNC_OUTPUTS_PREFIX}*"), bucket.arn_for_objects(f"{ASYNC_FAILURES_PREFIX}*")],
        reason=f"Key-prefix scope: SageMaker names each async output and failure object per request; {who} reads "
        "only those two prefixes.",
    )
    allow(
        role,
        ["s3:PutObject"],
        [bucket.arn_for_objects(f"{RESULTS_PREFIX}*")],
        reason=f"Key-prefix scope: {who} writes results/{{job_id}}/ for whichever job it finishes.",
    )


@dataclass(frozen=True)
class EndpointRequests:
    """What sending requests to the async endpoint takes: its name and ARN, and the invocation timeout and
    request TTL sent with every request (``OCR_INVOCATION_TIMEOUT_SECONDS``, ``OCR_REQUEST_TTL_SECONDS``)."""

    endpoint_name: str
    endpoint_arn: str
    invocation_timeout_seconds: int = defaults.INVOCATION_TIMEOUT_SECONDS
    request_ttl_seconds: int = defaults.REQUEST_TTL_SECONDS

    @property
    def environment(self) -> dict[str, str]:
        return {
            ENV.ENDPOINT_NAME: self.endpoint_name,
            ENV.INVOCATION_TIMEOUT_SECONDS: str(self.invocation_timeout_seconds),
            ENV.REQUEST_TTL_SECONDS: str(self.request_ttl_seconds),
        }


def allow_splitting_endpoint_jobs(fn: PlatformFunction, bucket: s3.IBucket, endpoint: EndpointRequests, who: str) -> None:
    """What acting on the endpoint's split plan needs (``completion.finish_async_inference``): send one request
    per chunk (the job's document, the chunk in its CustomAttributes; DescribeEndpoint when SageMaker refuses one),
    keep each chunk's result under ``chunks/`` and, as the last chunk, merge and delete them. The completion
    function and the sweeper both do it."""
    fn.add_environment(endpoint.environment)
    allow(fn.role, ["sagemaker:InvokeEndpointAsync", "sagemaker:DescribeEndpoint"], [endpoint.endpoint_arn])
    allow(
        fn.role,
        ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"],
        [bucket.arn_for_objects(f"{CHUNKS_PREFIX}*")],
        reason=f"Key-prefix scope: {who} keeps each chunk's result under chunks/{{job_id}}/ and, for the last "
        "chunk, reads and deletes them all; job ids are only known at run time.",
    )


@dataclass(frozen=True)
class CompletionHandlerProps:
    """Props of :class:`CompletionHandler`.

    Attributes:
        common: what every function shares (table, bucket, zip code and layers, TTL, log retention).
        topics: the SageMaker success and error topics it subscribes to.
        memory_mb / timeout_seconds: 512 MB (the largest endpoint output it admits, parsed, validated and
            written again: ``defaults.completion_memory_floor_mb``), 5 min.
    """

    common: CommonFunctionProps
    topics: Sequence[sns.ITopic]
    memory_mb: int = defaults.COMPLETION_MEMORY_MB
    timeout_seconds: int = defaults.COMPLETION_TIMEOUT_SECONDS


class CompletionHandler(Construct):
    """Finishes jobs run elsewhere: SageMaker notifications and the CPU processor's failure records.

    Subscribed to the SageMaker success and error topics; the CPU processor's on-failure destination
    invokes it directly (see :class:`ocr_infra.cpu_backend.CpuBackend`).
    """

    def __init__(self, scope: Construct, construct_id: str, props: CompletionHandlerProps) -> None:
        super().__init__(scope, construct_id)
        bucket, table = props.common.bucket, props.common.table
        # 1. Function: the common environment only; it finishes jobs.
        self._fn = PlatformFunction(
            self,
            "Completion",
            PlatformFunctionProps(
                common=props.common,
                description="OCR platform completion: SageMaker notifications and processor failures -> job finished",
                handler=COMPLETION_HANDLER,
                memory_mb=props.memory_mb,
                timeout_seconds=props.timeout_seconds,
                service_name="ocr-completion",
                finishes_jobs=True,
                # The endpoint's answers (page images and result.pdf in a ZIP) are spooled to /tmp, not held in memory.
                ephemeral_storage_mb=defaults.answer_spool_storage_mb(),
                # SNS and the processor's on-failure destination invoke it asynchronously: Lambda's two retries,
                # then the event is parked (a finished inference's output stays in S3 to redrive).
                async_retry_attempts=defaults.ASYNC_RETRY_ATTEMPTS,
                concurrency_bound=(
                    "Driven by bounded work only: it runs once per finished SageMaker request (at most the endpoint's "
                    "instances x concurrent invocations at a time) and once per failed processor run (bounded by the "
                    "processor's own limit), for seconds each (an S3 read, a few DynamoDB writes); an invocation Lambda "
                    "throttles waits in its asynchronous queue and is retried, not lost."
                ),
            ),
        )
        role = self._fn.role
        # 2. Permissions: read async outputs and failures, publish result.json, finish the job.
        allow_finishing_async_inferences(role, bucket, "the completion function")
        allow(role, ["dynamodb:GetItem", "dynamodb:UpdateItem"], [table.table_arn])
        # 3. Subscriptions: the SageMaker success and error topics; what SNS cannot deliver is parked.
        for topic in props.topics:
            topic.add_subscription(
                subscriptions.LambdaSubscription(self._fn.function, dead_letter_queue=props.common.parked_events)
            )

    def allow_splitting_endpoint_jobs(self, bucket: s3.IBucket, endpoint: EndpointRequests) -> None:
        """Let it act on the endpoint's split plans: send the chunk requests, merge the chunks' results."""
        allow_splitting_endpoint_jobs(self._fn, bucket, endpoint, "the completion function")

    @property
    def function(self) -> lambda_.Function:
        return self._fn.function

    @property
    def environment(self) -> Mapping[str, str]:
        return self._fn.environment


@dataclass(frozen=True)
class InvokerProps:
    """Props of :class:`Invoker`.

    Attributes:
        common: what every function shares (table, bucket, zip code and layers, TTL, log retention).
        queue: the OCR job queue (its DLQ takes messages after ``max_receive_count`` receives).
        max_receive_count: ``OCR_MAX_RECEIVE_COUNT``: on the last receive a job that still cannot be
            dispatched is FAILED instead of silently dead-lettered.
        processor: the CPU processor it invokes asynchronously (``None`` when no CPU model is deployed).
        endpoint_name / endpoint_arn / variant_name: the GPU endpoint (``None`` when not deployed).
        invocation_timeout_seconds: ``OCR_INVOCATION_TIMEOUT_SECONDS`` sent with InvokeEndpointAsync.
        request_ttl_seconds: ``OCR_REQUEST_TTL_SECONDS`` sent with InvokeEndpointAsync.
        dispatch_lease_seconds: ``OCR_DISPATCH_LEASE_SECONDS``: how long one delivery's claim on a job's
            hand-over holds (``defaults.dispatch_lease_seconds``: the invoker's timeout).
        url_fetch_timeout_seconds: ``OCR_URL_FETCH_TIMEOUT_SECONDS``: the fetch of a document submitted by URL,
            redirects and the whole body included (30 s); the invoker stores it under ``documents/``.
        batch_size: messages per invocation (default 1: one job, one invocation).
        max_concurrency: the event source's ``MaximumConcurrency`` (5): invokers running at once; the rest of
            the queue waits, never throttled.
        processor_slots: ``OCR_PROCESSOR_SLOTS``: the stage's processor semaphore (``ocr_platform.jobs.admission``);
            a CPU job takes a slot before it is handed over, and one that finds none goes back to the queue
            for ``admission_retry_seconds`` as a new message. 0: no semaphore (reserved concurrency instead).
        admission_lease_seconds / admission_retry_seconds: ``OCR_ADMISSION_LEASE_SECONDS`` (how long a slot
            holds unreleased) and ``OCR_ADMISSION_RETRY_SECONDS``.
        memory_mb / timeout_seconds: 256 MB, 60 s.
    """

    common: CommonFunctionProps
    queue: sqs.IQueue
    max_receive_count: int = defaults.MAX_RECEIVE_COUNT
    processor: lambda_.IFunction | None = None
    endpoint_name: str | None = None
    endpoint_arn: str | None = None
    variant_name: str = defaults.VARIANT_NAME
    invocation_timeout_seconds: int = defaults.INVOCATION_TIMEOUT_SECONDS
    request_ttl_seconds: int = defaults.REQUEST_TTL_SECONDS
    dispatch_lease_seconds: int = defaults.dispatch_lease_seconds()
    url_fetch_timeout_seconds: int = defaults.URL_FETCH_TIMEOUT_SECONDS
    batch_size: int = defaults.INVOKER_BATCH_SIZE
    max_concurrency: int = defaults.INVOKER_MAX_CONCURRENCY
    processor_slots: int = defaults.PROCESSOR_MAX_CONCURRENCY
    admission_lease_seconds: int = defaults.processor_admission_lease_seconds()
    admission_retry_seconds: int = defaults.ADMISSION_RETRY_SECONDS
    memory_mb: int = defaults.INVOKER_MEMORY_MB
    timeout_seconds: int = defaults.INVOKER_TIMEOUT_SECONDS


class Invoker(Construct):
    """Reads the job queue and routes each job: CPU processor (async invoke) or the GPU endpoint. A job submitted
    by URL has its document fetched first and stored under ``documents/``."""

    def __init__(self, scope: Construct, construct_id: str, props: InvokerProps) -> None:
        super().__init__(scope, construct_id)
        bucket, table = props.common.bucket, props.common.table
        environment = {
            ENV.MAX_RECEIVE_COUNT: str(props.max_receive_count),
            ENV.DISPATCH_LEASE_SECONDS: str(props.dispatch_lease_seconds),
            ENV.URL_FETCH_TIMEOUT_SECONDS: str(props.url_fetch_timeout_seconds),
        }
        if props.processor is not None:
            environment[ENV.PROCESSOR_FUNCTION] = props.processor.function_name
            environment[ENV.PROCESSOR_SLOTS] = str(props.processor_slots)
            environment[ENV.ADMISSION_LEASE_SECONDS] = str(props.admission_lease_seconds)
            environment[ENV.ADMISSION_RETRY_SECONDS] = str(props.admission_retry_seconds)
            environment[ENV.QUEUE_URL] = props.queue.queue_url
        if props.endpoint_name is not None:
            environment[ENV.ENDPOINT_NAME] = props.endpoint_name
            environment[ENV.VARIANT_NAME] = props.variant_name
            environment[ENV.INVOCATION_TIMEOUT_SECONDS] = str(props.invocation_timeout_seconds)
            environment[ENV.REQUEST_TTL_SECONDS] = str(props.request_ttl_seconds)
        # 1. Function: it fails the jobs it cannot dispatch.
        self._fn = PlatformFunction(
            self,
            "Invoker",
            PlatformFunctionProps(
                common=props.common,
                description="OCR platform invoker: routes each queued job to the CPU processor or the GPU endpoint",
                handler=INVOKER_HANDLER,
                memory_mb=props.memory_mb,
                timeout_seconds=props.timeout_seconds,
                service_name="ocr-invoker",
                environment=environment,
                finishes_jobs=True,
                concurrency_bound=(
                    f"Bounded by its SQS event source's MaximumConcurrency ({props.max_concurrency}, PlatformConfig."
                    "invoker_max_concurrency): jobs beyond it wait in the job queue, never throttled."
                ),
                failed_events=(
                    "Invoked by an SQS event source mapping, which a function DLQ does not apply to (Lambda uses "
                    "DeadLetterConfig only for asynchronous invocations): a job message it fails on returns to the job "
                    "queue and, after max_receive_count receives, moves to the queue's DLQ, whose consumer fails the job."
                ),
                public_internet=(
                    "Outside the stage's VPC by design: it fetches the documents submitted by URL from any public "
                    "https:// host, which the VPC's isolated subnets cannot reach (a NAT gateway, $0.045 an hour per AZ, "
                    "would open the internet to every function). ocr_platform.core.safe_http admits only hosts that resolve "
                    "to public addresses, checked after DNS and at every redirect, and caps the time and size of a fetch."
                ),
            ),
        )
        role = self._fn.role
        # 2. Permissions: move the job; store a document fetched from its URL; start the CPU processor; scale out,
        #    invoke the endpoint with the job's document.
        allow(role, ["dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:PutItem"], [table.table_arn])
        allow(
            role,
            ["s3:PutObject", "s3:AbortMultipartUpload"],
            [bucket.arn_for_objects(f"{DOCUMENTS_PREFIX}*")],
            reason="Key-prefix scope: a document submitted by URL is fetched once and stored as "
            "documents/{job_id}/{file}; job ids are only known at run time.",
        )
        if props.processor is not None:
            allow(role, ["lambda:InvokeFunction"], [props.processor.function_arn])
            # A job that found every processor slot taken goes back to its own queue as a new message.
            allow(role, ["sqs:SendMessage"], [props.queue.queue_arn])
        if props.endpoint_arn is not None:
            allow(
                role,
                [
                    "sagemaker:DescribeEndpoint",
                    "sagemaker:UpdateEndpointWeightsAndCapacities",
                    "sagemaker:InvokeEndpointAsync",
                ],
                [props.endpoint_arn],
            )
        # 3. Event source: the job queue, partial batch failures reported per message, at most
        #    ``max_concurrency`` invokers at once.
        self._fn.function.add_event_source(
            event_sources.SqsEventSource(
                props.queue,
                batch_size=props.batch_size,
                report_batch_item_failures=True,
                max_concurrency=props.max_concurrency,
            )
        )

    @property
    def function(self) -> lambda_.Function:
        return self._fn.function

    @property
    def environment(self) -> Mapping[str, str]:
        return self._fn.environment
