"""The stage's own KMS key (``PlatformConfig.customer_managed_key``): one key for everything the stage keeps.

Off by default: S3, DynamoDB, SQS, CloudWatch Logs, Lambda environments and Secrets Manager encrypt at rest with
keys their services own or manage, at no charge. With the key, the platform bucket, the jobs table, every queue, the
SNS topics, every log group of the stack, every function's environment variables and the webhook signing secret
are encrypted with it instead, so the stage's owner controls (and CloudTrail records) every use of the key, and can
cut off access to all of the stage's data by disabling it. The cost: $1 a month for the key, plus $0.03 per 10,000
requests (us-east-1); the bucket uses an S3 Bucket Key and SQS reuses a data key for 5 minutes, which keeps the
requests few.

Who may use the key:

- the account, through IAM (the key policy's default statement): each function's role is granted
  ``kms:Decrypt``/``Encrypt``/``GenerateDataKey``/``DescribeKey`` on this key alone (``PlatformFunction``), and so is
  the SageMaker execution role, since the key also encrypts the topics it publishes to;
- CloudWatch Logs, for the log groups of this stack only (``<stack name>-*``, CloudFormation's names for them);
- the services that write into the platform's queues and topics on their own: CloudWatch alarms publishing to the
  topics (:class:`ocr_infra.messaging.NotificationTopics`), SNS and EventBridge dead-lettering into the
  parked-events queue (:class:`ocr_infra.messaging.ParkedEvents`); each adds its statement where it needs it.

Clients that call the platform directly (upload under ``inbox/``, send job messages, read ``results/``) need
``kms:GenerateDataKey`` and ``kms:Decrypt`` on the key too (output ``EncryptionKeyArn``); the console and the jobs
API's presigned URLs need nothing more, as the API's role signs them.
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Aws, Duration, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct

from ocr_infra.secure_defaults import removal_policy
from ocr_platform.core import defaults


@dataclass(frozen=True)
class PlatformKeyProps:
    """Props of :class:`PlatformKey`.

    Attributes:
        retain: keep the key when the stack is deleted (the stage's ``retain_data``): a retained bucket or table is
            unreadable without the key that encrypted it. Without it the key is scheduled for deletion after the
            30-day waiting period, in which it can still be restored.
        endpoint_log_group: the GPU endpoint's log group (named by SageMaker, created by the GPU stack), which CloudWatch
            Logs may encrypt with the key too; ``None`` without the GPU route.
    """

    retain: bool = defaults.RETAIN_DATA
    endpoint_log_group: str | None = None


class PlatformKey(Construct):
    """A symmetric KMS key, rotated every year, with the alias ``alias/<stack name>``, that CloudWatch Logs may use
    for this stack's log groups."""

    def __init__(self, scope: Construct, construct_id: str, props: PlatformKeyProps) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        # 1. Key: yearly rotation; deleted with the stack only where the data it protects is deleted too.
        self._key = kms.Key(
            self,
            "Key",
            description=f"Encrypts the OCR platform's data, queues, topics, logs and function settings ({stack.stack_name}).",
            alias=f"alias/{stack.stack_name}",
            enable_key_rotation=True,
            pending_window=Duration.days(30),
            removal_policy=removal_policy(props.retain),
        )
        # 2. CloudWatch Logs encrypts and decrypts the stack's log groups with it; the encryption context names the
        #    log group, and CloudFormation names every log group of the stack "<stack name>-<logical id>-<suffix>".
        self._key.add_to_resource_policy(
            iam.PolicyStatement(
                sid="AllowCloudWatchLogsForThisStacksLogGroups",
                principals=[iam.ServicePrincipal(f"logs.{Aws.REGION}.amazonaws.com")],
                actions=["kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*"],
                resources=["*"],
                conditions={
                    "ArnLike": {
                        "kms:EncryptionContext:aws:logs:arn": [
                            f"arn:{Aws.PARTITION}:logs:{Aws.REGION}:{Aws.ACCOUNT_ID}:log-group:{name}"
                            for name in (f"{stack.stack_name}-*", *([props.endpoint_log_group] if props.endpoint_log_group else []))
                        ]
                    }
                },
            )
        )

    @property
    def key(self) -> kms.Key:
        return self._key


def allow_service_use(key: kms.IKey, sid: str, service: str, actions: list[str]) -> None:
    """Let an AWS service (``sns.amazonaws.com``) use ``key`` for this account's resources, e.g. to dead-letter into a
    queue encrypted with it; services that act with a role of the stack need no such statement."""
    key.add_to_resource_policy(
        iam.PolicyStatement(
            sid=sid,
            principals=[iam.ServicePrincipal(service)],
            actions=actions,
            resources=["*"],
            conditions={"StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID}},
        )
    )
