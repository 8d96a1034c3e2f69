"""Job metrics in CloudWatch's embedded metric format (EMF): what the failed-job-rate alarm reads and the
operations dashboard shows.

A job is counted when the invoker hands it to its backend (``JobsStarted``) and when its conditional terminal
write succeeds (``JobsCompleted`` or ``JobsFailed``), from ``JobStore``'s ``on_finished`` hook that
``ocr_platform.handlers._services`` sets: a repeated notification or a late crash report counts nothing.
Powertools prints each as one JSON log line; CloudWatch extracts the metrics from the function's log without
an API call. Namespace: the one the stack sets on the function (``POWERTOOLS_METRICS_NAMESPACE``,
``OcrPlatform/<stage>``).

============== ============ ========================================================================
metric         unit         dimension sets (each also carries ``service=jobs``)
============== ============ ========================================================================
JobsStarted    Count        ``service``; ``service, route``
JobsCompleted  Count        ``service``; ``service, route``
JobLatency     Milliseconds ``service``; ``service, route`` -- a completed job, ``created_at`` to ``finished_at``
PagesProcessed Count        ``service``; ``service, route`` -- the pages of a completed job
JobsFailed     Count        ``service``; ``service, route``; ``service, error_code``
============== ============ ========================================================================

The failed-job-rate alarm reads the ``service``-only set. Dimension values are bounded, so a malformed
message cannot create metrics at will (each dimension value is a metric CloudWatch bills): ``route`` is the
job's model when it is a routing key, else ``unknown``; ``error_code`` one of ``ErrorCode``'s, else ``other``.

Each event's metrics are a line of their own, written at once: one invocation may finish jobs of several
routes (a sweep, an SQS batch) and one line holds one value per dimension. ``metrics`` is the handlers'
shared set, flushed by ``@metrics.log_metrics`` when a handler returns.

>>> job = {"job_id": "job-1", "model": "pp-ocrv5", "status": "FAILED", "error": {"code": "encrypted_pdf", "message": "..."}}
>>> line = job_outcome_line(job, namespace="OcrPlatform/dev")
>>> sorted(line["_aws"]["CloudWatchMetrics"][0]["Dimensions"])
[['service'], ['service', 'error_code'], ['service', 'route']]
>>> line["JobsFailed"], line["route"], line["error_code"]
([1.0], 'pp-ocrv5', 'encrypted_pdf')
"""

from __future__ import annotations

import json
import logging
import os
import warnings
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.metrics import EphemeralMetrics, MetricUnit
from aws_lambda_powertools.metrics.functions import is_metrics_disabled

from ocr_platform.core.errors import ErrorCode
from ocr_platform.core.routing import MODEL_TABLE
from ocr_platform.core.settings import ENV

logger = logging.getLogger(__name__)

JOBS_STARTED = "JobsStarted"
JOBS_COMPLETED = "JobsCompleted"
JOBS_FAILED = "JobsFailed"
JOB_LATENCY = "JobLatency"
PAGES_PROCESSED = "PagesProcessed"
#: The ``service`` dimension of every job metric (the same in every function, so one alarm sees them all).
METRICS_SERVICE = "jobs"
ROUTE_DIMENSION = "route"
ERROR_CODE_DIMENSION = "error_code"
#: ``route`` of a job whose model is no routing key (it failed ``unknown_model`` or ``invalid_message``).
UNKNOWN_ROUTE = "unknown"
#: ``error_code`` of a failure whose code is not one of ``ErrorCode``'s (an endpoint's own code, say).
OTHER_ERROR_CODE = "other"
KNOWN_ERROR_CODES = frozenset(value for name, value in vars(ErrorCode).items() if name.isupper() and isinstance(value, str))

metrics = Metrics(service=METRICS_SERVICE)
# Most invocations add nothing to the shared set (job metrics are written per event): an empty set is normal.
warnings.filterwarnings("ignore", message="No application metrics to publish", category=UserWarning)


def route_dimension(model: object) -> str:
    """The ``route`` dimension value of a job's model: the routing key itself, or ``unknown``."""
    return model if isinstance(model, str) and model in MODEL_TABLE else UNKNOWN_ROUTE


def error_code_dimension(code: object) -> str:
    """The ``error_code`` dimension value of a failure: a code of ``ErrorCode``, or ``other``."""
    return code if isinstance(code, str) and code in KNOWN_ERROR_CODES else OTHER_ERROR_CODE


def _milliseconds_between(start: object, end: object) -> float | None:
    """Milliseconds from one ISO-8601 timestamp of the job item to another; ``None`` if either is missing or unreadable."""
    if not isinstance(start, str) or not isinstance(end, str):
        return None
    try:
        elapsed = datetime.fromisoformat(end) - datetime.fromisoformat(start)
    except ValueError:
        return None
    return max(0.0, elapsed.total_seconds() * 1000)


def _line(values: Mapping[str, tuple[MetricUnit, float]], dimension_sets: list[dict[str, str]], namespace: str) -> dict[str, Any]:
    """One EMF line: ``values`` under the ``service`` dimension set and each of ``dimension_sets``."""
    line = EphemeralMetrics(service=METRICS_SERVICE, namespace=namespace)
    for name, (unit, value) in values.items():
        line.add_metric(name=name, unit=unit, value=value)
    for dimensions in dimension_sets:
        line.add_dimensions(service=METRICS_SERVICE, **dimensions)
    return dict(line.serialize_metric_set())


def job_started_line(model: str, *, namespace: str) -> dict[str, Any]:
    """The EMF line of one job handed to its backend."""
    return _line({JOBS_STARTED: (MetricUnit.Count, 1)}, [{ROUTE_DIMENSION: route_dimension(model)}], namespace)


def job_outcome_line(job: Mapping[str, Any], *, namespace: str) -> dict[str, Any]:
    """The EMF line of one job that has just become COMPLETED or FAILED (the whole item, as ``on_finished`` gets it)."""
    route = {ROUTE_DIMENSION: route_dimension(job.get("model"))}
    if job.get("status") == "FAILED":
        error = job.get("error")
        code = error_code_dimension(error.get("code") if isinstance(error, Mapping) else None)
        return _line({JOBS_FAILED: (MetricUnit.Count, 1)}, [route, {ERROR_CODE_DIMENSION: code}], namespace)
    values: dict[str, tuple[MetricUnit, float]] = {JOBS_COMPLETED: (MetricUnit.Count, 1)}
    latency = _milliseconds_between(job.get("created_at"), job.get("finished_at"))
    if latency is not None:
        values[JOB_LATENCY] = (MetricUnit.Milliseconds, latency)
    pages = job.get("page_count")
    if isinstance(pages, int | float) and not isinstance(pages, bool) and pages >= 0:
        values[PAGES_PROCESSED] = (MetricUnit.Count, float(pages))
    return _line(values, [route], namespace)


def count_started_job(model: str) -> None:
    """Count one job the invoker has just handed to its backend (the CPU processor or the GPU endpoint)."""
    namespace = _namespace()
    if namespace:
        _write(job_started_line(model, namespace=namespace))


def count_finished_job(job: Mapping[str, Any]) -> None:
    """Count one job that has just become COMPLETED or FAILED, with its latency and pages when it completed."""
    namespace = _namespace()
    if namespace:
        _write(job_outcome_line(job, namespace=namespace))


def _namespace() -> str | None:
    """The stage's metrics namespace; a function without one (a misconfiguration) logs it and goes on: a job's
    outcome must not depend on its metric."""
    namespace = os.environ.get(ENV.METRICS_NAMESPACE)
    if not namespace:
        logger.warning("%s is not set: job metrics are not written", ENV.METRICS_NAMESPACE)
    return namespace


def _write(line: dict[str, Any]) -> None:
    """Print one EMF line to the function's log, as Powertools' ``flush_metrics`` does."""
    if not is_metrics_disabled():
        print(json.dumps(line, separators=(",", ":")))
