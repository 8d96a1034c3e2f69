"""The fan-in of a split job, the same on both routes: each chunk's result is recorded once, and the chunk
that completes the set merges the job's result and completes the job.

A chunk's result arrives from the processor invocation that read it (CPU route) or from the endpoint's
notification for its request (GPU route); either way it goes through :func:`record_chunk_result`:

1. the partial result is written under ``chunks/`` (a duplicate writes the same object again);
2. the chunk joins the item's ``chunks_done`` set in one conditional ``ADD`` (``JobStore.mark_chunk_done``),
   refused for a chunk already in it, so of the chunks that finish together exactly one sees the set full;
3. that one merges the parts in page order into ``result.json``, completes the job and deletes the parts.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from ocr_platform.chunks import Chunk
from ocr_platform.errors import ErrorCode, JobError
from ocr_platform.jobs import JobStore
from ocr_platform.result_store import delete_chunk_results, publish_merged_result, put_chunk_result
from ocr_platform.results import OcrResult
from ocr_platform.s3_layout import StorageLayout

logger = logging.getLogger(__name__)

FanInOutcome = Literal["chunk_done", "completed", "failed", "skipped"]


def record_chunk_result(
    chunk: Chunk, result: OcrResult, *, store: JobStore, s3: Any, layout: StorageLayout, raw: Any = None
) -> tuple[FanInOutcome, str | None]:
    """Record one chunk's partial result; merge and complete the job when it is the last one.

    Returns the outcome and, when this chunk merged, the result URI. ``skipped``: the chunk was recorded
    already (a duplicate), or the job is no longer PROCESSING (another chunk failed it).
    """
    job_id = result["job_id"]
    put_chunk_result(s3, layout, job_id, chunk.index, result, raw)
    done = store.mark_chunk_done(job_id, chunk.index)
    if done is None:
        return "skipped", None
    if done < chunk.count:
        return "chunk_done", None
    return merge_split_job(job_id, chunk.count, store=store, s3=s3, layout=layout)


def merge_split_job(
    job_id: str, chunk_count: int, *, store: JobStore, s3: Any, layout: StorageLayout
) -> tuple[FanInOutcome, str | None]:
    """Join the chunks' partial results in page order into the job's result.json, then complete the job."""
    try:
        result, result_uri = publish_merged_result(s3, layout, job_id, chunk_count)
    except Exception as err:
        logger.exception("Could not merge the %d chunks of job %s", chunk_count, job_id)
        store.mark_failed(job_id, JobError(
            ErrorCode.INTERNAL_ERROR, f"The {chunk_count} chunk results could not be merged: {type(err).__name__}: {err}"
        ))
        return "failed", None
    completed = store.mark_completed(job_id, result_uri=result_uri, page_count=result["page_count"], warnings=result["warnings"])
    delete_chunk_results(s3, layout, job_id, chunk_count)
    return ("completed" if completed else "skipped"), result_uri
