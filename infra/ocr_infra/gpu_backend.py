"""GPU backend: the PaddleOCR-VL SageMaker async endpoint that scales between zero and N instances.

It lives in the GPU stack (``ocr_infra.gpu_stack``), which depends on the core stack and never the other way:
what the core refers to (the endpoint, its alarms, the scale-in topic and re-check rule) it names in advance
(``gpu_props.GpuResourceNames``), so a GPU stack that fails to deploy rolls back alone. Its scaling is
``gpu_scaling.GpuScaling``.
"""

from __future__ import annotations

from aws_cdk import ArnFormat, Stack
from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_ecr_assets as ecr_assets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sagemaker as sagemaker
from aws_cdk import aws_sns as sns
from constructs import Construct

from ocr_infra.gpu_props import GpuBackendProps, GpuResourceNames
from ocr_infra.gpu_scaling import GpuScaling
from ocr_infra.image_build import DOCKER_MEDIA_TYPES_OUTPUTS
from ocr_infra.image_context import endpoint_context_excludes
from ocr_infra.paths import REPO_ROOT, VL_ENDPOINT_DOCKERFILE
from ocr_infra.secure_defaults import allow, secure_log_group
from ocr_platform.core import defaults
from ocr_platform.core.s3_layout import (
    ASYNC_FAILURES_PREFIX,
    ASYNC_OUTPUTS_PREFIX,
    DOCUMENTS_PREFIX,
)
from ocr_platform.core.settings import ENV, engine_fallback_value

__all__ = ["GpuBackend", "GpuBackendProps", "GpuResourceNames"]


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
            outputs=list(DOCKER_MEDIA_TYPES_OUTPUTS),  # Docker media types: what SageMaker accepts (ocr_infra.image_build)
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

        # 2. Execution role, which SageMaker uses (the isolated container has no credentials): pull the image, read
        #    each request's document, write its answer, notify, log.
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
        # The endpoint's own log group, with the stage's retention, exists before the endpoint: SageMaker writes the
        # container's output there from the first start on (a container that fails at start-up leaves its reason).
        self._endpoint.node.add_dependency(self._log_group)

        # 6.-10. Scaling: 0..max_instance_count instances, scale-out from zero, the idle alarm and the scale-in function.
        self._scaling = GpuScaling(self, props, names, self._endpoint, self._endpoint_arn)

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
        # Logs: the endpoint's own log group (created here, with the stage's retention; SageMaker names it
        # /aws/sagemaker/Endpoints/<endpoint>) and its streams. CloudWatch Logs authorizes every action but tagging
        # on the log group's ARN with the trailing ":*" (https://docs.aws.amazon.com/service-authorization/latest/
        # reference/list_amazoncloudwatchlogs.html), so the grant names that form.
        log_group_name = GpuResourceNames(props.endpoint_name).log_group
        self._log_group = secure_log_group(self, "EndpointLogs", retention=props.common.log_retention,
                                           encryption_key=props.common.encryption_key, log_group_name=log_group_name)
        log_group_arn = stack.format_arn(
            service="logs", resource="log-group", resource_name=log_group_name, arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        allow(role, ["logs:CreateLogGroup", "logs:DescribeLogStreams"], [f"{log_group_arn}:*"],
              reason="The trailing ':*' is how CloudWatch Logs names one log group for these actions; the grant is "
              "limited to the endpoint's own log group /aws/sagemaker/Endpoints/<endpoint>.")
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
        return self._scaling.scalable_target

    @property
    def idle_alarm(self) -> cloudwatch.Alarm:
        return self._scaling.idle_alarm

    @property
    def backlog_without_capacity_alarm(self) -> cloudwatch.Alarm:
        return self._scaling.backlog_without_capacity_alarm

    @property
    def scale_in_topic(self) -> sns.Topic:
        return self._scaling.scale_in_topic

    @property
    def scale_in_function(self) -> lambda_.Function:
        return self._scaling.scale_in_function
