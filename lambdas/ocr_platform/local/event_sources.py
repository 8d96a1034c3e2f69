"""Lambda's SQS event source mappings and SNS's Lambda subscriptions, for the local Lambda runtime.

Why a module of its own: moto keeps messages but invokes nothing. These loops do what the Lambda service
does between a queue or topic and a function: poll a queue, invoke with a batch and delete what did not
fail (SQS), and hand each notification to the subscribed function asynchronously (SNS). Each loop runs in a
thread of the local stack until its ``stop`` event is set.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ocr_platform.local.events import sns_event, sqs_event
from ocr_platform.local.faults import FaultInjector
from ocr_platform.local.moto_account import moto_client

if TYPE_CHECKING:
    from ocr_platform.local.lambda_runtime import LambdaRuntime


@dataclass(frozen=True)
class EventSources:
    """What every event source of the stack shares.

    Attributes:
        moto_url: the moto server holding the queues (each loop makes its own SQS client).
        lambdas: the runtime that runs the functions.
        faults: asked for ``duplicate`` faults on each delivery.
        stop: set to end every loop.
    """

    moto_url: str
    lambdas: LambdaRuntime
    faults: FaultInjector
    stop: threading.Event

    def sqs_event_source(self, queue_url: str, queue_arn: str, function: str, batch_size: int, target: str) -> None:
        """Lambda's SQS event source mapping: batches, partial batch failures; SQS itself redrives.

        A ``duplicate`` fault on ``target`` delivers a message once more after its batch, as SQS's
        at-least-once delivery may."""
        sqs = moto_client("sqs", self.moto_url)
        while not self.stop.is_set():
            messages = sqs.receive_message(
                QueueUrl=queue_url, MaxNumberOfMessages=batch_size, WaitTimeSeconds=1,
                AttributeNames=["All"], MessageAttributeNames=["All"],
            ).get("Messages", [])
            if not messages:
                continue
            result = self.lambdas.invoke(function, sqs_event(messages, queue_arn))
            if result.error is not None:
                continue  # a function error returns the whole batch after the visibility timeout
            failed = {f.get("itemIdentifier") for f in (result.payload or {}).get("batchItemFailures", [])}
            for message in messages:
                if message["MessageId"] not in failed:
                    sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
            duplicates = [m for m in messages if self.faults.take(target, "duplicate", m["Body"]) is not None]
            if duplicates:
                self.lambdas.invoke(function, sqs_event(duplicates, queue_arn))

    def sns_delivery(self, tap_url: str, topic_arn: str, function: str, target: str) -> None:
        """SNS -> Lambda: each notification that reaches the topic's SQS tap invokes the subscribed function
        asynchronously (twice under a ``duplicate`` fault on ``target``, as SNS's at-least-once delivery may)."""
        sqs = moto_client("sqs", self.moto_url)
        while not self.stop.is_set():
            for message in sqs.receive_message(QueueUrl=tap_url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", []):
                envelope = json.loads(message["Body"])
                event = sns_event([envelope], f"{topic_arn}:local")
                self.lambdas.invoke_async(function, event)
                if self.faults.take(target, "duplicate", envelope.get("Message", "")) is not None:
                    self.lambdas.invoke_async(function, event)
                sqs.delete_message(QueueUrl=tap_url, ReceiptHandle=message["ReceiptHandle"])
