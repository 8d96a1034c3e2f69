"""The job store: one DynamoDB item per job, moved through its life cycle by conditional writes.

DynamoDB itself enforces the state machine (docs/contracts.md, "State machine"), not read-then-write code:

    QUEUED -> PROCESSING -> COMPLETED | FAILED
    QUEUED -> FAILED
    COMPLETED and FAILED never change again.

A transition whose condition fails (a duplicate SQS delivery, a repeated SNS notification, a late
Lambda retry) returns ``False`` and is logged; it never overwrites a terminal state.

``JobStore`` is the one object callers use. It is put together from one part per meaning of the item's
attributes, each a small class over one conditional-update core (``table.JobTable``: the table handle, ``get``
and the single ``_update``), and each in a module of its own that imports only that core and ``item`` (the
item's shape, statuses, keys and indexes):

- ``lifecycle.JobLifecycle``: the status and its transitions, the terminal writes, progress;
- ``claims.JobClaims``: claims and leases on the steps that hand work on (``claim_dispatch``, ``claim_step``);
- ``chunk_state.ChunkState``: a split job's chunks (``start_chunks``, ``mark_chunk_done``);
- ``delivery.DeliveryState``: the completion event's outbox and the webhook's record;
- ``listings.JobListings``: the reads through the secondary indexes.

The parts are combined by inheritance rather than held as attributes: every ``store.mark_failed(...)`` keeps
working without a delegating method per write, and all parts share one table, one clock and one
``on_finished`` hook (a test that replaces ``store.clock`` moves every part's time).

This module also re-exports every name callers import from ``ocr_platform.jobs.store``.

>>> store = JobStore("ocr-jobs")                                   # doctest: +SKIP
>>> store.create(NewJob("job-1", "pp-ocrv5", "s3://b/documents/job-1/a.pdf"))   # doctest: +SKIP
>>> store.mark_processing("job-1", "lambda")                       # doctest: +SKIP
True
"""

from __future__ import annotations

from ocr_platform.jobs.chunk_state import ChunkState
from ocr_platform.jobs.claims import Claim, JobClaims
from ocr_platform.jobs.delivery import DeliveryState
from ocr_platform.jobs.item import (
    CHUNK_CLAIM_ATTRIBUTE_PATTERNS,
    CLAIM_STEPS,
    NOTIFICATION_INDEX_NAME,
    NOTIFICATION_INDEX_PARTITION_KEY,
    NOTIFICATION_INDEX_SORT_KEY,
    OWNER_INDEX_NAME,
    OWNER_INDEX_PARTITION_KEY,
    OWNER_INDEX_SORT_KEY,
    PARTITION_KEY,
    STATUS_INDEX_NAME,
    STATUS_INDEX_PARTITION_KEY,
    STATUS_INDEX_SORT_KEY,
    TERMINAL_STATUSES,
    TTL_ATTRIBUTE,
    CallbackAttempt,
    CallbackStatus,
    ChunkRequest,
    ClaimStep,
    JobItem,
    JobStatus,
    NewJob,
    chunk_step,
    claim_attributes,
    iso,
    utc_now,
)
from ocr_platform.jobs.lifecycle import JobAlreadyExistsError, JobLifecycle
from ocr_platform.jobs.listings import JobListings

__all__ = [
    "CHUNK_CLAIM_ATTRIBUTE_PATTERNS", "CLAIM_STEPS", "NOTIFICATION_INDEX_NAME", "NOTIFICATION_INDEX_PARTITION_KEY",
    "NOTIFICATION_INDEX_SORT_KEY", "OWNER_INDEX_NAME", "OWNER_INDEX_PARTITION_KEY", "OWNER_INDEX_SORT_KEY", "PARTITION_KEY",
    "STATUS_INDEX_NAME", "STATUS_INDEX_PARTITION_KEY", "STATUS_INDEX_SORT_KEY", "TERMINAL_STATUSES", "TTL_ATTRIBUTE",
    "CallbackAttempt", "CallbackStatus", "ChunkRequest", "Claim", "ClaimStep", "JobAlreadyExistsError", "JobItem", "JobStatus",
    "JobStore", "NewJob", "chunk_step", "claim_attributes", "iso", "utc_now",
]


class JobStore(JobLifecycle, JobClaims, ChunkState, DeliveryState, JobListings):
    """Reads and transitions job items in the jobs table.

    Args:
        table_name: the DynamoDB table (partition key ``job_id``).
        ttl_days: days until DynamoDB's TTL removes a job item; 0 disables expiry.
        dynamodb: a boto3 DynamoDB resource; the default one honours ``AWS_ENDPOINT_URL*``.
        clock: returns the current UTC time (tests pass a fixed clock).
        on_finished: called with the whole item after a write that made a job COMPLETED or FAILED (the
            Lambdas count the outcome and publish its completion event: ``ocr_platform.outputs.notifications``).
    """
