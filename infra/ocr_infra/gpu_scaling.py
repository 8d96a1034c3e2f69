"""The GPU endpoint's scaling: between zero and ``max_instance_count`` instances, out from zero when a request waits,
in to zero when idle and nothing is in flight.

Built into the backend's own scope (``GpuBackend``), so its resources keep their place in the template: the
scalable target, the step-scaling action and its alarm, the scale-in function, its topic and the idle alarm that
notifies it, and the schedule that re-checks that alarm.
"""

from __future__ import annotations

from aws_cdk import Aws, Duration
from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as events_targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sagemaker as sagemaker
from aws_cdk import aws_sns_subscriptions as subscriptions
from constructs import Construct

from ocr_infra.gpu_props import (
    AUTOSCALING_SERVICE_LINKED_ROLE,
    DESIRED_INSTANCE_COUNT,
    SAGEMAKER_NAMESPACE,
    GpuBackendProps,
    GpuResourceNames,
)
from ocr_infra.platform_function import SCALE_IN_HANDLER, PlatformFunction, PlatformFunctionProps
from ocr_infra.secure_defaults import allow
from ocr_platform.core import defaults
from ocr_platform.core.settings import ENV


class GpuScaling:
    """The scaling of one endpoint variant, its resources made in ``scope`` (the ``GpuBackend``)."""

    def __init__(
        self, scope: Construct, props: GpuBackendProps, names: GpuResourceNames, endpoint: sagemaker.CfnEndpoint, endpoint_arn: str
    ) -> None:
        self._endpoint_name = props.endpoint_name
        topics = props.topics
        # 6. Scalable target: DesiredInstanceCount between 0 and max_instance_count.
        self.scalable_target = appscaling.ScalableTarget(
            scope,
            "ScalableTarget",
            service_namespace=appscaling.ServiceNamespace.SAGEMAKER,
            resource_id=f"endpoint/{endpoint.attr_endpoint_name}/variant/{props.variant_name}",
            scalable_dimension=DESIRED_INSTANCE_COUNT,
            min_capacity=0,
            max_capacity=props.max_instance_count,
            role=iam.Role.from_role_arn(
                scope,
                "AutoScalingServiceLinkedRole",
                f"arn:{Aws.PARTITION}:iam::{Aws.ACCOUNT_ID}:role/{AUTOSCALING_SERVICE_LINKED_ROLE}",
                mutable=False,
            ),
        )

        # 7. Safety net: a request queued while at zero starts an instance within about a minute.
        self.scale_out = appscaling.StepScalingAction(
            scope,
            "ScaleOutFromZero",
            scaling_target=self.scalable_target,
            adjustment_type=appscaling.AdjustmentType.CHANGE_IN_CAPACITY,
            metric_aggregation_type=appscaling.MetricAggregationType.MAXIMUM,
            cooldown=Duration.minutes(5),
        )
        self.scale_out.add_adjustment(adjustment=1, lower_bound=0)
        self.backlog_without_capacity_alarm = cloudwatch.Alarm(
            scope,
            "BacklogWithoutCapacityAlarm",
            alarm_name=names.backlog_without_capacity_alarm,
            alarm_description="Requests wait on the PaddleOCR-VL endpoint while it has no instance: scale out to 1.",
            metric=self._metric("HasBacklogWithoutCapacity", "Maximum"),
            threshold=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluation_periods=1,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        self.backlog_without_capacity_alarm.add_alarm_action(cw_actions.ApplicationScalingAction(self.scale_out))

        # 8. Scale-in function: sets the count to 0 when the idle alarm fires and nothing is in flight.
        self._function = PlatformFunction(
            scope,
            "ScaleIn",
            PlatformFunctionProps(
                common=props.common,
                description="OCR platform scale-in: PaddleOCR-VL endpoint to 0 instances when idle",
                handler=SCALE_IN_HANDLER,
                memory_mb=props.scale_in_memory_mb,
                timeout_seconds=props.scale_in_timeout_seconds,
                service_name="ocr-scale-in",
                environment={
                    ENV.ENDPOINT_NAME: props.endpoint_name,
                    ENV.VARIANT_NAME: props.variant_name,
                    ENV.INFLIGHT_WINDOW_SECONDS: str(props.inflight_window_seconds),
                },
                # The idle alarm's topic and the re-check schedule invoke it asynchronously; a failed run is
                # parked (the schedule tries again while the alarm stays in ALARM).
                async_retry_attempts=defaults.ASYNC_RETRY_ATTEMPTS,
                concurrency_bound=(
                    "Runs when the idle alarm changes state (SNS) and on its re-check schedule, every idle_minutes: one "
                    "or two at a time, for seconds each (a Query, a DescribeEndpoint, one capacity update)."
                ),
            ),
        )
        allow(self._function.role, ["dynamodb:Query"], [props.status_index_arn])
        allow(self._function.role, ["dynamodb:GetItem"], [props.common.table.table_arn])
        allow(
            self._function.role,
            ["sagemaker:DescribeEndpoint", "sagemaker:UpdateEndpointWeightsAndCapacities"],
            [endpoint_arn],
        )
        self.scale_in_topic = topics.encrypted_topic(
            scope, "ScaleInTopic", "The GPU endpoint has been idle: scale it in", topic_name=names.scale_in_topic
        )
        self.scale_in_topic.add_subscription(
            subscriptions.LambdaSubscription(self._function.function, dead_letter_queue=props.common.parked_events)
        )

        # 9. Idle alarm: backlog per instance below the threshold for idle_minutes (missing data = idle).
        self.idle_alarm = cloudwatch.Alarm(
            scope,
            "IdleAlarm",
            alarm_name=names.idle_alarm,
            alarm_description=(
                f"The PaddleOCR-VL endpoint has had no backlog for {props.idle_minutes} minutes: "
                "scale it in to 0 instances (the scale-in function skips it while a job is in flight)."
            ),
            metric=self._metric("ApproximateBacklogSizePerInstance", "Average"),
            threshold=props.idle_backlog_threshold,
            comparison_operator=cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
            evaluation_periods=props.idle_minutes,
            datapoints_to_alarm=props.idle_minutes,
            treat_missing_data=cloudwatch.TreatMissingData.BREACHING,
        )
        topics.notify(self.scale_in_topic, self.idle_alarm)

        # 10. Scale-in re-check: an alarm notifies once per state change, so a scale-in skipped while a job
        #     looked in flight is retried on a schedule for as long as the idle alarm stays in ALARM.
        self._function.function.add_environment(ENV.IDLE_ALARM_NAME, self.idle_alarm.alarm_name)
        allow(self._function.role, ["cloudwatch:DescribeAlarms"], [self.idle_alarm.alarm_arn])
        self.recheck_rule = events.Rule(
            scope,
            "ScaleInRecheck",
            rule_name=names.recheck_rule,
            description="Re-check the PaddleOCR-VL idle alarm and scale in if it is still firing",
            schedule=events.Schedule.rate(Duration.minutes(props.idle_minutes)),
            targets=[
                events_targets.LambdaFunction(self._function.function, retry_attempts=0, dead_letter_queue=props.common.parked_events)
            ],
        )


    @property
    def scale_in_function(self) -> lambda_.Function:
        return self._function.function

    def _metric(self, name: str, statistic: str) -> cloudwatch.Metric:
        return cloudwatch.Metric(
            namespace=SAGEMAKER_NAMESPACE,
            metric_name=name,
            dimensions_map={"EndpointName": self._endpoint_name},
            statistic=statistic,
            period=Duration.minutes(1),
        )
