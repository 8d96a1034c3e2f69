"""Job outcome metrics, for the failed-job-rate alarm, in CloudWatch's embedded metric format (EMF).

Every function that can finish a job counts it once, when its conditional terminal write succeeded (a
repeated notification or a late crash report counts nothing): ``JobsCompleted`` or ``JobsFailed``, in the
namespace the stack sets on the function (``POWERTOOLS_METRICS_NAMESPACE``, ``OcrPlatform/<stage>``) with
the one dimension ``service=jobs``. Powertools writes them into the function's log when the handler
returns (``@metrics.log_metrics``); CloudWatch extracts them without an API call.

>>> from ocr_platform.jobs import JobStatus
>>> count_finished_job("job-1", JobStatus.FAILED, "encrypted_pdf")
>>> metrics.metric_set[JOBS_FAILED]["Value"]
[1.0]
>>> metrics.clear_metrics()
"""

from __future__ import annotations

import warnings

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.metrics import MetricUnit

JOBS_COMPLETED = "JobsCompleted"
JOBS_FAILED = "JobsFailed"
#: The ``service`` dimension of both metrics (the same in every function, so one alarm sees them all).
METRICS_SERVICE = "jobs"

metrics = Metrics(service=METRICS_SERVICE)
# Most invocations finish no job (the invoker hands jobs over): an empty metric set is normal here.
warnings.filterwarnings("ignore", message="No application metrics to publish", category=UserWarning)


def count_finished_job(job_id: str, status: str, error_code: str | None = None) -> None:
    """Count one job that has just become COMPLETED or FAILED (from ``JobStore``'s ``on_finished`` hook, which
    ``ocr_platform.handlers._services`` sets)."""
    metrics.add_metric(name=JOBS_FAILED if status == "FAILED" else JOBS_COMPLETED, unit=MetricUnit.Count, value=1)
