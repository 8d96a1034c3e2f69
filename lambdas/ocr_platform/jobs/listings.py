"""Listings: the reads of many jobs at once, through the table's secondary indexes.

This part writes nothing; it reads the indexes that docs/contracts.md, "Job item" defines: jobs by status,
oldest first (``status-created_at-index``: the sweeper, the scale-in check), and one user's jobs, newest first
(``owner-created_at-index``: docs/contracts.md, "Jobs API"). The sparse outbox index is delivery state, read by
``delivery.DeliveryState.list_notification_pending``.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

from boto3.dynamodb.conditions import ConditionBase, Key

from ocr_platform.core.routing import Backend
from ocr_platform.jobs.item import (
    OWNER_INDEX_NAME,
    OWNER_INDEX_PARTITION_KEY,
    STATUS_INDEX_NAME,
    STATUS_INDEX_PARTITION_KEY,
    STATUS_INDEX_SORT_KEY,
    JobItem,
    JobStatus,
    iso,
    plain,
)
from ocr_platform.jobs.table import JobTable


class JobListings(JobTable):
    """Jobs by status, by owner, and those in flight on a backend."""

    def list_by_status(self, status: JobStatus, *, created_after: str | None = None) -> Iterator[JobItem]:
        """Jobs in ``status``, oldest first, through the status/time GSI."""
        condition: ConditionBase = Key(STATUS_INDEX_PARTITION_KEY).eq(status)
        if created_after:
            condition = condition & Key(STATUS_INDEX_SORT_KEY).gte(created_after)
        kwargs: dict[str, Any] = {"IndexName": STATUS_INDEX_NAME, "KeyConditionExpression": condition}
        while True:
            page = self.table.query(**kwargs)
            for item in page.get("Items", []):
                yield plain(item)
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
        return [plain(item) for item in page.get("Items", [])], page.get("LastEvaluatedKey")

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
