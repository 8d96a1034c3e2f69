"""The nine Lambda functions: runtime, size, environment, triggers, async invoke config."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk.assertions import Template

from ocr_platform.core.settings import ENV
from tests.infra.conftest import Synthesis
from tests.infra.template_helpers import flatten

POWERTOOLS_LAYER = (
    "arn:<AWS::Partition>:lambda:<AWS::Region>:017000801446:layer:AWSLambdaPowertoolsPythonV3-python314-x86_64:27"
)


def _function(synthesis: Synthesis, name: str) -> dict[str, Any]:
    stack = synthesis.stack
    construct = {
        "invoker": stack.invoker.function,
        "completion": stack.completion.function,
        "scale_in": synthesis.gpu.scale_in_function if synthesis.gpu else None,
        "processor": stack.cpu.function if stack.cpu else None,
        "dlq_consumer": stack.recovery.dlq_consumer_function,
        "sweeper": stack.recovery.sweeper_function,
        "ingest": stack.drop_folder.function,
        "api": stack.jobs_api.function,
        "webhooks": stack.webhook_deliverer.function,
    }[name]
    assert construct is not None
    return synthesis.resource(construct)["Properties"]


def _env(props: dict[str, Any]) -> dict[str, Any]:
    return props["Environment"]["Variables"]


def _publishing(synthesis: Synthesis) -> dict[str, Any]:
    """What every function that finishes jobs is told: the bus of the completion events, the webhook queue, and the
    share of a job's pages that may fail while it completes with the others (25%)."""
    return {ENV.EVENT_BUS_NAME: "default", ENV.WEBHOOK_QUEUE_URL: {"Ref": synthesis.logical_id(synthesis.stack.webhooks.queue)},
            ENV.MAX_FAILED_PAGE_PERCENT: "25"}


def test_nine_functions(template: Template) -> None:
    template.resource_count_is("AWS::Lambda::Function", 9)


@pytest.mark.parametrize(
    ("name", "handler", "memory", "timeout"),
    [
        ("invoker", "ocr_platform.handlers.invoker.handler", 256, 60),
        ("completion", "ocr_platform.handlers.completion.handler", 512, 300),
        ("scale_in", "ocr_platform.handlers.scale_in.handler", 128, 30),
        ("dlq_consumer", "ocr_platform.handlers.dlq_consumer.handler", 256, 60),
        ("sweeper", "ocr_platform.handlers.sweeper.handler", 512, 300),
        ("ingest", "ocr_platform.handlers.ingest.handler", 256, 60),
        ("api", "ocr_platform.handlers.api.handler", 256, 10),
        ("webhooks", "ocr_platform.handlers.webhook_deliverer.handler", 256, 120),
    ],
)
def test_zip_functions_run_the_newest_python_with_powertools(
    synthesis: Synthesis, name: str, handler: str, memory: int, timeout: int
) -> None:
    props = _function(synthesis, name)
    assert props["Runtime"] == "python3.14"
    assert props["Handler"] == handler
    assert props["MemorySize"] == memory
    assert props["Timeout"] == timeout
    assert props["Architectures"] == ["x86_64"]
    assert [flatten(layer) for layer in props["Layers"]] == [POWERTOOLS_LAYER]
    assert props["Code"]["S3Key"].endswith(".zip")


def test_invoker_environment(synthesis: Synthesis) -> None:
    stack = synthesis.stack
    assert stack.cpu is not None
    assert _env(_function(synthesis, "invoker")) == {
        "POWERTOOLS_SERVICE_NAME": "ocr-invoker",
        ENV.METRICS_NAMESPACE: "OcrPlatform/dev",
        ENV.TABLE_NAME: {"Ref": synthesis.logical_id(stack.jobs.table)},
        ENV.BUCKET_NAME: {"Ref": synthesis.logical_id(stack.documents.bucket)},
        ENV.PROCESSOR_FUNCTION: {"Ref": synthesis.logical_id(stack.cpu.function)},
        ENV.ENDPOINT_NAME: "ocr-dev-paddleocr-vl",
        ENV.VARIANT_NAME: "AllTraffic",
        ENV.MAX_RECEIVE_COUNT: "5",
        ENV.DISPATCH_LEASE_SECONDS: "60",
        ENV.INVOCATION_TIMEOUT_SECONDS: "3600",
        ENV.REQUEST_TTL_SECONDS: "21600",
        ENV.JOB_TTL_DAYS: "30",
        # A document submitted by URL is fetched within 30 s.
        ENV.URL_FETCH_TIMEOUT_SECONDS: "30",
        # Admission control: 20 processor slots, each held at most 900 + 120 s; a job that finds none goes
        # back on its queue for 20 s.
        ENV.PROCESSOR_SLOTS: "20",
        ENV.ADMISSION_LEASE_SECONDS: "1020",
        ENV.ADMISSION_RETRY_SECONDS: "20",
        ENV.QUEUE_URL: {"Ref": synthesis.logical_id(stack.queue.queue)},
        **_publishing(synthesis),
    }


def test_completion_and_processor_environment(synthesis: Synthesis) -> None:
    stack = synthesis.stack
    common = {
        ENV.TABLE_NAME: {"Ref": synthesis.logical_id(stack.jobs.table)},
        ENV.BUCKET_NAME: {"Ref": synthesis.logical_id(stack.documents.bucket)},
        ENV.JOB_TTL_DAYS: "30",
        ENV.METRICS_NAMESPACE: "OcrPlatform/dev",
        **_publishing(synthesis),
    }
    # It sends the chunk requests of a job the endpoint split, with the invoker's timeout and TTL.
    endpoint = {ENV.ENDPOINT_NAME: "ocr-dev-paddleocr-vl", ENV.INVOCATION_TIMEOUT_SECONDS: "3600", ENV.REQUEST_TTL_SECONDS: "21600"}
    assert _env(_function(synthesis, "completion")) == {"POWERTOOLS_SERVICE_NAME": "ocr-completion", **common, **endpoint}
    # A deployed stage never runs another model in place of the one asked for (fail closed).
    assert _env(_function(synthesis, "processor")) == {
        "POWERTOOLS_SERVICE_NAME": "ocr-processor", **common, ENV.ENGINE_FALLBACK: "none",
        # Long documents split into chunks of 6 pages; ONNX Runtime gets the 1.7 vCPUs of 3008 MB, rounded up.
        ENV.CPU_PAGES_PER_CHUNK: "6", ENV.MAX_PAGES: "2000", ENV.CPU_THREADS: "2",
        # It hands its processor slot to the chunks it launches, and takes free ones for them.
        ENV.PROCESSOR_SLOTS: "20", ENV.ADMISSION_LEASE_SECONDS: "1020",
    }


def test_scale_in_environment(synthesis: Synthesis) -> None:
    stack = synthesis.stack
    env = {name: flatten(value) for name, value in _env(_function(synthesis, "scale_in")).items()}
    assert env == {  # the GPU stack's function reads the core's table and bucket through its outputs
        "POWERTOOLS_SERVICE_NAME": "ocr-scale-in",
        ENV.TABLE_NAME: f"<{synthesis.logical_id(stack.jobs.table)}>",
        ENV.BUCKET_NAME: "<output:BucketName>",
        ENV.ENDPOINT_NAME: "ocr-dev-paddleocr-vl",
        ENV.VARIANT_NAME: "AllTraffic",
        ENV.INFLIGHT_WINDOW_SECONDS: str(3600 + 300),
        ENV.JOB_TTL_DAYS: "30",
        ENV.IDLE_ALARM_NAME: f"<{synthesis.logical_id(synthesis.gpu.idle_alarm)}>",
    }


def test_scale_in_is_rechecked_on_a_schedule_of_idle_minutes(template: Template, synthesis: Synthesis) -> None:
    rule = synthesis.resource(synthesis.gpu.node.find_child("ScaleInRecheck"))
    props = rule["Properties"]
    assert props["ScheduleExpression"] == "rate(10 minutes)"
    assert props["State"] == "ENABLED"
    [target] = props["Targets"]
    assert target["Arn"] == {"Fn::GetAtt": [synthesis.logical_id(synthesis.gpu.scale_in_function), "Arn"]}
    assert target["RetryPolicy"] == {"MaximumRetryAttempts": 0}


def test_invoker_reads_the_queue_one_message_at_a_time_with_partial_failures(
    template: Template, synthesis: Synthesis
) -> None:
    template.resource_count_is("AWS::Lambda::EventSourceMapping", 3)  # the invoker's, the DLQ consumer's, the deliverer's
    [props] = [
        m["Properties"] for m in template.find_resources("AWS::Lambda::EventSourceMapping").values()
        if m["Properties"]["FunctionName"] == {"Ref": synthesis.logical_id(synthesis.stack.invoker.function)}
    ]
    assert props["EventSourceArn"] == {"Fn::GetAtt": [synthesis.logical_id(synthesis.stack.queue.queue), "Arn"]}
    assert props["BatchSize"] == 1
    assert props["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


def test_processor_is_a_container_image_sized_for_ocr(synthesis: Synthesis) -> None:
    props = _function(synthesis, "processor")
    assert props["PackageType"] == "Image"
    assert "Runtime" not in props and "Handler" not in props
    assert props["MemorySize"] == 3008
    assert props["Timeout"] == 900
    assert props["EphemeralStorage"] == {"Size": 10240}
    assert "container-assets" in str(props["Code"]["ImageUri"])


def test_processor_image_asset_builds_the_cpu_dockerfile_from_the_repo_root(synthesis: Synthesis) -> None:
    manifest = json.loads((synthesis.outdir / f"{synthesis.stack.artifact_id}.assets.json").read_text())
    [source] = [asset["source"] for asset in manifest["dockerImages"].values()]  # the endpoint image is the GPU stack's
    assert source["dockerFile"] == "containers/cpu-ocr/Dockerfile"
    assert source["platform"] == "linux/amd64"
    staged = synthesis.outdir / source["directory"]
    names = {p.relative_to(staged).parts[0] for p in staged.rglob("*")}
    # The root .dockerignore is an allow-list: no virtualenv, node_modules, cdk.out or .git in the context.
    assert names <= {
        "pyproject.toml",
        "README.md",
        "LICENSE",
        "lambdas",
        "containers",
        "requirements",
        ".dockerignore",
    }, names
    assert "lambdas" in names and "pyproject.toml" in names


def test_processor_failures_go_to_the_completion_function_without_retries(
    template: Template, synthesis: Synthesis
) -> None:
    processor = {"Ref": synthesis.logical_id(synthesis.stack.cpu.function)}
    [props] = [c["Properties"] for c in template.find_resources("AWS::Lambda::EventInvokeConfig").values()
               if c["Properties"]["FunctionName"] == processor]
    assert props["MaximumRetryAttempts"] == 0
    assert props["MaximumEventAgeInSeconds"] == 6 * 3600
    assert props["DestinationConfig"] == {
        "OnFailure": {"Destination": {"Fn::GetAtt": [synthesis.logical_id(synthesis.stack.completion.function), "Arn"]}}
    }


def test_completion_subscribes_to_success_and_error_topics_scale_in_to_its_topic(
    template: Template, synthesis: Synthesis
) -> None:
    stack = synthesis.stack
    subscriptions = {
        (s["Properties"]["TopicArn"]["Ref"], s["Properties"]["Endpoint"]["Fn::GetAtt"][0])
        for s in template.find_resources("AWS::SNS::Subscription").values()
        if s["Properties"]["Protocol"] == "lambda"
    }
    completion = synthesis.logical_id(stack.completion.function)
    assert synthesis.gpu is not None
    assert subscriptions == {
        (synthesis.logical_id(stack.topics.success_topic), completion),
        (synthesis.logical_id(stack.topics.error_topic), completion),
        (synthesis.logical_id(synthesis.gpu.scale_in_topic), synthesis.logical_id(synthesis.gpu.scale_in_function)),
    }
    # SNS may invoke each subscribed function, from that topic only.
    permissions = {
        (p["Properties"]["SourceArn"]["Ref"], p["Properties"]["FunctionName"]["Fn::GetAtt"][0])
        for p in template.find_resources("AWS::Lambda::Permission").values()
        if p["Properties"]["Principal"] == "sns.amazonaws.com"
    }
    assert permissions == subscriptions


def test_every_function_logs_to_its_own_group_with_retention(template: Template, synthesis: Synthesis) -> None:
    groups = template.find_resources("AWS::Logs::LogGroup")
    assert len(groups) == 11  # nine functions, the jobs API's access log and the GPU endpoint's own log
    assert all(group["Properties"]["RetentionInDays"] == 30 for group in groups.values())
    used = {
        _function(synthesis, name)["LoggingConfig"]["LogGroup"]["Ref"]
        for name in ("invoker", "completion", "scale_in", "processor", "dlq_consumer", "sweeper", "ingest", "api", "webhooks")
    }
    endpoint_logs = synthesis.logical_id(synthesis.gpu.node.find_child("EndpointLogs"))
    assert used | {synthesis.logical_id(synthesis.stack.jobs_api.node.find_child("AccessLogs")), endpoint_logs} == set(groups)


def test_dlq_consumer_reads_the_dead_letter_queue_with_partial_failures(template: Template, synthesis: Synthesis) -> None:
    stack = synthesis.stack
    [props] = [
        m["Properties"]
        for m in template.find_resources("AWS::Lambda::EventSourceMapping").values()
        if m["Properties"]["FunctionName"] == {"Ref": synthesis.logical_id(stack.recovery.dlq_consumer_function)}
    ]
    assert props["EventSourceArn"] == {"Fn::GetAtt": [synthesis.logical_id(stack.queue.dead_letter_queue), "Arn"]}
    assert props["BatchSize"] == 10
    assert props["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    # AWS's guidance for an SQS event source: visibility timeout >= 6 x the function's timeout.
    dlq = synthesis.resource(stack.queue.dead_letter_queue)["Properties"]
    assert dlq["VisibilityTimeout"] == 6 * _function(synthesis, "dlq_consumer")["Timeout"] == 360


def test_dlq_consumer_environment(synthesis: Synthesis) -> None:
    stack = synthesis.stack
    assert _env(_function(synthesis, "dlq_consumer")) == {
        "POWERTOOLS_SERVICE_NAME": "ocr-dlq-consumer",
        ENV.METRICS_NAMESPACE: "OcrPlatform/dev",
        ENV.TABLE_NAME: {"Ref": synthesis.logical_id(stack.jobs.table)},
        ENV.BUCKET_NAME: {"Ref": synthesis.logical_id(stack.documents.bucket)},
        ENV.JOB_TTL_DAYS: "30",
        **_publishing(synthesis),
    }


def test_sweeper_environment_carries_the_derived_deadlines(synthesis: Synthesis) -> None:
    stack = synthesis.stack
    cfg = stack.config
    assert _env(_function(synthesis, "sweeper")) == {
        "POWERTOOLS_SERVICE_NAME": "ocr-sweeper",
        ENV.METRICS_NAMESPACE: "OcrPlatform/dev",
        ENV.TABLE_NAME: {"Ref": synthesis.logical_id(stack.jobs.table)},
        ENV.BUCKET_NAME: {"Ref": synthesis.logical_id(stack.documents.bucket)},
        ENV.JOB_TTL_DAYS: "30",
        ENV.QUEUED_DEADLINE_SECONDS: str(4 * 86_400 + 600),
        ENV.LAMBDA_DEADLINE_SECONDS: str(2 * (6 * 3600 + 900) + 300),
        ENV.SAGEMAKER_DEADLINE_SECONDS: str(2 * (21_600 + 3600 + 300) + 600),
        ENV.SETTLE_GRACE_SECONDS: "600",
        # Settling a lost split plan sends its chunk requests, as the completion function would.
        ENV.ENDPOINT_NAME: "ocr-dev-paddleocr-vl", ENV.INVOCATION_TIMEOUT_SECONDS: "3600", ENV.REQUEST_TTL_SECONDS: "21600",
        # It publishes the completion events a crashed function left pending.
        **_publishing(synthesis),
    }
    assert (cfg.queued_deadline_seconds, cfg.lambda_deadline_seconds, cfg.sagemaker_deadline_seconds) == (
        346_200,
        45_300,
        51_600,
    )


def test_sweeper_runs_every_fifteen_minutes_without_retries(template: Template, synthesis: Synthesis) -> None:
    recovery = synthesis.stack.recovery
    props = synthesis.resource(recovery.sweeper_rule)["Properties"]
    assert props["ScheduleExpression"] == "rate(15 minutes)"
    assert props["State"] == "ENABLED"
    [target] = props["Targets"]
    sweeper = synthesis.logical_id(recovery.sweeper_function)
    assert target["Arn"] == {"Fn::GetAtt": [sweeper, "Arn"]}
    assert target["RetryPolicy"] == {"MaximumRetryAttempts": 0}
    # EventBridge may invoke the sweeper, from this rule only.
    [permission] = [
        p["Properties"]
        for p in template.find_resources("AWS::Lambda::Permission").values()
        if p["Properties"]["Principal"] == "events.amazonaws.com"
        and p["Properties"]["FunctionName"] == {"Fn::GetAtt": [sweeper, "Arn"]}
    ]
    assert permission["SourceArn"] == {"Fn::GetAtt": [synthesis.logical_id(recovery.sweeper_rule), "Arn"]}


def test_two_schedules_scale_in_recheck_and_sweeper(template: Template, synthesis: Synthesis) -> None:
    stack = synthesis.stack
    assert synthesis.gpu is not None
    rules = {rule_id: rule for rule_id, rule in template.find_resources("AWS::Events::Rule").items()
             if "ScheduleExpression" in rule["Properties"]}
    assert set(rules) == {
        synthesis.logical_id(synthesis.gpu.node.find_child("ScaleInRecheck")),
        synthesis.logical_id(stack.recovery.sweeper_rule),
    }
    targets = {rule["Properties"]["Targets"][0]["Arn"]["Fn::GetAtt"][0] for rule in rules.values()}
    assert targets == {
        synthesis.logical_id(synthesis.gpu.scale_in_function),
        synthesis.logical_id(stack.recovery.sweeper_function),
    }


def test_failed_job_rate_alarm_reads_the_functions_job_metrics(template: Template, synthesis: Synthesis) -> None:
    alarm = synthesis.resource(synthesis.stack.failed_jobs.alarm)["Properties"]
    metrics = {query["Id"]: query for query in alarm["Metrics"]}
    [rate] = [q for q in metrics.values() if "Expression" in q]
    assert rate["Expression"] == "IF((FILL(failed, 0) + FILL(completed, 0)) >= 10, 100 * FILL(failed, 0) / (FILL(failed, 0) + FILL(completed, 0)), 0)"
    assert rate.get("ReturnData", True) is True
    for name, metric_name in (("failed", "JobsFailed"), ("completed", "JobsCompleted")):
        stat = metrics[name]["MetricStat"]
        assert stat["Metric"] == {"Namespace": "OcrPlatform/dev", "MetricName": metric_name,
                                  "Dimensions": [{"Name": "service", "Value": "jobs"}]}
        assert (stat["Stat"], stat["Period"], metrics[name]["ReturnData"]) == ("Sum", 300, False)
    assert (alarm["Threshold"], alarm["ComparisonOperator"]) == (25, "GreaterThanThreshold")
    assert (alarm["EvaluationPeriods"], alarm["DatapointsToAlarm"], alarm["TreatMissingData"]) == (3, 2, "notBreaching")
    assert alarm["AlarmActions"] == [{"Ref": synthesis.logical_id(synthesis.stack.topics.alarm_topic)}]
