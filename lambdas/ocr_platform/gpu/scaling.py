"""Scale the GPU endpoint to zero when it is idle, and never while a job runs on it.

The CloudWatch backlog alarm says the endpoint's queue has been empty for the idle window. Before
setting DesiredInstanceCount to 0 this checks the job table for SageMaker jobs still PROCESSING
(dispatched moments ago, before the metric saw them). Skipping is safe: such a job raises the backlog,
the alarm returns to OK and fires again once it is idle.

An alarm notifies only when its state changes, so a skipped scale-in would otherwise never be retried
while the alarm stays in ALARM (say, a job whose completion never arrived keeps looking in flight until
it leaves the in-flight window). The scale-in function therefore also runs on a schedule and acts
whenever ``idle_alarm_is_firing``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal

from ocr_platform.gpu.sagemaker_async import EndpointCapacity
from ocr_platform.jobs.store import JobStore

logger = logging.getLogger(__name__)

ScaleInOutcome = Literal["scaled_in", "already_idle", "skipped_in_flight"]


@dataclass(frozen=True)
class ScaleInResult:
    outcome: ScaleInOutcome
    in_flight: tuple[str, ...] = ()


def idle_alarm_is_firing(cloudwatch: Any, alarm_name: str) -> bool:
    """True when the endpoint's idle alarm is in the ALARM state."""
    alarms = cloudwatch.describe_alarms(AlarmNames=[alarm_name], AlarmTypes=["MetricAlarm"]).get("MetricAlarms", [])
    return bool(alarms) and alarms[0].get("StateValue") == "ALARM"


def scale_in_when_idle(store: JobStore, capacity: EndpointCapacity, *, inflight_window_seconds: int) -> ScaleInResult:
    """Set the endpoint to zero instances unless a SageMaker job is in flight. Idempotent."""
    in_flight = store.list_in_flight("sagemaker", window_seconds=inflight_window_seconds)
    if in_flight:
        ids = tuple(job["job_id"] for job in in_flight)
        logger.info("Scale-in skipped: %d SageMaker job(s) in flight: %s", len(ids), ", ".join(ids[:10]))
        return ScaleInResult("skipped_in_flight", ids)
    if capacity.release_capacity():
        return ScaleInResult("scaled_in")
    return ScaleInResult("already_idle")
