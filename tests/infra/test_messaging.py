"""The job queue with its DLQ, the encrypted topics, their key and the DLQ alarm."""

from __future__ import annotations

from typing import Any

from aws_cdk.assertions import Match, Template

from tests.infra.conftest import Synthesis

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
    template.resource_count_is("AWS::SQS::Queue", 2)
    for queue in (synthesis.stack.queue.queue, synthesis.stack.queue.dead_letter_queue):
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
    key_ref = {"Fn::GetAtt": [synthesis.logical_id(topics.key), "Arn"]}
    template.resource_count_is("AWS::SNS::Topic", 4)
    for topic in (topics.success_topic, topics.error_topic, topics.scale_in_topic, topics.alarm_topic):
        assert synthesis.resource(topic)["Properties"]["KmsMasterKeyId"] == key_ref
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
    assert stack.gpu is not None
    pairs = [
        (stack.topics.alarm_topic, [stack.queue.dead_letter_alarm, stack.failed_jobs.alarm]),
        (stack.topics.scale_in_topic, [stack.gpu.idle_alarm]),
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
