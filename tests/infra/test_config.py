"""PlatformConfig: defaults, validation, overrides from the CDK context, and what the stack does with it."""

from __future__ import annotations

from typing import Any

import pytest
from aws_cdk import App, Stack
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sagemaker as sagemaker

from ocr_infra.app_builder import add_stage, cdk_json_context
from ocr_infra.config import PlatformConfig
from ocr_infra.gpu_backend import GpuBackend
from ocr_infra.paths import REPO_ROOT, VL_ENDPOINT_DOCKERFILE
from ocr_infra.stack import OcrPlatformStack
from ocr_platform.core.routing import MODEL_TABLE
from ocr_platform.core.settings import ENV


def test_defaults() -> None:
    cfg = PlatformConfig()
    assert cfg.stage == "dev"
    assert cfg.models == tuple(MODEL_TABLE)
    assert cfg.instance_type == "ml.g5.xlarge"
    assert cfg.processor_memory_mb == 3008
    assert cfg.processor_ephemeral_storage_mb == 10240
    assert cfg.processor_retry_attempts == 0
    assert cfg.invoker_batch_size == 1
    assert cfg.max_concurrent_invocations_per_instance == 1
    assert cfg.invocation_timeout_seconds == 3600
    assert cfg.idle_minutes == 10
    assert cfg.max_receive_count == 5
    assert cfg.powertools_layer_version == 27
    assert cfg.sweeper_interval_minutes == 15
    assert cfg.engine_fallback is False


def test_derived_values() -> None:
    cfg = PlatformConfig(stage="prod")
    assert cfg.stack_name == "ocr-platform-prod"
    assert cfg.endpoint_name == "ocr-prod-paddleocr-vl"
    assert cfg.queue_visibility_timeout_seconds == 6 * cfg.invoker_timeout_seconds == 360
    assert cfg.inflight_window_seconds == 3600 + 300
    assert cfg.backends == {"lambda", "sagemaker"}
    assert PlatformConfig(models=("pp-ocrv5",)).backends == {"lambda"}


def test_sweeper_deadlines_are_derived_from_the_settings_they_outlast() -> None:
    cfg = PlatformConfig()
    # As long as SQS keeps the message (4 days) + 10 minutes: a job waiting its turn is not failed.
    assert cfg.queued_deadline_seconds == 4 * 86_400 + 600 == 346_200
    # Lambda's async queue may hold the event up to the max event age, then the run takes the timeout.
    assert cfg.lambda_deadline_seconds == 2 * (6 * 3600 + 900) + 300 == 45_300
    # The request TTL and the in-flight window twice (a split job's plan, then its chunks) + 10 minutes.
    assert cfg.sagemaker_deadline_seconds == 2 * (21_600 + 3600 + 300) + 600 == 51_600
    tuned = PlatformConfig(
        queue_retention_days=1,
        invoker_timeout_seconds=30,
        url_fetch_timeout_seconds=10,  # a URL job's fetch, plus 20 s to store it and hand it over, fits in 30 s
        processor_max_event_age_hours=1,
        processor_timeout_seconds=600,
        invocation_timeout_seconds=1800,
        inflight_margin_seconds=120,
    )
    assert tuned.queued_deadline_seconds == 86_400 + 600
    assert tuned.lambda_deadline_seconds == 2 * (3600 + 600) + 300
    assert tuned.sagemaker_deadline_seconds == 2 * (21_600 + 1800 + 120) + 600


def test_context_overrides_object_then_fields() -> None:
    app = App(
        context={
            "ocr": {"stage": "qa", "processor_memory_mb": 4096, "models": ["pp-ocrv5", "paddleocr-vl"]},
            # `cdk synth -c ocr:<field>=<value>` passes strings; they win over the object.
            "ocr:processor_memory_mb": "5120",
            "ocr:retain_data": "false",
            "ocr:idle_backlog_threshold": "0.5",
        }
    )
    cfg = PlatformConfig.from_context(app)
    assert cfg.stage == "qa"
    assert cfg.processor_memory_mb == 5120
    assert cfg.retain_data is False
    assert cfg.idle_backlog_threshold == 0.5
    assert cfg.models == ("pp-ocrv5", "paddleocr-vl")
    assert PlatformConfig.from_context(App(context={"ocr": '{"stage": "json"}'})).stage == "json"
    assert PlatformConfig.from_context(App(context={"ocr:models": "pp-ocrv5, pp-structurev3"})).models == (
        "pp-ocrv5",
        "pp-structurev3",
    )


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"stage": "Prod"}, "stage="),
        ({"models": ("pp-ocrv5", "tesseract")}, "['tesseract'] are not in the model table"),
        ({"models": ()}, "at least one model"),
        ({"processor_memory_mb": 20_000}, "processor_memory_mb=20000"),
        ({"processor_ephemeral_storage_mb": 256}, "processor_ephemeral_storage_mb=256"),
        ({"processor_timeout_seconds": 901}, "processor_timeout_seconds=901"),
        ({"invoker_batch_size": 11}, "invoker_batch_size=11"),
        ({"invocation_timeout_seconds": 7200}, "invocation_timeout_seconds=7200"),
        ({"processor_retry_attempts": 3}, "processor_retry_attempts=3"),
        ({"log_retention_days": 31}, "log_retention_days=31"),
        ({"instance_type": "g5.xlarge"}, "instance_type="),
        ({"alarm_email": "ops"}, "alarm_email="),
        ({"sweeper_interval_minutes": 0}, "sweeper_interval_minutes=0"),
        ({"sweeper_interval_minutes": 1441}, "sweeper_interval_minutes=1441"),
        ({"settle_grace_seconds": -1}, "settle_grace_seconds=-1"),
        ({"settle_grace_seconds": 86_401}, "settle_grace_seconds=86401"),
        ({"failed_job_rate_percent": 0}, "failed_job_rate_percent=0"),
        ({"failed_job_rate_min_jobs": 0}, "failed_job_rate_min_jobs=0"),
        # The native VL backend runs one prediction at a time: a fourth request admitted to the container
        # would wait there behind three 70-page documents and pass its invocation timeout.
        ({"max_concurrent_invocations_per_instance": 4}, "max_concurrent_invocations_per_instance=4 exceeds the 1 request(s) the 'native'"),
        ({"endpoint_vl_backend": "vllm", "max_concurrent_invocations_per_instance": 5}, "exceeds the 4 request(s) the 'vllm'"),
        # PaddleOCR 3.7's PaddleOCRVL refuses any other pipeline_version; the image would bake nothing for it.
        ({"endpoint_vl_version": "v2"}, "endpoint_vl_version='v2' is not a PaddleOCR-VL pipeline version of the pinned paddleocr; valid: v1, v1.5, v1.6"),
        ({"endpoint_vl_version": "1.5"}, "endpoint_vl_version='1.5' is not a PaddleOCR-VL pipeline version"),
        # A throttled poll counts as a receive: fewer than 5 dead-letters valid jobs (AWS's guidance).
        ({"max_receive_count": 3}, "max_receive_count=3 must be between 5 and 1000"),
        ({"queue_retention_days": 15}, "queue_retention_days=15"),
        # 256 MB ran out of memory on every retry for outputs past about 35 MB.
        ({"completion_memory_mb": 256}, "completion_memory_mb=256 cannot hold the largest endpoint output it admits (50 MB needs 446 MB"),
    ],
)
def test_invalid_values_fail_naming_the_field(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match="Invalid OCR platform config") as err:
        PlatformConfig(**overrides)
    assert message in str(err.value)


@pytest.mark.parametrize(
    ("context", "message"),
    [
        ({"ocr:procesor_memory_mb": "4096"}, "Unknown OCR platform config field(s) ['procesor_memory_mb']"),
        ({"ocr": {"procesor_memory_mb": 4096}}, "Unknown OCR platform config field(s) ['procesor_memory_mb']"),
        ({"ocr:processor_memory_mb": "lots"}, "config field processor_memory_mb: cannot use 'lots' as int"),
        ({"ocr:retain_data": "maybe"}, "config field retain_data"),
        ({"ocr:engine_fallback": "pp-ocrv5"}, "config field engine_fallback: cannot use 'pp-ocrv5' as bool"),
        ({"ocr": ["stage"]}, "must be an object"),
    ],
)
def test_bad_context(context: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as err:
        PlatformConfig.from_context(App(context=context))
    assert message in str(err.value)


def _app() -> App:
    """An app with cdk.json's feature flags, like the real one (constructing a stack is no synth)."""
    return App(context=cdk_json_context())


def _stage(construct_id: str, config: PlatformConfig) -> tuple[OcrPlatformStack, GpuBackend | None]:
    """The core stack of a stage and the GPU backend of its GPU stack, if it has one."""
    stack, gpu_stack = add_stage(_app(), config, prefix=construct_id)
    return stack, gpu_stack.gpu if gpu_stack else None


def test_cpu_only_stage_has_no_gpu_backend() -> None:
    """The model table decides the backends: without paddleocr-vl there is no GPU stack and no endpoint to pay for."""
    stack, gpu = _stage("CpuOnly", PlatformConfig(stage="cpu", models=("pp-ocrv5", "pp-structurev3")))
    assert gpu is None and stack.cpu is not None
    assert not [c for c in stack.node.find_all() if isinstance(c, sagemaker.CfnEndpoint)]
    env = stack.invoker.environment
    assert ENV.ENDPOINT_NAME not in env and ENV.PROCESSOR_FUNCTION in env
    assert stack.stack_name == "ocr-platform-cpu"
    # Every stage recovers its jobs, whatever its backends.
    assert stack.recovery.dlq_consumer_function is not None and stack.recovery.sweeper_function is not None


def test_gpu_only_stage_has_no_processor() -> None:
    stack, gpu = _stage("GpuOnly", PlatformConfig(stage="gpu", models=("paddleocr-vl",)))
    assert stack.cpu is None and gpu is not None
    env = stack.invoker.environment
    assert ENV.PROCESSOR_FUNCTION not in env and env[ENV.ENDPOINT_NAME] == "ocr-gpu-paddleocr-vl"


def test_config_reaches_the_resources() -> None:
    cfg = PlatformConfig(
        processor_memory_mb=4096,
        invoker_batch_size=5,
        url_fetch_timeout_seconds=8,  # five fetches of 8 s, plus 20 s to store and hand over, fit in the 60 s timeout
        max_concurrent_invocations_per_instance=2,
        endpoint_vl_backend="vllm",
        endpoint_vl_version="v1.5",
        instance_type="ml.g6.xlarge",
        max_instance_count=2,
        idle_minutes=15,
    )
    stack, gpu = _stage("Tuned", cfg)
    assert gpu is not None
    resolve = stack.resolve
    assert resolve(stack.cpu.function.node.default_child.memory_size) == 4096
    [mapping] = [c for c in stack.invoker.node.find_all() if isinstance(c, lambda_.CfnEventSourceMapping)]
    assert resolve(mapping.batch_size) == 5
    resolve = Stack.of(gpu).resolve
    [variant] = resolve(gpu.endpoint_config.production_variants)
    assert variant["instanceType"] == "ml.g6.xlarge"
    async_config = resolve(gpu.endpoint_config.async_inference_config)
    assert async_config["clientConfig"] == {"maxConcurrentInvocationsPerInstance": 2}
    assert resolve(gpu.scalable_target.node.default_child.max_capacity) == 2
    idle = gpu.idle_alarm.node.default_child
    assert resolve(idle.evaluation_periods) == 15 and resolve(idle.datapoints_to_alarm) == 15
    assert resolve(gpu.model.primary_container)["environment"][ENV.VL_VERSION] == "v1.5"


def test_sweeper_settings_reach_its_rule_and_environment() -> None:
    cfg = PlatformConfig(sweeper_interval_minutes=1, processor_max_event_age_hours=2, queue_retention_days=2, settle_grace_seconds=45)
    stack = OcrPlatformStack(_app(), "Sweep", config=cfg)
    rule = stack.recovery.sweeper_rule.node.default_child
    assert stack.resolve(rule.schedule_expression) == "rate(1 minute)"
    env = stack.recovery.sweeper_environment
    assert env[ENV.QUEUED_DEADLINE_SECONDS] == str(2 * 86_400 + 600)
    assert env[ENV.LAMBDA_DEADLINE_SECONDS] == str(2 * (2 * 3600 + 900) + 300)
    assert env[ENV.SAGEMAKER_DEADLINE_SECONDS] == str(2 * (21_600 + 3600 + 300) + 600)
    assert env[ENV.SETTLE_GRACE_SECONDS] == "45"
    context = PlatformConfig.from_context(App(context={"ocr:sweeper_interval_minutes": "5"}))
    assert context.sweeper_interval_minutes == 5


def test_engine_fallback_is_off_unless_the_context_turns_it_on_for_both_backends() -> None:
    def fallback_env(stage: tuple[OcrPlatformStack, GpuBackend | None]) -> tuple[str, str]:
        stack, gpu = stage
        assert gpu is not None and stack.cpu is not None
        container = Stack.of(gpu).resolve(gpu.model.primary_container)["environment"]
        return stack.cpu.environment[ENV.ENGINE_FALLBACK], container[ENV.ENGINE_FALLBACK]

    assert fallback_env(_stage("FailClosed", PlatformConfig(stage="prod"))) == ("none", "none")
    # `cdk deploy -c ocr:engine_fallback=true`
    cfg = PlatformConfig.from_context(App(context={"ocr:engine_fallback": "true"}))
    assert cfg.engine_fallback is True
    assert fallback_env(_stage("FallbackOn", cfg)) == ("on", "on")


def test_the_vl_version_comes_from_the_context() -> None:
    assert PlatformConfig().endpoint_vl_version == "v1.6"  # the newest PaddleOCR ships
    # `cdk deploy -c ocr:endpoint_vl_version=v1`
    assert PlatformConfig.from_context(App(context={"ocr:endpoint_vl_version": "v1"})).endpoint_vl_version == "v1"
    with pytest.raises(ValueError, match="valid: v1, v1.5, v1.6"):
        PlatformConfig.from_context(App(context={"ocr:endpoint_vl_version": "latest"}))


def test_vllm_backend_reaches_the_model_environment() -> None:
    _, gpu = _stage("Vllm", PlatformConfig(endpoint_vl_backend="vllm"))
    assert gpu is not None
    container = Stack.of(gpu).resolve(gpu.node.find_child("Model").primary_container)
    assert container["environment"]["OCR_VL_BACKEND"] == "vllm-server"
    with pytest.raises(ValueError, match="endpoint_vl_backend"):
        PlatformConfig(endpoint_vl_backend="tgi")


def test_synth_refuses_an_endpoint_image_its_host_cannot_run() -> None:
    """The host's NVIDIA driver must run the image's CUDA (ocr_infra.gpu_host, from AWS's documentation): a g5
    without an AMI version runs driver 470 / CUDA 11.4, so a CUDA 12.9 image would never pass /ping."""
    assert PlatformConfig().endpoint_ami_version == "al2023-ami-sagemaker-inference-gpu-4-1"
    with pytest.raises(ValueError, match=r"CUDA 12\.9, but ml\.g5\.xlarge on the default host runs NVIDIA driver 470"):
        PlatformConfig.from_context(App(context={"ocr:endpoint_ami_version": ""}))
    with pytest.raises(ValueError, match=r"CUDA 12\.9, but ml\.g5\.xlarge on al2-ami-sagemaker-inference-gpu-3-1 runs NVIDIA driver 550"):
        PlatformConfig(endpoint_ami_version="al2-ami-sagemaker-inference-gpu-3-1")
    # Every GPU version of botocore's InferenceAmiVersion enum is known, with the families it serves.
    assert PlatformConfig(endpoint_ami_version="al2-ami-sagemaker-inference-gpu-3-1", endpoint_image_cuda="12.4")
    assert PlatformConfig(endpoint_ami_version="al2023-ami-sagemaker-inference-gpu-4-1", endpoint_image_cuda="13.0")
    with pytest.raises(ValueError, match="is not a GPU inference AMI version"):
        PlatformConfig(endpoint_ami_version="al2-ami-sagemaker-inference-gpu-9")
    with pytest.raises(ValueError, match="does not serve the ml.inf2 family"):
        PlatformConfig(instance_type="ml.inf2.xlarge")
    # A stage without the GPU route has no endpoint to check.
    assert PlatformConfig(models=("pp-ocrv5",), endpoint_image_cuda="12.6").endpoint_image_cuda == "12.6"
    # The image's own default is the one the config passes (containers/vl-endpoint/Dockerfile, ARG CUDA_VERSION).
    dockerfile = (REPO_ROOT / VL_ENDPOINT_DOCKERFILE).read_text(encoding="utf-8")
    assert f"ARG CUDA_VERSION={PlatformConfig().endpoint_image_cuda}\n" in dockerfile


def test_a_chunk_that_cannot_finish_in_the_processor_timeout_fails_synth() -> None:
    # 6 pages x 3 x 2.26 s at 3008 MB, + 30 s overhead, + the merge of 334 chunks: 137 s, within 900 s.
    assert round(PlatformConfig().worst_chunk_seconds) == 137
    # 200 worst-case pages at 1024 MB (0.58 vCPU: 5.5 s a dense page) cannot finish in 900 s.
    with pytest.raises(ValueError) as err:
        PlatformConfig(cpu_pages_per_chunk=200, processor_memory_mb=1024)
    message = str(err.value)
    assert "cpu_pages_per_chunk=200" in message and "processor_timeout_seconds=900" in message
    assert "smaller chunks, more memory or a longer timeout" in message
    # A shorter timeout is refused for the default chunk too, and the message names the worst case.
    with pytest.raises(ValueError, match=r"may run 137 s, longer than processor_timeout_seconds=120"):
        PlatformConfig(processor_timeout_seconds=120)
    assert PlatformConfig(processor_timeout_seconds=300, max_pages=2000).max_pages == 2000


def test_a_gpu_chunk_that_cannot_finish_in_the_invocation_timeout_or_start_within_the_ttl_fails_synth() -> None:
    # 10 pages x 3 x 2 s (assumed VL cost) + 30 s: 90 s of 3600; the 200th chunk of 2000 pages starts after 17,910 s.
    assert PlatformConfig().gpu_pages_per_chunk == 10
    with pytest.raises(ValueError, match=r"gpu_pages_per_chunk=700 worst-case pages may run 4230 s on the endpoint, "
                                         r"longer than invocation_timeout_seconds=3600"):
        PlatformConfig(gpu_pages_per_chunk=700)
    with pytest.raises(ValueError, match=r"the last chunk of a max_pages=3000 job may wait 26910 s for the endpoint's 1 "
                                         r"slot\(s\), longer than request_ttl_seconds=21600"):
        PlatformConfig(max_pages=3000)
    # More slots drain it in time; a stage without the GPU route is not held to the endpoint's limits.
    assert PlatformConfig(max_pages=3000, max_instance_count=2).max_pages == 3000
    assert PlatformConfig(max_pages=3000, models=("pp-ocrv5",)).max_pages == 3000


def test_cdk_synth_refuses_a_chunk_that_cannot_finish() -> None:
    """The check runs where `cdk synth -c ocr:cpu_pages_per_chunk=300` reads the stage's context."""
    with pytest.raises(ValueError, match="cpu_pages_per_chunk=300"):
        PlatformConfig.from_context(App(context={"ocr:cpu_pages_per_chunk": "300"}))
