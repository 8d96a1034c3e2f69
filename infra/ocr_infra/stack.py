"""The core stack of a stage: every resource but the GPU endpoint, composed from the constructs of this package.

The GPU route's endpoint, scaling and scale-in are the GPU stack (``ocr_infra.gpu_stack``), which depends on this
one; this stack refers to the endpoint only by names fixed in advance, so it deploys, and serves the CPU routes,
whether or not the GPU stack exists.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Aws, CfnOutput, Stack, Tags
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_s3 as s3
from constructs import Construct

from ocr_infra.completion_events import CompletionEventTargets
from ocr_infra.config import PlatformConfig
from ocr_infra.console_site import ConsoleSite, ConsoleSiteProps
from ocr_infra.control_functions import (
    CompletionHandler,
    CompletionHandlerProps,
    EndpointRequests,
    Invoker,
    InvokerProps,
)
from ocr_infra.cpu_backend import CpuBackend, CpuBackendProps
from ocr_infra.data_stores import (
    DocumentBucket,
    DocumentBucketProps,
    JobTable,
    JobTableProps,
)
from ocr_infra.drop_folder import DropFolder, DropFolderProps
from ocr_infra.encryption import PlatformKey, PlatformKeyProps
from ocr_infra.gpu_props import GpuResourceNames
from ocr_infra.job_notifications import (
    WebhookDeliverer,
    WebhookDelivererProps,
    WebhookQueue,
    WebhookQueueProps,
)
from ocr_infra.jobs_api import JobsApi, JobsApiProps
from ocr_infra.messaging import (
    JobQueue,
    JobQueueProps,
    NotificationTopics,
    NotificationTopicsProps,
    ParkedEvents,
    ParkedEventsProps,
)
from ocr_infra.monitoring import (
    EndpointMetricsProps,
    FailedJobRateAlarm,
    FailedJobRateAlarmProps,
    OperationsDashboard,
    OperationsDashboardProps,
)
from ocr_infra.network import PlatformVpc, PlatformVpcProps
from ocr_infra.platform_function import RETENTION_BY_DAYS, CommonFunctionProps, lambdas_code, powertools_layer
from ocr_infra.recovery_functions import JobRecovery, JobRecoveryProps
from ocr_platform.core import defaults
from ocr_platform.core.settings import metrics_namespace

#: Output keys the client reads with CloudFormation ``describe_stacks`` (a contract: do not rename).
OUTPUT_BUCKET_NAME = "BucketName"
OUTPUT_QUEUE_URL = "QueueUrl"
OUTPUT_TABLE_NAME = "TableName"
OUTPUT_ENDPOINT_NAME = "EndpointName"
OUTPUT_DLQ_URL = "DlqUrl"
#: Output keys of the completion events and webhooks, which receivers and operators read (a contract too).
OUTPUT_EVENT_BUS_NAME = "EventBusName"
OUTPUT_WEBHOOK_SECRET_ARN = "WebhookSecretArn"
OUTPUT_WEBHOOK_DLQ_URL = "WebhookDlqUrl"
#: The stage's KMS key, with ``customer_managed_key`` only: what direct clients need a grant on.
OUTPUT_ENCRYPTION_KEY_ARN = "EncryptionKeyArn"


def tag_stage(stack: Stack, stage: str) -> None:
    """The project and stage tags of every resource of a stage's stacks."""
    for key, value in (("project", "ocr-platform"), ("stage", stage)):
        # ScalableTarget and Dashboard tags are newer than cfn-lint's schema and add nothing to cost reports.
        Tags.of(stack).add(
            key, value, exclude_resource_types=["AWS::ApplicationAutoScaling::ScalableTarget", "AWS::CloudWatch::Dashboard"]
        )


class OcrPlatformStack(Stack):
    """S3 + DynamoDB + SQS -> invoker -> CPU processor Lambda | SageMaker async endpoint -> completion; the
    drop folder (S3 events -> ingest), the jobs API (Cognito + HTTP API) and the web console (CloudFront);
    completion events (EventBridge) and signed webhooks (SQS -> deliverer) for every finished job.

    Args:
        config: the platform settings (``PlatformConfig``); the stack name defaults to ``config.stack_name``.
        **kwargs: passed to ``Stack`` (``env``, ``stack_name``, ``synthesizer``, ...).
    """

    def __init__(self, scope: Construct, construct_id: str, *, config: PlatformConfig, **kwargs: Any) -> None:
        kwargs.setdefault("stack_name", config.stack_name)
        kwargs.setdefault(
            "description",
            f"Serverless OCR platform ({config.stage}): PP-OCRv5 / PP-StructureV3 on Lambda, PaddleOCR-VL on a "
            "scale-to-zero SageMaker async endpoint.",
        )
        super().__init__(scope, construct_id, **kwargs)
        self._config = cfg = config
        tag_stage(self, cfg.stage)

        # 0. The stage's own KMS key and VPC, each only where the config asks for it.
        endpoint_log_group = GpuResourceNames(cfg.endpoint_name).log_group if "sagemaker" in cfg.backends else None
        key_props = PlatformKeyProps(retain=cfg.retain_data, endpoint_log_group=endpoint_log_group)
        self.key = PlatformKey(self, "Encryption", key_props) if cfg.customer_managed_key else None
        stage_key = self.key.key if self.key else None
        self.network = (
            PlatformVpc(
                self,
                "Network",
                PlatformVpcProps(
                    backends=cfg.backends, flow_log_retention=RETENTION_BY_DAYS[cfg.log_retention_days], encryption_key=stage_key
                ),
            )
            if cfg.vpc
            else None
        )

        # 1. Storage: platform bucket (+ access logs) and the jobs table.
        self.documents = DocumentBucket(
            self,
            "Storage",
            DocumentBucketProps(
                async_io_expiry_days=cfg.async_io_expiry_days,
                access_log_retention_days=cfg.access_log_retention_days,
                versioned=cfg.versioned_bucket,
                retain=cfg.retain_data,
                encryption_key=stage_key,
            ),
        )
        self.jobs = JobTable(self, "Jobs", JobTableProps(retain=cfg.retain_data, encryption_key=stage_key))
        bucket, table = self.documents.bucket, self.jobs.table

        # 2. Messaging: job queue + DLQ, encrypted topics, the webhook queue; the DLQ alarms go to the operations topic.
        self.queue = JobQueue(
            self,
            "JobQueue",
            JobQueueProps(
                visibility_timeout_seconds=cfg.queue_visibility_timeout_seconds,
                max_receive_count=cfg.max_receive_count,
                retention_days=cfg.queue_retention_days,
                encryption_key=stage_key,
            ),
        )
        self.topics = NotificationTopics(self, "Topics", NotificationTopicsProps(alarm_email=cfg.alarm_email, key=stage_key))
        self.topics.notify(self.topics.alarm_topic, self.queue.dead_letter_alarm)
        # Parked events: every asynchronous hand-over's last stop instead of a silent drop; alarmed.
        self.parked_events = ParkedEvents(self, "ParkedEvents", ParkedEventsProps(encryption_key=stage_key))
        self.topics.notify(self.topics.alarm_topic, self.parked_events.alarm)
        # Completion events go to the stage's bus; webhooks to their queue (its DLQ alarmed like the job DLQ),
        # signed with the stage's secret.
        self.webhooks = WebhookQueue(
            self,
            "Webhooks",
            WebhookQueueProps(
                max_receive_count=defaults.webhook_queue_max_receive_count(cfg.webhook_delivery_attempts),
                retain=cfg.retain_data,
                encryption_key=stage_key,
            ),
        )
        self.topics.notify(self.topics.alarm_topic, self.webhooks.dead_letter_alarm)
        completion_events = CompletionEventTargets.on_bus(self, cfg.event_bus_name, self.webhooks.queue)

        # What every function shares: the data resources, the lean zip asset and the Powertools layer, the
        # job TTL, the log retention, the job metrics' namespace, where asynchronous hand-overs park events,
        # and where the functions that finish jobs publish their completion events and queue their webhooks.
        self.common = common = CommonFunctionProps(
            table=table,
            bucket=bucket,
            code=lambdas_code(),
            layers=[powertools_layer(self, cfg.powertools_layer_version)],
            job_ttl_days=cfg.job_ttl_days,
            max_failed_page_percent=cfg.max_failed_page_percent,
            log_retention=RETENTION_BY_DAYS[cfg.log_retention_days],
            metrics_namespace=metrics_namespace(cfg.stage),
            parked_events=self.parked_events.queue,
            completion_events=completion_events,
            encryption_key=stage_key,
            network=self.network.network if self.network else None,
        )

        # 3. Completion handler: SageMaker notifications and CPU processor failures finish jobs.
        self.completion = CompletionHandler(
            self,
            "CompletionHandler",
            CompletionHandlerProps(
                common=common,
                topics=[self.topics.success_topic, self.topics.error_topic],
                memory_mb=cfg.completion_memory_mb,
                timeout_seconds=cfg.completion_timeout_seconds,
            ),
        )

        # 4. CPU backend (PP-OCRv5, PP-StructureV3): container-image processor, failures to completion.
        self.cpu: CpuBackend | None = None
        if "lambda" in cfg.backends:
            self.cpu = CpuBackend(
                self,
                "CpuBackend",
                CpuBackendProps(
                    common=common,
                    on_failure=self.completion.function,
                    memory_mb=cfg.processor_memory_mb,
                    ephemeral_storage_mb=cfg.processor_ephemeral_storage_mb,
                    timeout_seconds=cfg.processor_timeout_seconds,
                    retry_attempts=cfg.processor_retry_attempts,
                    max_event_age_hours=cfg.processor_max_event_age_hours,
                    engine_fallback=cfg.engine_fallback,
                    bake_models=cfg.processor_bake_models,
                    pages_per_chunk=cfg.cpu_pages_per_chunk,
                    max_pages=cfg.max_pages,
                    work_budget=cfg.work_budget,
                    max_concurrency=cfg.processor_max_concurrency,
                    concurrency_mode=cfg.processor_concurrency_mode,
                    admission_lease_seconds=cfg.admission_lease_seconds,
                ),
            )

        # 5. GPU route (PaddleOCR-VL): the endpoint is the GPU stack's; this stack knows it by name only.
        gpu_names = GpuResourceNames(cfg.endpoint_name) if "sagemaker" in cfg.backends else None
        endpoint_arn = (
            self.format_arn(service="sagemaker", resource="endpoint", resource_name=cfg.endpoint_name.lower()) if gpu_names else None
        )
        if gpu_names:
            # The GPU stack's scale-in subscription and re-check rule park what they cannot deliver here.
            self.parked_events.accept_dead_letters("sns", [gpu_names.topic_arn(self)])
            self.parked_events.accept_dead_letters("events", [gpu_names.rule_arn(self)])

        # 6. Invoker: the queue's consumer, routing to whichever backends are deployed.
        self.invoker = Invoker(
            self,
            "Invoker",
            InvokerProps(
                common=common,
                queue=self.queue.queue,
                max_receive_count=cfg.max_receive_count,
                processor=self.cpu.function if self.cpu else None,
                endpoint_name=cfg.endpoint_name if gpu_names else None,
                endpoint_arn=endpoint_arn,
                variant_name=cfg.variant_name,
                invocation_timeout_seconds=cfg.invocation_timeout_seconds,
                request_ttl_seconds=cfg.request_ttl_seconds,
                dispatch_lease_seconds=cfg.dispatch_lease_seconds,
                url_fetch_timeout_seconds=cfg.url_fetch_timeout_seconds,
                batch_size=cfg.invoker_batch_size,
                max_concurrency=cfg.invoker_max_concurrency,
                processor_slots=cfg.processor_slots,
                admission_lease_seconds=cfg.admission_lease_seconds,
                admission_retry_seconds=cfg.admission_retry_seconds,
                memory_mb=cfg.invoker_memory_mb,
                timeout_seconds=cfg.invoker_timeout_seconds,
            ),
        )

        # 6b. Drop folder: an object written under inbox/<model>/ becomes a job (S3 -> EventBridge -> ingest).
        self.drop_folder = DropFolder(self, "DropFolder", DropFolderProps(common=common, queue=self.queue.queue))

        # 6c. Web console: a private bucket behind CloudFront (OAC, HTTPS, security headers).
        self.console = ConsoleSite(
            self, "Console",
            ConsoleSiteProps(access_log_bucket=self.documents.access_log_bucket, retain=cfg.retain_data),
        )
        console_origins = (self.console.origin, *cfg.console_origins)
        # 6d. Jobs API: Cognito users, an HTTP API with a JWT authorizer on every route, its function (which queues
        #     the jobs submitted by URL itself); the console's origins may call it, and the browser's uploads and
        #     result downloads may reach the bucket from them.
        self.jobs_api = JobsApi(
            self, "JobsApi",
            JobsApiProps(common=common, owner_index_arn=self.jobs.owner_index_arn, queue=self.queue.queue,
                         inline_result_max_bytes=cfg.inline_result_max_bytes, retain=cfg.retain_data,
                         console_origins=console_origins),
        )
        bucket.add_cors_rule(
            allowed_methods=[s3.HttpMethods.POST, s3.HttpMethods.GET], allowed_origins=list(console_origins),
            allowed_headers=["*"], max_age=600,
        )

        # 7. Recovery: the DLQ consumer and the stuck-job sweeper end jobs nothing else would; the sweeper also
        #    publishes the completion events a crashed function left in the notification outbox.
        self.recovery = JobRecovery(
            self,
            "Recovery",
            JobRecoveryProps(
                common=common,
                dead_letter_queue=self.queue.dead_letter_queue,
                status_index_arn=self.jobs.status_index_arn,
                notification_index_arn=self.jobs.notification_index_arn,
                queued_deadline_seconds=cfg.queued_deadline_seconds,
                lambda_deadline_seconds=cfg.lambda_deadline_seconds,
                sagemaker_deadline_seconds=cfg.sagemaker_deadline_seconds,
                sweeper_interval_minutes=cfg.sweeper_interval_minutes,
                settle_grace_seconds=cfg.settle_grace_seconds,
            ),
        )

        # 7b. GPU fan-out: the completion function sends the chunk requests of a job the endpoint split, and
        #     the sweeper may have to, settling a split plan whose notification was lost.
        if gpu_names and endpoint_arn:
            endpoint = EndpointRequests(cfg.endpoint_name, endpoint_arn, cfg.invocation_timeout_seconds, cfg.request_ttl_seconds)
            self.completion.allow_splitting_endpoint_jobs(bucket, endpoint)
            self.recovery.allow_splitting_endpoint_jobs(bucket, endpoint)

        # 7c. Webhooks: the deliverer POSTs each queued webhook, signed, retries on the configured schedule and
        #     dead-letters what never got through.
        self.webhook_deliverer = WebhookDeliverer(
            self,
            "WebhookDeliverer",
            WebhookDelivererProps(
                common=common,
                webhooks=self.webhooks,
                first_retry_seconds=cfg.webhook_first_retry_seconds,
                max_retry_interval_seconds=cfg.webhook_max_retry_interval_seconds,
                retry_window_seconds=cfg.webhook_retry_window_seconds,
                max_concurrency=cfg.webhook_deliverer_max_concurrency,
            ),
        )

        # 8. Job outcome metrics: every function that finishes jobs counts them in the common namespace
        #    (``finishes_jobs``); the failed-job-rate alarm goes to the operations topic, like the DLQ alarm.
        self.failed_jobs = FailedJobRateAlarm(
            self,
            "FailedJobRate",
            FailedJobRateAlarmProps(
                namespace=common.metrics_namespace,
                threshold_percent=cfg.failed_job_rate_percent,
                min_jobs=cfg.failed_job_rate_min_jobs,
            ),
        )
        self.topics.notify(self.topics.alarm_topic, self.failed_jobs.alarm)

        # 8b. Operations dashboard: every alarm built above with its state, jobs by route and error code, pages per
        #     minute, latency per route, the CPU processor, the queues and the GPU endpoint. Dashboards are global
        #     to the account, so its name carries the region.
        self.dashboard = OperationsDashboard(
            self,
            "Operations",
            OperationsDashboardProps(
                namespace=common.metrics_namespace,
                routes=cfg.models,
                job_queue=self.queue.queue,
                dead_letter_queue=self.queue.dead_letter_queue,
                webhook_dead_letter_queue=self.webhooks.dead_letter_queue,
                parked_events=self.parked_events.queue,
                alarms=[
                    *(construct for construct in self.node.find_all() if isinstance(construct, cloudwatch.Alarm)),
                    *(
                        cloudwatch.Alarm.from_alarm_name(self, f"GpuAlarm{index}", name)
                        for index, name in enumerate((gpu_names.backlog_without_capacity_alarm, gpu_names.idle_alarm) if gpu_names else ())
                    ),
                ],
                failed_job_rate=self.failed_jobs.alarm,
                processor=self.cpu.function if self.cpu else None,
                endpoint=EndpointMetricsProps(cfg.endpoint_name, cfg.variant_name, cfg.idle_backlog_threshold) if gpu_names else None,
                dashboard_name=f"{cfg.stack_name}-{Aws.REGION}",
            ),
        )
        self._output("DashboardName", self.dashboard.dashboard.dashboard_name, "CloudWatch dashboard of this stage's operations")

        # 9. Outputs: what clients and frontends need (read with describe_stacks).
        self._output(OUTPUT_BUCKET_NAME, bucket.bucket_name, "Bucket for documents/, results/, models/ and async/")
        self._output(OUTPUT_QUEUE_URL, self.queue.queue.queue_url, "Send OCR job messages here")
        self._output(OUTPUT_TABLE_NAME, table.table_name, "DynamoDB jobs table (partition key job_id)")
        if gpu_names:
            self._output(
                OUTPUT_ENDPOINT_NAME, cfg.endpoint_name, f"SageMaker async endpoint serving paddleocr-vl (stack {cfg.gpu_stack_name})"
            )
        self._output(OUTPUT_DLQ_URL, self.queue.dead_letter_queue.queue_url, "Dead-letter queue of the job queue")
        self._output("Models", ",".join(cfg.models), "Routing keys this stage accepts")
        self._output("ConsoleUrl", self.console.origin, "The web console (sign in as an invited user of UserPoolId)")
        self._output("ConsoleBucketName", self.console.bucket.bucket_name, "ocr-platform console publish uploads the console here")
        self._output("ConsoleDistributionId", self.console.distribution.distribution_id, "The console's CloudFront distribution")
        self._output("ApiUrl", self.jobs_api.api.api_endpoint, "Jobs API (every route needs a user pool ID token)")
        self._output("UserPoolId", self.jobs_api.user_pool.user_pool_id, "Cognito user pool of the jobs API's users")
        self._output("UserPoolClientId", self.jobs_api.user_pool_client.user_pool_client_id, "The console's app client")
        if self.cpu:
            self._output("ProcessorFunctionName", self.cpu.function.function_name, "CPU processor Lambda")
        self._output(
            "AlarmTopicArn", self.topics.alarm_topic.topic_arn, "Operations alarms (subscribe to get notified)"
        )
        self._output(OUTPUT_EVENT_BUS_NAME, cfg.event_bus_name, "EventBridge bus of the OCR Job Completed / Failed events")
        self._output(
            OUTPUT_WEBHOOK_SECRET_ARN, self.webhooks.secret.secret_arn,
            "The secret that signs every webhook; receivers verify X-OCR-Signature with it",
        )
        self._output(OUTPUT_WEBHOOK_DLQ_URL, self.webhooks.dead_letter_queue.queue_url, "Webhooks that were never delivered")
        if self.key:
            self._output(
                OUTPUT_ENCRYPTION_KEY_ARN, self.key.key.key_arn,
                "The stage's KMS key: clients that upload, send job messages or read results directly need "
                "kms:GenerateDataKey and kms:Decrypt on it",
            )

    def _output(self, key: str, value: str, description: str) -> None:
        CfnOutput(self, key, value=value, description=description)

    @property
    def config(self) -> PlatformConfig:
        return self._config
