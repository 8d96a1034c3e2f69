"""Lambda functions: one construct for every function of the platform, zip or container image.

Each function gets its own execution role without AWS-managed policies and its own log group with a
retention period; the role may write only to that log group. Every function traces actively in X-Ray, so
one job can be followed across the functions that handled it (``ocr_platform.core.tracing``). Everything else a function may do is
granted by its owner through :func:`ocr_infra.secure_defaults.allow`. What all functions share (table,
bucket, zip code and layers, job TTL, log retention, metrics namespace, completion events) comes in one
:class:`CommonFunctionProps` the stack builds once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aws_cdk import Aws, CfnRule, CfnRuleAssertion, Duration, Fn, Size, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_destinations as destinations
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from ocr_infra.completion_events import CompletionEventTargets
from ocr_infra.config import POWERTOOLS_LAYER_ACCOUNT, POWERTOOLS_LAYER_PARTITION
from ocr_infra.network import FunctionNetwork
from ocr_infra.paths import LAMBDA_ASSET_EXCLUDES, LAMBDAS_DIR, ZIP_FUNCTION_EXCLUDES
from ocr_infra.secure_defaults import acknowledge_wildcards, allow, lambda_role, secure_log_group, skip_checkov
from ocr_platform.core import defaults
from ocr_platform.core.settings import ENV, metrics_namespace

#: The newest Python runtime; AwsSolutions-L1 checks it is the newest aws-cdk-lib knows.
PYTHON_RUNTIME = lambda_.Runtime.PYTHON_3_14
#: Handlers of the zip functions, in ``lambdas/`` (the lead's ``ocr_platform.handlers`` package).
INVOKER_HANDLER = "ocr_platform.handlers.invoker.handler"
COMPLETION_HANDLER = "ocr_platform.handlers.completion.handler"
SCALE_IN_HANDLER = "ocr_platform.handlers.scale_in.handler"
DLQ_CONSUMER_HANDLER = "ocr_platform.handlers.dlq_consumer.handler"
SWEEPER_HANDLER = "ocr_platform.handlers.sweeper.handler"
INGEST_HANDLER = "ocr_platform.handlers.ingest.handler"
API_HANDLER = "ocr_platform.handlers.api.handler"
WEBHOOK_DELIVERER_HANDLER = "ocr_platform.handlers.webhook_deliverer.handler"
#: What CDK grants a function with active tracing, on Resource "*".
TRACING_ACTIONS = ("xray:PutTraceSegments", "xray:PutTelemetryRecords")


#: What every role may do with the stage's KMS key (``CommonFunctionProps.encryption_key``): Lambda decrypts the
#: environment with the role; S3, SQS, DynamoDB and Secrets Manager use the key with the caller's permissions.
KEY_USE_ACTIONS = ("kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey", "kms:DescribeKey")
#: Read by ``ocr_platform.engines.settings``: ``off`` forbids fetching a model from PaddleX's hub.
MODEL_HUB_VARIABLE = "OCR_MODEL_HUB"

# The reasons checkov's findings on a function get where the stage's settings leave them open; each names the
# setting that closes it.
#: CKV_AWS_115, after the function's own bound (``PlatformFunctionProps.concurrency_bound``).
RESERVED_CONCURRENCY_NOTE = (
    "Reserved concurrency is not the bound: it takes its executions from the account's quota whether used or not, and "
    "a new account's quota (it can be 10) cannot spare any, since Lambda keeps part of it unreserved, so the deploy "
    "would fail. processor_concurrency_mode=reserved reserves the processor's where the account allows it."
)
#: CKV_AWS_116 on a function invoked asynchronously (``PlatformFunctionProps.async_retry_attempts``).
PARKED_EVENTS_REASON = (
    "Invoked asynchronously with an on-failure destination instead of a DLQ: after its retries Lambda sends the event, "
    "with the error and the request context, to the parked-events SQS queue (its EventInvokeConfig), alarmed on any "
    "message. A DeadLetterConfig would park the same event a second time, without that context."
)
#: CKV_AWS_117 on every function of a stage without a VPC (``PlatformConfig.vpc``).
NO_VPC_REASON = (
    "No VPC by default (PlatformConfig.vpc=false): the function calls only AWS APIs, over TLS with requests signed by "
    "its own least-privilege role, and reaches no private host or database, so a VPC would not narrow what it can do. "
    "vpc=true runs the functions in isolated subnets with VPC endpoints and flow logs, for $43.80 to $87.60 a month "
    "in interface endpoints (us-east-1, by backends)."
)
#: CKV_AWS_173 on every function of a stage without its own key (``PlatformConfig.customer_managed_key``).
AWS_MANAGED_ENVIRONMENT_KEY_REASON = (
    "Lambda encrypts the environment variables at rest with its AWS managed key; they hold resource names, URLs and "
    "limits, no secret (the webhook signing secret is read from Secrets Manager at run time). customer_managed_key=true "
    "encrypts them, the logs, the bucket, the table, the queues and the topics with the stage's own KMS key "
    "($1 a month plus requests)."
)


#: CloudWatch Logs retention periods by days (``PlatformConfig.log_retention_days``).
RETENTION_BY_DAYS: dict[int, logs.RetentionDays] = {
    1: logs.RetentionDays.ONE_DAY,
    3: logs.RetentionDays.THREE_DAYS,
    5: logs.RetentionDays.FIVE_DAYS,
    7: logs.RetentionDays.ONE_WEEK,
    14: logs.RetentionDays.TWO_WEEKS,
    30: logs.RetentionDays.ONE_MONTH,
    60: logs.RetentionDays.TWO_MONTHS,
    90: logs.RetentionDays.THREE_MONTHS,
    120: logs.RetentionDays.FOUR_MONTHS,
    150: logs.RetentionDays.FIVE_MONTHS,
    180: logs.RetentionDays.SIX_MONTHS,
    365: logs.RetentionDays.ONE_YEAR,
    400: logs.RetentionDays.THIRTEEN_MONTHS,
    545: logs.RetentionDays.EIGHTEEN_MONTHS,
    731: logs.RetentionDays.TWO_YEARS,
    1096: logs.RetentionDays.THREE_YEARS,
    1827: logs.RetentionDays.FIVE_YEARS,
    2192: logs.RetentionDays.SIX_YEARS,
    2557: logs.RetentionDays.SEVEN_YEARS,
    2922: logs.RetentionDays.EIGHT_YEARS,
    3288: logs.RetentionDays.NINE_YEARS,
    3653: logs.RetentionDays.TEN_YEARS,
}


def lambdas_code() -> lambda_.Code:
    """The lean ``lambdas/`` zip asset shared by every zip function of a stack.

    It leaves out what no zip function imports (``paths.ZIP_FUNCTION_EXCLUDES``): the local stack, the
    command line and client, the OCR engines, document intake and the model cache, which run only on a
    developer's machine or in the processor and endpoint images.
    """
    return lambda_.Code.from_asset(str(LAMBDAS_DIR), exclude=[*LAMBDA_ASSET_EXCLUDES, *ZIP_FUNCTION_EXCLUDES])


def powertools_layer(scope: Construct, version: int = defaults.POWERTOOLS_LAYER_VERSION) -> lambda_.ILayerVersion:
    """The AWS-managed Powertools for AWS Lambda (Python) v3 layer for Python 3.14 on x86_64, in the stack's region.

    AWS publishes it from ``POWERTOOLS_LAYER_ACCOUNT`` in the commercial regions of the ``aws`` partition (GovCloud
    has accounts of its own, and the China regions have no such layer: https://docs.aws.amazon.com/powertools/python/
    latest/getting-started/lambda-layers/). A stack rule refuses a deploy to another partition before anything is
    created, instead of every function failing on a layer that does not exist there.
    """
    CfnRule(
        Stack.of(scope), "PowertoolsLayerPartition",
        assertions=[CfnRuleAssertion(
            assert_=Fn.condition_equals(Aws.PARTITION, POWERTOOLS_LAYER_PARTITION),
            assert_description=f"The Powertools layer this stack uses is published in the {POWERTOOLS_LAYER_PARTITION} "
            "partition only: deploy to a commercial AWS region.",
        )],
    )
    arn = (
        f"arn:{Aws.PARTITION}:lambda:{Aws.REGION}:{POWERTOOLS_LAYER_ACCOUNT}:"
        f"layer:AWSLambdaPowertoolsPythonV3-python314-x86_64:{version}"
    )
    return lambda_.LayerVersion.from_layer_version_arn(scope, "PowertoolsLayer", arn)


@dataclass(frozen=True)
class CommonFunctionProps:
    """What every function of a stack shares. The stack builds it once and hands it to each function construct.

    Attributes:
        table / bucket: the jobs table and the platform bucket. Every function gets ``OCR_TABLE_NAME`` and
            ``OCR_BUCKET_NAME``; its owner grants what it may do with them.
        code: the zip asset of the zip functions (:func:`lambdas_code`); an image function has its own.
        layers: layers of the zip functions (:func:`powertools_layer`); an image brings its libraries.
        job_ttl_days: ``OCR_JOB_TTL_DAYS`` of every function (``defaults.JOB_TTL_DAYS``: 30).
        max_failed_page_percent: ``OCR_MAX_FAILED_PAGE_PERCENT`` of the functions that finish jobs
            (``PlatformConfig.max_failed_page_percent``).
        log_retention: retention of every function's log group (``defaults.LOG_RETENTION_DAYS``: a month).
        metrics_namespace: ``POWERTOOLS_METRICS_NAMESPACE`` of the functions that finish jobs
            (``settings.metrics_namespace(stage)``), read by the failed-job-rate alarm.
        parked_events: where an asynchronous hand-over parks an event it could not complete
            (:class:`ocr_infra.messaging.ParkedEvents`): the on-failure destination of every function
            invoked asynchronously, and the DLQ of SNS subscriptions and EventBridge targets. ``None``
            only in tests of a single construct.
        completion_events: where the functions that finish jobs publish each finished job's completion event
            and queue its webhook (:class:`ocr_infra.completion_events.CompletionEventTargets`): every function
            with ``finishes_jobs`` may put events on that bus and send to the webhook queue, and gets their
            names. ``None``: no completion events (tests of a single construct); a finished job then stays in
            the notification outbox.
        encryption_key: the stage's KMS key (``PlatformConfig.customer_managed_key``): it encrypts every function's
            environment variables and log group, and every role may use it (``kms:Decrypt``, ``Encrypt``,
            ``GenerateDataKey``, ``DescribeKey`` on this key only), since it also encrypts the bucket, the table,
            the queues and the secret the functions use. ``None``: AWS's keys (:data:`AWS_MANAGED_ENVIRONMENT_KEY_REASON`).
        network: the stage's VPC (``PlatformConfig.vpc``): every function runs in its isolated subnets with the
            functions' security group, except one that calls the public internet
            (``PlatformFunctionProps.public_internet``). ``None``: no VPC (:data:`NO_VPC_REASON`).
    """

    table: dynamodb.ITable
    bucket: s3.IBucket
    code: lambda_.Code
    layers: Sequence[lambda_.ILayerVersion] = field(default_factory=tuple)
    job_ttl_days: int = defaults.JOB_TTL_DAYS
    max_failed_page_percent: int = defaults.MAX_FAILED_PAGE_PERCENT
    log_retention: logs.RetentionDays = RETENTION_BY_DAYS[defaults.LOG_RETENTION_DAYS]
    metrics_namespace: str = metrics_namespace(defaults.STAGE)
    parked_events: sqs.IQueue | None = None
    completion_events: CompletionEventTargets | None = None
    encryption_key: kms.IKey | None = None
    network: FunctionNetwork | None = None

    def environment(self, *, finishes_jobs: bool) -> dict[str, str]:
        """The variables every function gets; a function that finishes jobs also gets the metrics namespace and
        the share of failed pages a job may have."""
        environment = {
            ENV.TABLE_NAME: self.table.table_name,
            ENV.BUCKET_NAME: self.bucket.bucket_name,
            ENV.JOB_TTL_DAYS: str(self.job_ttl_days),
        }
        if finishes_jobs:
            environment[ENV.METRICS_NAMESPACE] = self.metrics_namespace
            environment[ENV.MAX_FAILED_PAGE_PERCENT] = str(self.max_failed_page_percent)
        return environment


@dataclass(frozen=True)
class PlatformFunctionProps:
    """Props of :class:`PlatformFunction`.

    Attributes:
        common: what every function shares (table, bucket, zip code and layers, TTL, log retention).
        description: what the function does (shown in the console).
        memory_mb / timeout_seconds: the function's size and time limit.
        service_name: ``POWERTOOLS_SERVICE_NAME`` (the ``service`` key of every log line).
        handler: ``module.function`` of a zip function (``common.code`` with ``common.layers``).
        image: the container image of an image function, instead of ``handler`` (its CMD names the handler).
        environment: the function's own variables (names from ``ocr_platform.core.settings.ENV``), on top of
            :meth:`CommonFunctionProps.environment`.
        finishes_jobs: the function moves jobs to COMPLETED or FAILED, counts them as metrics and publishes
            their completion events (``common.completion_events``).
        ephemeral_storage_mb: size of /tmp (512 = the free default).
        async_retry_attempts: for a function invoked asynchronously (SNS, EventBridge, a Lambda destination):
            Lambda's retries after a function error (0..2), after which the event goes to
            ``common.parked_events``. ``None``: not invoked asynchronously, or its owner configures it.
        reserved_concurrency: the function's reserved concurrency; ``None`` (the default): none reserved, the
            function is bounded by its event source's maximum concurrency or the stage's admission control.
        concurrency_bound: what bounds how many of it run at once when nothing is reserved (its event source's
            maximum concurrency, the stage's processor semaphore, a schedule), and so why it needs no reserved
            concurrency; required without ``reserved_concurrency``. Recorded on the function as the reason of
            checkov's CKV_AWS_115 (function-level concurrency limit) skip.
        failed_events: where an event the function failed on goes instead of a function DLQ (its SQS source's
            redrive, its synchronous caller, its owner's on-failure destination); required unless
            ``async_retry_attempts`` is set, whose on-failure destination (the parked-events queue) says it.
            Recorded as the reason of checkov's CKV_AWS_116 (DLQ) skip.
        public_internet: why the function calls hosts on the public internet (documents by URL, webhooks); such a
            function stays outside the stage's VPC, whose isolated subnets have no route out, and this is the
            reason of its checkov CKV_AWS_117 (VPC) skip. Empty: AWS APIs only, in the VPC when there is one.
    """

    common: CommonFunctionProps
    description: str
    memory_mb: int
    timeout_seconds: int
    service_name: str
    handler: str | None = None
    image: lambda_.DockerImageCode | None = None
    environment: Mapping[str, str] = field(default_factory=dict)
    finishes_jobs: bool = False
    ephemeral_storage_mb: int = 512
    async_retry_attempts: int | None = None
    reserved_concurrency: int | None = None
    concurrency_bound: str = ""
    failed_events: str = ""
    public_internet: str = ""


class PlatformFunction(Construct):
    """A Lambda function with a dedicated least-privilege role and log group."""

    def __init__(self, scope: Construct, construct_id: str, props: PlatformFunctionProps) -> None:
        super().__init__(scope, construct_id)
        if (props.handler is None) == (props.image is None):
            raise ValueError(
                f"{construct_id}: set exactly one of handler (a zip function) and image (a container image function)"
            )
        common = props.common
        # 1. Role: trusted by Lambda only, no managed policies.
        self._role = lambda_role(self, "Role", description=f"Execution role: {props.description}")
        # 2. Log group: retention set, deleted with the function, encrypted with the stage's key if it has one; the
        #    role writes only here.
        self._log_group = secure_log_group(self, "Logs", retention=common.log_retention, encryption_key=common.encryption_key)
        self._log_group.grant_write(self._role)
        # 3. Function: zip (runtime + handler + the common code and layers) or container image.
        self._environment = {
            "POWERTOOLS_SERVICE_NAME": props.service_name,
            **common.environment(finishes_jobs=props.finishes_jobs),
            **props.environment,
        }
        if props.image is not None and common.network is not None and not props.public_internet:
            # The image's engines may fetch a model no cache has from PaddleX's hub, which the VPC has no route to:
            # fail such a job at once (engine_unavailable, naming the variable) instead of at the connect timeout.
            self._environment[MODEL_HUB_VARIABLE] = "off"
        settings: dict[str, Any] = dict(
            description=props.description,
            role=self._role,
            memory_size=props.memory_mb,
            timeout=Duration.seconds(props.timeout_seconds),
            ephemeral_storage_size=Size.mebibytes(props.ephemeral_storage_mb),
            environment=self._environment,
            log_group=self._log_group,
            architecture=lambda_.Architecture.X86_64,
            tracing=lambda_.Tracing.ACTIVE,
            reserved_concurrent_executions=props.reserved_concurrency,
            environment_encryption=common.encryption_key,
            **self._network_settings(props),
        )
        if props.image is not None:
            self._function: lambda_.Function = lambda_.DockerImageFunction(
                self, "Function", code=props.image, **settings
            )
        elif props.handler is not None:
            self._function = lambda_.Function(
                self,
                "Function",
                runtime=PYTHON_RUNTIME,
                handler=props.handler,
                code=common.code,
                layers=list(common.layers),
                **settings,
            )
        # 3b. X-Ray: the function's role may send trace segments (the handlers' ``ocr_platform.core.tracing``).
        acknowledge_wildcards(
            self._role.node.find_child("DefaultPolicy"),
            TRACING_ACTIONS,
            ["*"],
            "X-Ray's PutTraceSegments and PutTelemetryRecords support no resource-level permissions (AWS requires "
            "Resource '*'); CDK grants them for the function's active tracing.",
        )
        # 4. Asynchronous invocations: retried, then parked, never dropped.
        if props.async_retry_attempts is not None:
            if common.parked_events is None:
                raise ValueError(f"{construct_id}: an asynchronously invoked function needs common.parked_events")
            self._function.configure_async_invoke(
                retry_attempts=props.async_retry_attempts, on_failure=destinations.SqsDestination(common.parked_events)
            )
            if common.parked_events.encryption_master_key is not None:
                acknowledge_wildcards(
                    self._role,
                    ["kms:ReEncrypt*", "kms:GenerateDataKey*"],
                    [],
                    "CDK's SqsDestination grants sending to the parked-events queue with its KMS key's ReEncrypt* and "
                    "GenerateDataKey* action families, on that one key (the stage's) only.",
                )
        # 5. Completion events: a function that finishes jobs publishes their events and queues their webhooks.
        if props.finishes_jobs and common.completion_events is not None:
            common.completion_events.allow_publishing(self)
        # 6. The stage's key: what the function reads and writes is encrypted with it.
        if common.encryption_key is not None:
            allow(self._role, KEY_USE_ACTIONS, [common.encryption_key.key_arn])
        # 7. The checkov findings the function answers with a reason instead of a setting.
        self._answer_checkov(construct_id, props)

    def _network_settings(self, props: PlatformFunctionProps) -> dict[str, Any]:
        """``vpc``, ``vpc_subnets`` and ``security_groups`` for a function in the stage's VPC, and its role's
        permission to manage the function's network interfaces; nothing outside one."""
        network = props.common.network
        if network is None or props.public_internet:
            return {}
        # A role CDK did not create gets no AWSLambdaVPCAccessExecutionRole: the network grants what it holds.
        network.allow_network_interfaces(self._role)
        return {"vpc": network.vpc, "vpc_subnets": network.subnets, "security_groups": [network.security_group]}

    def _answer_checkov(self, construct_id: str, props: PlatformFunctionProps) -> None:
        """Record, on the function, the reasons for the checkov checks its settings leave open: concurrency (unless
        reserved), DLQ, VPC (without one, or when it calls the internet) and the environment's key (without one)."""
        common = props.common
        if props.reserved_concurrency is None:
            if not props.concurrency_bound:
                raise ValueError(f"{construct_id}: without reserved_concurrency, say what bounds it (concurrency_bound)")
            skip_checkov(self._function, "CKV_AWS_115", f"{props.concurrency_bound} {RESERVED_CONCURRENCY_NOTE}")
        if props.async_retry_attempts is not None:
            skip_checkov(self._function, "CKV_AWS_116", PARKED_EVENTS_REASON)
        elif props.failed_events:
            skip_checkov(self._function, "CKV_AWS_116", props.failed_events)
        else:
            raise ValueError(f"{construct_id}: say where the events it fails on go (failed_events or async_retry_attempts)")
        if common.network is None:
            skip_checkov(self._function, "CKV_AWS_117", NO_VPC_REASON)
        elif props.public_internet:
            skip_checkov(self._function, "CKV_AWS_117", props.public_internet)
        if common.encryption_key is None:
            skip_checkov(self._function, "CKV_AWS_173", AWS_MANAGED_ENVIRONMENT_KEY_REASON)

    @property
    def function(self) -> lambda_.Function:
        return self._function

    @property
    def role(self) -> iam.Role:
        return self._role

    @property
    def environment(self) -> Mapping[str, str]:
        """The function's environment variables (values may be CDK tokens)."""
        return dict(self._environment)

    def add_environment(self, variables: Mapping[str, str]) -> None:
        """Add variables known only once other resources exist (e.g. the endpoint the function calls)."""
        for name, value in variables.items():
            self._environment[name] = value
            self._function.add_environment(name, value)

    @property
    def log_group(self) -> logs.LogGroup:
        return self._log_group
