"""CPU backend: the container-image Lambda that runs PP-OCRv5 and PP-StructureV3."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from aws_cdk import Duration
from aws_cdk import aws_ecr_assets as ecr_assets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_destinations as destinations
from constructs import Construct

from ocr_infra.image_build import DOCKER_MEDIA_TYPES_OUTPUTS
from ocr_infra.paths import CPU_OCR_DOCKERFILE, REPO_ROOT
from ocr_infra.platform_function import CommonFunctionProps, PlatformFunction, PlatformFunctionProps
from ocr_infra.secure_defaults import acknowledge_wildcards, allow
from ocr_platform.core import defaults
from ocr_platform.core.s3_layout import CHUNKS_PREFIX, DOCUMENTS_PREFIX, MODELS_PREFIX, RESULTS_PREFIX
from ocr_platform.core.settings import ENV, engine_fallback_value, work_budget_env


@dataclass(frozen=True)
class CpuBackendProps:
    """Props of :class:`CpuBackend`.

    Attributes:
        common: what every function shares (table, bucket, TTL, log retention); the processor is an image,
            so it takes neither the zip code nor the layers.
        on_failure: receives the invocation record of a run that crashed, timed out or raised (the
            completion function, which marks the job FAILED) once the retries are used up.
        memory_mb: 3008 by default, the most new accounts may use; up to 10240 where allowed.
        ephemeral_storage_mb: /tmp size for the input document and the model files.
        timeout_seconds: the run's time limit (at most 900).
        retry_attempts: async retries after a function error (0: straight to ``on_failure``).
        max_event_age_hours: how long an event may wait in Lambda's async queue.
        engine_fallback: ``OCR_ENGINE_FALLBACK``: run PP-OCRv5 with an ``engine_fallback`` warning when
            PP-StructureV3 cannot be built (``on``), or fail the job ``engine_unavailable`` (``none``).
        bake_models: ``BAKE_MODELS`` build argument (PaddleX model names baked into the image).
        pages_per_chunk: a job of more pages than this is split into chunks, one invocation each
            (``OCR_CPU_PAGES_PER_CHUNK``).
        max_pages: the most pages one job may read (``OCR_MAX_PAGES``).
        work_budget: ``NAME=VALUE`` limits of an Office or HTML file's work (``OCR_MAX_OFFICE_CELLS`` and the others
            of ``ocr_platform.core.settings.WORK_BUDGET_ENV``).
        max_concurrency / concurrency_mode: ``reserved``: the function's reserved concurrency is
            ``max_concurrency`` (Lambda's async queue holds what it throttles, up to ``max_event_age_hours``);
            ``dispatcher``: none reserved, the stage's processor semaphore of ``max_concurrency`` slots bounds
            it (``OCR_PROCESSOR_SLOTS``; the processor hands its slot on to the chunks it launches).
        admission_lease_seconds: ``OCR_ADMISSION_LEASE_SECONDS``: how long a slot holds unreleased.
    """

    common: CommonFunctionProps
    on_failure: lambda_.IFunction
    memory_mb: int = defaults.PROCESSOR_MEMORY_MB
    ephemeral_storage_mb: int = defaults.PROCESSOR_EPHEMERAL_STORAGE_MB
    timeout_seconds: int = defaults.PROCESSOR_TIMEOUT_SECONDS
    retry_attempts: int = defaults.PROCESSOR_RETRY_ATTEMPTS
    max_event_age_hours: int = defaults.PROCESSOR_MAX_EVENT_AGE_HOURS
    engine_fallback: bool = defaults.ENGINE_FALLBACK
    bake_models: str = defaults.PROCESSOR_BAKE_MODELS
    pages_per_chunk: int = defaults.CPU_PAGES_PER_CHUNK
    max_pages: int = defaults.MAX_PAGES
    work_budget: tuple[str, ...] = defaults.WORK_BUDGET
    max_concurrency: int = defaults.PROCESSOR_MAX_CONCURRENCY
    concurrency_mode: str = defaults.PROCESSOR_CONCURRENCY_MODE
    admission_lease_seconds: int = defaults.processor_admission_lease_seconds()


class CpuBackend(Construct):
    """The CPU processor: ``containers/cpu-ocr/Dockerfile`` as a Lambda function, invoked asynchronously.

    The image is built from the repository root (filtered by ``.dockerignore``) so it installs the same
    ``ocr_platform`` package the zip functions run; its CMD is ``ocr_platform.handlers.processor.handler``.
    """

    def __init__(self, scope: Construct, construct_id: str, props: CpuBackendProps) -> None:
        super().__init__(scope, construct_id)
        bucket, table = props.common.bucket, props.common.table
        # 1. Image: built by `cdk deploy` (synth only fingerprints the context; no Docker needed).
        image = lambda_.DockerImageCode.from_image_asset(
            str(REPO_ROOT),
            file=CPU_OCR_DOCKERFILE,
            platform=ecr_assets.Platform.LINUX_AMD64,
            outputs=list(DOCKER_MEDIA_TYPES_OUTPUTS),  # Docker media types: what Lambda accepts (ocr_infra.image_build)
            build_args={"BAKE_MODELS": props.bake_models} if props.bake_models else None,
            display_name="cpu-ocr processor image",
        )
        # 2. Function: memory, /tmp and timeout for OCR of multi-page documents; it finishes jobs; its
        #    concurrency bounded by reserved concurrency or by the stage's processor semaphore.
        reserved = props.concurrency_mode == "reserved"
        slots = 0 if reserved else props.max_concurrency
        self._processor = PlatformFunction(
            self,
            "Processor",
            PlatformFunctionProps(
                common=props.common,
                description="OCR platform CPU processor: PP-OCRv5 / PP-StructureV3 on one job",
                image=image,
                memory_mb=props.memory_mb,
                ephemeral_storage_mb=props.ephemeral_storage_mb,
                timeout_seconds=props.timeout_seconds,
                service_name="ocr-processor",
                environment={
                    ENV.ENGINE_FALLBACK: engine_fallback_value(props.engine_fallback),
                    ENV.CPU_PAGES_PER_CHUNK: str(props.pages_per_chunk),
                    ENV.MAX_PAGES: str(props.max_pages),
                    # One worker per execution environment: ONNX Runtime's threads are the vCPUs it pays for.
                    ENV.CPU_THREADS: str(defaults.processor_cpu_threads(props.memory_mb)),
                    ENV.PROCESSOR_SLOTS: str(slots),
                    ENV.ADMISSION_LEASE_SECONDS: str(props.admission_lease_seconds),
                    **work_budget_env(props.work_budget),
                },
                finishes_jobs=True,
                reserved_concurrency=props.max_concurrency if reserved else None,
                concurrency_bound=(
                    f"Bounded by the stage's processor semaphore in DynamoDB ({props.max_concurrency} slots, "
                    "PlatformConfig.processor_max_concurrency in dispatcher mode): the invoker takes a slot before each "
                    "hand-over and the processor passes it on to the chunks it launches; a job that finds none waits "
                    "in the job queue."
                ),
                failed_events=(
                    "Invoked asynchronously with an on-failure destination instead of a DLQ: after its retries Lambda "
                    "sends the invocation record, with the error, to the completion function (its EventInvokeConfig), "
                    "which fails the job; what that function cannot handle is parked on the alarmed parked-events queue. "
                    "A DLQ would keep the event where no job is ever finished."
                ),
            ),
        )
        role = self._processor.role
        # 3. Permissions: read inputs and cached models, write results and the model cache, move the job,
        #    keep chunk results, and launch the chunks of a long document (invoke itself).
        allow(
            role,
            ["s3:GetObject"],
            [bucket.arn_for_objects(f"{DOCUMENTS_PREFIX}*"), bucket.arn_for_objects(f"{MODELS_PREFIX}*")],
            reason="Key-prefix scope: the processor reads any job's input under documents/ and the model cache "
            "under models/; job ids are only known at run time.",
        )
        allow(
            role,
            ["s3:PutObject"],
            [bucket.arn_for_objects(f"{RESULTS_PREFIX}*"), bucket.arn_for_objects(f"{MODELS_PREFIX}*")],
            reason="Key-prefix scope: the processor writes results/{job_id}/ for any job and fills the models/ "
            "cache on a cold start.",
        )
        allow(role, ["dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:PutItem"], [table.table_arn])
        allow(
            role,
            ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"],
            [bucket.arn_for_objects(f"{CHUNKS_PREFIX}*")],
            reason="Key-prefix scope: each chunk of a split job writes chunks/{job_id}/, and the last one reads "
            "and deletes them all; job ids are only known at run time.",
        )
        # A policy of its own, not the role's default policy: the function depends on that one, and this
        # statement names the function (a dependency cycle otherwise).
        iam.Policy(
            self,
            "LaunchChunks",
            roles=[role],
            statements=[
                iam.PolicyStatement(actions=["lambda:InvokeFunction"], resources=[self._processor.function.function_arn])
            ],
        )
        # 4. Async invocation: no blind retries, every failure ends at the completion function.
        self._processor.function.configure_async_invoke(
            retry_attempts=props.retry_attempts,
            max_event_age=Duration.hours(props.max_event_age_hours),
            on_failure=destinations.LambdaDestination(props.on_failure),
        )
        acknowledge_wildcards(
            role,
            ["lambda:InvokeFunction"],
            [f"{props.on_failure.function_arn}:*"],
            "CDK's LambdaDestination grants lambda:InvokeFunction on the completion function and its "
            "qualified ARNs (versions/aliases); the wildcard covers only that one function.",
        )

    @property
    def function(self) -> lambda_.Function:
        return self._processor.function

    @property
    def role(self) -> iam.Role:
        return self._processor.role

    @property
    def environment(self) -> Mapping[str, str]:
        """The processor's environment variables (values may be CDK tokens)."""
        return self._processor.environment
