"""The local stack's Lambda functions: what the local Lambda runtime knows about one (``FunctionSpec``) and
the stage's list of them, with the handler each runs, its environment, timeout, memory, retries and concurrency.

Why a module of its own: these mirror the CDK function definitions of the deployed stack for the local
Lambda runtime. Each function gets the ``RuntimeSettings`` environment the deployed stack gives it, built
from the same ``PlatformConfig``, so a handler cannot tell the local stack from AWS by its settings.

>>> from ocr_infra.config import PlatformConfig
>>> from ocr_platform.local.provisioning import resource_names
>>> config = PlatformConfig(stage="local")
>>> [spec.name for spec in function_specs(config, resource_names(config))]  # doctest: +NORMALIZE_WHITESPACE
['ocr-local-invoker', 'ocr-local-processor', 'ocr-local-completion', 'ocr-local-scale-in',
 'ocr-local-dlq-consumer', 'ocr-local-sweeper', 'ocr-local-ingest', 'ocr-local-api', 'ocr-local-webhooks']
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ocr_platform.core import defaults
from ocr_platform.core.settings import ENV, RuntimeSettings, engine_fallback_value, metrics_namespace, work_budget_env

if TYPE_CHECKING:
    from ocr_infra.config import PlatformConfig


@dataclass(frozen=True)
class FunctionSpec:
    """One Lambda function of the local stack.

    Attributes:
        name: the function name (``Invoke`` also accepts its ARN).
        handler: ``module.attribute`` of the handler, as in the Lambda configuration.
        environment: the function's environment variables (on top of the runtime's AWS endpoint settings).
        timeout_seconds: the invocation is stopped and reported as ``Sandbox.Timedout`` after this.
        memory_mb: reported to the handler through its context.
        retry_attempts: retries of a failed asynchronous (``Event``) invocation (Lambda's default is 2).
        on_failure: name of the function that receives the invocation record when an async invocation
            still fails after its retries (Lambda's on-failure destination), or ``None``.
        on_failure_queue: name of the SQS queue that receives that record instead (an SQS on-failure
            destination: the stack's parked-events queue), or ``None``; ``on_failure`` wins if both are set.
        max_concurrency: invocations it runs at once, each in an execution environment of its own (its
            reserved concurrency); 1 runs one at a time.
    """

    name: str
    handler: str
    environment: dict[str, str] = field(default_factory=dict)
    timeout_seconds: int = 60
    memory_mb: int = 256
    retry_attempts: int = 2
    on_failure: str | None = None
    on_failure_queue: str | None = None
    max_concurrency: int = 1


#: The invoker's concurrency in the local stack. The deployed invoker reserves none: its SQS event source
#: scales it out, so one message delivered twice can reach two invocations at once. Two lets that race
#: happen here (the ``concurrent-duplicate`` fault); more would only crowd a small machine. Every other
#: function runs one invocation at a time: the local stack invokes them asynchronously, from a queue it
#: serves in order, or from one polling loop.
INVOKER_CONCURRENCY = 2


#: The webhook deliverer's concurrency here: two, so that a duplicate of a webhook's message can reach two
#: invocations at once (the ``concurrent-duplicate`` fault), as on AWS, where its SQS event source scales out.
WEBHOOK_DELIVERER_CONCURRENCY = 2


def default_processor_concurrency() -> int:
    """The processor's concurrency in the local stack: one execution environment per core of this machine.

    On AWS each chunk of a split job runs in an execution environment with its own vCPUs; here they share
    the machine's cores, so more environments than cores would only take turns (and each holds its models
    in memory). Each runs ONNX Runtime on the cores left to it (``processor_threads``).
    """
    return max(1, os.cpu_count() or 1)


def processor_threads(concurrency: int) -> int:
    """ONNX Runtime's intra-op threads in each of ``concurrency`` local processor environments, so that
    environments x threads <= cores.

    At one core each, one thread also keeps ONNX Runtime from spinning: a single intra-op thread is the
    caller's own thread, with no pool to busy-wait on cores another environment needs (PaddleX 3.x's ONNX
    Runtime config cannot turn spinning off).
    """
    return max(1, (os.cpu_count() or 1) // concurrency)


def function_specs(
    config: PlatformConfig, names: Mapping[str, str], *, processor_timeout_seconds: int | None = None,
    processor_concurrency: int | None = None, resources: Mapping[str, str] | None = None,
    webhook_retry_seconds: tuple[int, int, int] | None = None, admission_retry_seconds: int | None = None,
) -> list[FunctionSpec]:
    """The stage's functions, named as in ``names`` (``provisioning.resource_names``); the processor's timeout
    and concurrency, the webhook retry schedule (first wait, longest wait, window) and how long a job waits
    for a processor slot between tries may be overridden (``LocalOptions``). ``resources`` are the
    provisioned queues' URLs and the secret's ARN (``provision``)."""
    cfg = config
    found = dict(resources or {})
    processors = processor_concurrency or default_processor_concurrency()
    if cfg.processor_concurrency_mode == "reserved":  # the function's reserved concurrency, as deployed
        processors = min(processors, cfg.processor_max_concurrency)
    # Outbound URLs (webhooks, URL input) may be http://127.0.0.1 here: the local stack's receivers are.
    common: dict[str, Any] = {"table_name": names["table"], "bucket_name": names["bucket"], "job_ttl_days": cfg.job_ttl_days,
                              "url_policy": "local"}
    # What every function that finishes jobs gets: where the completion events and the webhooks go.
    finishes: dict[str, Any] = {"event_bus_name": cfg.event_bus_name, "webhook_queue_url": found.get("webhook_queue_url", ""),
                                "max_failed_page_percent": cfg.max_failed_page_percent}
    first, longest, window = webhook_retry_seconds or (
        cfg.webhook_first_retry_seconds, cfg.webhook_max_retry_interval_seconds, cfg.webhook_retry_window_seconds
    )

    # The stage's processor semaphore, as the invoker and the processor use it (``ocr_platform.jobs.admission``).
    admission: dict[str, Any] = {
        "processor_slots": cfg.processor_slots,
        "admission_lease_seconds": defaults.processor_admission_lease_seconds(processor_timeout_seconds or cfg.processor_timeout_seconds),
    }

    # Who sends requests to the endpoint: the invoker, and the completion function and the sweeper for the
    # chunks of a job the endpoint split.
    endpoint_requests: dict[str, Any] = {
        "endpoint_name": names["endpoint"], "invocation_timeout_seconds": cfg.invocation_timeout_seconds,
        "request_ttl_seconds": cfg.request_ttl_seconds,
    }

    def env(service: str, **settings: Any) -> dict[str, str]:
        return {"POWERTOOLS_SERVICE_NAME": service, ENV.METRICS_NAMESPACE: metrics_namespace(cfg.stage),
                **RuntimeSettings(**common, **settings).to_env()}

    return [
        FunctionSpec(
            names["invoker"], "ocr_platform.handlers.invoker.handler",
            env("ocr-invoker", processor_function=names["processor"], **endpoint_requests, **finishes,
                variant_name=cfg.variant_name, max_receive_count=cfg.max_receive_count,
                dispatch_lease_seconds=cfg.dispatch_lease_seconds, url_fetch_timeout_seconds=cfg.url_fetch_timeout_seconds,
                queue_url=found.get("queue_url", ""), **admission,
                admission_retry_seconds=cfg.admission_retry_seconds if admission_retry_seconds is None else admission_retry_seconds),
            timeout_seconds=cfg.invoker_timeout_seconds, memory_mb=cfg.invoker_memory_mb, max_concurrency=INVOKER_CONCURRENCY,
        ),
        FunctionSpec(
            names["processor"], "ocr_platform.handlers.processor.handler",
            {**env("ocr-processor", cpu_pages_per_chunk=cfg.cpu_pages_per_chunk, **finishes, **admission),
             ENV.ENGINE_FALLBACK: engine_fallback_value(cfg.engine_fallback), ENV.MAX_PAGES: str(cfg.max_pages),
             ENV.CPU_THREADS: str(processor_threads(processors)), **work_budget_env(cfg.work_budget)},
            timeout_seconds=processor_timeout_seconds or cfg.processor_timeout_seconds, memory_mb=cfg.processor_memory_mb,
            retry_attempts=cfg.processor_retry_attempts, on_failure=names["completion"],
            max_concurrency=processors,
        ),
        FunctionSpec(
            names["completion"], "ocr_platform.handlers.completion.handler", env("ocr-completion", **endpoint_requests, **finishes),
            timeout_seconds=cfg.completion_timeout_seconds, memory_mb=cfg.completion_memory_mb,
            retry_attempts=defaults.ASYNC_RETRY_ATTEMPTS, on_failure_queue=names["parked_events"],
        ),
        FunctionSpec(
            names["scale_in"], "ocr_platform.handlers.scale_in.handler",
            env("ocr-scale-in", endpoint_name=names["endpoint"], variant_name=cfg.variant_name,
                inflight_window_seconds=cfg.inflight_window_seconds, idle_alarm_name=names["idle_alarm"]),
            timeout_seconds=cfg.scale_in_timeout_seconds, memory_mb=cfg.scale_in_memory_mb,
            retry_attempts=defaults.ASYNC_RETRY_ATTEMPTS, on_failure_queue=names["parked_events"],
        ),
        FunctionSpec(
            names["dlq_consumer"], "ocr_platform.handlers.dlq_consumer.handler", env("ocr-dlq-consumer", **finishes),
            timeout_seconds=defaults.DLQ_CONSUMER_TIMEOUT_SECONDS, memory_mb=defaults.DLQ_CONSUMER_MEMORY_MB,
        ),
        FunctionSpec(
            names["sweeper"], "ocr_platform.handlers.sweeper.handler",
            env("ocr-sweeper", queued_deadline_seconds=cfg.queued_deadline_seconds,
                lambda_deadline_seconds=cfg.lambda_deadline_seconds,
                sagemaker_deadline_seconds=cfg.sagemaker_deadline_seconds, settle_grace_seconds=cfg.settle_grace_seconds,
                **endpoint_requests, **finishes),
            timeout_seconds=defaults.SWEEPER_TIMEOUT_SECONDS, memory_mb=defaults.SWEEPER_MEMORY_MB,
            retry_attempts=0, on_failure_queue=names["parked_events"],
        ),
        FunctionSpec(
            names["ingest"], "ocr_platform.handlers.ingest.handler", env("ocr-ingest", queue_url=found.get("queue_url", ""), **finishes),
            timeout_seconds=defaults.INGEST_TIMEOUT_SECONDS, memory_mb=defaults.INGEST_MEMORY_MB,
            retry_attempts=defaults.ASYNC_RETRY_ATTEMPTS, on_failure_queue=names["parked_events"],
        ),
        FunctionSpec(
            names["api"], "ocr_platform.handlers.api.handler",
            {**env("ocr-api", queue_url=found.get("queue_url", ""), inline_result_max_bytes=cfg.inline_result_max_bytes),
             ENV.CONSOLE_ORIGINS: ",".join(cfg.console_origins)},
            timeout_seconds=defaults.API_TIMEOUT_SECONDS, memory_mb=defaults.API_MEMORY_MB,
        ),
        FunctionSpec(
            names["webhooks"], "ocr_platform.handlers.webhook_deliverer.handler",
            env("ocr-webhooks", webhook_queue_url=found.get("webhook_queue_url", ""),
                webhook_dlq_url=found.get("webhook_dlq_url", ""), webhook_secret_arn=found.get("webhook_secret_arn", ""),
                webhook_first_retry_seconds=first, webhook_max_retry_interval_seconds=longest,
                webhook_retry_window_seconds=window),
            timeout_seconds=defaults.WEBHOOK_DELIVERER_TIMEOUT_SECONDS, memory_mb=defaults.WEBHOOK_DELIVERER_MEMORY_MB,
            max_concurrency=WEBHOOK_DELIVERER_CONCURRENCY,
        ),
    ]
