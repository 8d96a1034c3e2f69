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

from ocr_infra.config_fields import PlatformFields
from ocr_infra.gpu_host import cuda_problem
from ocr_platform.core import defaults
from ocr_platform.core.routing import MODEL_TABLE, Backend
from ocr_platform.core.settings import work_budget_env

#: The context key holding a JSON object of overrides; ``ocr:<field>`` keys override single fields.
CONTEXT_KEY = "ocr"

#: The construct ids of a stage's two stacks: what ``cdk deploy`` / ``cdk destroy`` select a stack by (``cdk ls`` lists
#: them with their stack names, ``OcrPlatform (ocr-platform-dev)``).
CORE_STACK_ID = "OcrPlatform"
GPU_STACK_ID = "OcrPlatformGpu"

#: AWS publishes the Powertools for AWS Lambda (Python) layers from this account in every commercial region, which are
#: the ``aws`` partition's (ocr_infra.platform_function.powertools_layer).
POWERTOOLS_LAYER_ACCOUNT, POWERTOOLS_LAYER_PARTITION = "017000801446", "aws"

_STAGE_PATTERN = re.compile(r"^[a-z][a-z0-9-]{0,19}$")


@dataclass(frozen=True)
class PlatformConfig(PlatformFields):
    """Settings of one deployment (a *stage*) of the OCR platform: the fields of :class:`PlatformFields` (each
    documented there), validated when the config is built, with the values derived from them and the CDK context's
    overrides."""

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
            problems.append(f"endpoint_image_cuda={self.endpoint_image_cuda!r} must be a CUDA version such as 12.9")
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
        within("max_failed_page_percent", 0, 100)
        try:
            work_budget_env(self.work_budget)
        except ValueError as err:
            problems.append(str(err))
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
