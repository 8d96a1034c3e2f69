"""CloudWatch's endpoint alarms and EventBridge's schedules, evaluated for the local stack.

Why a module of its own: moto stores alarms but never evaluates them, and has no scheduler. The deployed
stack scales the endpoint in and out and sweeps stuck jobs only through them, so the local stack has to
evaluate the idle alarm from the real async backlog, act on the backlog-without-capacity alarm, and fire
the scheduled rules, one period at a time, with AWS's message shapes.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from ocr_platform.local.endpoint_capacity import desired_instances, set_desired_instances
from ocr_platform.local.events import cloudwatch_alarm_message, iso_millis, scheduled_event
from ocr_platform.local.moto_account import ACCOUNT, REGION, moto_client

if TYPE_CHECKING:
    from ocr_infra.config import PlatformConfig
    from ocr_platform.local.lambda_runtime import LambdaRuntime

logger = logging.getLogger(__name__)


def scale_out_on_backlog_without_capacity(sagemaker: Any, endpoint: str, variant: str, *, desired: int, backlog: float) -> bool:
    """One period of the ``HasBacklogWithoutCapacity`` alarm and its step scaling policy: requests waiting
    at zero instances scale the endpoint out to one. True when it did; a refused update (the endpoint is
    updating) leaves the alarm in ALARM, and the next period tries again."""
    if desired != 0 or backlog <= 0:
        return False
    logger.info("HasBacklogWithoutCapacity: scaling %s out to 1", endpoint)
    try:
        set_desired_instances(sagemaker, endpoint, variant, 1)
    except ClientError as err:
        logger.warning("Scale-out refused: %s", err)
        return False
    return True


@dataclass(frozen=True)
class EndpointAlarms:
    """The endpoint's alarms and schedules; ``run`` evaluates them until ``stop`` is set.

    Attributes:
        config: the stage's configuration (idle minutes and threshold, sweeper interval, variant).
        names: ``provisioning.resource_names(config)``.
        scale_in_topic: ARN of the topic the idle alarm notifies.
        period_seconds: length of one alarm period (60 on AWS).
        poll_seconds: how often the backlog is sampled within a period.
        backlog: the async endpoint's queued plus in-flight requests, now.
        sagemaker: a moto SageMaker client (the endpoint's desired instance count).
        lambdas: the runtime that runs the scale-in and sweeper functions.
        moto_url: the moto server (the evaluator makes its own SNS and CloudWatch clients).
        stop: set to end ``run``.
    """

    config: PlatformConfig
    names: Mapping[str, str]
    scale_in_topic: str
    period_seconds: float
    poll_seconds: float
    backlog: Callable[[], float]
    sagemaker: Any
    lambdas: LambdaRuntime
    moto_url: str
    stop: threading.Event

    def run(self) -> None:
        """CloudWatch and EventBridge for the endpoint, one period at a time.

        - the idle alarm: ApproximateBacklogSizePerInstance (the period's average of the async backlog
          over the desired instances; missing at 0 instances = breaching) below the threshold for
          ``idle_minutes`` periods -> CloudWatch's alarm message on the scale-in topic;
        - HasBacklogWithoutCapacity >= 1 -> the step scaling policy's scale-out to 1 instance;
        - the scale-in re-check rule: every ``idle_minutes`` periods a scheduled event to the scale-in
          function, which acts while the idle alarm is still in ALARM;
        - the sweeper rule: every ``sweeper_interval_minutes`` periods a scheduled event to the sweeper.
        """
        cfg, endpoint = self.config, self.names["endpoint"]
        sns, cloudwatch = moto_client("sns", self.moto_url), moto_client("cloudwatch", self.moto_url)
        window: list[float | None] = []
        state, periods = "OK", 0
        while not self.stop.is_set():
            backlog = self._average_backlog_over_one_period()
            if backlog is None:
                return
            desired = desired_instances(self.sagemaker, endpoint, cfg.variant_name)
            scale_out_on_backlog_without_capacity(self.sagemaker, endpoint, cfg.variant_name, desired=desired, backlog=backlog)
            window = (window + [backlog / desired if desired else None])[-cfg.idle_minutes:]
            idle = len(window) == cfg.idle_minutes and all(v is None or v < cfg.idle_backlog_threshold for v in window)
            new_state = "ALARM" if idle else "OK"
            periods += 1
            self._fire_schedules(periods)
            if new_state == state:
                continue
            reason = (f"Threshold Crossed: {cfg.idle_minutes} datapoints were less than the threshold "
                      f"({cfg.idle_backlog_threshold}) or missing." if idle else "Threshold Crossed: backlog above the threshold.")
            cloudwatch.set_alarm_state(AlarmName=self.names["idle_alarm"], StateValue=new_state, StateReason=reason)
            if new_state == "ALARM":
                alarm = cloudwatch.describe_alarms(AlarmNames=[self.names["idle_alarm"]])["MetricAlarms"][0]
                sns.publish(TopicArn=self.scale_in_topic, Message=cloudwatch_alarm_message(
                    alarm_name=alarm["AlarmName"], alarm_arn=alarm["AlarmArn"], new_state="ALARM", old_state=state,
                    reason=reason, metric_name=alarm["MetricName"], namespace=alarm["Namespace"],
                    dimensions={"EndpointName": endpoint}, period=60,
                    evaluation_periods=cfg.idle_minutes, comparison_operator="LessThanThreshold",
                    threshold=cfg.idle_backlog_threshold, treat_missing_data="breaching", state_change_time=iso_millis(),
                ))
            state = new_state

    def _average_backlog_over_one_period(self) -> float | None:
        """The backlog's average over one period of samples; ``None`` when stopped meanwhile."""
        samples, period_end = [], time.monotonic() + self.period_seconds
        while time.monotonic() < period_end and not self.stop.is_set():
            samples.append(self.backlog())
            self.stop.wait(min(self.poll_seconds, max(0.0, period_end - time.monotonic())))
        if self.stop.is_set():
            return None
        return sum(samples) / max(1, len(samples))

    def _fire_schedules(self, periods: int) -> None:
        """EventBridge's scheduled rules, due after ``periods`` periods: the scale-in re-check and the sweeper."""
        cfg, rule_prefix = self.config, f"arn:aws:events:{REGION}:{ACCOUNT}:rule/ocr-{self.config.stage}"
        if periods % cfg.idle_minutes == 0:
            self.lambdas.invoke_async(self.names["scale_in"], scheduled_event(f"{rule_prefix}-scale-in-recheck", iso_millis(), event_id=str(uuid.uuid4())))
        if periods % cfg.sweeper_interval_minutes == 0:
            self.lambdas.invoke_async(self.names["sweeper"], scheduled_event(f"{rule_prefix}-sweeper", iso_millis(), event_id=str(uuid.uuid4())))
