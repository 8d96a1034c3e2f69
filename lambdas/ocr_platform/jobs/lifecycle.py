"""The job's lifecycle: its ``status`` and what each transition records, and its progress.

This part owns the status and the attributes written with it (docs/contracts.md, "State machine"):

    QUEUED -> PROCESSING -> COMPLETED | FAILED
    QUEUED -> FAILED
    COMPLETED and FAILED never change again.

``create`` writes the QUEUED item, ``mark_processing`` moves it on, ``mark_dispatched`` records the hand-over to
its backend, ``mark_completed`` and ``mark_failed`` are the terminal writes (through ``_finish``, which also
sets ``notification_pending`` and hands the new item to ``on_finished``:
docs/contracts.md, "Completion events"). While the job is PROCESSING, ``record_page_count`` and ``add_pages_done`` are its progress
(docs/contracts.md, "Progress") and ``record_fetched_input`` the document fetched for a job submitted by URL
(docs/contracts.md, "Input by URL"). The claim that takes QUEUED to PROCESSING for one delivery
(``claim_dispatch``) is a claim, and lives in ``claims``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, cast

from boto3.dynamodb.conditions import Attr, ConditionBase
from botocore.exceptions import ClientError

from ocr_platform.core.errors import JobError
from ocr_platform.core.page_failures import PageFailure
from ocr_platform.core.results import ResultWarning
from ocr_platform.core.routing import Backend
from ocr_platform.jobs.item import (
    NOTIFICATION_INDEX_PARTITION_KEY,
    PARTITION_KEY,
    JobItem,
    JobStatus,
    NewJob,
    claim_attributes,
    iso,
    storable,
)
from ocr_platform.jobs.table import JobTable, is_condition_failure


class JobAlreadyExistsError(Exception):
    """``create`` was called with a job id that is already in the table."""


class JobLifecycle(JobTable):
    """The status transitions of a job, the terminal writes and the job's progress."""

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
            item["options"] = storable(job.options)
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
            if is_condition_failure(err):
                raise JobAlreadyExistsError(f"job {job.job_id!r} already exists; submit a new job id") from None
            raise
        return item

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

    def record_page_count(self, job_id: str, page_count: int, *, document_type: str | None = None) -> bool:
        """Set ``page_count`` (the pages the job will read) once its document is opened, with ``pages_done`` 0, and
        the ``document_type`` its bytes told (``pdf``, ``png``, …, ``docx``, ``html``) when given."""
        now = iso(self.clock())
        values: dict[str, Any] = {"page_count": page_count, "updated_at": now, **({"document_type": document_type} if document_type else {})}
        return self._transition(
            job_id, values, Attr("status").eq(JobStatus.PROCESSING),
            to=f"PROCESSING ({page_count} pages)", if_not_exists={"pages_done": 0},
        )

    def add_pages_done(self, job_id: str, pages: int = 1) -> bool:
        """Count ``pages`` more pages read (one atomic ``ADD``, so chunks running at once all count)."""
        return self._transition(
            job_id, {}, Attr("status").eq(JobStatus.PROCESSING), to="PROCESSING (pages done)", add={"pages_done": pages},
            quiet=True,
        )

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
        pages_failed: list[PageFailure] | None = None, formats: dict[str, str] | None = None,
    ) -> bool:
        """PROCESSING -> COMPLETED with the result location, page count, the result's warnings (if any), the
        searchable PDF's location (``result_pdf``, when the job asked for one), those of its other formats
        (``formats``) and the pages that could not be read (``pages_failed``, if any)."""
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
        if pages_failed:
            values["pages_failed"] = [dict(failure) for failure in pages_failed]
        if formats:
            values["formats"] = dict(formats)
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

    def record_fetched_input(self, job_id: str, *, uri: str, url: str, file_name: str) -> bool:
        """The document submitted by URL is now the S3 object ``uri``: the job reads it from there on."""
        values = {"input": uri, "input_url": url, "file_name": file_name, "updated_at": iso(self.clock())}
        return self._transition(job_id, values, Attr("status").eq(JobStatus.PROCESSING), to="PROCESSING (input fetched)")
