"""Where the functions that finish jobs publish: the stage's event bus and the webhook queue.

Every function with ``finishes_jobs`` gets these targets (``ocr_infra.platform_function.PlatformFunction`` applies
them); the webhook queue itself and its deliverer are ``ocr_infra.job_notifications``. A module of its own so that
the function construct and the notification constructs each import it, not each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from aws_cdk import ArnFormat, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from ocr_infra.secure_defaults import allow
from ocr_platform.core.settings import ENV


class PublishingFunction(Protocol):
    """What granting a function the targets needs of it: its role and its environment."""

    @property
    def role(self) -> iam.IRole: ...

    def add_environment(self, variables: Mapping[str, str]) -> None: ...


def event_bus_arn(scope: Construct, bus_name: str) -> str:
    """The ARN of the bus ``bus_name`` in ``scope``'s account and region (``default``: the account's default bus).

    ``arn:<partition>:events:<region>:<account>:event-bus/<name>``, the resource ``events:PutEvents`` names.
    """
    return Stack.of(scope).format_arn(
        service="events", resource="event-bus", resource_name=bus_name, arn_format=ArnFormat.SLASH_RESOURCE_NAME
    )


@dataclass(frozen=True)
class CompletionEventTargets:
    """Where the functions that finish jobs publish: the event bus and the webhook queue.

    :class:`ocr_infra.platform_function.PlatformFunction` applies it (:meth:`allow_publishing`) to every function
    with ``finishes_jobs`` when ``CommonFunctionProps.completion_events`` is set.

    Attributes:
        bus_name: the EventBridge bus (``PlatformConfig.event_bus_name``: ``default``, or a bus the stage's
            owner created; the stack does not create it).
        bus_arn: its ARN (:func:`event_bus_arn`), the only resource ``events:PutEvents`` is allowed on.
        webhook_queue: where a finished job with a ``callback_url`` gets its webhook queued.
    """

    bus_name: str
    bus_arn: str
    webhook_queue: sqs.IQueue

    @classmethod
    def on_bus(cls, scope: Construct, bus_name: str, webhook_queue: sqs.IQueue) -> CompletionEventTargets:
        """The targets for the bus ``bus_name`` of ``scope``'s account and region."""
        return cls(bus_name=bus_name, bus_arn=event_bus_arn(scope, bus_name), webhook_queue=webhook_queue)

    @property
    def environment(self) -> dict[str, str]:
        """``OCR_EVENT_BUS_NAME`` and ``OCR_WEBHOOK_QUEUE_URL``."""
        return {ENV.EVENT_BUS_NAME: self.bus_name, ENV.WEBHOOK_QUEUE_URL: self.webhook_queue.queue_url}

    def allow_publishing(self, fn: PublishingFunction) -> None:
        """Let ``fn`` publish completion events on the bus and queue webhooks, and tell it where."""
        allow(fn.role, ["events:PutEvents"], [self.bus_arn])
        allow(fn.role, ["sqs:SendMessage"], [self.webhook_queue.queue_arn])
        fn.add_environment(self.environment)
