"""GPU backend: the PaddleOCR-VL SageMaker async endpoint that scales between zero and N instances.

It lives in the GPU stack (``ocr_infra.gpu_stack``), which depends on the core stack and never the other way:
what the core refers to (the endpoint, its alarms, the scale-in topic and re-check rule) it names in advance
(:class:`GpuResourceNames`), so a GPU stack that fails to deploy rolls back alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import ArnFormat, Aws, Duration, Stack
from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_ecr_assets as ecr_assets
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as events_targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sagemaker as sagemaker
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from constructs import Construct

from ocr_infra.image_context import endpoint_context_excludes
from ocr_infra.messaging import NotificationTopics
from ocr_infra.paths import REPO_ROOT, VL_ENDPOINT_DOCKERFILE
from ocr_infra.platform_function import (
    SCALE_IN_HANDLER,
    CommonFunctionProps,
    PlatformFunction,
    PlatformFunctionProps,
)
from ocr_infra.secure_defaults import allow
from ocr_platform.core import defaults
from ocr_platform.core.s3_layout import (
    ASYNC_FAILURES_PREFIX,
    ASYNC_OUTPUTS_PREFIX,
    DOCUMENTS_PREFIX,
)
from ocr_platform.core.settings import ENV, engine_fallback_value

SAGEMAKER_NAMESPACE = "AWS/SageMaker"
#: Read by ``ocr_platform.gpu.model_server``: requests served at once by one instance.
DESIRED_INSTANCE_COUNT = "sagemaker:variant:DesiredInstanceCount"
#: The service-linked role Application Auto Scaling uses for SageMaker variants; naming its full ARN in
#: the scalable target makes Application Auto Scaling create it when the account does not have it yet.
AUTOSCALING_SERVICE_LINKED_ROLE = (
    "aws-service-role/sagemaker.application-autoscaling.amazonaws.com/"
    "AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint"
)


@dataclass(frozen=True)
class GpuResourceNames:
    """The physical names of the GPU stack's resources that the core stack refers to, fixed from the endpoint's name.

    >>> GpuResourceNames("ocr-dev-paddleocr-vl").idle_alarm
    'ocr-dev-paddleocr-vl-idle'
    """

    endpoint: str

    @property
    def idle_alarm(self) -> str:
        return f"{self.endpoint}-idle"

    @property
    def backlog_without_capacity_alarm(self) -> str:
        return f"{self.endpoint}-backlog-without-capacity"

    @property
    def scale_in_topic(self) -> str:
        return f"{self.endpoint}-scale-in"

    @property
    def recheck_rule(self) -> str:
        return f"{self.endpoint}-scale-in-recheck"

    def topic_arn(self, stack: Stack) -> str:
        return stack.format_arn(service="sns", resource=self.scale_in_topic, arn_format=ArnFormat.NO_RESOURCE_NAME)

    def rule_arn(self, stack: Stack) -> str:
        return stack.format_arn(service="events", resource="rule", resource_name=self.recheck_rule)


@dataclass(frozen=True)
class GpuBackendProps:
    """Props of :class:`GpuBackend`.

    Attributes:
        endpoint_name: the endpoint's name (known in advance: alarms, ARNs and env vars use it).
        common: what every function shares (table, bucket, zip code and layers, TTL, log retention); the
            scale-in function is built from it, and the endpoint reads and writes the same bucket.
        status_index_arn: the status/time GSI the scale-in function queries for jobs in flight.
        topics: the core's encrypted topics (success, error) and their key, with which the scale-in topic is made.
        instance_type: GPU instance of the variant (``ml.g5.xlarge``).
        variant_name: the production variant.
        max_instance_count: the scalable target's maximum (its minimum is 0).
        max_concurrent_invocations_per_instance: AsyncInferenceConfig ClientConfig.
        idle_minutes / idle_backlog_threshold: the scale-in alarm fires after ``idle_minutes``
            consecutive minutes of ApproximateBacklogSizePerInstance < threshold (missing = idle).
        inflight_window_seconds: ``OCR_INFLIGHT_WINDOW_SECONDS`` of the scale-in function.
        ami_version: the variant's ``InferenceAmiVersion`` (``PlatformConfig.endpoint_ami_version``).
        image_cuda: the ``CUDA_VERSION`` build argument of the endpoint image (``PlatformConfig.endpoint_image_cuda``).
        startup_timeout_seconds: the variant's ``ContainerStartupHealthCheckTimeoutInSeconds``.
        base_image: ``BASE_IMAGE`` build argument of the endpoint image (empty: Dockerfile default).
        bake_models: more models for the ``BAKE_MODELS`` build argument of the endpoint image, after the
            layout model and VLM of ``vl_version``, which are always baked.
        vl_backend: ``native`` or ``vllm`` (the ``VL_BACKEND`` build argument and ``OCR_VL_BACKEND``).
        vl_version: the PaddleOCR-VL pipeline version (the ``VL_VERSION`` build argument and ``OCR_VL_VERSION``).
        engine_fallback: ``OCR_ENGINE_FALLBACK`` of the model's container; it overrides the image's own
            ``none``. Off: an endpoint whose PaddleOCR-VL cannot load fails ``/ping``; on: PP-OCRv5 serves
            with an ``engine_fallback`` warning in every result.
        scale_in_memory_mb / scale_in_timeout_seconds: size of the scale-in function.
        pages_per_chunk: the container answers a job of more pages with a split plan
            (``OCR_GPU_PAGES_PER_CHUNK``); the completion function sends one request per chunk.
        max_pages: the most pages one job may read (``OCR_MAX_PAGES``).
    """

    endpoint_name: str
    common: CommonFunctionProps
    status_index_arn: str
    topics: NotificationTopics
    instance_type: str = defaults.INSTANCE_TYPE
    variant_name: str = defaults.VARIANT_NAME
    max_instance_count: int = defaults.MAX_INSTANCE_COUNT
    max_concurrent_invocations_per_instance: int = defaults.MAX_CONCURRENT_INVOCATIONS_PER_INSTANCE
    idle_minutes: int = defaults.IDLE_MINUTES
    idle_backlog_threshold: float = defaults.IDLE_BACKLOG_THRESHOLD
    inflight_window_seconds: int = defaults.inflight_window_seconds()
    ami_version: str = defaults.ENDPOINT_AMI_VERSION
    image_cuda: str = defaults.ENDPOINT_IMAGE_CUDA
    startup_timeout_seconds: int = defaults.ENDPOINT_STARTUP_TIMEOUT_SECONDS
    base_image: str = defaults.ENDPOINT_BASE_IMAGE
    bake_models: str = defaults.ENDPOINT_BAKE_MODELS
    vl_backend: str = defaults.ENDPOINT_VL_BACKEND
    vl_version: str = defaults.ENDPOINT_VL_VERSION
    engine_fallback: bool = defaults.ENGINE_FALLBACK
    scale_in_memory_mb: int = defaults.SCALE_IN_MEMORY_MB
    scale_in_timeout_seconds: int = defaults.SCALE_IN_TIMEOUT_SECONDS
    pages_per_chunk: int = defaults.GPU_PAGES_PER_CHUNK
    max_pages: int = defaults.MAX_PAGES


class GpuBackend(Construct):
    """PaddleOCR-VL on a SageMaker asynchronous endpoint that costs nothing while idle.

    Scaling: the invoker raises DesiredInstanceCount 0 -> 1 before it sends a request; a step-scaling
    policy on ``HasBacklogWithoutCapacity`` does the same for any request queued while at zero (the
    AWS-documented scale-from-zero pattern); the idle alarm's SNS topic triggers the scale-in function,
    which sets the count back to 0 only when no job is in flight. The endpoint is created with one
    instance (SageMaker requires InitialInstanceCount >= 1) and the idle alarm brings it to zero after
    ``idle_minutes``; redeployments keep the current count (``RetainAllVariantProperties``).
    """

    def __init__(self, scope: Construct, construct_id: str, props: GpuBackendProps) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        self._endpoint_name = props.endpoint_name
        self._variant_name = props.variant_name
        self._endpoint_arn = stack.format_arn(
            service="sagemaker", resource="endpoint", resource_name=props.endpoint_name.lower()
        )
        topics = props.topics
        names = GpuResourceNames(props.endpoint_name)

        # 1. Image: containers/vl-endpoint/Dockerfile, built and pushed by `cdk deploy`, from a context of what the
        #    endpoint uses only, so a change elsewhere does not replace the model (ocr_infra.image_context).
        self._image = ecr_assets.DockerImageAsset(
            self,
            "Image",
            directory=str(REPO_ROOT),
            file=VL_ENDPOINT_DOCKERFILE,
            exclude=endpoint_context_excludes(),
            platform=ecr_assets.Platform.LINUX_AMD64,
            build_args={
                name: value
                for name, value in (
                    ("CUDA_VERSION", props.image_cuda),
                    ("BASE_IMAGE", props.base_image),
                    ("BAKE_MODELS", " ".join([*defaults.VL_VERSION_MODELS[props.vl_version], props.bake_models]).strip()),
                    ("VL_BACKEND", "vllm" if props.vl_backend == "vllm" else ""),
                    ("VL_VERSION", props.vl_version),
                )
                if value
            },
            display_name="vl-endpoint image",
        )

        # 2. Execution role: pull the image, read requests/documents/models, write outputs and the model
        #    cache, notify, log.
        self._role = iam.Role(
            self,
            "ExecutionRole",
            assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"),
            description="Execution role of the OCR platform's PaddleOCR-VL async endpoint",
        )
        self._grant_execution_role(props, stack)

        # 3. Model: one container serving PaddleOCR-VL (`serve` -> ocr_platform.gpu.model_server).
        # Network isolation: the container makes no outbound call at all. SageMaker hands it the request's body,
        # read from S3 with the execution role, and writes its answer to S3 (https://docs.aws.amazon.com/sagemaker/
        # latest/dg/mkt-algo-model-internet-free.html); the models are baked into the image.
        self._model = sagemaker.CfnModel(
            self,
            "Model",
            execution_role_arn=self._role.role_arn,
            enable_network_isolation=True,
            primary_container=sagemaker.CfnModel.ContainerDefinitionProperty(
                image=self._image.image_uri,
                mode="SingleModel",
                environment={
                    # No bucket and no model hub: the isolated container reads nothing but its request.
                    "OCR_MODEL_HUB": "off",
                    # The server's thread pool matches the async config's per-instance concurrency.
                    ENV.MAX_CONCURRENT_INVOCATIONS: str(props.max_concurrent_invocations_per_instance),
                    "OCR_VL_BACKEND": "vllm-server" if props.vl_backend == "vllm" else "native",
                    ENV.VL_VERSION: props.vl_version,
                    ENV.ENGINE_FALLBACK: engine_fallback_value(props.engine_fallback),
                    ENV.MAX_PAGES: str(props.max_pages),
                    ENV.GPU_PAGES_PER_CHUNK: str(props.pages_per_chunk),
                },
            ),
        )
        # SageMaker checks the role's access to the image when it creates the model: policy first.
        self._model.node.add_dependency(self._role.node.find_child("DefaultPolicy"))

        # 4. Endpoint config: async inference on the GPU instance, S3 paths and SNS notifications.
        bucket_uri = f"s3://{props.common.bucket.bucket_name}"
        self._endpoint_config = sagemaker.CfnEndpointConfig(
            self,
            "EndpointConfig",
            production_variants=[
                sagemaker.CfnEndpointConfig.ProductionVariantProperty(
                    variant_name=props.variant_name,
                    model_name=self._model.attr_model_name,
                    instance_type=props.instance_type,
                    initial_instance_count=1,
                    initial_variant_weight=1,
                    inference_ami_version=props.ami_version or None,
                    container_startup_health_check_timeout_in_seconds=props.startup_timeout_seconds,
                )
            ],
            async_inference_config=sagemaker.CfnEndpointConfig.AsyncInferenceConfigProperty(
                output_config=sagemaker.CfnEndpointConfig.AsyncInferenceOutputConfigProperty(
                    s3_output_path=f"{bucket_uri}/{ASYNC_OUTPUTS_PREFIX.rstrip('/')}",
                    s3_failure_path=f"{bucket_uri}/{ASYNC_FAILURES_PREFIX.rstrip('/')}",
                    notification_config=sagemaker.CfnEndpointConfig.AsyncInferenceNotificationConfigProperty(
                        success_topic=topics.success_topic.topic_arn,
                        error_topic=topics.error_topic.topic_arn,
                    ),
                ),
                client_config=sagemaker.CfnEndpointConfig.AsyncInferenceClientConfigProperty(
                    max_concurrent_invocations_per_instance=props.max_concurrent_invocations_per_instance,
                ),
            ),
        )

        # 5. Endpoint: a redeploy keeps the variant's current instance count (0 while idle).
        self._endpoint = sagemaker.CfnEndpoint(
            self,
            "Endpoint",
            endpoint_name=props.endpoint_name,
            endpoint_config_name=self._endpoint_config.attr_endpoint_config_name,
            retain_all_variant_properties=True,
        )

        # 6. Scalable target: DesiredInstanceCount between 0 and max_instance_count.
        self._scalable_target = appscaling.ScalableTarget(
            self,
            "ScalableTarget",
            service_namespace=appscaling.ServiceNamespace.SAGEMAKER,
            resource_id=f"endpoint/{self._endpoint.attr_endpoint_name}/variant/{props.variant_name}",
            scalable_dimension=DESIRED_INSTANCE_COUNT,
            min_capacity=0,
            max_capacity=props.max_instance_count,
            role=iam.Role.from_role_arn(
                self,
                "AutoScalingServiceLinkedRole",
                f"arn:{Aws.PARTITION}:iam::{Aws.ACCOUNT_ID}:role/{AUTOSCALING_SERVICE_LINKED_ROLE}",
                mutable=False,
            ),
        )

        # 7. Safety net: a request queued while at zero starts an instance within about a minute.
        self._scale_out = appscaling.StepScalingAction(
            self,
            "ScaleOutFromZero",
            scaling_target=self._scalable_target,
            adjustment_type=appscaling.AdjustmentType.CHANGE_IN_CAPACITY,
            metric_aggregation_type=appscaling.MetricAggregationType.MAXIMUM,
            cooldown=Duration.minutes(5),
        )
        self._scale_out.add_adjustment(adjustment=1, lower_bound=0)
        self._backlog_without_capacity_alarm = cloudwatch.Alarm(
            self,
            "BacklogWithoutCapacityAlarm",
            alarm_name=names.backlog_without_capacity_alarm,
            alarm_description="Requests wait on the PaddleOCR-VL endpoint while it has no instance: scale out to 1.",
            metric=self._metric("HasBacklogWithoutCapacity", "Maximum"),
            threshold=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluation_periods=1,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        self._backlog_without_capacity_alarm.add_alarm_action(cw_actions.ApplicationScalingAction(self._scale_out))

        # 8. Scale-in function: sets the count to 0 when the idle alarm fires and nothing is in flight.
        self._scale_in = PlatformFunction(
            self,
            "ScaleIn",
            PlatformFunctionProps(
                common=props.common,
                description="OCR platform scale-in: PaddleOCR-VL endpoint to 0 instances when idle",
                handler=SCALE_IN_HANDLER,
                memory_mb=props.scale_in_memory_mb,
                timeout_seconds=props.scale_in_timeout_seconds,
                service_name="ocr-scale-in",
                environment={
                    ENV.ENDPOINT_NAME: props.endpoint_name,
                    ENV.VARIANT_NAME: props.variant_name,
                    ENV.INFLIGHT_WINDOW_SECONDS: str(props.inflight_window_seconds),
                },
                # The idle alarm's topic and the re-check schedule invoke it asynchronously; a failed run is
                # parked (the schedule tries again while the alarm stays in ALARM).
                async_retry_attempts=defaults.ASYNC_RETRY_ATTEMPTS,
                concurrency_bound=(
                    "Runs when the idle alarm changes state (SNS) and on its re-check schedule, every idle_minutes: one "
                    "or two at a time, for seconds each (a Query, a DescribeEndpoint, one capacity update)."
                ),
            ),
        )
        allow(self._scale_in.role, ["dynamodb:Query"], [props.status_index_arn])
        allow(self._scale_in.role, ["dynamodb:GetItem"], [props.common.table.table_arn])
        allow(
            self._scale_in.role,
            ["sagemaker:DescribeEndpoint", "sagemaker:UpdateEndpointWeightsAndCapacities"],
            [self._endpoint_arn],
        )
        self._scale_in_topic = topics.encrypted_topic(
            self, "ScaleInTopic", "The GPU endpoint has been idle: scale it in", topic_name=names.scale_in_topic
        )
        self._scale_in_topic.add_subscription(
            subscriptions.LambdaSubscription(self._scale_in.function, dead_letter_queue=props.common.parked_events)
        )

        # 9. Idle alarm: backlog per instance below the threshold for idle_minutes (missing data = idle).
        self._idle_alarm = cloudwatch.Alarm(
            self,
            "IdleAlarm",
            alarm_name=names.idle_alarm,
            alarm_description=(
                f"The PaddleOCR-VL endpoint has had no backlog for {props.idle_minutes} minutes: "
                "scale it in to 0 instances (the scale-in function skips it while a job is in flight)."
            ),
            metric=self._metric("ApproximateBacklogSizePerInstance", "Average"),
            threshold=props.idle_backlog_threshold,
            comparison_operator=cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
            evaluation_periods=props.idle_minutes,
            datapoints_to_alarm=props.idle_minutes,
            treat_missing_data=cloudwatch.TreatMissingData.BREACHING,
        )
        topics.notify(self._scale_in_topic, self._idle_alarm)

        # 10. Scale-in re-check: an alarm notifies once per state change, so a scale-in skipped while a job
        #     looked in flight is retried on a schedule for as long as the idle alarm stays in ALARM.
        self._scale_in.function.add_environment(ENV.IDLE_ALARM_NAME, self._idle_alarm.alarm_name)
        allow(self._scale_in.role, ["cloudwatch:DescribeAlarms"], [self._idle_alarm.alarm_arn])
        self._recheck_rule = events.Rule(
            self,
            "ScaleInRecheck",
            rule_name=names.recheck_rule,
            description="Re-check the PaddleOCR-VL idle alarm and scale in if it is still firing",
            schedule=events.Schedule.rate(Duration.minutes(props.idle_minutes)),
            targets=[
                events_targets.LambdaFunction(self._scale_in.function, retry_attempts=0, dead_letter_queue=props.common.parked_events)
            ],
        )

    def _metric(self, name: str, statistic: str) -> cloudwatch.Metric:
        return cloudwatch.Metric(
            namespace=SAGEMAKER_NAMESPACE,
            metric_name=name,
            dimensions_map={"EndpointName": self._endpoint_name},
            statistic=statistic,
            period=Duration.minutes(1),
        )

    def _grant_execution_role(self, props: GpuBackendProps, stack: Stack) -> None:
        role, bucket = self._role, props.common.bucket
        unscoped = (
            "ecr:GetAuthorizationToken and cloudwatch:PutMetricData support no resource-level permissions "
            "(AWS requires Resource '*'); PutMetricData is limited to SageMaker's namespaces by a condition."
        )
        # Image pull: the asset's repository only.
        allow(
            role,
            ["ecr:BatchCheckLayerAvailability", "ecr:GetDownloadUrlForLayer", "ecr:BatchGetImage"],
            [self._image.repository.repository_arn],
        )
        allow(role, ["ecr:GetAuthorizationToken"], ["*"], reason=unscoped)
        # S3: SageMaker reads each request's body (the job's document) and writes the answer,
        #     both with this role; the network-isolated container itself reaches nothing.
        allow(
            role,
            ["s3:GetObject"],
            [bucket.arn_for_objects(f"{DOCUMENTS_PREFIX}*")],
            reason="Key-prefix scope: SageMaker reads each async request's InputLocation, the job's document under "
            "documents/{job_id}/; job ids are only known at run time.",
        )
        allow(
            role,
            ["s3:PutObject"],
            [bucket.arn_for_objects(f"{ASYNC_OUTPUTS_PREFIX}*"), bucket.arn_for_objects(f"{ASYNC_FAILURES_PREFIX}*")],
            reason="Key-prefix scope: SageMaker writes each async output and failure under async/outputs/ and "
            "async/failures/ with a name it chooses per request.",
        )
        # Notifications: the two topics, through their KMS key.
        allow(role, ["sns:Publish"], [props.topics.success_topic.topic_arn, props.topics.error_topic.topic_arn])
        allow(role, ["kms:GenerateDataKey", "kms:Decrypt"], [props.topics.key.key_arn])
        # Logs: the endpoint's own log group and its streams.
        log_group_arn = stack.format_arn(
            service="logs",
            resource="log-group",
            resource_name=f"/aws/sagemaker/Endpoints/{props.endpoint_name}",
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        allow(role, ["logs:CreateLogGroup", "logs:DescribeLogStreams"], [log_group_arn])
        allow(
            role,
            ["logs:CreateLogStream", "logs:PutLogEvents"],
            [f"{log_group_arn}:log-stream:*"],
            reason="SageMaker names one log stream per instance and container at run time; the grant is limited "
            "to the endpoint's own log group /aws/sagemaker/Endpoints/<endpoint>.",
        )
        # Metrics: instance metrics of the endpoint.
        allow(
            role,
            ["cloudwatch:PutMetricData"],
            ["*"],
            reason=unscoped,
            conditions={"StringLike": {"cloudwatch:namespace": ["/aws/sagemaker/*", "AWS/SageMaker"]}},
        )

    # ----- read-only attributes -------------------------------------------------------------------

    @property
    def endpoint_name(self) -> str:
        return self._endpoint_name

    @property
    def endpoint_arn(self) -> str:
        return self._endpoint_arn

    @property
    def variant_name(self) -> str:
        return self._variant_name

    @property
    def image(self) -> ecr_assets.DockerImageAsset:
        return self._image

    @property
    def execution_role(self) -> iam.Role:
        return self._role

    @property
    def model(self) -> sagemaker.CfnModel:
        return self._model

    @property
    def endpoint_config(self) -> sagemaker.CfnEndpointConfig:
        return self._endpoint_config

    @property
    def endpoint(self) -> sagemaker.CfnEndpoint:
        return self._endpoint

    @property
    def scalable_target(self) -> appscaling.ScalableTarget:
        return self._scalable_target

    @property
    def idle_alarm(self) -> cloudwatch.Alarm:
        return self._idle_alarm

    @property
    def backlog_without_capacity_alarm(self) -> cloudwatch.Alarm:
        return self._backlog_without_capacity_alarm

    @property
    def scale_in_topic(self) -> sns.Topic:
        return self._scale_in_topic

    @property
    def scale_in_function(self) -> lambda_.Function:
        return self._scale_in.function
