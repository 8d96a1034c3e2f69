"""The zip-packaged control functions: the routing invoker and the completion handler."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from ocr_infra.functions import (
    COMPLETION_HANDLER,
    INVOKER_HANDLER,
    PlatformFunction,
    PlatformFunctionProps,
)
from ocr_infra.secure_defaults import allow
from ocr_platform.settings import ENV
from ocr_platform.storage import (
    ASYNC_FAILURES_PREFIX,
    ASYNC_OUTPUTS_PREFIX,
    ASYNC_REQUESTS_PREFIX,
    RESULTS_PREFIX,
)


@dataclass(frozen=True)
class CompletionHandlerProps:
    """Props of :class:`CompletionHandler`.

    Attributes:
        bucket / table: the platform bucket and jobs table.
        topics: the SageMaker success and error topics it subscribes to.
        code / layers: the ``lambdas/`` asset and the Powertools layer.
        memory_mb / timeout_seconds: 256 MB, 5 min (copies one result object, updates one item).
        job_ttl_days: ``OCR_JOB_TTL_DAYS``.
        log_retention: retention of its logs.
    """

    bucket: s3.IBucket
    table: dynamodb.ITable
    topics: Sequence[sns.ITopic]
    code: lambda_.Code
    layers: Sequence[lambda_.ILayerVersion] = field(default_factory=tuple)
    memory_mb: int = 256
    timeout_seconds: int = 300
    job_ttl_days: int = 30
    log_retention: logs.RetentionDays = logs.RetentionDays.ONE_MONTH


class CompletionHandler(Construct):
    """Finishes jobs run elsewhere: SageMaker notifications and the CPU processor's failure records.

    Subscribed to the SageMaker success and error topics; the CPU processor's on-failure destination
    invokes it directly (see :class:`ocr_infra.cpu_backend.CpuBackend`).
    """

    def __init__(self, scope: Construct, construct_id: str, props: CompletionHandlerProps) -> None:
        super().__init__(scope, construct_id)
        # 1. Function.
        self._fn = PlatformFunction(
            self,
            "Completion",
            PlatformFunctionProps(
                description="OCR platform completion: SageMaker notifications and processor failures -> job finished",
                code=props.code,
                handler=COMPLETION_HANDLER,
                layers=props.layers,
                memory_mb=props.memory_mb,
                timeout_seconds=props.timeout_seconds,
                service_name="ocr-completion",
                environment={
                    ENV.TABLE_NAME: props.table.table_name,
                    ENV.BUCKET_NAME: props.bucket.bucket_name,
                    ENV.JOB_TTL_DAYS: str(props.job_ttl_days),
                },
                log_retention=props.log_retention,
            ),
        )
        role = self._fn.role
        # 2. Permissions: read async outputs and failures, publish result.json, finish the job.
        allow(
            role,
            ["s3:GetObject"],
            [
                props.bucket.arn_for_objects(f"{ASYNC_OUTPUTS_PREFIX}*"),
                props.bucket.arn_for_objects(f"{ASYNC_FAILURES_PREFIX}*"),
            ],
            reason="Key-prefix scope: SageMaker names each async output and failure object per request; the "
            "completion function reads only those two prefixes.",
        )
        allow(
            role,
            ["s3:PutObject"],
            [props.bucket.arn_for_objects(f"{RESULTS_PREFIX}*")],
            reason="Key-prefix scope: the completion function writes results/{job_id}/ for whichever job finished.",
        )
        allow(role, ["dynamodb:GetItem", "dynamodb:UpdateItem"], [props.table.table_arn])
        # 3. Subscriptions: the SageMaker success and error topics.
        for topic in props.topics:
            topic.add_subscription(subscriptions.LambdaSubscription(self._fn.function))

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
        queue: the OCR job queue (its DLQ takes messages after ``max_receive_count`` receives).
        bucket / table: the platform bucket and jobs table.
        code / layers: the ``lambdas/`` asset and the Powertools layer.
        max_receive_count: ``OCR_MAX_RECEIVE_COUNT``: on the last receive a job that still cannot be
            dispatched is FAILED instead of silently dead-lettered.
        processor: the CPU processor it invokes asynchronously (``None`` when no CPU model is deployed).
        endpoint_name / endpoint_arn / variant_name: the GPU endpoint (``None`` when not deployed).
        invocation_timeout_seconds: ``OCR_INVOCATION_TIMEOUT_SECONDS`` sent with InvokeEndpointAsync.
        batch_size: messages per invocation (default 1: one job, one invocation).
        memory_mb / timeout_seconds: 256 MB, 60 s.
        job_ttl_days: ``OCR_JOB_TTL_DAYS``.
        log_retention: retention of its logs.
    """

    queue: sqs.IQueue
    bucket: s3.IBucket
    table: dynamodb.ITable
    code: lambda_.Code
    layers: Sequence[lambda_.ILayerVersion] = field(default_factory=tuple)
    max_receive_count: int = 3
    processor: lambda_.IFunction | None = None
    endpoint_name: str | None = None
    endpoint_arn: str | None = None
    variant_name: str = "AllTraffic"
    invocation_timeout_seconds: int = 3600
    batch_size: int = 1
    memory_mb: int = 256
    timeout_seconds: int = 60
    job_ttl_days: int = 30
    log_retention: logs.RetentionDays = logs.RetentionDays.ONE_MONTH


class Invoker(Construct):
    """Reads the job queue and routes each job: CPU processor (async invoke) or the GPU endpoint."""

    def __init__(self, scope: Construct, construct_id: str, props: InvokerProps) -> None:
        super().__init__(scope, construct_id)
        environment = {
            ENV.TABLE_NAME: props.table.table_name,
            ENV.BUCKET_NAME: props.bucket.bucket_name,
            ENV.MAX_RECEIVE_COUNT: str(props.max_receive_count),
            ENV.JOB_TTL_DAYS: str(props.job_ttl_days),
        }
        if props.processor is not None:
            environment[ENV.PROCESSOR_FUNCTION] = props.processor.function_name
        if props.endpoint_name is not None:
            environment[ENV.ENDPOINT_NAME] = props.endpoint_name
            environment[ENV.VARIANT_NAME] = props.variant_name
            environment[ENV.INVOCATION_TIMEOUT_SECONDS] = str(props.invocation_timeout_seconds)
        # 1. Function.
        self._fn = PlatformFunction(
            self,
            "Invoker",
            PlatformFunctionProps(
                description="OCR platform invoker: routes each queued job to the CPU processor or the GPU endpoint",
                code=props.code,
                handler=INVOKER_HANDLER,
                layers=props.layers,
                memory_mb=props.memory_mb,
                timeout_seconds=props.timeout_seconds,
                service_name="ocr-invoker",
                environment=environment,
                log_retention=props.log_retention,
            ),
        )
        role = self._fn.role
        # 2. Permissions: move the job; start the CPU processor; scale out, stage the request, invoke the endpoint.
        allow(role, ["dynamodb:GetItem", "dynamodb:UpdateItem"], [props.table.table_arn])
        if props.processor is not None:
            allow(role, ["lambda:InvokeFunction"], [props.processor.function_arn])
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
            allow(
                role,
                ["s3:PutObject"],
                [props.bucket.arn_for_objects(f"{ASYNC_REQUESTS_PREFIX}*")],
                reason="Key-prefix scope: the invoker writes one request object per job, async/requests/{job_id}.json.",
            )
        # 3. Event source: the job queue, partial batch failures reported per message.
        self._fn.function.add_event_source(
            event_sources.SqsEventSource(
                props.queue,
                batch_size=props.batch_size,
                report_batch_item_failures=True,
            )
        )

    @property
    def function(self) -> lambda_.Function:
        return self._fn.function

    @property
    def environment(self) -> Mapping[str, str]:
        return self._fn.environment
