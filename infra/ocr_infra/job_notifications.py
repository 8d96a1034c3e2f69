"""Results that come to you: completion events on EventBridge and signed webhooks (``ocr_platform.outputs.notifications``).

Every function that finishes jobs publishes each finished job's ``OCR Job Completed`` / ``OCR Job Failed``
event on the stage's bus and, for a job with a ``callback_url``, queues one webhook request
(``ocr_infra.completion_events.CompletionEventTargets``, applied by ``ocr_infra.platform_function.PlatformFunction``
to every function with ``finishes_jobs``). The webhook queue (:class:`WebhookQueue`) feeds the deliverer
(:class:`WebhookDeliverer`), which POSTs each request signed with the stage's secret and retries on its own
schedule; what runs out of retries is parked on the webhook DLQ, alarmed.

Named ``job_notifications``: ``notifications`` is the domain module the functions run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from ocr_infra.messaging import redriving_queue
from ocr_infra.platform_function import (
    WEBHOOK_DELIVERER_HANDLER,
    CommonFunctionProps,
    PlatformFunction,
    PlatformFunctionProps,
)
from ocr_infra.secure_defaults import acknowledge, allow, removal_policy, skip_checkov
from ocr_platform.core import defaults
from ocr_platform.core.settings import ENV

#: The length of the generated signing secret (letters and digits: 64 x ~5.95 bits, ~380 bits).
WEBHOOK_SECRET_LENGTH = 64


@dataclass(frozen=True)
class WebhookQueueProps:
    """Props of :class:`WebhookQueue`.

    Attributes:
        max_receive_count: receives before SQS itself moves a request to the webhook DLQ: twice the attempts
            of the retry schedule (``2 x PlatformConfig.webhook_delivery_attempts``, 62 by default). The
            deliverer dead-letters a request by itself once its retry window is over; this redrive only
            catches a request the deliverer keeps crashing on (or that another invocation keeps holding).
        visibility_timeout_seconds: 6 x the deliverer's timeout (AWS's guidance for an SQS event source); a
            failed delivery sets its own message's visibility to the schedule's next wait instead.
        retention_days: 4 (``defaults.WEBHOOK_QUEUE_RETENTION_DAYS``): longer than the longest retry window the
            config accepts (3 days) plus the longest wait before the last attempt (12 h). SQS counts retention
            from the first send; a retry's ChangeMessageVisibility does not renew it.
        dlq_retention_days: how long a dead-lettered webhook is kept for an operator to redrive (14, the SQS
            maximum).
        retain: keep the signing secret when the stack is deleted (the stage's ``retain_data``): receivers hold
            a copy of it.
        encryption_key: the stage's KMS key for both queues and the signing secret; ``None``: SQS-managed SSE and
            Secrets Manager's AWS managed key.
    """

    max_receive_count: int = defaults.webhook_queue_max_receive_count()
    visibility_timeout_seconds: int = defaults.webhook_queue_visibility_timeout_seconds()
    retention_days: int = defaults.WEBHOOK_QUEUE_RETENTION_DAYS
    dlq_retention_days: int = defaults.DLQ_RETENTION_DAYS
    retain: bool = defaults.RETAIN_DATA
    encryption_key: kms.IKey | None = None


class WebhookQueue(Construct):
    """The webhook queue and its DLQ (SSE-encrypted, TLS-only, the DLQ alarmed), and the secret that signs every
    webhook.

    The functions that finish jobs send one ``WebhookRequest`` per job with a ``callback_url`` to the queue; the
    deliverer consumes it. A request whose retry window ran out (or whose URL the platform never calls) is
    sent to the DLQ by the deliverer itself, with its last error; the queue's redrive, after
    ``max_receive_count`` receives, only catches a request the deliverer keeps crashing on.
    """

    def __init__(self, scope: Construct, construct_id: str, props: WebhookQueueProps) -> None:
        super().__init__(scope, construct_id)
        # 1-3. Webhook queue (one request per finished job with a callback URL; it redrives only what crashes the
        #      deliverer), its DLQ where dead-lettered webhooks wait for an operator, and an alarm on it: any
        #      dead-lettered webhook is a result a receiver never got.
        self._queues = redriving_queue(
            self,
            visibility_timeout_seconds=props.visibility_timeout_seconds,
            retention_days=props.retention_days,
            max_receive_count=props.max_receive_count,
            dlq_retention_days=props.dlq_retention_days,
            alarm_description="OCR webhooks were dead-lettered (the receiver failed for the whole retry window, the "
            "URL is one the platform never calls, or the deliverer kept crashing): read each message's LastError, "
            "then redrive them to the webhook queue or discard.",
            encryption_key=props.encryption_key,
        )
        # 4. Signing secret: 64 random letters and digits, encrypted with the stage's key or the AWS managed key; no
        #    resource policy.
        self._secret = secretsmanager.Secret(
            self,
            "SigningSecret",
            description="Signs every OCR platform webhook (HMAC-SHA256, the X-OCR-Signature header); receivers "
            "verify with a copy of it.",
            generate_secret_string=secretsmanager.SecretStringGenerator(
                password_length=WEBHOOK_SECRET_LENGTH, exclude_punctuation=True, include_space=False
            ),
            encryption_key=props.encryption_key,
            removal_policy=removal_policy(props.retain),
        )
        if props.encryption_key is None:
            skip_checkov(
                self._secret,
                "CKV_AWS_149",
                "Encrypted with Secrets Manager's AWS managed key aws/secretsmanager, whose every use KMS records in "
                "CloudTrail; only the webhook deliverer's role may read the secret. customer_managed_key=true encrypts "
                "it with the stage's own KMS key ($1 a month plus requests).",
            )
        acknowledge(
            self._secret,
            "AwsSolutions-SMG4",
            "No automatic rotation: every webhook receiver holds a copy of this secret to verify X-OCR-Signature, so "
            "a rotation by Secrets Manager would make every receiver reject valid webhooks until it fetched the new "
            "value. Rotate it by hand, as the README describes, with the receivers.",
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

    @property
    def secret(self) -> secretsmanager.Secret:
        return self._secret


@dataclass(frozen=True)
class WebhookDelivererProps:
    """Props of :class:`WebhookDeliverer`.

    Attributes:
        common: what every function shares (the table: each POST is claimed and recorded on its job).
        webhooks: the webhook queue it consumes, the DLQ it parks what runs out of retries on, and the secret it
            signs with.
        first_retry_seconds / max_retry_interval_seconds / retry_window_seconds: the retry schedule
            (``PlatformConfig.webhook_*``: 30 s doubling up to 1 h, for 24 h).
        max_concurrency: the event source's ``MaximumConcurrency`` (5): deliverers running at once.
        memory_mb: 256 (one small POST at a time). Its timeout, ``defaults.WEBHOOK_DELIVERER_TIMEOUT_SECONDS``
            (120 s: a batch of ``defaults.WEBHOOK_BATCH_SIZE`` POSTs of at most 10 s each, and a margin), also
            sizes the webhook queue's visibility timeout, so neither it nor the batch size is a prop.
    """

    common: CommonFunctionProps
    webhooks: WebhookQueue
    first_retry_seconds: int = defaults.WEBHOOK_FIRST_RETRY_SECONDS
    max_retry_interval_seconds: int = defaults.WEBHOOK_MAX_RETRY_INTERVAL_SECONDS
    retry_window_seconds: int = defaults.WEBHOOK_RETRY_WINDOW_SECONDS
    memory_mb: int = defaults.WEBHOOK_DELIVERER_MEMORY_MB
    max_concurrency: int = defaults.WEBHOOK_DELIVERER_MAX_CONCURRENCY


class WebhookDeliverer(Construct):
    """The webhook queue -> one signed POST per finished job (``ocr_platform.handlers.webhook_deliverer``).

    A failed delivery's message is made visible again after the schedule's next wait (partial batch
    failures); a delivery out of retries is sent to the webhook DLQ. It reads and records the job's webhook
    state but never finishes a job, and it calls the receivers' URLs over the internet, so it stays outside the
    stage's VPC.
    """

    def __init__(self, scope: Construct, construct_id: str, props: WebhookDelivererProps) -> None:
        super().__init__(scope, construct_id)
        table, webhooks = props.common.table, props.webhooks
        # 1. Function: the queues, the secret and the retry schedule in its environment.
        self._fn = PlatformFunction(
            self,
            "Deliverer",
            PlatformFunctionProps(
                common=props.common,
                description="OCR platform webhooks: POST each finished job's signed webhook, retry, dead-letter",
                handler=WEBHOOK_DELIVERER_HANDLER,
                memory_mb=props.memory_mb,
                timeout_seconds=defaults.WEBHOOK_DELIVERER_TIMEOUT_SECONDS,
                service_name="ocr-webhooks",
                environment={
                    ENV.WEBHOOK_QUEUE_URL: webhooks.queue.queue_url,
                    ENV.WEBHOOK_DLQ_URL: webhooks.dead_letter_queue.queue_url,
                    ENV.WEBHOOK_SECRET_ARN: webhooks.secret.secret_arn,
                    ENV.WEBHOOK_FIRST_RETRY_SECONDS: str(props.first_retry_seconds),
                    ENV.WEBHOOK_MAX_RETRY_INTERVAL_SECONDS: str(props.max_retry_interval_seconds),
                    ENV.WEBHOOK_RETRY_WINDOW_SECONDS: str(props.retry_window_seconds),
                },
                concurrency_bound=(
                    f"Bounded by its SQS event source's MaximumConcurrency ({props.max_concurrency}, "
                    "PlatformConfig.webhook_deliverer_max_concurrency): webhooks beyond it wait in the webhook queue, "
                    "never throttled."
                ),
                failed_events=(
                    "Invoked by an SQS event source mapping, which a function DLQ does not apply to (Lambda uses "
                    "DeadLetterConfig only for asynchronous invocations): a webhook whose retries ran out is sent to the "
                    "webhook DLQ by the function itself, and one it keeps crashing on is moved there by the queue's "
                    "redrive policy; the DLQ keeps them 14 days, alarmed."
                ),
                public_internet=(
                    "Outside the stage's VPC by design: it POSTs each webhook to the receiver's callback_url, any public "
                    "https:// host, which the VPC's isolated subnets cannot reach (a NAT gateway, $0.045 an hour per AZ, "
                    "would open the internet to every function). ocr_platform.core.safe_http admits only hosts that resolve "
                    "to public addresses, checked after DNS and at every redirect."
                ),
            ),
        )
        role = self._fn.role
        # 2. Permissions: claim and record each POST on its job; read the signing secret (with the stage's key, the
        #    role's grant on it decrypts the secret too); delay a retry; park what ran out of retries.
        allow(role, ["dynamodb:GetItem", "dynamodb:UpdateItem"], [table.table_arn])
        allow(role, ["secretsmanager:GetSecretValue"], [webhooks.secret.secret_arn])
        allow(role, ["sqs:ChangeMessageVisibility"], [webhooks.queue.queue_arn])
        allow(role, ["sqs:SendMessage"], [webhooks.dead_letter_queue.queue_arn])
        # 3. Event source: the webhook queue, partial batch failures reported per message.
        self._fn.function.add_event_source(
            event_sources.SqsEventSource(
                webhooks.queue, batch_size=defaults.WEBHOOK_BATCH_SIZE, report_batch_item_failures=True,
                max_concurrency=props.max_concurrency,
            )
        )

    @property
    def function(self) -> lambda_.Function:
        return self._fn.function

    @property
    def environment(self) -> Mapping[str, str]:
        return self._fn.environment
