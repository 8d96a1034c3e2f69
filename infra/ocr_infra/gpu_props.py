"""What the GPU backend is built from: its props, the names fixed in advance that the core stack refers to, and the
SageMaker names both the endpoint and its scaling use."""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import ArnFormat, Stack

from ocr_infra.messaging import NotificationTopics
from ocr_infra.platform_function import CommonFunctionProps
from ocr_platform.core import defaults

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
    def log_group(self) -> str:
        """The endpoint's own log group, as SageMaker names it (the GPU stack creates it; the stage's key admits it)."""
        return f"/aws/sagemaker/Endpoints/{self.endpoint}"

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
