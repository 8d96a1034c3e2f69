"""The job queue with its DLQ, the encrypted topics, their key and the DLQ alarm."""

from __future__ import annotations

from typing import Any

from aws_cdk.assertions import Match, Template

from tests.infra.conftest import Synthesis
from tests.infra.template_helpers import as_list, flatten

TLS_ONLY = Match.object_like({"Effect": "Deny", "Condition": {"Bool": {"aws:SecureTransport": "false"}}})


def test_queue_redrives_to_dlq_after_five_receives(synthesis: Synthesis) -> None:
    queue = synthesis.resource(synthesis.stack.queue.queue)["Properties"]
    dlq_id = synthesis.logical_id(synthesis.stack.queue.dead_letter_queue)
    assert queue["RedrivePolicy"] == {"deadLetterTargetArn": {"Fn::GetAtt": [dlq_id, "Arn"]}, "maxReceiveCount": 5}


def test_visibility_timeout_is_six_invoker_timeouts(synthesis: Synthesis, resources: dict[str, Any]) -> None:
    queue = synthesis.resource(synthesis.stack.queue.queue)["Properties"]
    invoker = synthesis.resource(synthesis.stack.invoker.function)["Properties"]
    assert invoker["Timeout"] == 60
    assert queue["VisibilityTimeout"] == 360 == 6 * invoker["Timeout"]


def test_queues_are_encrypted_and_tls_only(template: Template, synthesis: Synthesis) -> None:
    stack = synthesis.stack
    template.resource_count_is("AWS::SQS::Queue", 5)
    queues = (stack.queue.queue, stack.queue.dead_letter_queue, stack.parked_events.queue, stack.webhooks.queue,
              stack.webhooks.dead_letter_queue)
    for queue in queues:
        assert synthesis.resource(queue)["Properties"]["SqsManagedSseEnabled"] is True
        template.has_resource_properties(
            "AWS::SQS::QueuePolicy",
            {
                "Queues": [{"Ref": synthesis.logical_id(queue)}],
                "PolicyDocument": {"Statement": Match.array_with([TLS_ONLY])},
            },
        )
    dlq = synthesis.resource(synthesis.stack.queue.dead_letter_queue)["Properties"]
    assert dlq["MessageRetentionPeriod"] == 14 * 24 * 3600


def test_dlq_alarm_fires_on_any_message_and_notifies_operations(synthesis: Synthesis) -> None:
    alarm = synthesis.resource(synthesis.stack.queue.dead_letter_alarm)["Properties"]
    assert alarm["MetricName"] == "ApproximateNumberOfMessagesVisible"
    assert alarm["Namespace"] == "AWS/SQS"
    assert alarm["Dimensions"] == [
        {
            "Name": "QueueName",
            "Value": {"Fn::GetAtt": [synthesis.logical_id(synthesis.stack.queue.dead_letter_queue), "QueueName"]},
        }
    ]
    assert alarm["ComparisonOperator"] == "GreaterThanThreshold"
    assert alarm["Threshold"] == 0
    assert alarm["EvaluationPeriods"] == 1
    assert alarm["AlarmActions"] == [{"Ref": synthesis.logical_id(synthesis.stack.topics.alarm_topic)}]


def test_topics_are_kms_encrypted_and_tls_only(template: Template, synthesis: Synthesis) -> None:
    topics = synthesis.stack.topics
    key_ref = f"<{synthesis.logical_id(topics.key)}.Arn>"
    template.resource_count_is("AWS::SNS::Topic", 4)
    # The GPU stack's scale-in topic too, with the core's key.
    for topic in (topics.success_topic, topics.error_topic, synthesis.gpu.scale_in_topic, topics.alarm_topic):
        assert flatten(synthesis.resource(topic)["Properties"]["KmsMasterKeyId"]) == key_ref
        template.has_resource_properties(
            "AWS::SNS::TopicPolicy",
            {
                "Topics": [{"Ref": synthesis.logical_id(topic)}],
                "PolicyDocument": {
                    "Statement": Match.array_with(
                        [
                            Match.object_like(
                                {
                                    "Effect": "Deny",
                                    "Action": "sns:Publish",
                                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                                }
                            )
                        ]
                    )
                },
            },
        )


def test_key_rotates_and_lets_cloudwatch_publish_to_encrypted_topics(synthesis: Synthesis) -> None:
    key = synthesis.resource(synthesis.stack.topics.key)
    assert key["Properties"]["EnableKeyRotation"] is True
    statements = key["Properties"]["KeyPolicy"]["Statement"]
    cloudwatch = [s for s in statements if s.get("Principal") == {"Service": "cloudwatch.amazonaws.com"}]
    assert cloudwatch and cloudwatch[0]["Effect"] == "Allow"
    assert sorted(cloudwatch[0]["Action"]) == ["kms:Decrypt", "kms:GenerateDataKey*"]


def test_alarm_topics_allow_only_their_alarm_to_publish(synthesis: Synthesis, resources: dict[str, Any]) -> None:
    stack = synthesis.stack
    assert synthesis.gpu is not None
    pairs = [
        (stack.topics.alarm_topic, [stack.queue.dead_letter_alarm, stack.parked_events.alarm, stack.webhooks.dead_letter_alarm,
                                    stack.failed_jobs.alarm]),
        (synthesis.gpu.scale_in_topic, [synthesis.gpu.idle_alarm]),
    ]
    for topic, alarms in pairs:
        topic_ref = {"Ref": synthesis.logical_id(topic)}
        [policy] = [
            r
            for r in resources.values()
            if r["Type"] == "AWS::SNS::TopicPolicy" and r["Properties"]["Topics"] == [topic_ref]
        ]
        allow = [
            {k: v for k, v in s.items() if k != "Sid"}
            for s in policy["Properties"]["PolicyDocument"]["Statement"]
            if s["Effect"] == "Allow"
        ]
        assert allow == [
            {
                "Effect": "Allow",
                "Principal": {"Service": "cloudwatch.amazonaws.com"},
                "Action": "sns:Publish",
                "Resource": topic_ref,
                "Condition": {"ArnLike": {"aws:SourceArn": {"Fn::GetAtt": [synthesis.logical_id(alarm), "Arn"]}}},
            }
            for alarm in alarms
        ]


# ----- every asynchronous hand-over is delivered or parked -----------------------------------------


def test_every_asynchronously_invoked_function_parks_what_fails_its_retries(synthesis: Synthesis, resources: dict[str, Any]) -> None:
    stack = synthesis.stack
    parked = f"<{synthesis.logical_id(stack.parked_events.queue)}.Arn>"  # the GPU stack's scale-in function parks there too
    invoked_async = {  # function -> Lambda's retries before the event is parked
        synthesis.logical_id(stack.completion.function): 2,
        synthesis.logical_id(synthesis.gpu.scale_in_function): 2,
        synthesis.logical_id(stack.recovery.sweeper_function): 0,
        synthesis.logical_id(stack.drop_folder.function): 2,
    }
    configs = {
        config["Properties"]["FunctionName"]["Ref"]: config["Properties"]
        for config in resources.values()
        if config["Type"] == "AWS::Lambda::EventInvokeConfig"
    }
    for function, retries in invoked_async.items():
        assert configs[function]["MaximumRetryAttempts"] == retries
        assert flatten(configs[function]["DestinationConfig"]["OnFailure"]["Destination"]) == parked
    # The processor's failures finish their jobs through the completion function (which parks in turn).
    processor = configs[synthesis.logical_id(stack.cpu.function)]
    assert processor["DestinationConfig"]["OnFailure"]["Destination"]["Fn::GetAtt"][0] == synthesis.logical_id(stack.completion.function)
    assert set(configs) == {*invoked_async, synthesis.logical_id(stack.cpu.function)}


def test_every_sns_subscription_and_eventbridge_target_has_a_dlq(synthesis: Synthesis, resources: dict[str, Any]) -> None:
    parked = f"<{synthesis.logical_id(synthesis.stack.parked_events.queue)}.Arn>"
    lambda_subscriptions = [r["Properties"] for r in resources.values()
                            if r["Type"] == "AWS::SNS::Subscription" and r["Properties"]["Protocol"] == "lambda"]
    assert len(lambda_subscriptions) == 3  # success and error -> completion; idle alarm -> scale-in
    for subscription in lambda_subscriptions:
        assert flatten(subscription["RedrivePolicy"]["deadLetterTargetArn"]) == parked
    rules = [r["Properties"] for r in resources.values() if r["Type"] == "AWS::Events::Rule"]
    assert len(rules) == 3  # the sweeper's schedule, the scale-in re-check and the drop folder's S3 events
    for rule in rules:
        for target in rule["Targets"]:
            assert flatten(target["DeadLetterConfig"]["Arn"]) == parked


def test_the_gpu_stacks_subscription_and_rule_may_park_in_the_core_queue(synthesis: Synthesis, resources: dict[str, Any]) -> None:
    """The GPU stack imports the parked-events queue, whose policy it cannot change: the core admits the GPU stack's
    scale-in topic and re-check rule by their ARNs, fixed names built from the endpoint's."""
    queue = synthesis.logical_id(synthesis.stack.parked_events.queue)
    [policy] = [r["Properties"] for r in resources.values() if r["Type"] == "AWS::SQS::QueuePolicy" and {"Ref": queue} in r["Properties"]["Queues"]]
    sources = {
        (statement["Principal"]["Service"], flatten(source))
        for statement in policy["PolicyDocument"]["Statement"]
        if statement["Effect"] == "Allow"
        for source in as_list(statement["Condition"]["ArnEquals"]["aws:SourceArn"])
    }
    arn = "arn:<AWS::Partition>:{}:<AWS::Region>:<AWS::AccountId>:{}"
    assert ("sns.amazonaws.com", arn.format("sns", "ocr-dev-paddleocr-vl-scale-in")) in sources
    assert ("events.amazonaws.com", arn.format("events", "rule/ocr-dev-paddleocr-vl-scale-in-recheck")) in sources
    assert flatten(synthesis.resource(synthesis.gpu.scale_in_topic)["Properties"]["TopicName"]) == "ocr-dev-paddleocr-vl-scale-in"
    recheck = synthesis.resource(synthesis.gpu.node.find_child("ScaleInRecheck"))["Properties"]
    assert recheck["Name"] == "ocr-dev-paddleocr-vl-scale-in-recheck"


def test_a_parked_event_raises_an_alarm_to_operations(synthesis: Synthesis) -> None:
    stack = synthesis.stack
    alarm = synthesis.resource(stack.parked_events.alarm)["Properties"]
    assert alarm["MetricName"] == "ApproximateNumberOfMessagesVisible"
    assert alarm["Dimensions"][0]["Value"] == {"Fn::GetAtt": [synthesis.logical_id(stack.parked_events.queue), "QueueName"]}
    assert (alarm["ComparisonOperator"], alarm["Threshold"]) == ("GreaterThanThreshold", 0)
    assert alarm["AlarmActions"] == [{"Ref": synthesis.logical_id(stack.topics.alarm_topic)}]
    queue = synthesis.resource(stack.parked_events.queue)["Properties"]
    assert queue["MessageRetentionPeriod"] == 14 * 24 * 3600
