"""The drop folder: an object written under ``inbox/<model>/[<language>/]`` becomes a job, with no other call."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as events_targets
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from ocr_infra.platform_function import INGEST_HANDLER, CommonFunctionProps, PlatformFunction, PlatformFunctionProps
from ocr_infra.secure_defaults import allow
from ocr_platform.core import defaults
from ocr_platform.core.s3_layout import DOCUMENTS_PREFIX, INBOX_PREFIX, UPLOADS_PREFIX
from ocr_platform.core.settings import ENV
from ocr_platform.inputs.inbox import inbox_event_pattern


@dataclass(frozen=True)
class DropFolderProps:
    """Props of :class:`DropFolder`.

    Attributes:
        common: what every function shares (table, bucket, zip code and layers, TTL, log retention, where
            asynchronous hand-overs park events). The bucket must send its events to EventBridge
            (:class:`ocr_infra.data_stores.DocumentBucket` turns that on).
        queue: the job queue the ingest function sends each job's message to.
        memory_mb / timeout_seconds: 256 MB, 60 s (one copy, one item, one message per object).
    """

    common: CommonFunctionProps
    queue: sqs.IQueue
    memory_mb: int = defaults.INGEST_MEMORY_MB
    timeout_seconds: int = defaults.INGEST_TIMEOUT_SECONDS


class DropFolder(Construct):
    """S3 "Object Created" events under ``inbox/`` (and ``uploads/``, the jobs API's) -> EventBridge rule ->
    the ingest function -> a job.

    The ingest function copies the object to ``documents/{job_id}/``, creates the job item ``QUEUED`` and
    sends its message to the job queue; from there the job runs as any other. The job id comes from the
    object (bucket, key, version or ETag), so S3's at-least-once events make one job.
    """

    def __init__(self, scope: Construct, construct_id: str, props: DropFolderProps) -> None:
        super().__init__(scope, construct_id)
        bucket, table = props.common.bucket, props.common.table
        # 1. Function: EventBridge invokes it asynchronously; Lambda's retries, then the event is parked.
        self._fn = PlatformFunction(
            self,
            "Ingest",
            PlatformFunctionProps(
                common=props.common,
                description="OCR platform drop folder: an object under inbox/<model>/ becomes a job",
                handler=INGEST_HANDLER,
                memory_mb=props.memory_mb,
                timeout_seconds=props.timeout_seconds,
                service_name="ocr-ingest",
                environment={ENV.QUEUE_URL: props.queue.queue_url},
                finishes_jobs=True,
                async_retry_attempts=defaults.ASYNC_RETRY_ATTEMPTS,
                concurrency_bound=(
                    "Runs once per object created under inbox/ or uploads/, for well under a second (one copy, one "
                    "item, one message), and only queues jobs, which the invoker's bound then admits; a burst of "
                    "uploads that Lambda throttles waits in EventBridge's retries and Lambda's asynchronous queue (hours), "
                    "it is not lost."
                ),
            ),
        )
        role = self._fn.role
        # 2. Permissions: read what was dropped, copy it to documents/, create the job, send its message.
        allow(
            role,
            ["s3:GetObject", "s3:GetObjectVersion"],
            [bucket.arn_for_objects(f"{INBOX_PREFIX}*"), bucket.arn_for_objects(f"{UPLOADS_PREFIX}*")],
            reason="Key-prefix scope: any object a user drops under inbox/, or uploads for a jobs API job under "
            "uploads/, is read once, to copy it (and a dropped file's ocr-features metadata, HeadObject).",
        )
        allow(
            role,
            ["s3:PutObject"],
            [bucket.arn_for_objects(f"{DOCUMENTS_PREFIX}*")],
            reason="Key-prefix scope: the copy goes to documents/{job_id}/; job ids are derived at run time.",
        )
        allow(role, ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"], [table.table_arn])
        allow(role, ["sqs:SendMessage"], [props.queue.queue_arn])
        # 3. Rule: the bucket's "Object Created" events under inbox/ -> the function (EventBridge retries the
        #    hand-over for up to a day; what it cannot hand over is parked).
        pattern = inbox_event_pattern(bucket.bucket_name)
        self._rule = events.Rule(
            self,
            "InboxObjectCreated",
            description="OCR drop folder: objects created under inbox/ become jobs",
            event_pattern=events.EventPattern(
                source=pattern["source"], detail_type=pattern["detail-type"], detail=pattern["detail"]
            ),
            targets=[events_targets.LambdaFunction(self._fn.function, dead_letter_queue=props.common.parked_events)],
        )

    @property
    def function(self) -> lambda_.Function:
        return self._fn.function

    @property
    def environment(self) -> Mapping[str, str]:
        return self._fn.environment

    @property
    def rule(self) -> events.Rule:
        return self._rule
