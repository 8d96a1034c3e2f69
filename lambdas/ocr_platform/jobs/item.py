"""The job item itself: its attributes, statuses, keys and indexes, and how its values are written and read.

This module owns the *shape* of the item (docs/contracts.md, "Job item"): ``JobItem`` (every attribute a
frontend may read), ``JobStatus`` and ``TERMINAL_STATUSES`` (docs/contracts.md, "State machine"), the table's key
and index names (the infrastructure builds the table from them, so code and table cannot drift apart), what a
client submits (``NewJob``), and the attribute names of a step's claim (``claim_attributes``, ``chunk_step``:
docs/contracts.md, "Claims"), which every part of the store writes or tests in its conditions. It writes
nothing: the writes are the store's parts (``lifecycle``, ``claims``, ``chunk_state``, ``delivery``) over one
conditional-update core (``table``), and every one of them imports this module and that core only.

``iso`` is the contract's one timestamp format (docs/contracts.md, "Conventions"); ``storable`` and ``plain``
convert values to and from what DynamoDB stores (it takes no floats and gives numbers back as ``Decimal``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any, Literal, TypedDict

from ocr_platform.core import defaults
from ocr_platform.core.errors import JobErrorDict
from ocr_platform.core.page_failures import PageFailure
from ocr_platform.core.results import ResultWarning
from ocr_platform.core.routing import Backend

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
    #: The job's files in other formats beside result.json, by format (``ocr_platform.outputs.formats``).
    formats: dict[str, str]
    page_count: int
    document_type: str
    pages_done: int
    chunk_count: int
    chunks_done: set[int]
    chunk_pages: list[str]
    chunks_launched: int
    chunk_requests: list[ChunkRequest]
    warnings: list[ResultWarning]
    #: COMPLETED with some pages left out: the pages that could not be read (``core.page_failures``).
    pages_failed: list[PageFailure]
    error: JobErrorDict
    expires_at: int


@dataclass(frozen=True)
class NewJob:
    """What a client knows about a job when it submits it."""

    job_id: str
    model: str
    input: str
    language: str = defaults.LANGUAGE
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


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(ts: datetime) -> str:
    """ISO-8601 UTC with millisecond precision and a ``Z`` suffix; sorts lexically in time order."""
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z"


def storable(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` as DynamoDB stores it: it takes no floats, so a fraction becomes a ``Decimal`` (``plain`` gives
    it back as a float).

    >>> storable({"dpi": 1.5, "outputs": ["pdf"]})
    {'dpi': Decimal('1.5'), 'outputs': ['pdf']}
    """
    return dict(json.loads(json.dumps(value), parse_float=Decimal))


def plain(value: Any) -> Any:
    """DynamoDB numbers come back as Decimal; give callers ints and floats."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, set):
        return {plain(v) for v in value}
    return value
