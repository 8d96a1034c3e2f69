"""Scale-in Lambda against moto: idle -> 0, never while a SageMaker job is in flight, idempotent."""

from __future__ import annotations

from datetime import timedelta

from ocr_platform.jobs.store import JobStore, NewJob, utc_now
from tests.aws_events import idle_alarm_message
from tests.conftest import ENDPOINT, Platform

ALARM = "ocr-test-vl-idle"


def test_idle_endpoint_is_scaled_to_zero_once(platform: Platform) -> None:
    platform.set_desired_instances(1)

    assert platform.publish("scale-in", idle_alarm_message(ALARM, "ALARM", ENDPOINT)) == {"outcomes": ["scaled_in"]}
    assert platform.variant()["DesiredInstanceCount"] == 0
    [update] = platform.calls["UpdateEndpointWeightsAndCapacities"]
    assert update["DesiredWeightsAndCapacities"] == [{"VariantName": "AllTraffic", "DesiredInstanceCount": 0}]

    assert platform.publish("scale-in", idle_alarm_message(ALARM, "ALARM", ENDPOINT)) == {"outcomes": ["already_idle"]}
    assert len(platform.calls["UpdateEndpointWeightsAndCapacities"]) == 1


def test_scale_in_is_skipped_while_a_sagemaker_job_is_in_flight(platform: Platform) -> None:
    platform.set_desired_instances(1)
    platform.store.create(NewJob("job-running", "paddleocr-vl", "s3://b/documents/job-running/a.pdf"))
    platform.store.mark_processing("job-running", "sagemaker")
    platform.store.create(NewJob("job-cpu", "pp-ocrv5", "s3://b/documents/job-cpu/a.pdf"))
    platform.store.mark_processing("job-cpu", "lambda")

    assert platform.publish("scale-in", idle_alarm_message(ALARM, "ALARM", ENDPOINT)) == {"outcomes": ["skipped_in_flight"]}
    assert platform.variant()["DesiredInstanceCount"] == 1
    assert "UpdateEndpointWeightsAndCapacities" not in platform.calls

    platform.store.mark_completed("job-running", result_uri="s3://b/results/job-running/result.json", page_count=1)
    assert platform.publish("scale-in", idle_alarm_message(ALARM, "ALARM", ENDPOINT)) == {"outcomes": ["scaled_in"]}
    assert platform.variant()["DesiredInstanceCount"] == 0


def test_a_job_stuck_past_the_invocation_window_does_not_keep_the_gpu_alive(platform: Platform) -> None:
    import boto3

    platform.set_desired_instances(1)
    two_hours_ago = JobStore(platform.store.table.name, dynamodb=boto3.resource("dynamodb"), clock=lambda: utc_now() - timedelta(hours=2))
    two_hours_ago.create(NewJob("job-stuck", "paddleocr-vl", "s3://b/documents/job-stuck/a.pdf"))
    two_hours_ago.mark_processing("job-stuck", "sagemaker")

    assert platform.publish("scale-in", idle_alarm_message(ALARM, "ALARM", ENDPOINT)) == {"outcomes": ["scaled_in"]}


def test_alarm_returning_to_ok_does_nothing(platform: Platform) -> None:
    platform.set_desired_instances(1)

    assert platform.publish("scale-in", idle_alarm_message(ALARM, "OK", ENDPOINT)) == {"outcomes": ["ignored"]}
    assert platform.variant()["DesiredInstanceCount"] == 1


def _schedule_event() -> dict:
    return {"version": "0", "id": "e1", "detail-type": "Scheduled Event", "source": "aws.events",
            "account": "123456789012", "time": "2026-11-22T08:00:00Z", "region": "us-east-1",
            "resources": ["arn:aws:events:us-east-1:123456789012:rule/ocr-scale-in-recheck"], "detail": {}}


def _idle_alarm(platform: Platform, monkeypatch, state: str) -> None:
    import boto3

    from ocr_platform.handlers import _services

    cloudwatch = boto3.client("cloudwatch")
    cloudwatch.put_metric_alarm(
        AlarmName=ALARM, Namespace="AWS/SageMaker", MetricName="ApproximateBacklogSizePerInstance",
        Dimensions=[{"Name": "EndpointName", "Value": ENDPOINT}], Statistic="Average", Period=60,
        EvaluationPeriods=10, Threshold=0.1, ComparisonOperator="LessThanThreshold", TreatMissingData="breaching",
    )
    cloudwatch.set_alarm_state(AlarmName=ALARM, StateValue=state, StateReason="test")
    monkeypatch.setenv("OCR_IDLE_ALARM_NAME", ALARM)
    _services.services.cache_clear()


def test_schedule_retries_a_skipped_scale_in_while_the_alarm_stays_in_alarm(platform: Platform, monkeypatch) -> None:
    from ocr_platform.handlers import scale_in
    from tests.aws_events import FakeLambdaContext

    platform.set_desired_instances(1)
    platform.store.create(NewJob("job-slow", "paddleocr-vl", "s3://b/documents/job-slow/a.pdf"))
    platform.store.mark_processing("job-slow", "sagemaker")
    assert platform.publish("scale-in", idle_alarm_message(ALARM, "ALARM", ENDPOINT)) == {"outcomes": ["skipped_in_flight"]}
    _idle_alarm(platform, monkeypatch, "ALARM")
    platform.store.mark_completed("job-slow", result_uri="s3://b/results/job-slow/result.json", page_count=1)

    assert scale_in.handler(_schedule_event(), FakeLambdaContext()) == {"outcomes": ["scaled_in"]}
    assert platform.variant()["DesiredInstanceCount"] == 0


def test_schedule_does_nothing_while_the_alarm_is_ok(platform: Platform, monkeypatch) -> None:
    from ocr_platform.handlers import scale_in
    from tests.aws_events import FakeLambdaContext

    platform.set_desired_instances(1)
    _idle_alarm(platform, monkeypatch, "OK")

    assert scale_in.handler(_schedule_event(), FakeLambdaContext()) == {"outcomes": ["ignored"]}
    assert platform.variant()["DesiredInstanceCount"] == 1
