"""What an operator sees: active X-Ray tracing on every function, and the operations dashboard's graphs."""

from __future__ import annotations

import json
from typing import Any

from aws_cdk import Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_sqs as sqs
from aws_cdk.assertions import Template

from ocr_infra.monitoring import OperationsDashboard, OperationsDashboardProps
from tests.infra.conftest import Synthesis
from tests.infra.template_helpers import flatten

NAMESPACE = "OcrPlatform/dev"
ROUTES = ["pp-ocrv5", "pp-ocrv6", "pp-structurev3", "paddleocr-vl"]
ENDPOINT = "ocr-dev-paddleocr-vl"


def _of_type(resources: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {name: resource for name, resource in resources.items() if resource["Type"] == kind}


def test_every_function_traces_actively(resources: dict[str, Any]) -> None:
    functions = _of_type(resources, "AWS::Lambda::Function")
    assert len(functions) == 9
    assert {name: f["Properties"].get("TracingConfig") for name, f in functions.items()} == {
        name: {"Mode": "Active"} for name in functions
    }


def test_each_functions_x_ray_wildcard_is_acknowledged_on_its_policy_with_the_reason(synthesis: Synthesis) -> None:
    stack = synthesis.stack
    assert stack.cpu is not None and synthesis.gpu is not None
    for fn in (stack.invoker.function, stack.cpu.function, stack.completion.function, synthesis.gpu.scale_in_function,
               stack.recovery.dlq_consumer_function, stack.recovery.sweeper_function, stack.drop_folder.function,
               stack.jobs_api.function, stack.webhook_deliverer.function):
        policy = fn.role.node.find_child("DefaultPolicy")
        [acknowledged] = [m.data for m in policy.node.metadata if m.type == "aws:cdk:acknowledged-rules"]
        [(finding, reason)] = [(f, r) for f, r in acknowledged.items() if f.endswith("AwsSolutions-IAM5[Resource::*]")]
        assert "X-Ray" in reason and "resource-level" in reason, finding


def _dashboard(resources: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The one dashboard's properties and its body (an ``Fn::Join``, read with ``<Ref>`` placeholders)."""
    [dashboard] = _of_type(resources, "AWS::CloudWatch::Dashboard").values()
    return dashboard["Properties"], json.loads(flatten(dashboard["Properties"]["DashboardBody"]))


def _metrics(body: dict[str, Any]) -> list[list[Any]]:
    return [metric for widget in body["widgets"] for metric in widget["properties"].get("metrics", [])]


def _named(body: dict[str, Any], namespace: str, name: str) -> list[list[Any]]:
    """Rows ``[namespace, name, dimension, value, ..., {options}]`` of one metric."""
    return [m for m in _metrics(body) if m[:2] == [namespace, name]]


def _dimensions(row: list[Any]) -> dict[str, Any]:
    pairs = row[2:-1] if isinstance(row[-1], dict) else row[2:]
    return dict(zip(pairs[::2], pairs[1::2], strict=True))


def _titles(body: dict[str, Any]) -> list[str]:
    return [widget["properties"].get("title", "") for widget in body["widgets"]]


def test_the_dashboard_is_named_for_the_stage_and_region(resources: dict[str, Any]) -> None:
    properties, _ = _dashboard(resources)
    # Dashboards are global to the account: a stage of the same name in another region has its own.
    assert flatten(properties["DashboardName"]) == "ocr-platform-dev-<AWS::Region>"


def test_the_dashboard_shows_jobs_started_completed_and_failed_in_all_and_by_route(resources: dict[str, Any]) -> None:
    _, body = _dashboard(resources)
    for name in ("JobsStarted", "JobsCompleted", "JobsFailed"):
        rows = _named(body, NAMESPACE, name)
        assert {"service": "jobs"} in [_dimensions(r) for r in rows], name
        assert sorted(_dimensions(r).get("route") for r in rows if "route" in _dimensions(r)) == sorted(ROUTES), name
        assert {r[-1]["stat"] for r in rows} == {"Sum"}


def test_the_dashboard_breaks_failures_down_by_error_code_with_a_search(resources: dict[str, Any]) -> None:
    _, body = _dashboard(resources)
    [search] = [m[0] for m in _metrics(body) if isinstance(m[0], dict) and "expression" in m[0]]
    assert search["expression"] == 'SEARCH(\'{"OcrPlatform/dev",error_code,service} MetricName="JobsFailed"\', \'Sum\', 300)'
    assert search["label"] == "${PROP('Dim.error_code')}"


def test_the_dashboard_shows_pages_per_minute_and_latency_percentiles_per_route(resources: dict[str, Any]) -> None:
    _, body = _dashboard(resources)
    pages = _named(body, NAMESPACE, "PagesProcessed")
    assert {(r[-1]["stat"], r[-1]["period"]) for r in pages} == {("Sum", 60)}
    assert len(pages) == len(ROUTES) + 1  # every route, and all of them
    latency = _named(body, NAMESPACE, "JobLatency")
    assert sorted((_dimensions(r)["route"], r[-1]["stat"]) for r in latency) == sorted(
        (route, stat) for route in ROUTES for stat in ("p50", "p95")
    )


def test_the_dashboard_shows_the_processor_the_job_queue_and_the_last_stop_queues(synthesis: Synthesis, resources: dict[str, Any]) -> None:
    stack = synthesis.stack
    assert stack.cpu is not None
    _, body = _dashboard(resources)
    processor = f"<{synthesis.logical_id(stack.cpu.function)}>"
    assert {r[-1]["stat"] for r in _named(body, "AWS/Lambda", "Duration") if _dimensions(r)["FunctionName"] == processor} == {
        "p50", "p95", "Maximum"
    }
    for name in ("Throttles", "Errors", "ConcurrentExecutions"):
        assert [_dimensions(r) for r in _named(body, "AWS/Lambda", name)] == [{"FunctionName": processor}], name

    def queue(construct: Any) -> dict[str, str]:
        return {"QueueName": f"<{synthesis.logical_id(construct)}.QueueName>"}

    assert [_dimensions(r) for r in _named(body, "AWS/SQS", "ApproximateAgeOfOldestMessage")] == [queue(stack.queue.queue)]
    waiting = [_dimensions(r) for r in _named(body, "AWS/SQS", "ApproximateNumberOfMessagesVisible")]
    for last_stop in (stack.queue.dead_letter_queue, stack.webhooks.dead_letter_queue, stack.parked_events.queue):
        assert queue(last_stop) in waiting


def test_the_dashboard_shows_the_endpoints_instances_backlog_and_gpu(resources: dict[str, Any]) -> None:
    _, body = _dashboard(resources)
    [instances] = _named(body, "/aws/sagemaker/Endpoints", "CPUUtilization")
    assert instances[-1]["stat"] == "SampleCount"  # one sample per instance and minute
    for name in ("ApproximateBacklogSize", "ApproximateBacklogSizePerInstance", "HasBacklogWithoutCapacity"):
        assert [_dimensions(r) for r in _named(body, "AWS/SageMaker", name)] == [{"EndpointName": ENDPOINT}], name
    for name in ("GPUUtilization", "GPUMemoryUtilization"):
        assert [_dimensions(r) for r in _named(body, "/aws/sagemaker/Endpoints", name)] == [
            {"EndpointName": ENDPOINT, "VariantName": "AllTraffic"}
        ], name


def _alarm_by_name(alarms: dict[str, Any], name: str) -> str:
    [logical_id] = [logical_id for logical_id, alarm in alarms.items() if alarm["Properties"].get("AlarmName") == name]
    return logical_id


def test_the_dashboard_shows_every_alarm_of_the_stage(resources: dict[str, Any]) -> None:
    _, body = _dashboard(resources)
    [status] = [w for w in body["widgets"] if w["type"] == "alarm"]
    alarms = _of_type(resources, "AWS::CloudWatch::Alarm")
    # The GPU stack's alarms by the names they are given (the core refers to nothing in the GPU stack).
    shown = [alarm if alarm.startswith("<") else f"<{_alarm_by_name(alarms, alarm.rpartition(':alarm:')[2])}.Arn>"
             for alarm in status["properties"]["alarms"]]
    assert sorted(shown) == sorted(f"<{name}.Arn>" for name in alarms)
    [rate] = [w for w in body["widgets"] if "annotations" in w["properties"] and "alarms" in w["properties"]["annotations"]]
    [failed_job_rate] = [name for name in alarms if name.startswith("FailedJobRate")]
    assert rate["properties"]["annotations"]["alarms"] == [f"<{failed_job_rate}.Arn>"]


def test_a_stage_without_a_cpu_or_gpu_backend_has_no_graphs_for_it() -> None:
    stack = Stack()
    queues = [sqs.Queue(stack, name) for name in ("Jobs", "Dlq", "WebhookDlq", "Parked")]
    alarm = cloudwatch.Alarm(stack, "Alarm", metric=queues[1].metric_approximate_number_of_messages_visible(), threshold=0, evaluation_periods=1)
    OperationsDashboard(stack, "Operations", OperationsDashboardProps(
        namespace=NAMESPACE, routes=["pp-ocrv5"], job_queue=queues[0], dead_letter_queue=queues[1], webhook_dead_letter_queue=queues[2],
        parked_events=queues[3], alarms=[alarm], failed_job_rate=alarm,
    ))

    _, body = _dashboard(Template.from_stack(stack).to_json()["Resources"])

    assert not [title for title in _titles(body) if "GPU" in title or "CPU processor" in title]
    assert not [m for m in _metrics(body) if m[0] in ("AWS/Lambda", "AWS/SageMaker", "/aws/sagemaker/Endpoints")]
    assert _named(body, NAMESPACE, "JobsStarted")
