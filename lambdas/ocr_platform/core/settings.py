"""Runtime settings every handler reads from its environment.

The CDK stack sets these variables from the same names (it imports ``ENV``), so the contract between
infrastructure and code lives in one place; a setting's fallback comes from ``ocr_platform.core.defaults``, where
the stack's own defaults live too.
"""

from __future__ import annotations

import logging
import os
import typing
from collections.abc import Iterable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

from ocr_platform.core import defaults
from ocr_platform.core.safe_http import UrlPolicy


class ENV:
    """Environment variable names set on the functions by the CDK stack."""

    TABLE_NAME = "OCR_TABLE_NAME"
    BUCKET_NAME = "OCR_BUCKET_NAME"
    PROCESSOR_FUNCTION = "OCR_PROCESSOR_FUNCTION"
    QUEUE_URL = "OCR_QUEUE_URL"
    #: Read by the jobs API at import (its CORS answers): the console's origins, comma-separated.
    CONSOLE_ORIGINS = "OCR_CONSOLE_ORIGINS"
    ENDPOINT_NAME = "OCR_ENDPOINT_NAME"
    VARIANT_NAME = "OCR_VARIANT_NAME"
    MAX_RECEIVE_COUNT = "OCR_MAX_RECEIVE_COUNT"
    DISPATCH_LEASE_SECONDS = "OCR_DISPATCH_LEASE_SECONDS"
    INFLIGHT_WINDOW_SECONDS = "OCR_INFLIGHT_WINDOW_SECONDS"
    JOB_TTL_DAYS = "OCR_JOB_TTL_DAYS"
    INVOCATION_TIMEOUT_SECONDS = "OCR_INVOCATION_TIMEOUT_SECONDS"
    REQUEST_TTL_SECONDS = "OCR_REQUEST_TTL_SECONDS"
    IDLE_ALARM_NAME = "OCR_IDLE_ALARM_NAME"
    QUEUED_DEADLINE_SECONDS = "OCR_QUEUED_DEADLINE_SECONDS"
    LAMBDA_DEADLINE_SECONDS = "OCR_LAMBDA_DEADLINE_SECONDS"
    SAGEMAKER_DEADLINE_SECONDS = "OCR_SAGEMAKER_DEADLINE_SECONDS"
    SETTLE_GRACE_SECONDS = "OCR_SETTLE_GRACE_SECONDS"
    MAX_CONCURRENT_INVOCATIONS = "OCR_MAX_CONCURRENT_INVOCATIONS"
    CPU_PAGES_PER_CHUNK = "OCR_CPU_PAGES_PER_CHUNK"
    #: Every function that finishes jobs: the share of a job's pages, in percent, that may fail while the job
    #: still completes with the others (``ocr_platform.core.page_failures``).
    MAX_FAILED_PAGE_PERCENT = "OCR_MAX_FAILED_PAGE_PERCENT"
    #: Processor invocations that may run at once under the stage's own admission control; 0: none (the
    #: processor's reserved concurrency bounds it instead).
    PROCESSOR_SLOTS = "OCR_PROCESSOR_SLOTS"
    ADMISSION_LEASE_SECONDS = "OCR_ADMISSION_LEASE_SECONDS"
    ADMISSION_RETRY_SECONDS = "OCR_ADMISSION_RETRY_SECONDS"
    #: Read by the endpoint container (``ocr_platform.gpu.model_server``): it answers a job of more pages with a
    #: split plan; unset or 0, it reads every job whole.
    GPU_PAGES_PER_CHUNK = "OCR_GPU_PAGES_PER_CHUNK"
    #: Read by the endpoint container's ``paddleocr-vl`` engine: the PaddleOCR-VL pipeline version it runs
    #: (``defaults.VL_VERSION_MODELS``; unset: ``defaults.ENDPOINT_VL_VERSION``). The stack sets it from
    #: ``PlatformConfig.endpoint_vl_version``, the version whose weights the image bakes.
    VL_VERSION = "OCR_VL_VERSION"
    #: Read by the engines (``PaddleSettings``), not by ``RuntimeSettings``.
    MAX_PAGES = "OCR_MAX_PAGES"
    CPU_THREADS = "OCR_CPU_THREADS"
    #: ``on``: a layout model whose pipeline cannot be built here runs a substitute and the result says so
    #: (an ``engine_fallback`` warning); ``none`` or unset: the job fails ``engine_unavailable``.
    ENGINE_FALLBACK = "OCR_ENGINE_FALLBACK"
    EVENT_BUS_NAME = "OCR_EVENT_BUS_NAME"
    WEBHOOK_QUEUE_URL = "OCR_WEBHOOK_QUEUE_URL"
    WEBHOOK_DLQ_URL = "OCR_WEBHOOK_DLQ_URL"
    WEBHOOK_SECRET_ARN = "OCR_WEBHOOK_SECRET_ARN"
    WEBHOOK_FIRST_RETRY_SECONDS = "OCR_WEBHOOK_FIRST_RETRY_SECONDS"
    WEBHOOK_MAX_RETRY_INTERVAL_SECONDS = "OCR_WEBHOOK_MAX_RETRY_INTERVAL_SECONDS"
    WEBHOOK_RETRY_WINDOW_SECONDS = "OCR_WEBHOOK_RETRY_WINDOW_SECONDS"
    URL_FETCH_TIMEOUT_SECONDS = "OCR_URL_FETCH_TIMEOUT_SECONDS"
    INLINE_RESULT_MAX_BYTES = "OCR_INLINE_RESULT_MAX_BYTES"
    #: ``local``: outbound URLs (webhooks, URL input) may also be ``http://`` and loopback addresses. Only the
    #: local stack sets it; a deployed function keeps the default, ``public-https``.
    URL_POLICY = "OCR_URL_POLICY"
    #: Powertools' own variable: the CloudWatch namespace of the job outcome metrics (``ocr_platform.core.metrics``).
    METRICS_NAMESPACE = "POWERTOOLS_METRICS_NAMESPACE"


#: Read by the CPU processor (``ocr_platform.document.work_budget.WorkBudget.from_env``): each limit of an Office
#: or HTML file's work budget, by its ``WorkBudget`` field; ``PlatformConfig.work_budget`` sets them.
WORK_BUDGET_ENV = {
    "max_units": "OCR_MAX_OFFICE_UNITS",
    "max_cells": "OCR_MAX_OFFICE_CELLS",
    "max_table_cells": "OCR_MAX_TABLE_CELLS",
    "max_paragraphs": "OCR_MAX_DOCX_PARAGRAPHS",
    "max_part_bytes": "OCR_MAX_PART_BYTES",
    "max_xml_bytes": "OCR_MAX_PARSED_XML_BYTES",
    "max_html_nodes": "OCR_MAX_HTML_NODES",
    "max_html_depth": "OCR_MAX_HTML_DEPTH",
    "max_picture_pixels": "OCR_MAX_PICTURE_PIXELS",
}


def work_budget_env(items: Iterable[str]) -> dict[str, str]:
    """The processor's environment for ``PlatformConfig.work_budget`` items (``name=value``, a ``WorkBudget`` field).

    >>> work_budget_env(["max_cells=5000000", "max_units = 3000"])
    {'OCR_MAX_OFFICE_CELLS': '5000000', 'OCR_MAX_OFFICE_UNITS': '3000'}
    >>> work_budget_env(["max_rows=5"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: work_budget item 'max_rows=5' must be NAME=WHOLE_NUMBER (at least 1), NAME one of max_units, max_cells, ...
    """
    found = {}
    for item in items:
        name, _, value = (part.strip() for part in item.partition("="))
        if name not in WORK_BUDGET_ENV or not value.isdigit() or int(value) < 1:
            raise ValueError(f"work_budget item {item!r} must be NAME=WHOLE_NUMBER (at least 1), NAME one of {', '.join(WORK_BUDGET_ENV)}")
        found[WORK_BUDGET_ENV[name]] = str(int(value))
    return found


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


#: ``dataclasses.field`` metadata of ``RuntimeSettings``: the field's environment variable, and its kind.
_ENV_VARIABLE = "env"
_KIND = "kind"
_RESOURCE = "resource"
_SETTING = "setting"
_LOCAL = "local"


def _resource(variable: str, *, required: bool = False) -> Any:
    """A deployed resource's name: the stack sets it on the functions that use it, there is no default."""
    metadata = {_ENV_VARIABLE: variable, _KIND: _RESOURCE}
    return field(metadata=metadata) if required else field(default="", metadata=metadata)


def _setting(variable: str, default: int | str) -> Any:
    """A setting whose fallback, when the variable is unset, is what the stack deploys by default."""
    return field(default=default, metadata={_ENV_VARIABLE: variable, _KIND: _SETTING})


def _local_switch(variable: str, default: str) -> Any:
    """A switch only the local stack sets; the deployed stack never does, so there it is always ``default``."""
    return field(default=default, metadata={_ENV_VARIABLE: variable, _KIND: _LOCAL})


@dataclass(frozen=True)
class RuntimeSettings:
    """What a handler needs to know about the deployed resources.

    Each field is read from one environment variable (``ENV``). The stack sets every one a function uses;
    a setting that is unset falls back to what the stack deploys by default (``ocr_platform.core.defaults``),
    so a handler run outside the stack behaves as the deployed one.

    Attributes:
        table_name: the DynamoDB jobs table.
        bucket_name: the bucket for documents, results, model cache and async I/O.
        processor_function: name or ARN of the CPU processor Lambda (invoker only).
        queue_url: the job queue, where the drop folder's ingest function sends each job's message.
        endpoint_name: the SageMaker async endpoint (invoker, scale-in).
        variant_name: the endpoint's production variant.
        max_receive_count: SQS receives before the DLQ; on the last one a retryable failure ends the job.
        dispatch_lease_seconds: how long one delivery's claim on a job's hand-over holds (invoker only).
        inflight_window_seconds: a SageMaker job PROCESSING for longer than this no longer blocks scale-in.
        job_ttl_days: days a job item is kept (DynamoDB TTL); 0 keeps it forever.
        invocation_timeout_seconds: InvokeEndpointAsync's InvocationTimeoutSeconds (max 3600).
        request_ttl_seconds: InvokeEndpointAsync's RequestTTLSeconds (max 21600).
        idle_alarm_name: the endpoint's idle alarm, re-checked by the scale-in function's schedule.
        queued_deadline_seconds / lambda_deadline_seconds / sagemaker_deadline_seconds: how long a job may
            stay QUEUED, or PROCESSING on each backend, before the sweeper fails it ``timed_out``.
        settle_grace_seconds: how long after SageMaker wrote a GPU job's outcome the sweeper settles the job
            from S3 (its notification had that long to finish it).
        cpu_pages_per_chunk: the processor splits a job of more pages than this into chunks (processor only).
        max_failed_page_percent: a job completes without its failed pages up to this share of them, in percent;
            past it, it fails naming them (every function that finishes jobs).
        processor_slots: processor invocations that may hold a slot of the stage's semaphore at once
            (``ocr_platform.jobs.admission``; invoker and processor); 0: no semaphore (reserved concurrency instead).
        admission_lease_seconds: how long a processor slot holds unreleased.
        admission_retry_seconds: how long a job that found no free slot waits in the queue before the next try.
        event_bus_name: the EventBridge bus the completion events go to (every function that finishes jobs).
        webhook_queue_url / webhook_dlq_url: the webhook deliveries' queue and where a delivery that ran out
            of retries is parked.
        webhook_secret_arn: the Secrets Manager secret whose value signs every webhook (deliverer only).
        webhook_first_retry_seconds / webhook_max_retry_interval_seconds / webhook_retry_window_seconds: the
            webhook retry schedule (``defaults.webhook_delivery_attempts``).
        url_fetch_timeout_seconds: fetching a document submitted by URL, redirects included (invoker only).
        inline_result_max_bytes: the jobs API returns a result up to this size inline (API only).
        url_policy: ``public-https`` (deployed) or ``local`` (``ocr_platform.core.safe_http.UrlPolicy``).

    >>> settings = RuntimeSettings.from_env({"OCR_TABLE_NAME": "jobs", "OCR_BUCKET_NAME": "docs"})
    >>> settings.queued_deadline_seconds, settings.job_ttl_days
    (346200, 30)
    >>> RuntimeSettings.from_env(settings.to_env()) == settings
    True
    """

    table_name: str = _resource(ENV.TABLE_NAME, required=True)
    bucket_name: str = _resource(ENV.BUCKET_NAME, required=True)
    processor_function: str = _resource(ENV.PROCESSOR_FUNCTION)
    queue_url: str = _resource(ENV.QUEUE_URL)
    endpoint_name: str = _resource(ENV.ENDPOINT_NAME)
    variant_name: str = _setting(ENV.VARIANT_NAME, defaults.VARIANT_NAME)
    max_receive_count: int = _setting(ENV.MAX_RECEIVE_COUNT, defaults.MAX_RECEIVE_COUNT)
    dispatch_lease_seconds: int = _setting(ENV.DISPATCH_LEASE_SECONDS, defaults.dispatch_lease_seconds())
    inflight_window_seconds: int = _setting(ENV.INFLIGHT_WINDOW_SECONDS, defaults.inflight_window_seconds())
    job_ttl_days: int = _setting(ENV.JOB_TTL_DAYS, defaults.JOB_TTL_DAYS)
    invocation_timeout_seconds: int = _setting(ENV.INVOCATION_TIMEOUT_SECONDS, defaults.INVOCATION_TIMEOUT_SECONDS)
    request_ttl_seconds: int = _setting(ENV.REQUEST_TTL_SECONDS, defaults.REQUEST_TTL_SECONDS)
    idle_alarm_name: str = _resource(ENV.IDLE_ALARM_NAME)
    queued_deadline_seconds: int = _setting(ENV.QUEUED_DEADLINE_SECONDS, defaults.queued_deadline_seconds())
    lambda_deadline_seconds: int = _setting(ENV.LAMBDA_DEADLINE_SECONDS, defaults.lambda_deadline_seconds())
    sagemaker_deadline_seconds: int = _setting(ENV.SAGEMAKER_DEADLINE_SECONDS, defaults.sagemaker_deadline_seconds())
    settle_grace_seconds: int = _setting(ENV.SETTLE_GRACE_SECONDS, defaults.SETTLE_GRACE_SECONDS)
    cpu_pages_per_chunk: int = _setting(ENV.CPU_PAGES_PER_CHUNK, defaults.CPU_PAGES_PER_CHUNK)
    max_failed_page_percent: int = _setting(ENV.MAX_FAILED_PAGE_PERCENT, defaults.MAX_FAILED_PAGE_PERCENT)
    processor_slots: int = _setting(ENV.PROCESSOR_SLOTS, defaults.PROCESSOR_MAX_CONCURRENCY)
    admission_lease_seconds: int = _setting(ENV.ADMISSION_LEASE_SECONDS, defaults.processor_admission_lease_seconds())
    admission_retry_seconds: int = _setting(ENV.ADMISSION_RETRY_SECONDS, defaults.ADMISSION_RETRY_SECONDS)
    event_bus_name: str = _setting(ENV.EVENT_BUS_NAME, defaults.EVENT_BUS_NAME)
    webhook_queue_url: str = _resource(ENV.WEBHOOK_QUEUE_URL)
    webhook_dlq_url: str = _resource(ENV.WEBHOOK_DLQ_URL)
    webhook_secret_arn: str = _resource(ENV.WEBHOOK_SECRET_ARN)
    webhook_first_retry_seconds: int = _setting(ENV.WEBHOOK_FIRST_RETRY_SECONDS, defaults.WEBHOOK_FIRST_RETRY_SECONDS)
    webhook_max_retry_interval_seconds: int = _setting(
        ENV.WEBHOOK_MAX_RETRY_INTERVAL_SECONDS, defaults.WEBHOOK_MAX_RETRY_INTERVAL_SECONDS
    )
    webhook_retry_window_seconds: int = _setting(ENV.WEBHOOK_RETRY_WINDOW_SECONDS, defaults.WEBHOOK_RETRY_WINDOW_SECONDS)
    url_fetch_timeout_seconds: int = _setting(ENV.URL_FETCH_TIMEOUT_SECONDS, defaults.URL_FETCH_TIMEOUT_SECONDS)
    inline_result_max_bytes: int = _setting(ENV.INLINE_RESULT_MAX_BYTES, defaults.INLINE_RESULT_MAX_BYTES)
    url_policy: str = _local_switch(ENV.URL_POLICY, UrlPolicy.PUBLIC_HTTPS.value)

    @classmethod
    def env_variables(cls) -> dict[str, str]:
        """``{field name: environment variable}`` for every field.

        >>> RuntimeSettings.env_variables()["job_ttl_days"]
        'OCR_JOB_TTL_DAYS'
        """
        return {f.name: f.metadata[_ENV_VARIABLE] for f in fields(cls)}

    @classmethod
    def setting_names(cls) -> tuple[str, ...]:
        """The fields that are settings with a deployed default (not resource names).

        ``PlatformConfig`` has an attribute of each name, and the stack deploys its value.

        >>> names = RuntimeSettings.setting_names()
        >>> "queued_deadline_seconds" in names, "table_name" in names
        (True, False)
        """
        return tuple(f.name for f in fields(cls) if f.metadata[_KIND] == _SETTING)

    def to_env(self) -> dict[str, str]:
        """The environment variables that ``from_env`` reads back into these settings (unset names left out)."""
        values = {f.metadata[_ENV_VARIABLE]: str(getattr(self, f.name)) for f in fields(self)}
        return {name: value for name, value in values.items() if value}

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> RuntimeSettings:
        """The settings from ``environ`` (default: ``os.environ``); unset settings take their defaults.

        Raises:
            RuntimeError: a required variable is unset, or a number is not one; the message names it.
        """
        env = os.environ if environ is None else environ
        hints = typing.get_type_hints(cls)
        values: dict[str, Any] = {}
        for f in fields(cls):
            variable = f.metadata[_ENV_VARIABLE]
            if variable not in env:
                if f.default is MISSING:
                    raise RuntimeError(
                        f"Environment variable {variable!r} is not set; the stack sets it on every function."
                    )
                continue
            text = env[variable]
            if hints[f.name] is int:
                try:
                    values[f.name] = int(text)
                except ValueError:
                    raise RuntimeError(f"Environment variable {variable}={text!r} must be a whole number.") from None
            else:
                values[f.name] = text
        return cls(**values)
