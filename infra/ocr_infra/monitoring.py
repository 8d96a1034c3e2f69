"""The failed-job-rate alarm, computed from the job outcome metrics the functions write as EMF.

A single failed job is normal (a user sent a password-protected PDF); many failing at once is an
incident: an engine that cannot load, a broken image, an endpoint that errs on everything. The
functions count every finished job once (``ocr_platform.metrics``); this alarm compares the two counts.
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from constructs import Construct

from ocr_platform import defaults
from ocr_platform.metrics import JOBS_COMPLETED, JOBS_FAILED, METRICS_SERVICE


@dataclass(frozen=True)
class FailedJobRateAlarmProps:
    """Props of :class:`FailedJobRateAlarm`.

    Attributes:
        namespace: the job metrics' namespace (``ocr_platform.settings.metrics_namespace(stage)``).
        threshold_percent: alarm when more than this share of a period's finished jobs failed (25).
        min_jobs: a period with fewer finished jobs counts as healthy (10).
        period_minutes: length of one period (5).
        evaluation_periods / datapoints_to_alarm: 2 failing periods out of the last 3 raise the alarm.
    """

    namespace: str
    threshold_percent: int = defaults.FAILED_JOB_RATE_PERCENT
    min_jobs: int = defaults.FAILED_JOB_RATE_MIN_JOBS
    period_minutes: int = 5
    evaluation_periods: int = 3
    datapoints_to_alarm: int = 2


class FailedJobRateAlarm(Construct):
    """``100 * JobsFailed / (JobsFailed + JobsCompleted)`` per period, alarmed above a threshold."""

    def __init__(self, scope: Construct, construct_id: str, props: FailedJobRateAlarmProps) -> None:
        super().__init__(scope, construct_id)
        # 1. The two counts, summed per period; a period without jobs has no data (filled with 0 below).
        def count(name: str) -> cloudwatch.Metric:
            return cloudwatch.Metric(
                namespace=props.namespace,
                metric_name=name,
                dimensions_map={"service": METRICS_SERVICE},
                statistic="Sum",
                period=Duration.minutes(props.period_minutes),
            )

        # 2. The rate in percent; 0 while fewer than min_jobs finished.
        finished = "(FILL(failed, 0) + FILL(completed, 0))"
        self._rate = cloudwatch.MathExpression(
            expression=f"IF({finished} >= {props.min_jobs}, 100 * FILL(failed, 0) / {finished}, 0)",
            using_metrics={"failed": count(JOBS_FAILED), "completed": count(JOBS_COMPLETED)},
            label="Failed jobs (%)",
            period=Duration.minutes(props.period_minutes),
        )
        # 3. The alarm; its action is set by the stack (the operations topic).
        self._alarm = cloudwatch.Alarm(
            self,
            "Alarm",
            alarm_description=(
                f"More than {props.threshold_percent}% of the OCR jobs finished in {props.datapoints_to_alarm} of "
                f"{props.evaluation_periods} {props.period_minutes}-minute periods failed: look at the error codes "
                "of recent FAILED jobs (status-created_at-index) and the functions' logs."
            ),
            metric=self._rate,
            threshold=props.threshold_percent,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluation_periods=props.evaluation_periods,
            datapoints_to_alarm=props.datapoints_to_alarm,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )

    @property
    def alarm(self) -> cloudwatch.Alarm:
        return self._alarm

    @property
    def rate(self) -> cloudwatch.MathExpression:
        return self._rate
