"""The functions that end jobs nothing else will: the DLQ consumer and the stuck-job sweeper."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from aws_cdk import Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as events_targets
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from ocr_infra.control_functions import EndpointRequests, allow_finishing_async_inferences, allow_splitting_endpoint_jobs
from ocr_infra.platform_function import (
    DLQ_CONSUMER_HANDLER,
    SWEEPER_HANDLER,
    CommonFunctionProps,
    PlatformFunction,
    PlatformFunctionProps,
)
from ocr_infra.secure_defaults import allow
from ocr_platform.core import defaults
from ocr_platform.core.s3_layout import DEAD_LETTERS_PREFIX
from ocr_platform.core.settings import ENV


@dataclass(frozen=True)
class JobRecoveryProps:
    """Props of :class:`JobRecovery`.

    Attributes:
        common: what every function shares (table, bucket, zip code and layers, TTL, log retention); the
            DLQ consumer archives under the bucket's ``dead-letters/``.
        dead_letter_queue: the job queue's DLQ, consumed by the DLQ consumer (batches of 10, partial
            batch failures: a record that cannot be handled yet stays on the DLQ).
        status_index_arn: the status/time GSI the sweeper queries.
        notification_index_arn: the notification outbox GSI the sweeper queries for finished jobs whose
            completion event is still pending (their function crashed before publishing it); it publishes them.
        queued_deadline_seconds / lambda_deadline_seconds / sagemaker_deadline_seconds: how long a job
            may stay QUEUED, or PROCESSING on each backend, before the sweeper fails it ``timed_out``
            (``PlatformConfig``'s ``*_deadline_seconds``, derived in ``ocr_platform.core.defaults``).
        sweeper_interval_minutes: the sweeper's schedule (15). Runs that overlap are harmless: every
            transition is a conditional UpdateItem.
        settle_grace_seconds: how long after SageMaker wrote a GPU job's outcome the sweeper settles the
            job from S3 (``PlatformConfig.settle_grace_seconds``).
        dlq_consumer_memory_mb: 256 (it archives one small JSON object and updates one item per record);
            its timeout is ``defaults.DLQ_CONSUMER_TIMEOUT_SECONDS`` (60), which also sizes the DLQ's
            visibility timeout, so it is not a prop.
        sweeper_memory_mb / sweeper_timeout_seconds: 512 MB (it may settle a GPU job from an output as large
            as the completion function admits), 300 s.
    """

    common: CommonFunctionProps
    dead_letter_queue: sqs.IQueue
    status_index_arn: str
    notification_index_arn: str
    queued_deadline_seconds: int = defaults.queued_deadline_seconds()
    lambda_deadline_seconds: int = defaults.lambda_deadline_seconds()
    sagemaker_deadline_seconds: int = defaults.sagemaker_deadline_seconds()
    sweeper_interval_minutes: int = defaults.SWEEPER_INTERVAL_MINUTES
    settle_grace_seconds: int = defaults.SETTLE_GRACE_SECONDS
    dlq_consumer_memory_mb: int = defaults.DLQ_CONSUMER_MEMORY_MB
    sweeper_memory_mb: int = defaults.SWEEPER_MEMORY_MB
    sweeper_timeout_seconds: int = defaults.SWEEPER_TIMEOUT_SECONDS


class JobRecovery(Construct):
    """Every job ends: dead-lettered messages fail their jobs, stuck jobs are swept to ``timed_out``; and every
    finished job's completion event goes out: the sweeper publishes those whose function crashed first."""

    def __init__(self, scope: Construct, construct_id: str, props: JobRecoveryProps) -> None:
        super().__init__(scope, construct_id)
        bucket, table = props.common.bucket, props.common.table
        # 1. DLQ consumer: archive each dead-lettered message under dead-letters/ and fail its job
        #    (conditional UpdateItem: QUEUED/PROCESSING or no item yet -> FAILED); the SQS grants come from
        #    the event source.
        self._dlq_consumer = PlatformFunction(
            self,
            "DlqConsumer",
            PlatformFunctionProps(
                common=props.common,
                description="OCR platform DLQ consumer: archive dead-lettered job messages and fail their jobs",
                handler=DLQ_CONSUMER_HANDLER,
                memory_mb=props.dlq_consumer_memory_mb,
                timeout_seconds=defaults.DLQ_CONSUMER_TIMEOUT_SECONDS,
                service_name="ocr-dlq-consumer",
                finishes_jobs=True,
                concurrency_bound=(
                    f"Bounded by its SQS event source's MaximumConcurrency ({defaults.DLQ_CONSUMER_MAX_CONCURRENCY}, the "
                    "least SQS allows): dead-lettered messages beyond it wait on the DLQ, never throttled."
                ),
                failed_events=(
                    "Invoked by an SQS event source mapping on the job queue's DLQ, which a function DLQ does not apply "
                    "to (Lambda uses DeadLetterConfig only for asynchronous invocations): a record it fails on stays on "
                    "that DLQ (14 days, alarmed on any message) and is received again; partial batch failures keep the "
                    "rest of the batch moving."
                ),
            ),
        )
        allow(
            self._dlq_consumer.role,
            ["s3:PutObject"],
            [bucket.arn_for_objects(f"{DEAD_LETTERS_PREFIX}*")],
            reason="Key-prefix scope: one archive object per dead-lettered message id, known only at run time.",
        )
        allow(self._dlq_consumer.role, ["dynamodb:UpdateItem"], [table.table_arn])
        self._dlq_consumer.function.add_event_source(
            event_sources.SqsEventSource(
                props.dead_letter_queue, batch_size=10, report_batch_item_failures=True,
                max_concurrency=defaults.DLQ_CONSUMER_MAX_CONCURRENCY,
            )
        )

        # 2. Sweeper: query the status GSI for QUEUED and PROCESSING jobs, fail those past their deadline; query
        #    the notification outbox for finished jobs whose event is still pending, publish them.
        self._sweeper = PlatformFunction(
            self,
            "Sweeper",
            PlatformFunctionProps(
                common=props.common,
                description="OCR platform sweeper: settle GPU jobs from S3, fail jobs stuck past their deadline, "
                "republish pending completion events",
                handler=SWEEPER_HANDLER,
                memory_mb=props.sweeper_memory_mb,
                timeout_seconds=props.sweeper_timeout_seconds,
                service_name="ocr-sweeper",
                # Settling a GPU job reads the endpoint's answer, spooled to /tmp like the completion function's.
                ephemeral_storage_mb=defaults.answer_spool_storage_mb(),
                environment={
                    ENV.QUEUED_DEADLINE_SECONDS: str(props.queued_deadline_seconds),
                    ENV.LAMBDA_DEADLINE_SECONDS: str(props.lambda_deadline_seconds),
                    ENV.SAGEMAKER_DEADLINE_SECONDS: str(props.sagemaker_deadline_seconds),
                    ENV.SETTLE_GRACE_SECONDS: str(props.settle_grace_seconds),
                },
                finishes_jobs=True,
                # No retries: the next scheduled run sweeps again; a failed run is parked, so its alarm says so.
                async_retry_attempts=0,
                concurrency_bound=(
                    f"Runs on its schedule, every {props.sweeper_interval_minutes} minutes (PlatformConfig."
                    "sweeper_interval_minutes), so one at a time, two where a run outlasts the interval; every transition "
                    "it makes is a conditional write, so an overlap is harmless."
                ),
            ),
        )
        allow(self._sweeper.role, ["dynamodb:Query"], [props.status_index_arn, props.notification_index_arn])
        allow(self._sweeper.role, ["dynamodb:GetItem", "dynamodb:UpdateItem"], [table.table_arn])
        # It settles a GPU job whose notification was lost from the outcome SageMaker wrote, as the completion
        # function would: read the async outputs and failures, publish result.json.
        allow_finishing_async_inferences(self._sweeper.role, bucket, "the sweeper (settling jobs whose notification was lost)")
        # 3. Schedule: every sweeper_interval_minutes, no retries (the next run sweeps again).
        self._sweeper_rule = events.Rule(
            self,
            "SweeperSchedule",
            description="Fail OCR jobs stuck past their deadline",
            schedule=events.Schedule.rate(Duration.minutes(props.sweeper_interval_minutes)),
            targets=[
                events_targets.LambdaFunction(self._sweeper.function, retry_attempts=0, dead_letter_queue=props.common.parked_events)
            ],
        )

    def allow_splitting_endpoint_jobs(self, bucket: s3.IBucket, endpoint: EndpointRequests) -> None:
        """Let the sweeper settle a split job as the completion function would: send chunk requests, merge."""
        allow_splitting_endpoint_jobs(self._sweeper, bucket, endpoint, "the sweeper (settling jobs whose notification was lost)")

    @property
    def dlq_consumer_function(self) -> lambda_.Function:
        return self._dlq_consumer.function

    @property
    def dlq_consumer_environment(self) -> Mapping[str, str]:
        return self._dlq_consumer.environment

    @property
    def sweeper_function(self) -> lambda_.Function:
        return self._sweeper.function

    @property
    def sweeper_environment(self) -> Mapping[str, str]:
        return self._sweeper.environment

    @property
    def sweeper_rule(self) -> events.Rule:
        return self._sweeper_rule
