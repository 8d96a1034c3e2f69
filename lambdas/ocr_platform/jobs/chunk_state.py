"""Chunk state: how a split job's chunks are recorded, launched and counted done.

This part owns ``chunk_count``, ``chunk_pages``, ``chunks_launched``, ``chunk_requests`` and ``chunks_done``
(docs/contracts.md, "Page fan-out"). A long document is split into chunks (``ocr_platform.core.chunks``):
``start_chunks`` records how many (once, by the holder of the job's ``run`` or ``finish`` claim),
``claim_chunk_launch`` takes the next chunk to launch (each index once), ``record_chunk_requests`` records where
the GPU route's chunk requests will write their outcomes, and ``mark_chunk_done`` adds a chunk to the done set
with one atomic write that also tells the caller whether it finished the last one: that caller, and only that
one, merges the result. Each chunk's run is claimed like a step (``claims.JobClaims.claim_chunk``).
"""

from __future__ import annotations

from typing import Any

from boto3.dynamodb.conditions import Attr

from ocr_platform.jobs.item import ChunkRequest, ClaimStep, JobStatus, claim_attributes, iso
from ocr_platform.jobs.table import JobTable


class ChunkState(JobTable):
    """The chunk bookkeeping of a split job: its plan, its launches, its requests and its done set."""

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
