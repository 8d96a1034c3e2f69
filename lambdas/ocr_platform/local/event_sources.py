"""Lambda's SQS event source mappings, SNS's Lambda subscriptions and EventBridge's Lambda targets, for
the local Lambda runtime.

Why a module of its own: moto keeps messages but invokes nothing. These loops do what the Lambda service
does between a queue or topic and a function: poll a queue, invoke with a batch and delete what did not
fail (SQS), and hand each notification to the subscribed function asynchronously (SNS), or to the
subscription's DLQ when that hand-over fails. Each loop runs in a thread of the local stack until its
``stop`` event is set. Faults deliver a message twice, one after the other or to two invocations at once
(a scaled-out mapping's race), or refuse an SNS delivery, as AWS may.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ocr_platform.local.events import s3_object_created_event, sns_event, sqs_event
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
        faults: asked for ``duplicate`` and ``concurrent-duplicate`` faults on each delivery.
        stop: set to end every loop.
        parked_events_url: the SNS subscriptions' DLQ (the stack's parked-events queue); ``None``: a
            refused delivery is dropped, as SNS drops it without a DLQ.
    """

    moto_url: str
    lambdas: LambdaRuntime
    faults: FaultInjector
    stop: threading.Event
    parked_events_url: str | None = None

    def sqs_event_source(self, queue_url: str, queue_arn: str, function: str, batch_size: int, target: str) -> None:
        """Lambda's SQS event source mapping: batches, partial batch failures; SQS itself redrives.

        An invocation that returns deletes the messages of its batch it did not name in ``batchItemFailures``;
        a function error deletes none: the batch comes back after the visibility timeout.

        A ``duplicate`` fault on ``target`` delivers a message once more after its batch, as SQS's
        at-least-once delivery may. A ``concurrent-duplicate`` fault hands a message to two invocations at
        once, as two pollers of a scaled-out mapping may both receive it: the batch and a second batch of the
        faulted messages are invoked from two threads released together (a barrier), each invocation in an
        execution environment of its own while the function has the concurrency for both. The second record is
        built from the same received message (moto does not hand out a message in flight again): the same
        messageId, body, attributes and receipt handle. Each invocation's outcome is honoured on its own, as
        each poller honours its own: one that returns without naming the message deletes it; one that names it
        in ``batchItemFailures``, or errs, leaves it. So the message is gone once either invocation succeeded
        with it, and comes back after the visibility timeout only if neither did.
        """
        sqs = moto_client("sqs", self.moto_url)

        def deliver(messages: list[dict[str, Any]]) -> None:
            result = self.lambdas.invoke(function, sqs_event(messages, queue_arn))
            if result.error is not None:
                return  # a function error returns the whole batch after the visibility timeout
            failed = {f.get("itemIdentifier") for f in (result.payload or {}).get("batchItemFailures", [])}
            for message in messages:
                if message["MessageId"] not in failed:
                    sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])

        while not self.stop.is_set():
            messages = sqs.receive_message(
                QueueUrl=queue_url, MaxNumberOfMessages=batch_size, WaitTimeSeconds=1,
                AttributeNames=["All"], MessageAttributeNames=["All"],
            ).get("Messages", [])
            if not messages:
                continue
            twins = [m for m in messages if self.faults.take(target, "concurrent-duplicate", m["Body"]) is not None]
            if twins:
                deliver_together(deliver, [messages, twins], name=f"sqs-{target}")
            else:
                deliver(messages)
            duplicates = [m for m in messages if self.faults.take(target, "duplicate", m["Body"]) is not None]
            if duplicates:
                self.lambdas.invoke(function, sqs_event(duplicates, queue_arn))

    def sns_delivery(self, tap_url: str, topic_arn: str, function: str, target: str) -> None:
        """SNS -> Lambda: each notification that reaches the topic's SQS tap invokes the subscribed function
        asynchronously (twice under a ``duplicate`` fault on ``target``, as SNS's at-least-once delivery may).

        When the hand-over fails (the Lambda service refuses it: a ``delivery-refused`` fault on ``target``,
        or the function cannot be invoked), the notification goes to the subscription's DLQ as SNS sends it
        there: the notification envelope as the body, with ``ErrorCode`` and ``ErrorMessage`` attributes.
        """
        sqs = moto_client("sqs", self.moto_url)
        while not self.stop.is_set():
            for message in sqs.receive_message(QueueUrl=tap_url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", []):
                envelope = json.loads(message["Body"])
                event = sns_event([envelope], f"{topic_arn}:local")
                try:
                    if self.faults.take(target, "delivery-refused", envelope.get("Message", "")) is not None:
                        raise RuntimeError(f"The Lambda service refused the delivery to {function}")
                    self.lambdas.invoke_async(function, event)
                except Exception as err:  # noqa: BLE001 - SNS parks what it could not deliver
                    self._park_notification(sqs, message["Body"], err)
                else:
                    if self.faults.take(target, "duplicate", envelope.get("Message", "")) is not None:
                        self.lambdas.invoke_async(function, event)
                sqs.delete_message(QueueUrl=tap_url, ReceiptHandle=message["ReceiptHandle"])

    def s3_eventbridge_delivery(self, tap_url: str, function: str, target: str) -> None:
        """EventBridge rule -> Lambda for the bucket's S3 events: each event the rule matched (moto evaluates
        the pattern and puts the event on the rule's SQS tap) invokes ``function`` asynchronously, in the
        shape S3 sends (``events.s3_object_created_event``: moto names the ETag ``eTag`` and leaves the key
        unencoded). Twice under a ``duplicate`` fault on ``target``: EventBridge delivers at least once.
        A hand-over that fails is parked, as the rule target's DLQ would take it.
        """
        sqs = moto_client("sqs", self.moto_url)
        while not self.stop.is_set():
            for message in sqs.receive_message(QueueUrl=tap_url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", []):
                event = _as_s3_event(json.loads(message["Body"]))
                try:
                    self.lambdas.invoke_async(function, event)
                    if self.faults.take(target, "duplicate", json.dumps(event)) is not None:
                        self.lambdas.invoke_async(function, event)
                except Exception as err:  # noqa: BLE001 - EventBridge parks what it could not deliver
                    self._park_notification(sqs, json.dumps(event), err)
                sqs.delete_message(QueueUrl=tap_url, ReceiptHandle=message["ReceiptHandle"])

    def _park_notification(self, sqs: Any, body: str, err: Exception) -> None:
        if self.parked_events_url is None:
            return
        sqs.send_message(QueueUrl=self.parked_events_url, MessageBody=body, MessageAttributes={
            "ErrorCode": {"DataType": "String", "StringValue": "500"},
            "ErrorMessage": {"DataType": "String", "StringValue": str(err)},
        })


def _as_s3_event(moto_event: dict[str, Any]) -> dict[str, Any]:
    """moto's S3 -> EventBridge event in the shape S3 sends."""
    detail = moto_event["detail"]
    obj = detail["object"]
    return s3_object_created_event(
        bucket=detail["bucket"]["name"], key=obj["key"], size=int(obj.get("size") or 0),
        etag=str(obj.get("etag") or obj.get("eTag") or ""), version_id=obj.get("version-id"),
        event_id=str(moto_event.get("id") or uuid.uuid4()), time_iso=str(moto_event.get("time")),
        reason=str(detail.get("reason") or "PutObject"), account=str(moto_event.get("account")),
        region=str(moto_event.get("region")),
    )


def deliver_together(deliver: Callable[[list[dict[str, Any]]], None], batches: list[list[dict[str, Any]]], *, name: str) -> None:
    """Runs ``deliver`` on every batch at once, one thread each, released together by a barrier; re-raises the
    first failure once all have ended."""
    barrier = threading.Barrier(len(batches))
    failures: list[Exception] = []

    def run(batch: list[dict[str, Any]]) -> None:
        try:
            barrier.wait()
            deliver(batch)
        except Exception as err:  # noqa: BLE001 - raised again in the event source's thread
            failures.append(err)

    threads = [threading.Thread(target=run, args=(batch,), name=f"{name}-{index}", daemon=True) for index, batch in enumerate(batches)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
