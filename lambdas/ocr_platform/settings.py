"""Runtime settings every handler reads from its environment.

The CDK stack sets these variables from the same names (it imports ``ENV``), so the contract between
infrastructure and code lives in one place.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass


class ENV:
    """Environment variable names set on the functions by the CDK stack."""

    TABLE_NAME = "OCR_TABLE_NAME"
    BUCKET_NAME = "OCR_BUCKET_NAME"
    PROCESSOR_FUNCTION = "OCR_PROCESSOR_FUNCTION"
    ENDPOINT_NAME = "OCR_ENDPOINT_NAME"
    VARIANT_NAME = "OCR_VARIANT_NAME"
    MAX_RECEIVE_COUNT = "OCR_MAX_RECEIVE_COUNT"
    INFLIGHT_WINDOW_SECONDS = "OCR_INFLIGHT_WINDOW_SECONDS"
    JOB_TTL_DAYS = "OCR_JOB_TTL_DAYS"
    INVOCATION_TIMEOUT_SECONDS = "OCR_INVOCATION_TIMEOUT_SECONDS"
    IDLE_ALARM_NAME = "OCR_IDLE_ALARM_NAME"
    QUEUED_DEADLINE_SECONDS = "OCR_QUEUED_DEADLINE_SECONDS"
    LAMBDA_DEADLINE_SECONDS = "OCR_LAMBDA_DEADLINE_SECONDS"
    SAGEMAKER_DEADLINE_SECONDS = "OCR_SAGEMAKER_DEADLINE_SECONDS"
    MAX_CONCURRENT_INVOCATIONS = "OCR_MAX_CONCURRENT_INVOCATIONS"
    #: ``on``: a layout model whose pipeline cannot be built here runs a substitute and the result says so
    #: (an ``engine_fallback`` warning); ``none`` or unset: the job fails ``engine_unavailable``.
    ENGINE_FALLBACK = "OCR_ENGINE_FALLBACK"
    #: Powertools' own variable: the CloudWatch namespace of the job outcome metrics (``ocr_platform.metrics``).
    METRICS_NAMESPACE = "POWERTOOLS_METRICS_NAMESPACE"


ENGINE_FALLBACK_ON = "on"
ENGINE_FALLBACK_OFF = "none"
_FALLBACK_ON_VALUES = frozenset({"on", "true", "1", "yes"})
_FALLBACK_OFF_VALUES = frozenset({"none", "off", "false", "0", "no", ""})


def engine_fallback_value(enabled: bool) -> str:
    """The ``OCR_ENGINE_FALLBACK`` value the stacks set for a fallback switch.

    >>> engine_fallback_value(False), engine_fallback_value(True)
    ('none', 'on')
    """
    return ENGINE_FALLBACK_ON if enabled else ENGINE_FALLBACK_OFF


def engine_fallback_enabled(value: str | None) -> bool:
    """Whether an ``OCR_ENGINE_FALLBACK`` value allows a substitute engine; unset or unknown fails closed.

    >>> engine_fallback_enabled(None), engine_fallback_enabled("none"), engine_fallback_enabled("on")
    (False, False, True)
    """
    text = (value or "").strip().lower()
    if text in _FALLBACK_ON_VALUES:
        return True
    if text not in _FALLBACK_OFF_VALUES:
        logging.getLogger(__name__).warning(
            "%s=%r is neither %r nor %r; engine fallback stays off", ENV.ENGINE_FALLBACK, value, ENGINE_FALLBACK_ON, ENGINE_FALLBACK_OFF
        )
    return False


def metrics_namespace(stage: str) -> str:
    """The CloudWatch namespace of a stage's job outcome metrics.

    >>> metrics_namespace("prod")
    'OcrPlatform/prod'
    """
    return f"OcrPlatform/{stage}"


@dataclass(frozen=True)
class RuntimeSettings:
    """What a handler needs to know about the deployed resources.

    Attributes:
        table_name: the DynamoDB jobs table.
        bucket_name: the bucket for documents, results, model cache and async I/O.
        processor_function: name or ARN of the CPU processor Lambda (invoker only).
        endpoint_name: the SageMaker async endpoint (invoker, scale-in).
        variant_name: the endpoint's production variant.
        max_receive_count: SQS receives before the DLQ; on the last one a retryable failure ends the job.
        inflight_window_seconds: a SageMaker job PROCESSING for longer than this no longer blocks scale-in.
        job_ttl_days: days a job item is kept (DynamoDB TTL); 0 keeps it forever.
        invocation_timeout_seconds: InvokeEndpointAsync's InvocationTimeoutSeconds (max 3600).
        idle_alarm_name: the endpoint's idle alarm, re-checked by the scale-in function's schedule.
        queued_deadline_seconds / lambda_deadline_seconds / sagemaker_deadline_seconds: how long a job may
            stay QUEUED, or PROCESSING on each backend, before the sweeper fails it ``timed_out``.
    """

    table_name: str
    bucket_name: str
    processor_function: str = ""
    endpoint_name: str = ""
    variant_name: str = "AllTraffic"
    max_receive_count: int = 3
    inflight_window_seconds: int = 3900
    job_ttl_days: int = 30
    invocation_timeout_seconds: int = 3600
    idle_alarm_name: str = ""
    queued_deadline_seconds: int = 3600
    lambda_deadline_seconds: int = 1200
    sagemaker_deadline_seconds: int = 3900

    def to_env(self) -> dict[str, str]:
        """The environment variables that ``from_env`` reads back into these settings."""
        values = {
            ENV.TABLE_NAME: self.table_name,
            ENV.BUCKET_NAME: self.bucket_name,
            ENV.PROCESSOR_FUNCTION: self.processor_function,
            ENV.ENDPOINT_NAME: self.endpoint_name,
            ENV.VARIANT_NAME: self.variant_name,
            ENV.MAX_RECEIVE_COUNT: str(self.max_receive_count),
            ENV.INFLIGHT_WINDOW_SECONDS: str(self.inflight_window_seconds),
            ENV.JOB_TTL_DAYS: str(self.job_ttl_days),
            ENV.INVOCATION_TIMEOUT_SECONDS: str(self.invocation_timeout_seconds),
            ENV.IDLE_ALARM_NAME: self.idle_alarm_name,
            ENV.QUEUED_DEADLINE_SECONDS: str(self.queued_deadline_seconds),
            ENV.LAMBDA_DEADLINE_SECONDS: str(self.lambda_deadline_seconds),
            ENV.SAGEMAKER_DEADLINE_SECONDS: str(self.sagemaker_deadline_seconds),
        }
        return {name: value for name, value in values.items() if value}

    @classmethod
    def from_env(cls) -> "RuntimeSettings":
        env = os.environ
        try:
            table, bucket = env[ENV.TABLE_NAME], env[ENV.BUCKET_NAME]
        except KeyError as missing:
            raise RuntimeError(f"Environment variable {missing} is not set; the stack sets it on every function.") from None
        return cls(
            table_name=table,
            bucket_name=bucket,
            processor_function=env.get(ENV.PROCESSOR_FUNCTION, ""),
            endpoint_name=env.get(ENV.ENDPOINT_NAME, ""),
            variant_name=env.get(ENV.VARIANT_NAME, "AllTraffic"),
            max_receive_count=int(env.get(ENV.MAX_RECEIVE_COUNT, "3")),
            inflight_window_seconds=int(env.get(ENV.INFLIGHT_WINDOW_SECONDS, "3900")),
            job_ttl_days=int(env.get(ENV.JOB_TTL_DAYS, "30")),
            invocation_timeout_seconds=int(env.get(ENV.INVOCATION_TIMEOUT_SECONDS, "3600")),
            idle_alarm_name=env.get(ENV.IDLE_ALARM_NAME, ""),
            queued_deadline_seconds=int(env.get(ENV.QUEUED_DEADLINE_SECONDS, "3600")),
            lambda_deadline_seconds=int(env.get(ENV.LAMBDA_DEADLINE_SECONDS, "1200")),
            sagemaker_deadline_seconds=int(env.get(ENV.SAGEMAKER_DEADLINE_SECONDS, "3900")),
        )
