"""Messaging: the OCR job queue with its DLQ, and the encrypted SNS topics."""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from ocr_infra.encryption import allow_service_use
from ocr_infra.secure_defaults import acknowledge, secure_queue_props, skip_sqs_managed_sse
from ocr_platform.core import defaults


@dataclass(frozen=True)
class NotificationTopicsProps:
    """Props of :class:`NotificationTopics`.

    Attributes:
        alarm_email: address subscribed to the operations topic; empty for none.
        key: the stage's KMS key (``PlatformConfig.customer_managed_key``) to encrypt the topics with; ``None``: a
            key of their own.
    """

    alarm_email: str = defaults.ALARM_EMAIL
    key: kms.IKey | None = None


class NotificationTopics(Construct):
    """The platform's SNS topics, all encrypted with one customer-managed KMS key and TLS-only.

    - ``success`` / ``error``: SageMaker async inference notifications (published by the endpoint's
      execution role), consumed by the completion function.
    - the GPU stack's scale-in topic is made with :meth:`encrypted_topic`, in that stack, with the same key.
    - ``alarms``: operations alarms (DLQ depth), optionally mailed to ``alarm_email``.

    A customer-managed key, not ``alias/aws/sns``: CloudWatch alarms and SageMaker can only publish to an
    encrypted topic whose key policy lets them use the key, and the AWS-managed key's policy is fixed. The stage's
    own key when it has one (``NotificationTopicsProps.key``), else one for the topics alone.
    """

    def __init__(self, scope: Construct, construct_id: str, props: NotificationTopicsProps) -> None:
        super().__init__(scope, construct_id)
        # 1. Key: the stage's, or the topics' own, rotated yearly; that one only protects transient notifications,
        #    so it is deleted with the stack.
        self._key: kms.IKey = props.key or kms.Key(
            self,
            "Key",
            description="Encrypts the OCR platform's SNS topics (SageMaker notifications, alarms).",
            enable_key_rotation=True,
            pending_window=Duration.days(7),
            removal_policy=RemovalPolicy.DESTROY,
        )
        # 2. Key policy: CloudWatch alarms publish to the alarm topic (and the GPU stack's scale-in topic) through this key.
        self._key.add_to_resource_policy(
            iam.PolicyStatement(
                sid="AllowCloudWatchAlarmsToPublishToEncryptedTopics",
                principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
                actions=["kms:Decrypt", "kms:GenerateDataKey*"],
                resources=["*"],
            )
        )
        # 3. Topics: encrypted with the key, publishing only over TLS.
        self._success = self._topic("SuccessTopic", "SageMaker async inference succeeded")
        self._error = self._topic("ErrorTopic", "SageMaker async inference failed")
        self._alarms = self._topic("AlarmTopic", "OCR platform operations alarms")
        # 4. Optional e-mail subscription for operations alarms.
        if props.alarm_email:
            self._alarms.add_subscription(subscriptions.EmailSubscription(props.alarm_email))

    def _topic(self, construct_id: str, display_name: str) -> sns.Topic:
        return self.encrypted_topic(self, construct_id, display_name)

    def encrypted_topic(self, scope: Construct, construct_id: str, display_name: str, *, topic_name: str | None = None) -> sns.Topic:
        """A topic like the platform's own (this key, TLS only) in ``scope``, which may be another stack."""
        return sns.Topic(scope, construct_id, display_name=display_name, topic_name=topic_name, master_key=self._key, enforce_ssl=True)

    def allow_alarm_publish(self, topic: sns.ITopic, alarm: cloudwatch.IAlarm) -> None:
        """Let CloudWatch publish ``alarm``'s notifications to ``topic`` (the topic policy replaces SNS's default)."""
        topic.add_to_resource_policy(
            iam.PolicyStatement(
                principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
                actions=["sns:Publish"],
                resources=[topic.topic_arn],
                conditions={"ArnLike": {"aws:SourceArn": alarm.alarm_arn}},
            )
        )

    def notify(self, topic: sns.ITopic, alarm: cloudwatch.Alarm) -> None:
        """Make ``topic`` the action of ``alarm`` and allow CloudWatch to publish to it."""
        alarm.add_alarm_action(cw_actions.SnsAction(topic))
        self.allow_alarm_publish(topic, alarm)

    @property
    def key(self) -> kms.IKey:
        return self._key

    @property
    def success_topic(self) -> sns.Topic:
        return self._success

    @property
    def error_topic(self) -> sns.Topic:
        return self._error

    @property
    def alarm_topic(self) -> sns.Topic:
        return self._alarms


def any_message_alarm(scope: Construct, construct_id: str, queue: sqs.IQueue, description: str) -> cloudwatch.Alarm:
    """An alarm on a last-stop queue (a DLQ, the parked events): any visible message, in any minute."""
    return cloudwatch.Alarm(
        scope,
        construct_id,
        alarm_description=description,
        metric=queue.metric_approximate_number_of_messages_visible(period=Duration.minutes(1), statistic="Maximum"),
        threshold=0,
        comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluation_periods=1,
        treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
    )


@dataclass(frozen=True)
class RedrivingQueue:
    """A queue that redrives to its own DLQ, both SSE-encrypted and TLS-only, and an alarm on the DLQ."""

    queue: sqs.Queue
    dead_letter_queue: sqs.Queue
    dead_letter_alarm: cloudwatch.Alarm


def redriving_queue(
    scope: Construct,
    *,
    visibility_timeout_seconds: int,
    retention_days: int,
    max_receive_count: int,
    dlq_retention_days: int,
    alarm_description: str,
    dlq_visibility_timeout_seconds: int | None = None,
    encryption_key: kms.IKey | None = None,
) -> RedrivingQueue:
    """``DeadLetterQueue``, ``Queue`` (redriving to it after ``max_receive_count`` receives) and
    ``DeadLetterAlarm`` (any visible message) in ``scope``; the DLQ keeps SQS's default visibility timeout unless
    ``dlq_visibility_timeout_seconds`` is given (a DLQ with a consumer of its own). Both are encrypted with
    ``encryption_key`` (the stage's KMS key) or, without one, SQS-managed SSE."""
    # cdk-nag's SQS3 sees that the first queue is a DLQ.
    dlq = sqs.Queue(
        scope,
        "DeadLetterQueue",
        retention_period=Duration.days(dlq_retention_days),
        visibility_timeout=None if dlq_visibility_timeout_seconds is None else Duration.seconds(dlq_visibility_timeout_seconds),
        **secure_queue_props(encryption_key),
    )
    queue = sqs.Queue(
        scope,
        "Queue",
        visibility_timeout=Duration.seconds(visibility_timeout_seconds),
        retention_period=Duration.days(retention_days),
        dead_letter_queue=sqs.DeadLetterQueue(queue=dlq, max_receive_count=max_receive_count),
        **secure_queue_props(encryption_key),
    )
    skip_sqs_managed_sse(dlq)
    skip_sqs_managed_sse(queue)
    return RedrivingQueue(queue, dlq, any_message_alarm(scope, "DeadLetterAlarm", dlq, alarm_description))


@dataclass(frozen=True)
class ParkedEventsProps:
    """Props of :class:`ParkedEvents`.

    Attributes:
        retention_days: how long a parked event is kept for an operator (14, the SQS maximum).
        encryption_key: the stage's KMS key; SNS and EventBridge, which dead-letter into the queue themselves, may
            then use it. ``None``: SQS-managed SSE, which they need no grant for.
    """

    retention_days: int = defaults.DLQ_RETENTION_DAYS
    encryption_key: kms.IKey | None = None


class ParkedEvents(Construct):
    """Where an event between services goes when it cannot be delivered, instead of being dropped.

    One SQS queue, SSE-encrypted and TLS-only, for every asynchronous hand-over to a function: the
    on-failure destination of each function invoked asynchronously (an SNS notification, a schedule, a
    Lambda destination that failed its retries), the dead-letter queue of each SNS subscription and of each
    EventBridge target that could not invoke its function. Any message in it raises an alarm. It holds,
    for example, a SageMaker notification the completion function failed on three times; the inference's
    output stays in S3 for an operator to redrive it.
    """

    def __init__(self, scope: Construct, construct_id: str, props: ParkedEventsProps) -> None:
        super().__init__(scope, construct_id)
        # 1. Queue: kept as long as SQS allows; a parking place, not a work queue.
        self._queue = sqs.Queue(
            self, "Queue", retention_period=Duration.days(props.retention_days), **secure_queue_props(props.encryption_key)
        )
        skip_sqs_managed_sse(self._queue)
        if props.encryption_key is not None:
            # SNS subscriptions and EventBridge targets send what they could not deliver here with the service's own
            # identity, not a role of the stack: the key's policy must admit them (Lambda destinations use the
            # function's role, which CDK grants).
            for service in ("sns.amazonaws.com", "events.amazonaws.com"):
                allow_service_use(
                    props.encryption_key,
                    f"AllowDeadLetteringBy{service.split('.')[0].capitalize()}",
                    service,
                    ["kms:Decrypt", "kms:GenerateDataKey"],
                )
        acknowledge(
            self._queue,
            "AwsSolutions-SQS3",
            "This queue is itself the dead-letter destination of the platform's asynchronous hand-overs "
            "(function on-failure destinations, SNS subscription and EventBridge target DLQs); nothing consumes it "
            "automatically, so a DLQ of its own would have nothing to catch.",
        )
        # 2. Alarm: any parked event is a hand-over that did not happen and needs an operator.
        self._alarm = any_message_alarm(
            self,
            "Alarm",
            self._queue,
            "Events between OCR platform services were parked (a function failed its retries, or SNS or "
            "EventBridge could not invoke it): inspect and redrive them.",
        )

    def accept_dead_letters(self, service: str, source_arns: list[str]) -> None:
        """Let ``service`` (``sns`` or ``events``) park what these sources could not deliver.

        CDK adds this statement itself for a subscription or rule of this stack; another stack (the GPU stack)
        imports the queue, whose policy it cannot change, so this stack admits its sources by their ARNs, which
        are names fixed in advance: the policy refers to nothing of the other stack and the stacks depend one way.
        """
        self._queue.add_to_resource_policy(
            iam.PolicyStatement(
                principals=[iam.ServicePrincipal(f"{service}.amazonaws.com")],
                actions=["sqs:SendMessage"],
                resources=[self._queue.queue_arn],
                conditions={"ArnEquals": {"aws:SourceArn": source_arns}},
            )
        )

    @property
    def queue(self) -> sqs.Queue:
        return self._queue

    @property
    def alarm(self) -> cloudwatch.Alarm:
        return self._alarm


@dataclass(frozen=True)
class JobQueueProps:
    """Props of :class:`JobQueue`.

    Attributes:
        visibility_timeout_seconds: at least 6 x the consumer's timeout (AWS's guidance for Lambda), so a
            message is not received again while the function that holds it is still running or retried.
        max_receive_count: receives before a message moves to the DLQ.
        retention_days: how long an unconsumed job message is kept (1..14).
        dlq_retention_days: how long a dead-lettered message is kept for inspection and redrive (14, the
            SQS maximum: a message the DLQ consumer cannot handle stays there for an operator).
        dead_letter_visibility_timeout_seconds: 6 x the DLQ consumer's timeout (AWS's guidance for an SQS
            event source; ``defaults.dead_letter_visibility_timeout_seconds``).
        encryption_key: the stage's KMS key for both queues; ``None``: SQS-managed SSE.
    """

    visibility_timeout_seconds: int = defaults.queue_visibility_timeout_seconds()
    max_receive_count: int = defaults.MAX_RECEIVE_COUNT
    retention_days: int = defaults.QUEUE_RETENTION_DAYS
    dlq_retention_days: int = defaults.DLQ_RETENTION_DAYS
    dead_letter_visibility_timeout_seconds: int = defaults.dead_letter_visibility_timeout_seconds()
    encryption_key: kms.IKey | None = None


class JobQueue(Construct):
    """The OCR job queue and its dead-letter queue, both SSE-encrypted and TLS-only, with a DLQ alarm."""

    def __init__(self, scope: Construct, construct_id: str, props: JobQueueProps) -> None:
        super().__init__(scope, construct_id)
        # The job queue redrives to the DLQ after max_receive_count receives; the DLQ consumer reads the DLQ, and
        # a message still there is a job nobody finished and needs an operator.
        self._queues = redriving_queue(
            self,
            visibility_timeout_seconds=props.visibility_timeout_seconds,
            retention_days=props.retention_days,
            max_receive_count=props.max_receive_count,
            dlq_retention_days=props.dlq_retention_days,
            dlq_visibility_timeout_seconds=props.dead_letter_visibility_timeout_seconds,
            alarm_description="OCR job messages reached the dead-letter queue: inspect them and redrive or discard.",
            encryption_key=props.encryption_key,
        )

    @property
    def queue(self) -> sqs.Queue:
        return self._queues.queue

    @property
    def dead_letter_queue(self) -> sqs.Queue:
        return self._queues.dead_letter_queue

    @property
    def dead_letter_alarm(self) -> cloudwatch.Alarm:
        return self._queues.dead_letter_alarm
