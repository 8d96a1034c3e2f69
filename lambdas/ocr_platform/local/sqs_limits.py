"""SQS's message size limit as SQS counts it: in bytes of UTF-8, message attributes included.

Why a module of its own: moto's server already refuses a message over the queue's ``MaximumMessageSize``
(1 MiB, SQS's current limit and default) and a batch over 1 MiB, but it counts the body's characters, not its
bytes, and leaves the message attributes out. SQS counts bytes: "The maximum size is 1 MiB or 1,048,576
bytes" (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html), and "All
parts of the message attribute, including Name, Type, and Value, are part of the message size restriction"
(https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_MessageAttributeValue.html); a
batch's messages together may not exceed 1 MiB either
(https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessageBatch.html). So 600,000
"é" (1.2 MB) pass moto and fail on SQS. :func:`enforce_sqs_message_size` makes moto's backend (in this
process) count as SQS does, with moto's own refusals: ``InvalidParameterValue`` for one message,
``BatchRequestTooLong`` for a batch.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from typing import Any

from ocr_platform.local.moto_account import ACCOUNT, REGION
from ocr_platform.local.moto_patch import replace_attribute

#: SQS's largest message and batch, in bytes (1 MiB).
MAX_MESSAGE_BYTES = 1_048_576


def message_size(body: str, attributes: Mapping[str, Any] | None = None) -> int:
    """The size SQS counts: the body's UTF-8 bytes plus each attribute's name, data type and value.

    >>> message_size("é"), message_size("x", {"kind": {"DataType": "String", "StringValue": "ab"}})
    (2, 13)
    """
    size = len(body.encode())
    for name, value in (attributes or {}).items():
        size += len(name.encode()) + len(str(value.get("DataType", "")).encode())
        if value.get("StringValue") is not None:
            size += len(str(value["StringValue"]).encode())
        binary = value.get("BinaryValue")
        if isinstance(binary, str):  # base64 on the wire
            size += len(base64.b64decode(binary))
        elif isinstance(binary, bytes | bytearray):
            size += len(binary)
    return size


def enforce_sqs_message_size() -> Callable[[], None]:
    """Make moto's SQS backend for the local account count message sizes as SQS does; returns the undo."""
    from moto.sqs.exceptions import BatchRequestTooLong, InvalidParameterValue
    from moto.sqs.models import sqs_backends

    backend = sqs_backends[ACCOUNT][REGION]
    send_message, send_message_batch = backend.send_message, backend.send_message_batch

    def checked_send_message(queue_name: str, message_body: str, message_attributes: dict[str, Any] | None = None,
                             *args: Any, **kwargs: Any) -> Any:
        limit = int(getattr(backend.get_queue(queue_name), "maximum_message_size", MAX_MESSAGE_BYTES))
        if message_size(message_body, message_attributes) > limit:
            raise InvalidParameterValue(
                f"One or more parameters are invalid. Reason: Message must be shorter than {limit} bytes.")
        return send_message(queue_name, message_body, message_attributes, *args, **kwargs)

    def checked_send_message_batch(queue_name: str, entries: dict[str, dict[str, Any]]) -> Any:
        total = sum(message_size(e.get("MessageBody") or "", e.get("MessageAttributes")) for e in entries.values())
        if total > MAX_MESSAGE_BYTES:
            raise BatchRequestTooLong(total)
        return send_message_batch(queue_name, entries)

    undos = [replace_attribute(backend, "send_message", checked_send_message),
             replace_attribute(backend, "send_message_batch", checked_send_message_batch)]

    def undo() -> None:
        for step in reversed(undos):
            step()

    return undo
