"""Results that come to you: completion events on the stage's bus, the webhook queue with its DLQ and signing secret,
and the deliverer (``ocr_infra.job_notifications``). The notification outbox GSI is in test_storage."""

from __future__ import annotations

from typing import Any

import pytest
from aws_cdk.assertions import Template

from ocr_infra.config import PlatformConfig
from ocr_infra.stack import OcrPlatformStack
from ocr_platform.core import defaults
from ocr_platform.core.settings import ENV
from tests.infra.conftest import Synthesis
from tests.infra.template_helpers import grants, tracing_grants
from tests.infra.test_config import _app

BUS_ARN = "arn:<AWS::Partition>:events:<AWS::Region>:<AWS::AccountId>:event-bus/{}"


def _finishing_functions(stack: OcrPlatformStack) -> dict[str, Any]:
    """The functions with ``finishes_jobs``: each publishes the completion events of the jobs it finishes."""
    assert stack.cpu is not None
    return {
        "processor": stack.cpu.function,
        "completion": stack.completion.function,
        "invoker": stack.invoker.function,
        "sweeper": stack.recovery.sweeper_function,
        "dlq_consumer": stack.recovery.dlq_consumer_function,
        "ingest": stack.drop_folder.function,
    }


def _role_grants(template: dict[str, Any], stack: OcrPlatformStack, fn: Any) -> dict[str, set[str]]:
    return grants(template["Resources"], stack.resolve(stack.get_logical_id(fn.role.node.default_child)))


def test_every_function_that_finishes_jobs_may_publish_on_exactly_the_default_bus_and_queue_webhooks(
    synthesis: Synthesis, resources: dict[str, Any]
) -> None:
    stack = synthesis.stack
    webhook_queue = f"<{synthesis.logical_id(stack.webhooks.queue)}.Arn>"
    finishing = {synthesis.logical_id(fn.role) for fn in _finishing_functions(stack).values()}
    roles = [logical_id for logical_id, r in resources.items() if r["Type"] == "AWS::IAM::Role"]
    publishers = set()
    for role in roles:
        granted = grants(resources, role)
        if "events:PutEvents" in granted:
            publishers.add(role)
            # Exactly the account's default bus, never "*" or another bus.
            assert granted["events:PutEvents"] == {BUS_ARN.format("default")}, role
            assert webhook_queue in granted["sqs:SendMessage"], role
    assert publishers == finishing
    # No other function may queue a webhook: the deliverer only consumes and parks.
    queuers = {role for role in roles if webhook_queue in grants(resources, role).get("sqs:SendMessage", set())}
    assert queuers == finishing


def test_the_functions_that_finish_jobs_are_told_the_bus_and_the_webhook_queue(synthesis: Synthesis) -> None:
    stack = synthesis.stack
    queue_ref = {"Ref": synthesis.logical_id(stack.webhooks.queue)}
    for name, fn in _finishing_functions(stack).items():
        environment = synthesis.resource(fn)["Properties"]["Environment"]["Variables"]
        assert (environment[ENV.EVENT_BUS_NAME], environment[ENV.WEBHOOK_QUEUE_URL]) == ("default", queue_ref), name
    for fn in (stack.jobs_api.function, synthesis.gpu.scale_in_function, stack.webhook_deliverer.function):
        assert ENV.EVENT_BUS_NAME not in synthesis.resource(fn)["Properties"]["Environment"]["Variables"]


def test_the_signing_secret_is_generated_private_kept_and_rotated_by_hand(synthesis: Synthesis, template: Template) -> None:
    template.resource_count_is("AWS::SecretsManager::Secret", 1)
    secret = synthesis.resource(synthesis.stack.webhooks.secret)
    assert secret["Properties"]["GenerateSecretString"] == {
        "PasswordLength": 64, "ExcludePunctuation": True, "IncludeSpace": False,
    }
    assert "SecretString" not in secret["Properties"]
    assert "KmsKeyId" not in secret["Properties"]  # the AWS managed key: the deliverer needs no KMS grant
    assert secret["DeletionPolicy"] == "Retain"  # receivers hold a copy of it
    # No resource policy: only identities of this account that are granted it may read it.
    template.resource_count_is("AWS::SecretsManager::ResourcePolicy", 0)
    template.resource_count_is("AWS::SecretsManager::RotationSchedule", 0)
    [acknowledged] = [m.data for m in synthesis.stack.webhooks.secret.node.metadata if m.type == "aws:cdk:acknowledged-rules"]
    [(finding, reason)] = acknowledged.items()
    assert finding.endswith("AwsSolutions-SMG4") and "receiver" in reason


def test_the_webhook_queue_redrives_only_what_crashes_the_deliverer_and_is_encrypted(synthesis: Synthesis) -> None:
    stack = synthesis.stack
    queue = synthesis.resource(stack.webhooks.queue)["Properties"]
    dlq_id = synthesis.logical_id(stack.webhooks.dead_letter_queue)
    # The deliverer dead-letters by itself after 31 attempts; the redrive catches a message it keeps crashing on.
    assert defaults.webhook_delivery_attempts() == 31
    assert queue["RedrivePolicy"] == {"deadLetterTargetArn": {"Fn::GetAtt": [dlq_id, "Arn"]}, "maxReceiveCount": 62}
    deliverer = synthesis.resource(stack.webhook_deliverer.function)["Properties"]
    assert queue["VisibilityTimeout"] == 6 * deliverer["Timeout"] == 720
    # Longer than the longest retry window (3 days) plus the longest wait (12 h).
    assert queue["MessageRetentionPeriod"] == 4 * 86_400
    dlq = synthesis.resource(stack.webhooks.dead_letter_queue)["Properties"]
    assert dlq["MessageRetentionPeriod"] == 14 * 86_400
    assert queue["SqsManagedSseEnabled"] is True and dlq["SqsManagedSseEnabled"] is True


def test_a_dead_lettered_webhook_raises_an_alarm_to_operations(synthesis: Synthesis) -> None:
    stack = synthesis.stack
    alarm = synthesis.resource(stack.webhooks.dead_letter_alarm)["Properties"]
    assert alarm["MetricName"] == "ApproximateNumberOfMessagesVisible"
    dlq_name = {"Fn::GetAtt": [synthesis.logical_id(stack.webhooks.dead_letter_queue), "QueueName"]}
    assert alarm["Dimensions"] == [{"Name": "QueueName", "Value": dlq_name}]
    assert (alarm["ComparisonOperator"], alarm["Threshold"], alarm["EvaluationPeriods"]) == ("GreaterThanThreshold", 0, 1)
    assert alarm["AlarmActions"] == [{"Ref": synthesis.logical_id(stack.topics.alarm_topic)}]


def test_the_deliverer_reads_the_webhook_queue_with_partial_failures(template: Template, synthesis: Synthesis) -> None:
    stack = synthesis.stack
    [mapping] = [
        m["Properties"] for m in template.find_resources("AWS::Lambda::EventSourceMapping").values()
        if m["Properties"]["FunctionName"] == {"Ref": synthesis.logical_id(stack.webhook_deliverer.function)}
    ]
    assert mapping["EventSourceArn"] == {"Fn::GetAtt": [synthesis.logical_id(stack.webhooks.queue), "Arn"]}
    assert mapping["BatchSize"] == 10
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    # Only the queue invokes it: no asynchronous invocations, so no EventInvokeConfig.
    function = synthesis.logical_id(stack.webhook_deliverer.function)
    assert not [c for c in template.find_resources("AWS::Lambda::EventInvokeConfig").values()
                if c["Properties"]["FunctionName"] == {"Ref": function}]


def test_the_deliverer_may_do_only_what_a_delivery_needs(synthesis: Synthesis, resources: dict[str, Any]) -> None:
    stack = synthesis.stack
    fn = stack.webhook_deliverer.function
    table = f"<{synthesis.logical_id(stack.jobs.table)}.Arn>"
    queue = f"<{synthesis.logical_id(stack.webhooks.queue)}.Arn>"
    log_group = "<{}.Arn>".format(synthesis.resource(fn)["Properties"]["LoggingConfig"]["LogGroup"]["Ref"])
    assert grants(resources, synthesis.logical_id(fn.role)) == {
        "logs:CreateLogStream": {log_group},
        "logs:PutLogEvents": {log_group},
        # Claim each POST on its job and record the attempt.
        "dynamodb:GetItem": {table},
        "dynamodb:UpdateItem": {table},
        # The signing secret (the AWS managed key: no KMS grant).
        "secretsmanager:GetSecretValue": {f"<{synthesis.logical_id(stack.webhooks.secret)}>"},
        # The event source's grants; ChangeMessageVisibility also delays a retry by the schedule's wait.
        "sqs:ReceiveMessage": {queue},
        "sqs:DeleteMessage": {queue},
        "sqs:ChangeMessageVisibility": {queue},
        "sqs:GetQueueAttributes": {queue},
        "sqs:GetQueueUrl": {queue},
        # Park a webhook that ran out of retries.
        "sqs:SendMessage": {f"<{synthesis.logical_id(stack.webhooks.dead_letter_queue)}.Arn>"},
        **tracing_grants(),
    }


def test_the_deliverer_environment(synthesis: Synthesis) -> None:
    stack = synthesis.stack
    props = synthesis.resource(stack.webhook_deliverer.function)["Properties"]
    assert (props["Handler"], props["MemorySize"], props["Timeout"]) == ("ocr_platform.handlers.webhook_deliverer.handler", 256, 120)
    assert props["Environment"]["Variables"] == {
        "POWERTOOLS_SERVICE_NAME": "ocr-webhooks",
        ENV.TABLE_NAME: {"Ref": synthesis.logical_id(stack.jobs.table)},
        ENV.BUCKET_NAME: {"Ref": synthesis.logical_id(stack.documents.bucket)},
        ENV.JOB_TTL_DAYS: "30",
        ENV.WEBHOOK_QUEUE_URL: {"Ref": synthesis.logical_id(stack.webhooks.queue)},
        ENV.WEBHOOK_DLQ_URL: {"Ref": synthesis.logical_id(stack.webhooks.dead_letter_queue)},
        ENV.WEBHOOK_SECRET_ARN: {"Ref": synthesis.logical_id(stack.webhooks.secret)},
        ENV.WEBHOOK_FIRST_RETRY_SECONDS: "30",
        ENV.WEBHOOK_MAX_RETRY_INTERVAL_SECONDS: "3600",
        ENV.WEBHOOK_RETRY_WINDOW_SECONDS: "86400",
    }


def test_outputs_name_the_bus_the_signing_secret_and_the_webhook_dlq(synthesis: Synthesis) -> None:
    stack = synthesis.stack
    outputs = synthesis.template_json["Outputs"]
    assert outputs["EventBusName"]["Value"] == "default"
    assert outputs["WebhookSecretArn"]["Value"] == {"Ref": synthesis.logical_id(stack.webhooks.secret)}
    assert "X-OCR-Signature" in outputs["WebhookSecretArn"]["Description"]
    assert outputs["WebhookDlqUrl"]["Value"] == {"Ref": synthesis.logical_id(stack.webhooks.dead_letter_queue)}


@pytest.fixture(scope="module")
def own_bus() -> tuple[OcrPlatformStack, dict[str, Any]]:
    """The one other stage synthesized here: its own bus, and a 2-day retry window."""
    config = PlatformConfig(stage="events", event_bus_name="ocr-events", webhook_retry_window_seconds=2 * 86_400)
    stack = OcrPlatformStack(_app(), "OwnBus", config=config)
    return stack, Template.from_stack(stack).to_json()


def test_a_stage_with_its_own_bus_publishes_there(own_bus: tuple[OcrPlatformStack, dict[str, Any]]) -> None:
    stack, template = own_bus
    for name, fn in _finishing_functions(stack).items():
        assert _role_grants(template, stack, fn)["events:PutEvents"] == {BUS_ARN.format("ocr-events")}, name
        environment = template["Resources"][stack.resolve(stack.get_logical_id(fn.node.default_child))]
        assert environment["Properties"]["Environment"]["Variables"][ENV.EVENT_BUS_NAME] == "ocr-events", name
    assert template["Outputs"]["EventBusName"]["Value"] == "ocr-events"
    # The retry schedule reaches the deliverer and the redrive: 55 attempts in 2 days, so 110 receives.
    assert stack.webhook_deliverer.environment[ENV.WEBHOOK_RETRY_WINDOW_SECONDS] == str(2 * 86_400)
    queue = template["Resources"][stack.resolve(stack.get_logical_id(stack.webhooks.queue.node.default_child))]
    assert stack.config.webhook_delivery_attempts == 55
    assert queue["Properties"]["RedrivePolicy"]["maxReceiveCount"] == 110
