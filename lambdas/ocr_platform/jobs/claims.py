"""Claims and leases: who holds a step of a job, and until when.

This part owns the ``<step>_attempt`` and ``<step>_lease_until`` attributes of the steps that hand work on
(docs/contracts.md, "Claims"): the invoker's hand-over (``dispatch``), the CPU processor's ``run``, the
completion function's ``finish`` and each chunk's run (``chunk<N>``). A step is claimed before it runs:
duplicates of one delivery that arrive together find the step held and do not repeat it; a delivery that
arrives after the holder's lease ran out takes the step over, which is how a job whose holder crashed is
recovered. ``claim_dispatch`` is also the QUEUED -> PROCESSING transition of a dispatched job
(docs/contracts.md, "State machine"). The attribute names (``claim_attributes``, ``chunk_step``) belong to the
item's shape (``item``); the lease arithmetic (``lease_free``, ``epoch``) to the core (``table``), because the
webhook's claim (``delivery``) uses it too.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from boto3.dynamodb.conditions import Attr, ConditionBase

from ocr_platform.core.routing import Backend
from ocr_platform.jobs.item import PARTITION_KEY, ClaimStep, JobItem, JobStatus, NewJob, chunk_step, claim_attributes, iso
from ocr_platform.jobs.table import JobTable, epoch, lease_free


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


class JobClaims(JobTable):
    """The claims of a job's steps: taking one, taking one over once its lease ran out, and releasing one."""

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
            attempt: attempt_id, lease: epoch(now + timedelta(seconds=lease_seconds)),
        }
        create_if_missing: dict[str, Any] = {"started_at": iso(now)}
        if job is not None:
            create_if_missing.update({**job.identity(), "created_at": iso(now)})
            if self.ttl_days:
                create_if_missing["expires_at"] = int((now + timedelta(days=self.ttl_days)).timestamp())
        condition: ConditionBase = Attr("status").eq(JobStatus.QUEUED) | (
            Attr("status").eq(JobStatus.PROCESSING) & Attr("dispatched_at").not_exists() & lease_free(attempt, lease, attempt_id, now)
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
        values = {attempt: attempt_id, lease: epoch(now + timedelta(seconds=lease_seconds)), "updated_at": iso(now)}
        condition = Attr("status").eq(JobStatus.PROCESSING) & lease_free(attempt, lease, attempt_id, now)
        if unless is not None:
            condition = condition & unless
        acquired = self._transition(job_id, values, condition, to=f"PROCESSING ({step} claimed by {attempt_id})")
        return Claim(acquired, None if acquired else self.get(job_id))

    def release_claim(self, job_id: str, step: ClaimStep, *, attempt_id: str) -> bool:
        """End ``attempt_id``'s lease on ``step`` now: it knows it did not do the step (its hand-over failed),
        so the next delivery need not wait for the lease to run out."""
        attempt, lease = claim_attributes(step)
        condition = Attr("status").eq(JobStatus.PROCESSING) & Attr(attempt).eq(attempt_id)
        return self._transition(job_id, {lease: 0, "updated_at": iso(self.clock())}, condition, to=f"PROCESSING ({step} released)")
