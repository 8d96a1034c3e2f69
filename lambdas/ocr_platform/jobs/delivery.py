"""Delivery state: whether a finished job's completion event and webhook went out.

This part owns ``notification_pending`` (the outbox key that the terminal write sets:
docs/contracts.md, "Completion events") and ``callback_status``, ``callback_attempts`` and the ``webhook`` claim
(docs/contracts.md, "Webhooks"). ``mark_notified`` takes a job out of the outbox once its event and webhook were
handed on; ``list_notification_pending`` is the sweeper's read of the outbox (a job whose writer crashed in
between); ``claim_webhook`` and ``record_callback_attempt`` bracket each POST, so a job gets one POST in the
normal course. Every write here is conditioned on a terminal status (or on the outbox key), so none can move a
job's status.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

from boto3.dynamodb.conditions import Attr, Key

from ocr_platform.jobs.item import (
    NOTIFICATION_INDEX_NAME,
    NOTIFICATION_INDEX_PARTITION_KEY,
    NOTIFICATION_INDEX_SORT_KEY,
    TERMINAL_STATUSES,
    CallbackAttempt,
    CallbackStatus,
    JobItem,
    claim_attributes,
    plain,
)
from ocr_platform.jobs.table import JobTable, epoch, lease_free


class DeliveryState(JobTable):
    """The outbox of completion events and the record of a finished job's webhook."""

    def mark_notified(self, job_id: str) -> bool:
        """The job's completion event and webhook were handed on: it leaves the outbox."""
        return self._transition(
            job_id, {}, Attr(NOTIFICATION_INDEX_PARTITION_KEY).exists(), to="notified",
            remove=(NOTIFICATION_INDEX_PARTITION_KEY,), quiet=True,
        )

    def list_notification_pending(self, *, finished_before: str) -> Iterator[JobItem]:
        """Finished jobs whose completion event is still pending and that finished before ``finished_before``
        (their writer crashed between the terminal write and the event), through the sparse outbox index."""
        for status in TERMINAL_STATUSES:
            kwargs: dict[str, Any] = {
                "IndexName": NOTIFICATION_INDEX_NAME,
                "KeyConditionExpression": Key(NOTIFICATION_INDEX_PARTITION_KEY).eq(status)
                & Key(NOTIFICATION_INDEX_SORT_KEY).lt(finished_before),
            }
            while True:
                page = self.table.query(**kwargs)
                for item in page.get("Items", []):
                    yield plain(item)
                if "LastEvaluatedKey" not in page:
                    break
                kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def claim_webhook(self, job_id: str, *, attempt_id: str, lease_seconds: float) -> bool:
        """Claim one POST of a finished job's webhook: refused once it was delivered, and while another delivery
        of the same request holds a live lease (a duplicate of its message, received at once). A dead-lettered
        webhook may be claimed again: an operator redrove its request from the webhook DLQ."""
        now = self.clock()
        attempt, lease = claim_attributes("webhook")
        condition = (
            Attr("status").is_in(list(TERMINAL_STATUSES))
            & Attr("callback_status").ne("delivered")
            & lease_free(attempt, lease, attempt_id, now)
        )
        values = {attempt: attempt_id, lease: epoch(now + timedelta(seconds=lease_seconds))}
        return self._transition(job_id, values, condition, to=f"webhook claimed by {attempt_id}", quiet=True)

    def record_callback_attempt(
        self, job_id: str, attempt: CallbackAttempt, *, status: CallbackStatus, attempt_id: str
    ) -> bool:
        """Append one webhook attempt to a finished job's ``callback_attempts``, set ``callback_status`` and end
        ``attempt_id``'s claim on the webhook (the next attempt is the queue's to schedule)."""
        holder, lease = claim_attributes("webhook")
        return self._transition(
            job_id, {"callback_status": status, lease: 0},
            Attr("status").is_in(list(TERMINAL_STATUSES)) & Attr(holder).eq(attempt_id),
            to=f"webhook {status}", append={"callback_attempts": [dict(attempt)]}, quiet=True,
        )
