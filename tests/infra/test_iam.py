"""Least privilege: each role may do exactly what its code does, on resources named as narrowly as AWS allows."""

from __future__ import annotations

from typing import Any

import pytest

from tests.infra.conftest import Synthesis
from tests.infra.template_helpers import as_list, grants, policy_statements, tracing_grants

#: Actions that support no resource-level permissions: AWS requires Resource "*" for them.
UNSCOPABLE_ACTIONS = {"ecr:GetAuthorizationToken", "cloudwatch:PutMetricData", *tracing_grants()}
LOGS_ARN_PREFIX = "arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>"
ENDPOINT_ARN = "arn:<AWS::Partition>:sagemaker:<AWS::Region>:<AWS::AccountId>:endpoint/ocr-dev-paddleocr-vl"
#: The account's default event bus: where the completion events go unless the stage names another bus.
DEFAULT_BUS_ARN = "arn:<AWS::Partition>:events:<AWS::Region>:<AWS::AccountId>:event-bus/default"


@pytest.fixture(scope="module")
def ids(synthesis: Synthesis) -> dict[str, str]:
    stack = synthesis.stack
    assert stack.cpu is not None and synthesis.gpu is not None
    return {
        "bucket": synthesis.logical_id(stack.documents.bucket),
        "table": synthesis.logical_id(stack.jobs.table),
        "queue": synthesis.logical_id(stack.queue.queue),
        "dlq": synthesis.logical_id(stack.queue.dead_letter_queue),
        "processor": synthesis.logical_id(stack.cpu.function),
        "completion": synthesis.logical_id(stack.completion.function),
        "success": synthesis.logical_id(stack.topics.success_topic),
        "error": synthesis.logical_id(stack.topics.error_topic),
        "key": synthesis.logical_id(stack.topics.key),
        "parked": synthesis.logical_id(stack.parked_events.queue),
        "webhooks": synthesis.logical_id(stack.webhooks.queue),
    }


def _parks(ids: dict[str, str]) -> dict[str, set[str]]:
    """What Lambda's on-failure destination needs: send to the parked-events queue (CDK's queue grant)."""
    parked = {f"<{ids['parked']}.Arn>"}
    return {"sqs:SendMessage": parked, "sqs:GetQueueAttributes": parked, "sqs:GetQueueUrl": parked}


def _publishes(ids: dict[str, str]) -> dict[str, set[str]]:
    """What a function that finishes jobs needs for their completion events: put them on the bus, queue webhooks."""
    return {"events:PutEvents": {DEFAULT_BUS_ARN}, "sqs:SendMessage": {f"<{ids['webhooks']}.Arn>"}}


def _merged(*grant_sets: dict[str, set[str]]) -> dict[str, set[str]]:
    """``{action: resources}`` of several grants together (one action may be granted on several resources)."""
    merged: dict[str, set[str]] = {}
    for granted in grant_sets:
        for action, resources in granted.items():
            merged.setdefault(action, set()).update(resources)
    return merged


def _role_id(synthesis: Synthesis, fn: Any) -> str:
    return synthesis.logical_id(fn.role)


def _log_group(synthesis: Synthesis, fn: Any) -> str:
    return "<{}.Arn>".format(synthesis.resource(fn)["Properties"]["LoggingConfig"]["LogGroup"]["Ref"])


def test_roles_have_no_managed_policies(resources: dict[str, Any]) -> None:
    roles = {k: r for k, r in resources.items() if r["Type"] == "AWS::IAM::Role"}
    assert len(roles) == 10  # nine functions + the SageMaker execution role
    for name, role in roles.items():
        assert "ManagedPolicyArns" not in role["Properties"], name
    assert not [r for r in resources.values() if r["Type"] == "AWS::IAM::ManagedPolicy"]


def test_no_wildcard_actions_and_star_resources_only_where_aws_requires(resources: dict[str, Any]) -> None:
    roles = [k for k, r in resources.items() if r["Type"] == "AWS::IAM::Role"]
    for role in roles:
        for statement in policy_statements(resources, role):
            actions = as_list(statement["Action"])
            assert statement["Effect"] == "Allow"
            assert not [a for a in actions if "*" in a], (role, statement)
            assert not [a for a in actions if "FullAccess" in a], (role, statement)
            if "*" in as_list(statement["Resource"]):
                assert set(actions) <= UNSCOPABLE_ACTIONS, (role, statement)


def test_invoker_grants(synthesis: Synthesis, resources: dict[str, Any], ids: dict[str, str]) -> None:
    fn = synthesis.stack.invoker.function
    assert grants(resources, _role_id(synthesis, fn)) == {
        "logs:CreateLogStream": {_log_group(synthesis, fn)},
        "logs:PutLogEvents": {_log_group(synthesis, fn)},
        "dynamodb:GetItem": {f"<{ids['table']}.Arn>"},
        "dynamodb:UpdateItem": {f"<{ids['table']}.Arn>"},
        # The processor semaphore's item is taken with a conditional PutItem (admission control).
        "dynamodb:PutItem": {f"<{ids['table']}.Arn>"},
        "lambda:InvokeFunction": {f"<{ids['processor']}.Arn>"},
        "sagemaker:DescribeEndpoint": {ENDPOINT_ARN},
        "sagemaker:UpdateEndpointWeightsAndCapacities": {ENDPOINT_ARN},
        "sagemaker:InvokeEndpointAsync": {ENDPOINT_ARN},
        # The documents it fetches for jobs submitted by URL (an endpoint request is the job's document itself).
        "s3:PutObject": {f"<{ids['bucket']}.Arn>/documents/*"},
        # A large fetched document goes up in parts; a failed upload is aborted.
        "s3:AbortMultipartUpload": {f"<{ids['bucket']}.Arn>/documents/*"},
        # Granted by the SQS event source.
        "sqs:ReceiveMessage": {f"<{ids['queue']}.Arn>"},
        "sqs:DeleteMessage": {f"<{ids['queue']}.Arn>"},
        "sqs:ChangeMessageVisibility": {f"<{ids['queue']}.Arn>"},
        "sqs:GetQueueAttributes": {f"<{ids['queue']}.Arn>"},
        "sqs:GetQueueUrl": {f"<{ids['queue']}.Arn>"},
        **_merged(_publishes(ids), {"sqs:SendMessage": {f"<{ids['queue']}.Arn>"}}),  # a job waiting for a slot goes back on its queue
        **tracing_grants(),
    }


def test_processor_grants(synthesis: Synthesis, resources: dict[str, Any], ids: dict[str, str]) -> None:
    fn = synthesis.stack.cpu.function
    bucket = f"<{ids['bucket']}.Arn>"
    assert grants(resources, _role_id(synthesis, fn)) == {
        "logs:CreateLogStream": {_log_group(synthesis, fn)},
        "logs:PutLogEvents": {_log_group(synthesis, fn)},
        "s3:GetObject": {f"{bucket}/documents/*", f"{bucket}/models/*", f"{bucket}/chunks/*"},
        "s3:PutObject": {f"{bucket}/results/*", f"{bucket}/models/*", f"{bucket}/chunks/*"},
        "s3:DeleteObject": {f"{bucket}/chunks/*"},
        "dynamodb:GetItem": {f"<{ids['table']}.Arn>"},
        "dynamodb:UpdateItem": {f"<{ids['table']}.Arn>"},
        # Slots of the processor semaphore for the chunks it launches (admission control).
        "dynamodb:PutItem": {f"<{ids['table']}.Arn>"},
        # The on-failure destination (granted by CDK's LambdaDestination), and itself: the chunks of a
        # long document (the unqualified function only).
        "lambda:InvokeFunction": {f"<{ids['completion']}.Arn>", f"<{ids['completion']}.Arn>:*", f"<{ids['processor']}.Arn>"},
        **_publishes(ids),
        **tracing_grants(),
    }


def test_completion_grants(synthesis: Synthesis, resources: dict[str, Any], ids: dict[str, str]) -> None:
    fn = synthesis.stack.completion.function
    bucket = f"<{ids['bucket']}.Arn>"
    assert grants(resources, _role_id(synthesis, fn)) == _merged({
        "logs:CreateLogStream": {_log_group(synthesis, fn)},
        "logs:PutLogEvents": {_log_group(synthesis, fn)},
        "s3:GetObject": {f"{bucket}/async/outputs/*", f"{bucket}/async/failures/*", *_splits(bucket)},
        "s3:PutObject": {f"{bucket}/results/*", *_splits(bucket)},
        "s3:DeleteObject": {f"{bucket}/chunks/*"},
        "sagemaker:InvokeEndpointAsync": {ENDPOINT_ARN},
        "sagemaker:DescribeEndpoint": {ENDPOINT_ARN},  # when SageMaker refuses a chunk request: is the endpoint in service?
        "dynamodb:GetItem": {f"<{ids['table']}.Arn>"},
        "dynamodb:UpdateItem": {f"<{ids['table']}.Arn>"},
    }, _parks(ids), _publishes(ids), tracing_grants())


def _splits(bucket: str) -> set[str]:
    """What acting on a split plan reads and writes: the chunks' results (a chunk's request is the job's document)."""
    return {f"{bucket}/chunks/*"}


def test_ingest_grants(synthesis: Synthesis, resources: dict[str, Any], ids: dict[str, str]) -> None:
    fn = synthesis.stack.drop_folder.function
    bucket = f"<{ids['bucket']}.Arn>"
    assert grants(resources, _role_id(synthesis, fn)) == _merged({
        "logs:CreateLogStream": {_log_group(synthesis, fn)},
        "logs:PutLogEvents": {_log_group(synthesis, fn)},
        "s3:GetObject": {f"{bucket}/inbox/*", f"{bucket}/uploads/*"},
        "s3:GetObjectVersion": {f"{bucket}/inbox/*", f"{bucket}/uploads/*"},
        "s3:PutObject": {f"{bucket}/documents/*"},
        "dynamodb:GetItem": {f"<{ids['table']}.Arn>"},
        "dynamodb:PutItem": {f"<{ids['table']}.Arn>"},
        "dynamodb:UpdateItem": {f"<{ids['table']}.Arn>"},
        "sqs:SendMessage": {f"<{ids['queue']}.Arn>", f"<{ids['parked']}.Arn>"},
        "sqs:GetQueueAttributes": {f"<{ids['parked']}.Arn>"},
        "sqs:GetQueueUrl": {f"<{ids['parked']}.Arn>"},
    }, _publishes(ids), tracing_grants())


def test_drop_folder_rule_takes_only_this_buckets_objects_created_under_inbox(synthesis: Synthesis, ids: dict[str, str]) -> None:
    rule = synthesis.resource(synthesis.stack.drop_folder.rule)["Properties"]
    assert rule["EventPattern"] == {
        "source": ["aws.s3"],
        "detail-type": ["Object Created"],
        "detail": {"bucket": {"name": [{"Ref": ids["bucket"]}]}, "object": {"key": [{"prefix": "inbox/"}, {"prefix": "uploads/"}]}},
    }
    [target] = rule["Targets"]
    assert target["Arn"] == {"Fn::GetAtt": [synthesis.logical_id(synthesis.stack.drop_folder.function), "Arn"]}


def test_scale_in_grants(synthesis: Synthesis, resources: dict[str, Any], ids: dict[str, str]) -> None:
    fn = synthesis.gpu.scale_in_function
    assert grants(resources, _role_id(synthesis, fn)) == {
        "logs:CreateLogStream": {_log_group(synthesis, fn)},
        "logs:PutLogEvents": {_log_group(synthesis, fn)},
        "dynamodb:Query": {f"<{ids['table']}.Arn>/index/status-created_at-index"},
        "dynamodb:GetItem": {f"<{ids['table']}.Arn>"},
        "sagemaker:DescribeEndpoint": {ENDPOINT_ARN},
        "sagemaker:UpdateEndpointWeightsAndCapacities": {ENDPOINT_ARN},
        "cloudwatch:DescribeAlarms": {f"<{synthesis.logical_id(synthesis.gpu.idle_alarm)}.Arn>"},
        **_parks(ids),
        **tracing_grants(),
    }


def test_sagemaker_execution_role_grants(synthesis: Synthesis, resources: dict[str, Any], ids: dict[str, str]) -> None:
    gpu = synthesis.gpu
    role = synthesis.logical_id(gpu.execution_role)
    assert resources[role]["Properties"]["AssumeRolePolicyDocument"]["Statement"] == [
        {"Action": "sts:AssumeRole", "Effect": "Allow", "Principal": {"Service": "sagemaker.amazonaws.com"}}
    ]
    bucket = "arn:<AWS::Partition>:s3:::<output:BucketName>"  # the core's BucketName output, read by the GPU stack
    repository = (
        "arn:<AWS::Partition>:ecr:<AWS::Region>:<AWS::AccountId>:repository/"
        "cdk-hnb659fds-container-assets-${AWS::AccountId}-${AWS::Region}"
    )
    log_group = f"{LOGS_ARN_PREFIX}:log-group:/aws/sagemaker/Endpoints/ocr-dev-paddleocr-vl"
    assert grants(resources, role) == {
        "ecr:BatchCheckLayerAvailability": {repository},
        "ecr:GetDownloadUrlForLayer": {repository},
        "ecr:BatchGetImage": {repository},
        "ecr:GetAuthorizationToken": {"*"},
        # SageMaker reads each request's body (the job's document) and writes the answer with this role; the
        # network-isolated container itself writes nothing: no models/, no results/.
        "s3:GetObject": {f"{bucket}/documents/*"},
        "s3:PutObject": {f"{bucket}/async/outputs/*", f"{bucket}/async/failures/*"},
        "sns:Publish": {f"<{ids['success']}>", f"<{ids['error']}>"},
        "kms:GenerateDataKey": {f"<{ids['key']}.Arn>"},
        "kms:Decrypt": {f"<{ids['key']}.Arn>"},
        # CloudWatch Logs authorizes these on the log group's ARN with the trailing ":*".
        "logs:CreateLogGroup": {f"{log_group}:*"},
        "logs:DescribeLogStreams": {f"{log_group}:*"},
        "logs:CreateLogStream": {f"{log_group}:log-stream:*"},
        "logs:PutLogEvents": {f"{log_group}:log-stream:*"},
        "cloudwatch:PutMetricData": {"*"},
    }
    [metrics] = [s for s in policy_statements(resources, role) if s["Action"] == "cloudwatch:PutMetricData"]
    assert metrics["Condition"] == {"StringLike": {"cloudwatch:namespace": ["/aws/sagemaker/*", "AWS/SageMaker"]}}


def test_function_roles_trust_only_lambda(synthesis: Synthesis, resources: dict[str, Any]) -> None:
    stack = synthesis.stack
    functions = (
        stack.invoker.function,
        stack.completion.function,
        stack.cpu.function,
        synthesis.gpu.scale_in_function,
        stack.recovery.dlq_consumer_function,
        stack.recovery.sweeper_function,
        stack.webhook_deliverer.function,
    )
    for fn in functions:
        trust = resources[_role_id(synthesis, fn)]["Properties"]["AssumeRolePolicyDocument"]["Statement"]
        assert trust == [
            {"Action": "sts:AssumeRole", "Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}}
        ]


def test_dlq_consumer_grants(synthesis: Synthesis, resources: dict[str, Any], ids: dict[str, str]) -> None:
    fn = synthesis.stack.recovery.dlq_consumer_function
    assert grants(resources, _role_id(synthesis, fn)) == {
        "logs:CreateLogStream": {_log_group(synthesis, fn)},
        "logs:PutLogEvents": {_log_group(synthesis, fn)},
        "s3:PutObject": {f"<{ids['bucket']}.Arn>/dead-letters/*"},
        "dynamodb:UpdateItem": {f"<{ids['table']}.Arn>"},
        # Granted by the SQS event source on the DLQ.
        "sqs:ReceiveMessage": {f"<{ids['dlq']}.Arn>"},
        "sqs:DeleteMessage": {f"<{ids['dlq']}.Arn>"},
        "sqs:ChangeMessageVisibility": {f"<{ids['dlq']}.Arn>"},
        "sqs:GetQueueAttributes": {f"<{ids['dlq']}.Arn>"},
        "sqs:GetQueueUrl": {f"<{ids['dlq']}.Arn>"},
        **_publishes(ids),
        **tracing_grants(),
    }


def test_dlq_consumer_acknowledges_exactly_its_key_prefix_wildcard(synthesis: Synthesis, ids: dict[str, str]) -> None:
    role = synthesis.stack.recovery.dlq_consumer_function.role
    [acknowledged] = [m.data for m in role.node.metadata if m.type == "aws:cdk:acknowledged-rules"]
    [(finding, reason)] = acknowledged.items()
    assert finding.endswith(f"AwsSolutions-IAM5[Resource::<{ids['bucket']}.Arn>/dead-letters/*]")
    assert "message id" in reason


def test_sweeper_grants(synthesis: Synthesis, resources: dict[str, Any], ids: dict[str, str]) -> None:
    fn = synthesis.stack.recovery.sweeper_function
    assert grants(resources, _role_id(synthesis, fn)) == _merged({
        "logs:CreateLogStream": {_log_group(synthesis, fn)},
        "logs:PutLogEvents": {_log_group(synthesis, fn)},
        # Stuck jobs by status; and the notification outbox, whose pending completion events it publishes.
        "dynamodb:Query": {f"<{ids['table']}.Arn>/index/status-created_at-index",
                           f"<{ids['table']}.Arn>/index/notification-pending-index"},
        "dynamodb:GetItem": {f"<{ids['table']}.Arn>"},
        "dynamodb:UpdateItem": {f"<{ids['table']}.Arn>"},
        "s3:GetObject": {f"<{ids['bucket']}.Arn>/async/outputs/*", f"<{ids['bucket']}.Arn>/async/failures/*",
                         *_splits(f"<{ids['bucket']}.Arn>")},
        "s3:PutObject": {f"<{ids['bucket']}.Arn>/results/*", *_splits(f"<{ids['bucket']}.Arn>")},
        "s3:DeleteObject": {f"<{ids['bucket']}.Arn>/chunks/*"},
        "sagemaker:InvokeEndpointAsync": {ENDPOINT_ARN},
        "sagemaker:DescribeEndpoint": {ENDPOINT_ARN},
    }, _parks(ids), _publishes(ids), tracing_grants())
