"""What operators see: the failed-job-rate alarm and the operations dashboard.

A single failed job is normal (a user sent a password-protected PDF); many failing at once is an
incident: an engine that cannot load, a broken image, an endpoint that errs on everything. The
functions count every finished job once (``ocr_platform.core.metrics``); the alarm compares the two counts.
The dashboard puts those job metrics beside the services' own (the processor, the queues, the endpoint),
so that an alarm's cause is one page away.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from ocr_platform.core import defaults
from ocr_platform.core.metrics import (
    ERROR_CODE_DIMENSION,
    JOB_LATENCY,
    JOBS_COMPLETED,
    JOBS_FAILED,
    JOBS_STARTED,
    METRICS_SERVICE,
    PAGES_PROCESSED,
    ROUTE_DIMENSION,
)


@dataclass(frozen=True)
class FailedJobRateAlarmProps:
    """Props of :class:`FailedJobRateAlarm`.

    Attributes:
        namespace: the job metrics' namespace (``ocr_platform.core.settings.metrics_namespace(stage)``).
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


@dataclass(frozen=True)
class EndpointMetricsProps:
    """The GPU endpoint, as the dashboard reads it.

    Attributes:
        endpoint_name / variant_name: the SageMaker endpoint and its production variant.
        idle_backlog_threshold: the idle alarm's threshold on the backlog per instance (drawn on its graph).
    """

    endpoint_name: str
    variant_name: str = defaults.VARIANT_NAME
    idle_backlog_threshold: float = defaults.IDLE_BACKLOG_THRESHOLD


@dataclass(frozen=True)
class OperationsDashboardProps:
    """Props of :class:`OperationsDashboard`.

    Attributes:
        namespace: the job metrics' namespace (``ocr_platform.core.settings.metrics_namespace(stage)``).
        routes: the routing keys the stage accepts (one line per route on the job graphs).
        job_queue / dead_letter_queue: the job queue and its DLQ.
        webhook_dead_letter_queue: where undeliverable webhooks wait.
        parked_events: where asynchronous hand-overs park what they could not deliver.
        alarms: every alarm of the stage, shown with its state at the top.
        failed_job_rate: the failed-job-rate alarm, graphed with its threshold.
        processor: the CPU processor; ``None`` when the stage has no CPU backend.
        endpoint: the GPU endpoint; ``None`` when the stage has no GPU backend (no endpoint row then).
        dashboard_name: the dashboard's name in the CloudWatch console.
    """

    namespace: str
    routes: Sequence[str]
    job_queue: sqs.IQueue
    dead_letter_queue: sqs.IQueue
    webhook_dead_letter_queue: sqs.IQueue
    parked_events: sqs.IQueue
    alarms: Sequence[cloudwatch.IAlarm]
    failed_job_rate: cloudwatch.IAlarm
    processor: lambda_.IFunction | None = None
    endpoint: EndpointMetricsProps | None = None
    dashboard_name: str | None = None


#: SageMaker's per-instance metrics of an endpoint (CPU, memory, GPU), by endpoint and variant.
SAGEMAKER_INSTANCE_NAMESPACE = "/aws/sagemaker/Endpoints"
#: The async endpoint's backlog metrics, by endpoint.
SAGEMAKER_ENDPOINT_NAMESPACE = "AWS/SageMaker"
#: Width of a dashboard row, in CloudWatch's grid units.
ROW = 24


class OperationsDashboard(Construct):
    """One CloudWatch dashboard with what an operator looks at first: alarm states, jobs started, completed and
    failed (by route and by error code), pages per minute, job latency per route, the CPU processor, the job
    queue and the last-stop queues, and the GPU endpoint's instances, backlog and utilization.

    The job graphs read the functions' EMF job metrics (``ocr_platform.core.metrics``); the rest are the services'
    own metrics. The failed-by-error-code graph is a search expression: it shows the codes that occurred.
    """

    def __init__(self, scope: Construct, construct_id: str, props: OperationsDashboardProps) -> None:
        super().__init__(scope, construct_id)
        self._props = props
        self._dashboard = cloudwatch.Dashboard(
            self, "Dashboard", dashboard_name=props.dashboard_name, default_interval=Duration.hours(3)
        )
        # 1. What is wrong right now, and where to look next.
        self._dashboard.add_widgets(
            cloudwatch.TextWidget(
                markdown=(
                    "## OCR platform operations\n"
                    "Alarms, what each means and what to do: the README's *Operating it*. Follow one job through every "
                    "function in X-Ray (Traces): `annotation.job_id = \"<job id>\"`; its log lines carry the same `job_id`. "
                    "The stack builds this dashboard: a change made here in the console is lost at the next deploy."
                ),
                width=ROW,
                height=2,
            )
        )
        self._dashboard.add_widgets(
            cloudwatch.AlarmStatusWidget(title="Alarms", alarms=list(props.alarms), width=ROW, height=3)
        )
        # 2. Jobs: all of them, the failed-job rate, the failures by code; then each outcome by route.
        self._dashboard.add_widgets(
            self._graph(
                "Jobs started, completed and failed (5 min)",
                [self._job_metric(name, statistic="Sum") for name in (JOBS_STARTED, JOBS_COMPLETED, JOBS_FAILED)],
            ),
            cloudwatch.AlarmWidget(
                title="Failed jobs (%) and the alarm's threshold",
                alarm=props.failed_job_rate,
                width=ROW // 3,
                left_y_axis=cloudwatch.YAxisProps(min=0, max=100, show_units=False),
            ),
            self._graph("Jobs failed by error code (5 min)", [self._failed_by_error_code()]),
        )
        self._dashboard.add_widgets(
            *(
                self._graph(f"{title} by route (5 min)", self._by_route(name, statistic="Sum"))
                for title, name in (("Jobs started", JOBS_STARTED), ("Jobs completed", JOBS_COMPLETED), ("Jobs failed", JOBS_FAILED))
            )
        )
        # 3. Throughput and latency: pages read per minute; how long a user waits for a result, per route.
        self._dashboard.add_widgets(
            self._graph(
                "Pages per minute",
                [self._job_metric(PAGES_PROCESSED, statistic="Sum", period_minutes=1, label="all routes"),
                 *self._by_route(PAGES_PROCESSED, statistic="Sum", period_minutes=1)],
                width=ROW // 2,
            ),
            self._graph(
                "Job latency, submitted to completed: p50 and p95 by route (ms)",
                [metric for statistic in ("p50", "p95") for metric in self._by_route(JOB_LATENCY, statistic=statistic)],
                width=ROW // 2,
            ),
        )
        # 4. The CPU processor: how long it runs, and whether Lambda refuses or loses invocations.
        if props.processor is not None:
            processor = props.processor
            self._dashboard.add_widgets(
                self._graph(
                    "CPU processor duration (ms)",
                    [processor.metric_duration(statistic=statistic, label=statistic) for statistic in ("p50", "p95", "Maximum")],
                    width=ROW // 2,
                ),
                self._graph(
                    "CPU processor throttles, errors and concurrency",
                    [processor.metric_throttles(statistic="Sum", label="throttles"),
                     processor.metric_errors(statistic="Sum", label="errors (crashes and timeouts)")],
                    right=[processor.metric("ConcurrentExecutions", statistic="Maximum", label="concurrent executions")],
                    width=ROW // 2,
                ),
            )
        # 5. Queues: how long jobs wait to be handed over; anything on a last-stop queue needs an operator.
        minute = Duration.minutes(1)
        self._dashboard.add_widgets(
            self._graph(
                "Job queue: age of the oldest message (s) and messages waiting",
                [props.job_queue.metric_approximate_age_of_oldest_message(statistic="Maximum", period=minute, label="oldest message (s)")],
                right=[props.job_queue.metric_approximate_number_of_messages_visible(statistic="Maximum", period=minute, label="waiting")],
                width=ROW // 2,
            ),
            self._graph(
                "Dead letters and parked events (messages waiting)",
                [queue.metric_approximate_number_of_messages_visible(statistic="Maximum", period=minute, label=label)
                 for queue, label in ((props.dead_letter_queue, "job DLQ"), (props.webhook_dead_letter_queue, "webhook DLQ"),
                                      (props.parked_events, "parked events"))],
                width=ROW // 2,
            ),
        )
        # 6. The GPU endpoint: instances up (0 when idle), the backlog that scales it, and how busy the GPU is.
        if props.endpoint is not None:
            self._dashboard.add_widgets(*self._endpoint_widgets(props.endpoint))

    def _graph(
        self, title: str, left: Sequence[cloudwatch.IMetric], *, right: Sequence[cloudwatch.IMetric] = (), width: int = ROW // 3,
        left_annotations: Sequence[cloudwatch.HorizontalAnnotation] = (),
    ) -> cloudwatch.GraphWidget:
        return cloudwatch.GraphWidget(
            title=title, left=list(left), right=list(right), width=width, height=6,
            left_y_axis=cloudwatch.YAxisProps(min=0, show_units=False),
            right_y_axis=cloudwatch.YAxisProps(min=0, show_units=False),
            left_annotations=list(left_annotations) or None,
        )

    def _job_metric(
        self, name: str, *, statistic: str, period_minutes: int = 5, label: str | None = None,
        route: str | None = None,
    ) -> cloudwatch.Metric:
        dimensions = {"service": METRICS_SERVICE}
        if route is not None:
            dimensions[ROUTE_DIMENSION] = route
        return cloudwatch.Metric(
            namespace=self._props.namespace, metric_name=name, dimensions_map=dimensions, statistic=statistic,
            period=Duration.minutes(period_minutes), label=label or name,
        )

    def _by_route(self, name: str, *, statistic: str, period_minutes: int = 5) -> list[cloudwatch.IMetric]:
        suffix = f" {statistic}" if statistic.startswith("p") else ""
        return [
            self._job_metric(name, statistic=statistic, period_minutes=period_minutes, route=route, label=f"{route}{suffix}")
            for route in self._props.routes
        ]

    def _failed_by_error_code(self) -> cloudwatch.MathExpression:
        """Every ``error_code`` that occurred, one line each (a search: the codes are not listed in advance)."""
        schema = f'{{"{self._props.namespace}",{ERROR_CODE_DIMENSION},service}}'
        return cloudwatch.MathExpression(
            expression=f"SEARCH('{schema} MetricName=\"{JOBS_FAILED}\"', 'Sum', 300)",
            using_metrics={},
            label=f"${{PROP('Dim.{ERROR_CODE_DIMENSION}')}}",
            period=Duration.minutes(5),
        )

    def _endpoint_widgets(self, endpoint: EndpointMetricsProps) -> list[cloudwatch.IWidget]:
        minute = Duration.minutes(1)

        def instance_metric(name: str, statistic: str, label: str) -> cloudwatch.Metric:
            return cloudwatch.Metric(
                namespace=SAGEMAKER_INSTANCE_NAMESPACE, metric_name=name, statistic=statistic, period=minute, label=label,
                dimensions_map={"EndpointName": endpoint.endpoint_name, "VariantName": endpoint.variant_name},
            )

        def backlog_metric(name: str, statistic: str, label: str) -> cloudwatch.Metric:
            return cloudwatch.Metric(
                namespace=SAGEMAKER_ENDPOINT_NAMESPACE, metric_name=name, statistic=statistic, period=minute, label=label,
                dimensions_map={"EndpointName": endpoint.endpoint_name},
            )

        return [
            self._graph(
                "GPU endpoint instances",
                # Each instance reports CPUUtilization once a minute: the sample count is the instances up.
                [instance_metric("CPUUtilization", "SampleCount", "instances")],
                right=[backlog_metric("HasBacklogWithoutCapacity", "Maximum", "requests waiting at 0 instances")],
            ),
            self._graph(
                "GPU endpoint backlog",
                [backlog_metric("ApproximateBacklogSize", "Average", "backlog"),
                 backlog_metric("ApproximateBacklogSizePerInstance", "Average", "backlog per instance")],
                left_annotations=[cloudwatch.HorizontalAnnotation(value=endpoint.idle_backlog_threshold, label="idle below")],
            ),
            self._graph(
                "GPU utilization (%)",
                [instance_metric("GPUUtilization", "Average", "GPU"), instance_metric("GPUMemoryUtilization", "Average", "GPU memory")],
            ),
        ]

    @property
    def dashboard(self) -> cloudwatch.Dashboard:
        return self._dashboard
