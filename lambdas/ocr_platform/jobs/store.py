"""The job store: one DynamoDB item per job, moved through its life cycle by conditional writes.

DynamoDB itself enforces the state machine (docs/contracts.md, "State machine"), not read-then-write code:

    QUEUED -> PROCESSING -> COMPLETED | FAILED
    QUEUED -> FAILED
    COMPLETED and FAILED never change again.

A transition whose condition fails (a duplicate SQS delivery, a repeated SNS notification, a late
Lambda retry) returns ``False`` and is logged; it never overwrites a terminal state.

Steps that hand work on (the invoker's hand-over to a backend, the processor's run, the completion
function's publishing of a result) are *claimed* first: the claim records who holds the step (an attempt
id) and until when (a lease). Duplicates of one delivery that arrive together find the step held and do
not repeat it; a delivery that arrives after the holder's lease ran out takes the step over, which is how
a job whose holder crashed is recovered. See ``claim_dispatch`` and ``claim_step``.

A long document on the CPU route is split into chunks (``ocr_platform.core.chunks``): ``start_chunks`` records
how many, each chunk's run is claimed like a step (``claim_chunk``), and ``mark_chunk_done`` adds the
chunk to the done set with one atomic write that also tells the caller whether it finished the last one:
that caller, and only that one, merges the result. Progress is ``page_count`` (set once the document is
opened) and ``pages_done`` (an atomic counter, across chunks).

>>> store = JobStore("ocr-jobs")                                   # doctest: +SKIP
>>> store.create(NewJob("job-1", "pp-ocrv5", "s3://b/documents/job-1/a.pdf"))   # doctest: +SKIP
>>> store.mark_processing("job-1", "lambda")                       # doctest: +SKIP
True
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from enum import StrEnum
from typing import Any, Literal, TypedDict, cast

import boto3
from boto3.dynamodb.conditions import Attr, ConditionBase, Key
from boto3.dynamodb.types import TypeDeserializer
from botocore.exceptions import ClientError

from ocr_platform.core import defaults
from ocr_platform.core.errors import JobError, JobErrorDict
from ocr_platform.core.results import ResultWarning
from ocr_platform.core.routing import Backend

logger = logging.getLogger(__name__)

PARTITION_KEY = "job_id"
STATUS_INDEX_NAME = "status-created_at-index"
STATUS_INDEX_PARTITION_KEY = "status"
STATUS_INDEX_SORT_KEY = "created_at"
#: The jobs API lists a user's jobs, newest first, through this index (only items with an ``owner`` are in it).
OWNER_INDEX_NAME = "owner-created_at-index"
OWNER_INDEX_PARTITION_KEY = "owner"
OWNER_INDEX_SORT_KEY = "created_at"
TTL_ATTRIBUTE = "expires_at"
#: A sparse index of the finished jobs whose completion event is not yet out (``notification_pending`` is set
#: by the terminal write and removed once the event and the webhook were handed on): the sweeper's outbox.
NOTIFICATION_INDEX_NAME = "notification-pending-index"
NOTIFICATION_INDEX_PARTITION_KEY = "notification_pending"
NOTIFICATION_INDEX_SORT_KEY = "finished_at"

_DESERIALIZE = TypeDeserializer()


class JobStatus(StrEnum):
    QUEUED = "QUEUED"
    PROCESSING = "PROCESSING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"


TERMINAL_STATUSES = frozenset({JobStatus.COMPLETED, JobStatus.FAILED})

#: The steps of a job that are claimed before they run: the invoker's hand-over to the backend, the CPU
#: processor's run, the completion function's publishing of a SageMaker result or error, and each POST of
#: a finished job's webhook.
ClaimStep = Literal["dispatch", "run", "finish", "webhook"]
CLAIM_STEPS: tuple[ClaimStep, ...] = ("dispatch", "run", "finish", "webhook")


def chunk_step(index: int) -> str:
    """The claim step of chunk ``index`` (0-based) of a split job.

    >>> claim_attributes(chunk_step(3))
    ('chunk3_attempt', 'chunk3_lease_until')
    """
    return f"chunk{index}"


#: How the contract names the per-chunk claim attributes, which ``JobItem`` cannot type (one pair per chunk).
CHUNK_CLAIM_ATTRIBUTE_PATTERNS = ("chunk<N>_attempt", "chunk<N>_lease_until")


def claim_attributes(step: ClaimStep | str) -> tuple[str, str]:
    """The item attributes of a step's claim: who holds it, and until when (epoch seconds).

    >>> claim_attributes("dispatch")
    ('dispatch_attempt', 'dispatch_lease_until')
    """
    return f"{step}_attempt", f"{step}_lease_until"


class ChunkRequest(TypedDict):
    """Where SageMaker writes the outcome of one chunk request of a split GPU job (``chunk_requests``)."""

    output_location: str | None
    failure_location: str | None


CallbackStatus = Literal["pending", "delivered", "dead_lettered"]


class CallbackAttempt(TypedDict, total=False):
    """One POST of a job's webhook (``callback_attempts``): when, its outcome, and how long it took."""

    attempt: int
    at: str
    status_code: int
    error: str
    duration_ms: int


class JobItem(TypedDict, total=False):
    """The job item as frontends read it (docs/contracts.md, "Job item"): add an attribute there too.

    A split job also has one claim per chunk, ``chunk<N>_attempt`` and ``chunk<N>_lease_until``
    (``CHUNK_CLAIM_ATTRIBUTE_PATTERNS``)."""

    job_id: str
    status: str
    model: str
    language: str
    input: str
    input_url: str
    pages: str
    options: dict[str, Any]
    file_name: str
    owner: str
    callback_url: str
    callback_status: CallbackStatus
    callback_attempts: list[CallbackAttempt]
    notification_pending: str
    backend: Backend
    created_at: str
    updated_at: str
    started_at: str
    dispatched_at: str
    output_location: str
    failure_location: str
    dispatch_attempt: str
    dispatch_lease_until: int
    run_attempt: str
    run_lease_until: int
    finish_attempt: str
    finish_lease_until: int
    webhook_attempt: str
    webhook_lease_until: int
    finished_at: str
    result: str
    result_pdf: str
    page_count: int
    pages_done: int
    chunk_count: int
    chunks_done: set[int]
    chunk_pages: list[str]
    chunks_launched: int
    chunk_requests: list[ChunkRequest]
    warnings: list[ResultWarning]
    error: JobErrorDict
    expires_at: int


@dataclass(frozen=True)
class NewJob:
    """What a client knows about a job when it submits it."""

    job_id: str
    model: str
    input: str
    language: str = "en"
    pages: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    file_name: str | None = None
    owner: str | None = None
    callback_url: str | None = None

    def identity(self) -> dict[str, Any]:
        """What an item created from a message (no client wrote it first) records about the job."""
        values: dict[str, Any] = {"model": self.model, "language": self.language, "input": self.input}
        if self.callback_url:
            values["callback_url"] = self.callback_url
        return values


class JobAlreadyExistsError(Exception):
    """``create`` was called with a job id that is already in the table."""


@dataclass(frozen=True)
class Claim:
    """The outcome of one attempt to claim a step of a job.

    Attributes:
        acquired: this attempt holds the step now (it was free, its lease had run out, or it already
            held it: a retry of the same attempt).
        job: the item as it was when the claim was refused (read then, to tell a live holder from a job that
            moved on); ``None`` when acquired, so a claim that succeeds costs one write and no read.
    """

    acquired: bool
    job: JobItem | None

    def held_by_another(self, step: ClaimStep | str, now_epoch: float) -> bool:
        """Refused because another attempt holds a live lease on ``step`` (not because the job moved on)."""
        if self.acquired or self.job is None or self.job.get("status") != JobStatus.PROCESSING:
            return False
        _, lease = claim_attributes(step)
        return float(self.job.get(lease, 0)) >= now_epoch  # type: ignore[arg-type]


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(ts: datetime) -> str:
    """ISO-8601 UTC with millisecond precision and a ``Z`` suffix; sorts lexically in time order."""
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z"


def _storable(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` as DynamoDB stores it: it takes no floats, so a fraction becomes a ``Decimal`` (``_plain`` gives
    it back as a float).

    >>> _storable({"dpi": 1.5, "outputs": ["pdf"]})
    {'dpi': Decimal('1.5'), 'outputs': ['pdf']}
    """
    return dict(json.loads(json.dumps(value), parse_float=Decimal))


def _plain(value: Any) -> Any:
    """DynamoDB numbers come back as Decimal; give callers ints and floats."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, set):
        return {_plain(v) for v in value}
    return value


class JobStore:
    """Reads and transitions job items in the jobs table.

    Args:
        table_name: the DynamoDB table (partition key ``job_id``).
        ttl_days: days until DynamoDB's TTL removes a job item; 0 disables expiry.
        dynamodb: a boto3 DynamoDB resource; the default one honours ``AWS_ENDPOINT_URL*``.
        clock: returns the current UTC time (tests pass a fixed clock).
        on_finished: called with the whole item after a write that made a job COMPLETED or FAILED (the
            Lambdas count the outcome and publish its completion event: ``ocr_platform.outputs.notifications``).
    """

    def __init__(
        self,
        table_name: str,
        *,
        ttl_days: int = defaults.JOB_TTL_DAYS,
        dynamodb: Any = None,
        clock: Callable[[], datetime] = utc_now,
        on_finished: Callable[[JobItem], None] | None = None,
    ) -> None:
        self.table = (dynamodb or boto3.resource("dynamodb")).Table(table_name)
        self.ttl_days = ttl_days
        self.clock = clock
        self.on_finished = on_finished

    def create(self, job: NewJob) -> JobItem:
        """Write a new QUEUED item; raises ``JobAlreadyExistsError`` if the id is taken."""
        now = self.clock()
        item: JobItem = {
            "job_id": job.job_id,
            "status": JobStatus.QUEUED,
            "model": job.model,
            "language": job.language,
            "input": job.input,
            "created_at": iso(now),
            "updated_at": iso(now),
        }
        if job.pages:
            item["pages"] = job.pages
        if job.options:
            item["options"] = _storable(job.options)
        if job.file_name:
            item["file_name"] = job.file_name
        if job.owner:
            item["owner"] = job.owner
        if job.callback_url:
            item["callback_url"] = job.callback_url
        if self.ttl_days:
            item["expires_at"] = int((now + timedelta(days=self.ttl_days)).timestamp())
        try:
            self.table.put_item(Item=cast("dict[str, Any]", item), ConditionExpression=Attr(PARTITION_KEY).not_exists())
        except ClientError as err:
            if _is_condition_failure(err):
                raise JobAlreadyExistsError(f"job {job.job_id!r} already exists; submit a new job id") from None
            raise
        return item

    def get(self, job_id: str) -> JobItem | None:
        item = self.table.get_item(Key={PARTITION_KEY: job_id}, ConsistentRead=True).get("Item")
        return _plain(item) if item else None

    def mark_processing(self, job_id: str, backend: Backend, *, job: NewJob | None = None) -> bool:
        """QUEUED -> PROCESSING, recording the backend and ``started_at``.

        ``job`` fills in model/language/input when the item does not exist yet (a message enqueued
        without the client writing the item first), so such a job is tracked from here on.
        """
        now = iso(self.clock())
        values: dict[str, Any] = {"status": JobStatus.PROCESSING, "backend": backend, "started_at": now, "updated_at": now}
        create_if_missing: dict[str, Any] = {}
        if job is not None:
            create_if_missing = {**job.identity(), "created_at": now}
            if self.ttl_days:
                create_if_missing["expires_at"] = int((self.clock() + timedelta(days=self.ttl_days)).timestamp())
        condition: ConditionBase = Attr("status").eq(JobStatus.QUEUED)
        if job is not None:
            condition = condition | Attr(PARTITION_KEY).not_exists()
        return self._transition(job_id, values, condition, to=JobStatus.PROCESSING, if_not_exists=create_if_missing)

    def claim_dispatch(
        self, job_id: str, backend: Backend, *, attempt_id: str, lease_seconds: float, job: NewJob | None = None
    ) -> Claim:
        """Claim the hand-over of a job to ``backend`` for one delivery of its message.

        Acquired when the job is QUEUED (it becomes PROCESSING with ``started_at``), when ``job`` is given and
        no item exists yet, or when it is PROCESSING, not yet handed over (no ``dispatched_at``) and the last
        holder's lease has run out (that holder crashed or timed out: its hand-over is taken over). Refused
        while another delivery's lease holds, and once the job was handed over or ended.
        """
        now = self.clock()
        attempt, lease = claim_attributes("dispatch")
        values: dict[str, Any] = {
            "status": JobStatus.PROCESSING, "backend": backend, "updated_at": iso(now),
            attempt: attempt_id, lease: _epoch(now + timedelta(seconds=lease_seconds)),
        }
        create_if_missing: dict[str, Any] = {"started_at": iso(now)}
        if job is not None:
            create_if_missing.update({**job.identity(), "created_at": iso(now)})
            if self.ttl_days:
                create_if_missing["expires_at"] = int((now + timedelta(days=self.ttl_days)).timestamp())
        condition: ConditionBase = Attr("status").eq(JobStatus.QUEUED) | (
            Attr("status").eq(JobStatus.PROCESSING) & Attr("dispatched_at").not_exists() & _lease_free(attempt, lease, attempt_id, now)
        )
        if job is not None:
            condition = condition | Attr(PARTITION_KEY).not_exists()
        acquired = self._transition(job_id, values, condition, to=f"PROCESSING (dispatch claimed by {attempt_id})", if_not_exists=create_if_missing)
        return Claim(acquired, None if acquired else self.get(job_id))

    def claim_step(self, job_id: str, step: ClaimStep, *, attempt_id: str, lease_seconds: float) -> Claim:
        """Claim ``step`` of a PROCESSING job for one attempt (the processor's ``run``, the completion's ``finish``).

        Acquired when no one holds the step, the holder's lease has run out, or ``attempt_id`` holds it
        already (Lambda retries an asynchronous event with its request id). Refused while another attempt's
        lease holds and once the job is no longer PROCESSING.
        """
        return self._claim(job_id, step, attempt_id=attempt_id, lease_seconds=lease_seconds)

    def claim_chunk(self, job_id: str, index: int, *, attempt_id: str, lease_seconds: float) -> Claim:
        """Claim the run of chunk ``index`` of a split job, as ``claim_step`` claims a step; also refused
        once the chunk is done (a duplicate delivery of its event after it finished)."""
        not_done = ~Attr("chunks_done").contains(index)
        return self._claim(job_id, chunk_step(index), attempt_id=attempt_id, lease_seconds=lease_seconds, unless=not_done)

    def _claim(
        self, job_id: str, step: str, *, attempt_id: str, lease_seconds: float, unless: ConditionBase | None = None
    ) -> Claim:
        now = self.clock()
        attempt, lease = claim_attributes(step)
        values = {attempt: attempt_id, lease: _epoch(now + timedelta(seconds=lease_seconds)), "updated_at": iso(now)}
        condition = Attr("status").eq(JobStatus.PROCESSING) & _lease_free(attempt, lease, attempt_id, now)
        if unless is not None:
            condition = condition & unless
        acquired = self._transition(job_id, values, condition, to=f"PROCESSING ({step} claimed by {attempt_id})")
        return Claim(acquired, None if acquired else self.get(job_id))

    def record_page_count(self, job_id: str, page_count: int) -> bool:
        """Set ``page_count`` (the pages the job will read) once its document is opened, with ``pages_done`` 0."""
        now = iso(self.clock())
        return self._transition(
            job_id, {"page_count": page_count, "updated_at": now}, Attr("status").eq(JobStatus.PROCESSING),
            to=f"PROCESSING ({page_count} pages)", if_not_exists={"pages_done": 0},
        )

    def add_pages_done(self, job_id: str, pages: int = 1) -> bool:
        """Count ``pages`` more pages read (one atomic ``ADD``, so chunks running at once all count)."""
        return self._transition(
            job_id, {}, Attr("status").eq(JobStatus.PROCESSING), to="PROCESSING (pages done)", add={"pages_done": pages},
            quiet=True,
        )

    def start_chunks(
        self, job_id: str, chunk_count: int, *, attempt_id: str, step: ClaimStep = "run", chunk_pages: list[str] | None = None
    ) -> bool:
        """Record that the holder of ``step`` (``attempt_id``) split the job into ``chunk_count`` chunks.

        ``run`` on the CPU route (the processor that opened the document), ``finish`` on the GPU route (the
        completion function that read the endpoint's split plan). Once only: a second holder of the same
        job (a duplicate event that took over an expired lease) finds ``chunk_count`` set and must not start
        the chunks again. ``chunk_pages`` (the CPU route) is each chunk's page selection, in chunk order: the
        chunks are launched one by one as processor slots free up (:meth:`claim_chunk_launch`).
        """
        holder, _ = claim_attributes(step)
        condition = (
            Attr("status").eq(JobStatus.PROCESSING) & Attr("chunk_count").not_exists() & Attr(holder).eq(attempt_id)
        )
        values: dict[str, Any] = {"chunk_count": chunk_count, "updated_at": iso(self.clock())}
        if chunk_pages is not None:
            values.update(chunk_pages=chunk_pages, chunks_launched=0)
        return self._transition(job_id, values, condition, to=f"PROCESSING ({chunk_count} chunks)")

    def claim_chunk_launch(self, job_id: str) -> tuple[int, int, str] | None:
        """Take the next chunk of a split job to launch: its index, the job's chunk count and the chunk's page
        selection; each index once.

        One atomic ``ADD`` to ``chunks_launched``, refused once every chunk was taken or the job is no longer
        PROCESSING (a chunk failed it): ``None`` then.
        """
        condition = Attr("status").eq(JobStatus.PROCESSING) & Attr("chunks_launched").lt(Attr("chunk_count"))
        item = self._update(job_id, {}, condition, to="PROCESSING (chunk launched)", add={"chunks_launched": 1}, returns="ALL_NEW", quiet=True)
        if item is None:
            return None
        index = int(item["chunks_launched"]) - 1
        return index, int(item["chunk_count"]), str(item["chunk_pages"][index])

    def record_chunk_requests(self, job_id: str, locations: list[ChunkRequest]) -> bool:
        """Record where SageMaker will write each chunk request's outcome (``chunk_requests``, in chunk order),
        so the sweeper can settle a chunk whose notification was lost, as it does an unsplit job."""
        return self._transition(
            job_id, {"chunk_requests": [dict(location) for location in locations]}, Attr("status").eq(JobStatus.PROCESSING),
            to="PROCESSING (chunk requests)", quiet=True,
        )

    def mark_chunk_done(self, job_id: str, index: int) -> int | None:
        """Add chunk ``index`` to the job's done set; return how many chunks are done now.

        ``None`` when the chunk was done already (a duplicate) or the job is no longer PROCESSING (another
        chunk failed it). The write is atomic: of the chunks that finish together, exactly one sees the
        count reach ``chunk_count``, and that one merges the job's result.
        """
        condition = Attr("status").eq(JobStatus.PROCESSING) & ~Attr("chunks_done").contains(index)
        new = self._update(
            job_id, {"updated_at": iso(self.clock())}, condition, to=f"PROCESSING (chunk {index} done)",
            add={"chunks_done": {index}},
        )
        return None if new is None else len(new.get("chunks_done", ()))

    def release_claim(self, job_id: str, step: ClaimStep, *, attempt_id: str) -> bool:
        """End ``attempt_id``'s lease on ``step`` now: it knows it did not do the step (its hand-over failed),
        so the next delivery need not wait for the lease to run out."""
        attempt, lease = claim_attributes(step)
        condition = Attr("status").eq(JobStatus.PROCESSING) & Attr(attempt).eq(attempt_id)
        return self._transition(job_id, {lease: 0, "updated_at": iso(self.clock())}, condition, to=f"PROCESSING ({step} released)")

    def mark_dispatched(
        self, job_id: str, *, attempt_id: str | None = None, output_location: str | None = None, failure_location: str | None = None
    ) -> bool:
        """Record that the PROCESSING job was handed to its backend (separates a retry from a duplicate).

        With ``attempt_id``, only while that attempt holds the dispatch claim. ``output_location`` and
        ``failure_location``: where SageMaker will write the inference's outcome, so that a job whose
        notification was lost can still be settled from S3.
        """
        now = iso(self.clock())
        condition: ConditionBase = Attr("status").eq(JobStatus.PROCESSING)
        if attempt_id is not None:
            condition = condition & Attr(claim_attributes("dispatch")[0]).eq(attempt_id)
        values = {"dispatched_at": now, "updated_at": now}
        values.update({k: v for k, v in (("output_location", output_location), ("failure_location", failure_location)) if v})
        return self._transition(job_id, values, condition, to="dispatched")

    def mark_completed(
        self, job_id: str, *, result_uri: str, page_count: int, warnings: list[ResultWarning] | None = None, result_pdf: str | None = None,
    ) -> bool:
        """PROCESSING -> COMPLETED with the result location, page count, the result's warnings (if any) and the
        searchable PDF's location (``result_pdf``, when the job asked for one)."""
        now = iso(self.clock())
        values: dict[str, Any] = {
            "status": JobStatus.COMPLETED,
            NOTIFICATION_INDEX_PARTITION_KEY: JobStatus.COMPLETED,
            "result": result_uri,
            "page_count": page_count,
            "pages_done": page_count,
            "finished_at": now,
            "updated_at": now,
        }
        if warnings:
            values["warnings"] = list(warnings)
        if result_pdf:
            values["result_pdf"] = result_pdf
        return self._finish(job_id, values, Attr("status").eq(JobStatus.PROCESSING))

    def mark_failed(
        self, job_id: str, error: JobError, *, job: NewJob | None = None, unless_dispatched: bool = False, unless_claimed: bool = False,
        callback_url: str | None = None,
    ) -> bool:
        """QUEUED or PROCESSING -> FAILED with ``{code, message}``.

        A job that has no item yet (e.g. a malformed message nobody registered) gets a FAILED item, so
        whoever polls for it sees why. ``job`` adds what is known about it; ``callback_url`` only that (a message
        too malformed for a ``NewJob`` may still name where its failure should be POSTed). ``unless_dispatched`` leaves a
        job alone once it was handed to its backend: the backend's own outcome (or the sweeper) ends it.
        ``unless_claimed`` leaves it alone while a live claim on its ``run`` or ``finish`` holds: a processor
        is running it, or the completion function is publishing its result.
        """
        now = iso(self.clock())
        values: dict[str, Any] = {
            "status": JobStatus.FAILED,
            NOTIFICATION_INDEX_PARTITION_KEY: JobStatus.FAILED,
            "error": error.as_dict(),
            "finished_at": now,
            "updated_at": now,
        }
        create_if_missing: dict[str, Any] = {"created_at": now}
        if job is not None:
            create_if_missing.update(job.identity())
        if callback_url:
            create_if_missing.setdefault("callback_url", callback_url)
        if self.ttl_days:
            create_if_missing["expires_at"] = int((self.clock() + timedelta(days=self.ttl_days)).timestamp())
        unfinished: ConditionBase = Attr("status").is_in([JobStatus.QUEUED, JobStatus.PROCESSING])
        if unless_dispatched:
            unfinished = unfinished & Attr("dispatched_at").not_exists()
        if unless_claimed:
            now_epoch = int(self.clock().timestamp())
            for step in ("run", "finish"):
                _, lease = claim_attributes(step)
                unfinished = unfinished & (Attr(lease).not_exists() | Attr(lease).lt(now_epoch))
        condition = unfinished | Attr(PARTITION_KEY).not_exists()
        return self._finish(job_id, values, condition, if_not_exists=create_if_missing)

    def _finish(self, job_id: str, values: dict[str, Any], condition: ConditionBase, **update: Any) -> bool:
        """The terminal write: it also marks the job's completion event as pending (the outbox the sweeper
        reads) and hands the whole new item to ``on_finished``."""
        item = self._update(job_id, values, condition, to=values["status"], returns="ALL_NEW", **update)
        if item is not None and self.on_finished is not None:
            self.on_finished(cast("JobItem", item))
        return item is not None

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
                    yield _plain(item)
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
            & _lease_free(attempt, lease, attempt_id, now)
        )
        values = {attempt: attempt_id, lease: _epoch(now + timedelta(seconds=lease_seconds))}
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

    def record_fetched_input(self, job_id: str, *, uri: str, url: str, file_name: str) -> bool:
        """The document submitted by URL is now the S3 object ``uri``: the job reads it from there on."""
        values = {"input": uri, "input_url": url, "file_name": file_name, "updated_at": iso(self.clock())}
        return self._transition(job_id, values, Attr("status").eq(JobStatus.PROCESSING), to="PROCESSING (input fetched)")

    def list_by_status(self, status: JobStatus, *, created_after: str | None = None) -> Iterator[JobItem]:
        """Jobs in ``status``, oldest first, through the status/time GSI."""
        condition: ConditionBase = Key(STATUS_INDEX_PARTITION_KEY).eq(status)
        if created_after:
            condition = condition & Key(STATUS_INDEX_SORT_KEY).gte(created_after)
        kwargs: dict[str, Any] = {"IndexName": STATUS_INDEX_NAME, "KeyConditionExpression": condition}
        while True:
            page = self.table.query(**kwargs)
            for item in page.get("Items", []):
                yield _plain(item)
            if "LastEvaluatedKey" not in page:
                return
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def list_by_owner(
        self, owner: str, *, limit: int, start_after: dict[str, Any] | None = None
    ) -> tuple[list[JobItem], dict[str, Any] | None]:
        """One page of ``owner``'s jobs, newest first, through the owner/time GSI: the jobs and the key to
        pass as ``start_after`` for the next page (``None`` after the last)."""
        kwargs: dict[str, Any] = {
            "IndexName": OWNER_INDEX_NAME, "KeyConditionExpression": Key(OWNER_INDEX_PARTITION_KEY).eq(owner),
            "ScanIndexForward": False, "Limit": limit,
        }
        if start_after:
            kwargs["ExclusiveStartKey"] = start_after
        page = self.table.query(**kwargs)
        return [_plain(item) for item in page.get("Items", [])], page.get("LastEvaluatedKey")

    def list_in_flight(self, backend: Backend, *, window_seconds: int) -> list[JobItem]:
        """PROCESSING jobs on ``backend`` that started within the last ``window_seconds``.

        Older PROCESSING items are past every backend timeout: they are stuck, not running, and must not
        keep capacity alive forever.
        """
        cutoff = iso(self.clock() - timedelta(seconds=window_seconds))
        return [
            job
            for job in self.list_by_status(JobStatus.PROCESSING)
            if job.get("backend") == backend and job.get("started_at", "") >= cutoff
        ]

    def _transition(self, job_id: str, values: dict[str, Any], condition: Any, **update: Any) -> bool:
        """``_update`` for a caller that needs only whether the condition held."""
        return self._update(job_id, values, condition, **update) is not None

    def _update(
        self,
        job_id: str,
        values: dict[str, Any],
        condition: Any,
        *,
        to: str,
        if_not_exists: dict[str, Any] | None = None,
        add: dict[str, Any] | None = None,
        append: dict[str, list[Any]] | None = None,
        remove: tuple[str, ...] = (),
        returns: Literal["UPDATED_NEW", "ALL_NEW"] = "UPDATED_NEW",
        quiet: bool = False,
    ) -> dict[str, Any] | None:
        """One conditional ``UpdateItem``: the attributes it changed (``returns``: ``UPDATED_NEW``, or the whole
        item with ``ALL_NEW``), or ``None`` when the condition failed. ``values`` are SET, ``if_not_exists`` SET
        only where absent, ``append`` added to the end of a list (created if absent), ``add`` ADDed (a number
        to a counter, a set to a set), ``remove`` REMOVEd."""
        names: dict[str, str] = {}
        vals: dict[str, Any] = {}
        sets: list[str] = []
        for i, (attr, value) in enumerate(values.items()):
            names[f"#set{i}"], vals[f":set{i}"] = attr, value
            sets.append(f"#set{i} = :set{i}")
        for i, (attr, value) in enumerate((if_not_exists or {}).items()):
            names[f"#ine{i}"], vals[f":ine{i}"] = attr, value
            sets.append(f"#ine{i} = if_not_exists(#ine{i}, :ine{i})")
        for i, (attr, value) in enumerate((append or {}).items()):
            names[f"#app{i}"], vals[f":app{i}"] = attr, value
            vals[":empty_list"] = []
            sets.append(f"#app{i} = list_append(if_not_exists(#app{i}, :empty_list), :app{i})")
        adds = []
        for i, (attr, value) in enumerate((add or {}).items()):
            names[f"#add{i}"], vals[f":add{i}"] = attr, value
            adds.append(f"#add{i} :add{i}")
        removes = []
        for i, attr in enumerate(remove):
            names[f"#rem{i}"] = attr
            removes.append(f"#rem{i}")
        expression = " ".join(
            clause
            for clause in (
                "SET " + ", ".join(sets) if sets else "",
                "ADD " + ", ".join(adds) if adds else "",
                "REMOVE " + ", ".join(removes) if removes else "",
            )
            if clause
        )
        request: dict[str, Any] = {"ExpressionAttributeValues": vals} if vals else {}
        try:
            response = self.table.update_item(
                Key={PARTITION_KEY: job_id},
                UpdateExpression=expression,
                ConditionExpression=condition,
                ExpressionAttributeNames=names,
                **request,
                ReturnValues=returns,
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as err:
            if not _is_condition_failure(err):
                raise
            old: dict[str, Any] = dict(err.response.get("Item") or {})
            current = _DESERIALIZE.deserialize(old["status"]) if "status" in old else "<missing>"
            logger.log(
                logging.DEBUG if quiet else logging.WARNING,
                "Ignored transition of job %s to %s: it is %s", job_id, to, current,
                extra={"job_id": job_id, "target": to, "current_status": current},
            )
            return None
        if not quiet:
            logger.info("Job %s -> %s", job_id, to, extra={"job_id": job_id, "status": to})
        return _plain(response.get("Attributes") or {})


def _epoch(ts: datetime) -> int:
    """Whole epoch seconds, rounded up: a lease never ends before the time it was given."""
    return int(-(-ts.timestamp() // 1))


def _lease_free(attempt: str, lease: str, attempt_id: str, now: datetime) -> ConditionBase:
    """No live lease on the step: none was taken, it ran out, or ``attempt_id`` holds it."""
    return Attr(lease).not_exists() | Attr(lease).lt(int(now.timestamp())) | Attr(attempt).eq(attempt_id)


def _is_condition_failure(err: ClientError) -> bool:
    return err.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"
