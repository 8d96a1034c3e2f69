"""One POST of a finished job's webhook, and what follows from its outcome.

The webhook queue holds one ``WebhookRequest`` per finished job with a ``callback_url``
(``ocr_platform.outputs.notifications``). The deliverer function takes each message and calls
``WebhookDeliverer.deliver``, which

1. claims the job's webhook (``JobStore.claim_webhook``): a request already delivered is a duplicate and is
   dropped; one that another invocation is POSTing right now comes back later; a dead-lettered one that an
   operator redrove from the webhook DLQ is tried again, on a new retry window;
2. POSTs the event detail, signed (``ocr_platform.outputs.webhook_signing``), through ``ocr_platform.core.safe_http``:
   the URL is checked again after DNS resolution, and redirects are never followed;
3. records the attempt on the job (``callback_attempts``, ``callback_status``) and says what the queue should
   do: nothing more (``delivered``), bring the message back after ``RetrySchedule.delay_after`` (``retry``),
   or park it on the webhook DLQ (``dead_lettered``: the retry window is over, or the URL is one the
   platform never calls).

Why SQS and a function rather than EventBridge API destinations: an API destination has one fixed endpoint
and signs with Basic, OAuth or API-key auth only, while each job names its own URL, the signature must
cover the body, and the URL's addresses must be checked at each attempt.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from ocr_platform.core import defaults
from ocr_platform.core.safe_http import BlockedUrlError, HttpFailure, UrlPolicy, request
from ocr_platform.jobs.store import CallbackAttempt, JobStore, iso
from ocr_platform.outputs.notifications import WebhookRequest
from ocr_platform.outputs.webhook_signing import ATTEMPT_HEADER, EVENT_ID_HEADER, SIGNATURE_HEADER, sign

logger = logging.getLogger(__name__)

DeliveryOutcome = Literal["delivered", "retry", "dead_lettered", "duplicate", "in_progress"]
USER_AGENT = "ocr-platform-webhooks/1"
#: Only the receiver's status counts; its body is read (and dropped) up to this size, to end the exchange.
MAX_ANSWER_BYTES = 1024 * 1024


@dataclass(frozen=True)
class RetrySchedule:
    """When a failed webhook is tried again, and for how long (``defaults.webhook_delivery_attempts``).

    >>> schedule = RetrySchedule()
    >>> schedule.delay_after(1), schedule.delay_after(12), schedule.attempts
    (30, 3600, 31)
    """

    first_retry_seconds: int = defaults.WEBHOOK_FIRST_RETRY_SECONDS
    max_interval_seconds: int = defaults.WEBHOOK_MAX_RETRY_INTERVAL_SECONDS
    window_seconds: int = defaults.WEBHOOK_RETRY_WINDOW_SECONDS

    def delay_after(self, failed_attempt: int) -> int:
        return defaults.webhook_retry_delay_seconds(failed_attempt, self.first_retry_seconds, self.max_interval_seconds)

    @property
    def attempts(self) -> int:
        return defaults.webhook_delivery_attempts(self.first_retry_seconds, self.max_interval_seconds, self.window_seconds)


@dataclass(frozen=True)
class DeliveryResult:
    """What one call of ``deliver`` did; ``retry_in_seconds`` is set for ``retry``."""

    outcome: DeliveryOutcome
    attempt: CallbackAttempt | None = None
    retry_in_seconds: int | None = None


class WebhookDeliverer:
    """POSTs finished jobs' webhooks.

    Args:
        store: the job store (claims and attempt records).
        secret: returns the signing secret (read from Secrets Manager, cached by the caller).
        policy: which URLs may be called (``UrlPolicy.PUBLIC_HTTPS`` in every deployed stage).
        schedule: the retry schedule.
        timeout_seconds: one POST, connection to answer.
        clock: epoch seconds (tests pass a fixed one).
    """

    def __init__(
        self, store: JobStore, *, secret: Callable[[], bytes], policy: UrlPolicy, schedule: RetrySchedule = RetrySchedule(),
        timeout_seconds: float = defaults.WEBHOOK_TIMEOUT_SECONDS, clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.secret = secret
        self.policy = policy
        self.schedule = schedule
        self.timeout_seconds = timeout_seconds
        self.clock = clock

    def deliver(self, webhook: WebhookRequest, *, attempt: int, first_sent_at: float, attempt_id: str) -> DeliveryResult:
        """Make attempt number ``attempt`` (1-based) of a request first queued at ``first_sent_at`` (epoch s)."""
        job_id = webhook["job_id"]
        if not self.store.claim_webhook(job_id, attempt_id=attempt_id, lease_seconds=self.timeout_seconds + 20):
            job = self.store.get(job_id) or {}
            if job.get("callback_status") == "delivered" or not job:
                return DeliveryResult("duplicate")
            return DeliveryResult("in_progress")
        record, refused = self._post(webhook, attempt)
        if "error" not in record:
            self.store.record_callback_attempt(job_id, record, status="delivered", attempt_id=attempt_id)
            return DeliveryResult("delivered", record)
        if refused or self.clock() - first_sent_at >= self.schedule.window_seconds:
            self.store.record_callback_attempt(job_id, record, status="dead_lettered", attempt_id=attempt_id)
            return DeliveryResult("dead_lettered", record)
        self.store.record_callback_attempt(job_id, record, status="pending", attempt_id=attempt_id)
        return DeliveryResult("retry", record, self.schedule.delay_after(attempt))

    def _post(self, webhook: WebhookRequest, attempt: int) -> tuple[CallbackAttempt, bool]:
        """One signed POST: its record, and whether the URL was refused (no later attempt can succeed)."""
        body = json.dumps(webhook["detail"], separators=(",", ":")).encode()
        headers = {
            "Content-Type": "application/json", "User-Agent": USER_AGENT, EVENT_ID_HEADER: webhook["event_id"],
            ATTEMPT_HEADER: str(attempt), SIGNATURE_HEADER: sign(self.secret(), body, timestamp=int(self.clock())),
        }
        record: CallbackAttempt = {"attempt": attempt, "at": iso_now(self.clock())}
        started = time.monotonic()
        refused = False
        try:
            with open(os.devnull, "wb") as discard:
                response = request(
                    "POST", webhook["callback_url"], policy=self.policy, body=body, headers=headers,
                    timeout_seconds=self.timeout_seconds, max_redirects=0, max_bytes=MAX_ANSWER_BYTES, sink=discard,
                )
        except BlockedUrlError as err:
            record["error"], refused = f"refused: {err}", True
        except HttpFailure as err:
            record["error"] = err.reason
        else:
            record["status_code"] = response.status
            if not 200 <= response.status < 300:
                record["error"] = f"the receiver answered {response.status}" + (
                    " (webhooks do not follow redirects)" if 300 <= response.status < 400 else ""
                )
        record["duration_ms"] = int((time.monotonic() - started) * 1000)
        log = logger.info if "error" not in record else logger.warning
        log("Webhook attempt %d for job %s: %s", attempt, webhook["job_id"], record.get("error") or record.get("status_code"))
        return record, refused


def iso_now(epoch: float) -> str:
    """``epoch`` as the job store's timestamps are written."""
    return iso(datetime.fromtimestamp(epoch, UTC))
