"""What happens once a job is COMPLETED or FAILED: its completion event, and the hand-off of its webhook.

Every terminal write of the job store (``JobStore._finish``) marks the item ``notification_pending`` and hands
the new item to ``on_finished``; the functions that finish jobs pass ``CompletionNotifier.notify_or_leave_pending``
there. It publishes one EventBridge event (source ``ocr-platform``, detail-type ``OCR Job Completed`` or
``OCR Job Failed``), queues the webhook if the job has a ``callback_url``, and only then takes the job out
of the outbox. A writer that crashed in between leaves the job pending; the sweeper publishes it again
(``republish_pending``). The event's ``detail.event_id`` is derived from the job id and its final status,
so an event published twice carries the same identity and a consumer can deduplicate on it.

>>> detail = job_event_detail({"job_id": "job-1", "status": "COMPLETED", "model": "pp-ocrv5", "page_count": 2,
...                            "pages_done": 2, "result": "s3://b/results/job-1/result.json", "dispatch_attempt": "x"})
>>> detail["event_id"] == event_id("job-1", "COMPLETED"), "dispatch_attempt" in detail
(True, False)
>>> sorted(detail)
['event_id', 'job_id', 'model', 'page_count', 'pages_done', 'result', 'status']
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Mapping
from datetime import timedelta
from typing import Any, TypedDict, cast

from ocr_platform.core.errors import JobErrorDict
from ocr_platform.core.page_failures import PageFailure
from ocr_platform.core.results import ResultWarning
from ocr_platform.jobs.store import JobItem, JobStatus, JobStore, iso

logger = logging.getLogger(__name__)

#: The ``source`` of every event the platform publishes (a rule matches it).
EVENT_SOURCE = "ocr-platform"
#: The ``detail-type`` of each terminal status's event.
DETAIL_TYPES = {JobStatus.COMPLETED: "OCR Job Completed", JobStatus.FAILED: "OCR Job Failed"}
#: Fixed, so that ``event_id`` gives the same id in every function and every run.
_EVENT_ID_NAMESPACE = uuid.UUID("6f0c1d8e-3b0a-4c55-9f3e-0cf0a1d2b7e4")


class JobEventDetail(TypedDict, total=False):
    """The ``detail`` of a completion event, and the body of a webhook POST: the job's public fields once it
    ended (docs/contracts.md, "Completion events")."""

    event_id: str
    job_id: str
    status: str
    model: str
    language: str
    pages: str
    file_name: str
    input: str
    input_url: str
    created_at: str
    finished_at: str
    page_count: int
    pages_done: int
    result: str
    result_pdf: str
    formats: dict[str, str]
    error: JobErrorDict
    warnings: list[ResultWarning]
    pages_failed: list[PageFailure]


#: The job item attributes an event carries; claims, leases, owners and callback URLs stay internal.
EVENT_FIELDS = (
    "job_id", "status", "model", "language", "pages", "file_name", "input", "input_url", "created_at", "finished_at",
    "page_count", "pages_done", "result", "result_pdf", "error", "warnings", "pages_failed", "formats",
)


class WebhookRequest(TypedDict):
    """One message on the webhook queue: where to POST which event."""

    job_id: str
    event_id: str
    callback_url: str
    detail: JobEventDetail


def event_id(job_id: str, status: str) -> str:
    """The identity of a job's completion event: the same for every publication of it.

    >>> event_id("job-1", "FAILED") == event_id("job-1", "FAILED") != event_id("job-2", "FAILED")
    True
    """
    return str(uuid.uuid5(_EVENT_ID_NAMESPACE, f"{job_id}/{status}"))


def job_event_detail(job: Mapping[str, Any]) -> JobEventDetail:
    """The event detail of a finished job item."""
    detail = {name: job[name] for name in EVENT_FIELDS if name in job}
    detail["event_id"] = event_id(str(job["job_id"]), str(job["status"]))
    return cast("JobEventDetail", detail)


def event_entry(detail: JobEventDetail, bus_name: str) -> dict[str, Any]:
    """The ``PutEvents`` entry of one completion event."""
    return {
        "Source": EVENT_SOURCE,
        "DetailType": DETAIL_TYPES[JobStatus(detail["status"])],
        "Detail": json.dumps(detail, separators=(",", ":")),
        "EventBusName": bus_name,
    }


class EventPublishError(RuntimeError):
    """EventBridge refused the event (``FailedEntryCount``); the job stays in the outbox."""


class CompletionNotifier:
    """Publishes a finished job's completion event and queues its webhook.

    Args:
        store: the job store (its outbox: ``mark_notified``, ``list_notification_pending``).
        events: a boto3 ``events`` client.
        sqs: a boto3 ``sqs`` client.
        bus_name: the event bus (``default`` or a bus name).
        webhook_queue_url: the webhook queue; empty in a function not given one (its jobs' webhooks are then
            left to the sweeper, which has it).
    """

    def __init__(self, store: JobStore, *, events: Any, sqs: Any, bus_name: str, webhook_queue_url: str) -> None:
        self.store = store
        self.events = events
        self.sqs = sqs
        self.bus_name = bus_name
        self.webhook_queue_url = webhook_queue_url

    def notify(self, job: JobItem) -> JobEventDetail:
        """Publish ``job``'s event, queue its webhook (if it has a ``callback_url``), leave the outbox."""
        detail = job_event_detail(job)
        callback_url = job.get("callback_url")
        if callback_url and not self.webhook_queue_url:
            raise RuntimeError(f"job {job['job_id']} has a callback_url but this function has no webhook queue")
        answer = self.events.put_events(Entries=[event_entry(detail, self.bus_name)])
        if answer.get("FailedEntryCount"):
            entry = answer["Entries"][0]
            raise EventPublishError(f"EventBridge refused the event: {entry.get('ErrorCode')}: {entry.get('ErrorMessage')}")
        if callback_url:
            request: WebhookRequest = {
                "job_id": job["job_id"], "event_id": detail["event_id"], "callback_url": callback_url, "detail": detail,
            }
            self.sqs.send_message(QueueUrl=self.webhook_queue_url, MessageBody=json.dumps(request, separators=(",", ":")))
        self.store.mark_notified(job["job_id"])
        logger.info("Job %s: completion event published", job["job_id"], extra={"event_id": detail["event_id"]})
        return detail

    def notify_or_leave_pending(self, job: JobItem) -> None:
        """``notify``, never raising: the job's terminal write already happened, and a failure here leaves it
        in the outbox for the sweeper (``republish_pending``), with the same event id."""
        try:
            self.notify(job)
        except Exception:  # noqa: BLE001 - the sweeper publishes it from the outbox
            logger.exception("Job %s: completion event not published; the sweeper publishes it", job.get("job_id"))

    def republish_pending(self, *, grace_seconds: int) -> list[str]:
        """Publish the events of jobs that finished more than ``grace_seconds`` ago and are still in the outbox
        (the function that finished them crashed before it published); returns their ids."""
        cutoff = iso(self.store.clock() - timedelta(seconds=grace_seconds))
        published = []
        for job in self.store.list_notification_pending(finished_before=cutoff):
            try:
                self.notify(job)
            except Exception:  # noqa: BLE001 - one job EventBridge keeps refusing must not hold up the others
                logger.exception("Job %s: completion event still not published; the next sweep tries again", job["job_id"])
                continue
            published.append(job["job_id"])
        return published
