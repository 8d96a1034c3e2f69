"""Lambda functions: one construct for every function of the platform, zip or container image.

Each function gets its own execution role without AWS-managed policies and its own log group with a
retention period; the role may write only to that log group. Everything else a function may do is
granted by its owner through :func:`ocr_infra.secure_defaults.allow`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from aws_cdk import Aws, Duration, RemovalPolicy, Size
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from ocr_infra.config import POWERTOOLS_LAYER_ACCOUNT
from ocr_infra.paths import LAMBDA_ASSET_EXCLUDES, LAMBDAS_DIR
from ocr_infra.secure_defaults import lambda_role

#: The newest Python runtime; AwsSolutions-L1 checks it is the newest aws-cdk-lib knows.
PYTHON_RUNTIME = lambda_.Runtime.PYTHON_3_14
#: Handlers of the zip functions, in ``lambdas/`` (the lead's ``ocr_platform.handlers`` package).
INVOKER_HANDLER = "ocr_platform.handlers.invoker.handler"
COMPLETION_HANDLER = "ocr_platform.handlers.completion.handler"
SCALE_IN_HANDLER = "ocr_platform.handlers.scale_in.handler"
DLQ_CONSUMER_HANDLER = "ocr_platform.handlers.dlq_consumer.handler"
SWEEPER_HANDLER = "ocr_platform.handlers.sweeper.handler"


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
    """The ``lambdas/`` directory as one zip asset (shared by every zip function of a stack)."""
    return lambda_.Code.from_asset(str(LAMBDAS_DIR), exclude=LAMBDA_ASSET_EXCLUDES)


def powertools_layer(scope: Construct, version: int) -> lambda_.ILayerVersion:
    """The AWS-managed Powertools for AWS Lambda (Python) v3 layer for Python 3.14 on x86_64, in the stack's region."""
    arn = (
        f"arn:{Aws.PARTITION}:lambda:{Aws.REGION}:{POWERTOOLS_LAYER_ACCOUNT}:"
        f"layer:AWSLambdaPowertoolsPythonV3-python314-x86_64:{version}"
    )
    return lambda_.LayerVersion.from_layer_version_arn(scope, "PowertoolsLayer", arn)


@dataclass(frozen=True)
class PlatformFunctionProps:
    """Props of :class:`PlatformFunction`.

    Attributes:
        description: what the function does (shown in the console).
        code: a zip ``lambda_.Code`` (then ``handler`` is required) or a ``lambda_.DockerImageCode``.
        memory_mb / timeout_seconds: the function's size and time limit.
        environment: environment variables (names from ``ocr_platform.settings.ENV``).
        handler: ``module.function`` of a zip function; ignored for an image (its CMD names it).
        layers: layers of a zip function (the Powertools layer).
        ephemeral_storage_mb: size of /tmp (512 = the free default).
        log_retention: retention of the function's log group.
        service_name: ``POWERTOOLS_SERVICE_NAME`` (the ``service`` key of every log line).
    """

    description: str
    code: lambda_.Code | lambda_.DockerImageCode
    memory_mb: int
    timeout_seconds: int
    environment: Mapping[str, str]
    service_name: str
    handler: str | None = None
    layers: Sequence[lambda_.ILayerVersion] = field(default_factory=tuple)
    ephemeral_storage_mb: int = 512
    log_retention: logs.RetentionDays = logs.RetentionDays.ONE_MONTH


class PlatformFunction(Construct):
    """A Lambda function with a dedicated least-privilege role and log group."""

    def __init__(self, scope: Construct, construct_id: str, props: PlatformFunctionProps) -> None:
        super().__init__(scope, construct_id)
        # 1. Role: trusted by Lambda only, no managed policies.
        self._role = lambda_role(self, "Role", description=f"Execution role: {props.description}")
        # 2. Log group: retention set, deleted with the function; the role writes only here.
        self._log_group = logs.LogGroup(
            self, "Logs", retention=props.log_retention, removal_policy=RemovalPolicy.DESTROY
        )
        self._log_group.grant_write(self._role)
        # 3. Function: zip (runtime + handler + layers) or container image.
        self._environment = {"POWERTOOLS_SERVICE_NAME": props.service_name, **props.environment}
        common = dict(
            description=props.description,
            role=self._role,
            memory_size=props.memory_mb,
            timeout=Duration.seconds(props.timeout_seconds),
            ephemeral_storage_size=Size.mebibytes(props.ephemeral_storage_mb),
            environment=self._environment,
            log_group=self._log_group,
            architecture=lambda_.Architecture.X86_64,
        )
        if isinstance(props.code, lambda_.DockerImageCode):
            self._function: lambda_.Function = lambda_.DockerImageFunction(self, "Function", code=props.code, **common)
        else:
            if not props.handler:
                raise ValueError(f"{construct_id}: a zip function needs a handler")
            self._function = lambda_.Function(
                self,
                "Function",
                runtime=PYTHON_RUNTIME,
                handler=props.handler,
                code=props.code,
                layers=list(props.layers),
                **common,
            )

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

    @property
    def log_group(self) -> logs.LogGroup:
        return self._log_group
