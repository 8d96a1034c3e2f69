"""The local stage's AWS resources on moto, created from the ``PlatformConfig`` the CDK app deploys.

Why a module of its own: what the deployed stack declares (the bucket, the jobs table, the job queue and
its DLQ with the redrive, the parked-events queue, the three topics, the endpoint with its scalable target, the two alarms) must
exist on moto, with the same names' roles and settings, before any handler runs. Everything here only
creates resources through boto3; what runs against them lives in the other ``ocr_platform.local`` modules.

>>> from ocr_infra.config import PlatformConfig
>>> names = resource_names(PlatformConfig(stage="local"))
>>> names["queue"], names["processor"], names["idle_alarm"]
('ocr-local-jobs-queue', 'ocr-local-processor', 'ocr-local-endpoint-idle')
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ocr_platform.core import defaults
from ocr_platform.inputs.inbox import inbox_event_pattern
from ocr_platform.jobs.store import (
    NOTIFICATION_INDEX_NAME,
    NOTIFICATION_INDEX_PARTITION_KEY,
    NOTIFICATION_INDEX_SORT_KEY,
    OWNER_INDEX_NAME,
    STATUS_INDEX_NAME,
)
from ocr_platform.local.endpoint_capacity import set_desired_instances, wait_in_service
from ocr_platform.local.moto_account import ACCOUNT, REGION
from ocr_platform.outputs.notifications import EVENT_SOURCE

if TYPE_CHECKING:
    from ocr_infra.config import PlatformConfig

#: The moto clients ``provision`` needs, by boto3 service name.
SERVICES = (
    "s3", "sqs", "sns", "dynamodb", "sagemaker", "cloudwatch", "iam", "application-autoscaling", "events", "cognito-idp",
    "secretsmanager",
)
TOPICS = ("success", "error", "scale_in")
#: The local console's user (a stand-in for an invited user of the deployed pool; local only).
LOCAL_USER = "you@ocr.local"
#: The local user's temporary password, as an administrator's invitation hands it over: it signs in once, and
#: Cognito then answers with the NEW_PASSWORD_REQUIRED challenge until the user chooses a password of their own.
LOCAL_TEMPORARY_PASSWORD = "Local-console-1!"
#: The pool's password policy: the one the CDK app's pool has (``ocr_infra.jobs_api``), shown by the console.
PASSWORD_POLICY = {"MinimumLength": 12, "RequireUppercase": True, "RequireLowercase": True, "RequireNumbers": True,
                   "RequireSymbols": True}


def resource_names(config: PlatformConfig) -> dict[str, str]:
    """Every named resource of the stage, by role (``queue``, ``processor``, ...); the roles also name the
    functions for fault targets."""
    prefix = f"ocr-{config.stage}"
    return {
        "bucket": f"{prefix}-data",
        "table": f"{prefix}-jobs",
        "queue": f"{prefix}-jobs-queue",
        "dlq": f"{prefix}-jobs-dlq",
        "parked_events": f"{prefix}-parked-events",
        "endpoint": config.endpoint_name,
        "invoker": f"{prefix}-invoker",
        "processor": f"{prefix}-processor",
        "completion": f"{prefix}-completion",
        "scale_in": f"{prefix}-scale-in",
        "dlq_consumer": f"{prefix}-dlq-consumer",
        "sweeper": f"{prefix}-sweeper",
        "ingest": f"{prefix}-ingest",
        "api": f"{prefix}-api",
        "webhooks": f"{prefix}-webhooks",
        "webhook_queue": f"{prefix}-webhooks-queue",
        "webhook_dlq": f"{prefix}-webhooks-dlq",
        "webhook_secret": f"{prefix}-webhook-signing-secret",
        "job_events_rule": f"{prefix}-job-events-record",
        "job_events": f"{prefix}-job-events",
        "user_pool": f"{prefix}-users",
        "inbox_rule": f"{prefix}-inbox-object-created",
        "idle_alarm": f"{prefix}-endpoint-idle",
        "capacity_alarm": f"{prefix}-endpoint-backlog-without-capacity",
    }


def create_jobs_table(dynamodb: Any, name: str) -> None:
    """The jobs table as the stack defines it: on-demand, key ``job_id``, the status/time, owner/time and
    notification outbox GSIs, TTL."""
    indexes = (
        (STATUS_INDEX_NAME, "status", "created_at"), (OWNER_INDEX_NAME, "owner", "created_at"),
        (NOTIFICATION_INDEX_NAME, NOTIFICATION_INDEX_PARTITION_KEY, NOTIFICATION_INDEX_SORT_KEY),
    )
    attributes = ("job_id", "status", "created_at", "owner", NOTIFICATION_INDEX_PARTITION_KEY, NOTIFICATION_INDEX_SORT_KEY)
    dynamodb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in attributes],
        KeySchema=[{"AttributeName": "job_id", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[{
            "IndexName": index,
            "KeySchema": [{"AttributeName": partition, "KeyType": "HASH"}, {"AttributeName": sort, "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"},
        } for index, partition, sort in indexes],
    )
    dynamodb.update_time_to_live(TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires_at"})


def provision(
    clients: Mapping[str, Any], config: PlatformConfig, names: Mapping[str, str], *, visibility_timeout_seconds: int | None = None,
) -> dict[str, str]:
    """Create the stage's resources on moto; returns the URLs and ARNs the runtimes need.

    Args:
        clients: a moto client for each of ``SERVICES``.
        config: the stage's configuration, as the CDK app reads it.
        names: ``resource_names(config)``.
        visibility_timeout_seconds: overrides the queue's (and sets the DLQ's) visibility timeout; ``None``
            keeps the stack's value.

    Returns:
        ``queue_url``/``queue_arn``, ``dlq_url``/``dlq_arn``, ``parked_events_url``/``parked_events_arn``, and for each of ``TOPICS`` ``<topic>_topic``
        (the ARN) and ``<topic>_topic_tap`` (the URL of the SQS queue subscribed to it); ``webhook_queue_url``/
        ``webhook_queue_arn``, ``webhook_dlq_url``, ``webhook_secret_arn`` and ``job_events_url`` (the queue
        recording every completion event).
    """
    resources: dict[str, str] = {}
    # 1. The data: the bucket (versioned as configured) and the jobs table.
    clients["s3"].create_bucket(Bucket=names["bucket"])
    if config.versioned_bucket:
        clients["s3"].put_bucket_versioning(Bucket=names["bucket"], VersioningConfiguration={"Status": "Enabled"})
    create_jobs_table(clients["dynamodb"], names["table"])
    # 2. The job queue, redriving to its DLQ after max_receive_count receives.
    resources.update(_create_queues(clients["sqs"], config, names, visibility_timeout_seconds))
    # 3. The topics, each with an SQS tap from which the local SNS -> Lambda delivery reads.
    for topic in TOPICS:
        arn = clients["sns"].create_topic(Name=f"ocr-{config.stage}-{topic.replace('_', '-')}")["TopicArn"]
        tap = clients["sqs"].create_queue(QueueName=f"ocr-{config.stage}-{topic.replace('_', '-')}-delivery")["QueueUrl"]
        clients["sns"].subscribe(TopicArn=arn, Protocol="sqs", Endpoint=_queue_arn(clients["sqs"], tap))
        resources[f"{topic}_topic"], resources[f"{topic}_topic_tap"] = arn, tap
    # 4. The async endpoint, notifying the success and error topics; then its scalable target.
    _create_endpoint(clients, config, names, success_topic=resources["success_topic"], error_topic=resources["error_topic"])
    clients["application-autoscaling"].register_scalable_target(
        ServiceNamespace="sagemaker", ResourceId=f"endpoint/{names['endpoint']}/variant/{config.variant_name}",
        ScalableDimension="sagemaker:variant:DesiredInstanceCount", MinCapacity=0, MaxCapacity=config.max_instance_count,
    )
    # 5. The alarms: idle (scale-in, to the scale-in topic) and backlog without capacity (scale-out).
    _create_alarms(clients["cloudwatch"], config, names, scale_in_topic=resources["scale_in_topic"])
    # 6. The drop folder: the bucket's EventBridge notifications and the stack's rule on them, whose target
    #    here is an SQS tap the local EventBridge -> Lambda delivery reads (moto matches the rule's pattern).
    resources["inbox_events_tap"] = _create_inbox_rule(clients, names)
    # 7. The jobs API's users: the user pool (invited users, e-mail sign-in) and the console's app client.
    resources.update(_create_user_pool(clients["cognito-idp"], names))
    # 8. Completion events and webhooks: the webhook queue and its DLQ, the signing secret, and a rule that
    #    records every completion event on a queue (what a user's own rule would do; tests read it).
    resources.update(_create_webhook_delivery(clients, config, names))
    resources["job_events_url"] = _record_job_events(clients, config, names)
    return resources


def _create_webhook_delivery(clients: Mapping[str, Any], config: PlatformConfig, names: Mapping[str, str]) -> dict[str, str]:
    sqs = clients["sqs"]
    dlq_url = sqs.create_queue(QueueName=names["webhook_dlq"], Attributes={
        "MessageRetentionPeriod": str(defaults.DLQ_RETENTION_DAYS * 86_400),
    })["QueueUrl"]
    queue_url = sqs.create_queue(QueueName=names["webhook_queue"], Attributes={
        "VisibilityTimeout": str(defaults.webhook_queue_visibility_timeout_seconds()),
        "MessageRetentionPeriod": str(defaults.WEBHOOK_QUEUE_RETENTION_DAYS * 86_400),
        "RedrivePolicy": json.dumps({
            "deadLetterTargetArn": _queue_arn(sqs, dlq_url),
            "maxReceiveCount": str(defaults.webhook_queue_max_receive_count(config.webhook_delivery_attempts)),
        }),
    })["QueueUrl"]
    secret = clients["secretsmanager"].create_secret(Name=names["webhook_secret"], SecretString=secrets.token_hex(32))
    return {"webhook_queue_url": queue_url, "webhook_queue_arn": _queue_arn(sqs, queue_url), "webhook_dlq_url": dlq_url,
            "webhook_secret_arn": secret["ARN"]}


def _record_job_events(clients: Mapping[str, Any], config: PlatformConfig, names: Mapping[str, str]) -> str:
    events = clients["events"]
    if config.event_bus_name != defaults.EVENT_BUS_NAME:
        events.create_event_bus(Name=config.event_bus_name)
    record = clients["sqs"].create_queue(QueueName=names["job_events"])["QueueUrl"]
    events.put_rule(Name=names["job_events_rule"], EventBusName=config.event_bus_name,
                    EventPattern=json.dumps({"source": [EVENT_SOURCE]}))
    events.put_targets(Rule=names["job_events_rule"], EventBusName=config.event_bus_name,
                       Targets=[{"Id": "record", "Arn": _queue_arn(clients["sqs"], record)}])
    return str(record)


def _create_user_pool(cognito: Any, names: Mapping[str, str]) -> dict[str, str]:
    pool = cognito.create_user_pool(
        PoolName=names["user_pool"], UsernameAttributes=["email"], MfaConfiguration="OPTIONAL",
        AdminCreateUserConfig={"AllowAdminCreateUserOnly": True}, Policies={"PasswordPolicy": PASSWORD_POLICY},
    )["UserPool"]
    client = cognito.create_user_pool_client(
        UserPoolId=pool["Id"], ClientName="Console", GenerateSecret=False, PreventUserExistenceErrors="ENABLED",
        ExplicitAuthFlows=["ALLOW_USER_PASSWORD_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"],
    )["UserPoolClient"]
    # The local sign-in stand-in: one user, invited as an administrator invites one (AdminCreateUser with a
    # temporary password; the invitation message is suppressed, `local up` hands the password over instead), whom
    # `run` files its jobs for, so the console shows them. Like every invited user they stay FORCE_CHANGE_PASSWORD
    # until their first sign-in answers Cognito's NEW_PASSWORD_REQUIRED challenge with a password of their own:
    # https://docs.aws.amazon.com/cognito-user-identity-pools/latest/APIReference/API_AdminCreateUser.html
    cognito.admin_create_user(UserPoolId=pool["Id"], Username=LOCAL_USER, TemporaryPassword=LOCAL_TEMPORARY_PASSWORD,
                              MessageAction="SUPPRESS")
    policy = cognito.describe_user_pool(UserPoolId=pool["Id"])["UserPool"]["Policies"]["PasswordPolicy"]
    return {"user_pool_id": pool["Id"], "user_pool_client_id": client["ClientId"], "password_policy": json.dumps(policy),
            "console_user": LOCAL_USER, "console_password": LOCAL_TEMPORARY_PASSWORD}


def _create_inbox_rule(clients: Mapping[str, Any], names: Mapping[str, str]) -> str:
    clients["s3"].put_bucket_notification_configuration(
        Bucket=names["bucket"], NotificationConfiguration={"EventBridgeConfiguration": {}}
    )
    tap = clients["sqs"].create_queue(QueueName=f"{names['inbox_rule']}-delivery")["QueueUrl"]
    clients["events"].put_rule(Name=names["inbox_rule"], EventPattern=json.dumps(inbox_event_pattern(names["bucket"])))
    clients["events"].put_targets(Rule=names["inbox_rule"], Targets=[{"Id": "ingest", "Arn": _queue_arn(clients["sqs"], tap)}])
    return str(tap)


def _create_queues(sqs: Any, config: PlatformConfig, names: Mapping[str, str], visibility_timeout_seconds: int | None) -> dict[str, str]:
    visibility = visibility_timeout_seconds or config.queue_visibility_timeout_seconds
    dlq_attributes = {"MessageRetentionPeriod": str(14 * 24 * 3600)}
    if visibility_timeout_seconds:
        dlq_attributes["VisibilityTimeout"] = str(visibility_timeout_seconds)
    queues: dict[str, str] = {}
    queues["dlq_url"] = sqs.create_queue(QueueName=names["dlq"], Attributes=dlq_attributes)["QueueUrl"]
    dlq_arn = queues["dlq_arn"] = _queue_arn(sqs, queues["dlq_url"])
    queues["queue_url"] = sqs.create_queue(QueueName=names["queue"], Attributes={
        "VisibilityTimeout": str(visibility),
        "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(config.max_receive_count)}),
    })["QueueUrl"]
    queues["queue_arn"] = _queue_arn(sqs, queues["queue_url"])
    # Where an asynchronous hand-over parks an event it could not complete (a Lambda on-failure
    # destination, an SNS subscription's DLQ), kept for an operator like the DLQ.
    parked_attributes = {"MessageRetentionPeriod": str(defaults.DLQ_RETENTION_DAYS * 86_400)}
    queues["parked_events_url"] = sqs.create_queue(QueueName=names["parked_events"], Attributes=parked_attributes)["QueueUrl"]
    queues["parked_events_arn"] = _queue_arn(sqs, queues["parked_events_url"])
    return queues


def _create_endpoint(clients: Mapping[str, Any], config: PlatformConfig, names: Mapping[str, str], *, success_topic: str, error_topic: str) -> None:
    sagemaker, endpoint = clients["sagemaker"], names["endpoint"]
    role = clients["iam"].create_role(RoleName=f"ocr-{config.stage}-endpoint", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    image = f"{ACCOUNT}.dkr.ecr.{REGION}.amazonaws.com/ocr-vl-endpoint:local"
    sagemaker.create_model(ModelName=f"{endpoint}-model", ExecutionRoleArn=role, PrimaryContainer={"Image": image})
    sagemaker.create_endpoint_config(
        EndpointConfigName=f"{endpoint}-config",
        # moto's instance-type list predates ml.g5: the variant carries a type moto knows.
        ProductionVariants=[
            {"VariantName": config.variant_name, "ModelName": f"{endpoint}-model", "InitialInstanceCount": 1, "InstanceType": "ml.g4dn.xlarge"}
        ],
        AsyncInferenceConfig={
            "ClientConfig": {"MaxConcurrentInvocationsPerInstance": config.max_concurrent_invocations_per_instance},
            "OutputConfig": {
                "S3OutputPath": f"s3://{names['bucket']}/async/outputs",
                "S3FailurePath": f"s3://{names['bucket']}/async/failures",
                "NotificationConfig": {"SuccessTopic": success_topic, "ErrorTopic": error_topic},
            },
        },
    )
    sagemaker.create_endpoint(EndpointName=endpoint, EndpointConfigName=f"{endpoint}-config")
    wait_in_service(sagemaker, endpoint)  # Creating until its instance is up, as a deployment waits for it
    # AWS creates the endpoint with one instance and the idle alarm scales it in; locally it starts idle.
    set_desired_instances(sagemaker, endpoint, config.variant_name, 0)


def _create_alarms(cloudwatch: Any, config: PlatformConfig, names: Mapping[str, str], *, scale_in_topic: str) -> None:
    dimensions = [{"Name": "EndpointName", "Value": names["endpoint"]}]
    cloudwatch.put_metric_alarm(
        AlarmName=names["idle_alarm"], Namespace="AWS/SageMaker", MetricName="ApproximateBacklogSizePerInstance",
        Dimensions=dimensions, Statistic="Average", Period=60,
        EvaluationPeriods=config.idle_minutes, DatapointsToAlarm=config.idle_minutes, Threshold=config.idle_backlog_threshold,
        ComparisonOperator="LessThanThreshold", TreatMissingData="breaching", AlarmActions=[scale_in_topic],
    )
    cloudwatch.put_metric_alarm(
        AlarmName=names["capacity_alarm"], Namespace="AWS/SageMaker", MetricName="HasBacklogWithoutCapacity",
        Dimensions=dimensions, Statistic="Average", Period=60,
        EvaluationPeriods=1, Threshold=1, ComparisonOperator="GreaterThanOrEqualToThreshold", TreatMissingData="notBreaching",
    )


def _queue_arn(sqs: Any, url: str) -> str:
    return sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
