"""The fan-in of a split job, the same on both routes: each chunk's result is recorded once, and the chunk
that completes the set merges the job's result and completes the job.

A chunk's result arrives from the processor invocation that read it (CPU route) or from the endpoint's
notification for its request (GPU route); either way it goes through :func:`record_chunk_result`:

1. the partial result is written under ``chunks/`` (a duplicate writes the same object again);
2. the chunk joins the item's ``chunks_done`` set in one conditional ``ADD`` (``JobStore.mark_chunk_done``),
   refused for a chunk already in it, so of the chunks that finish together exactly one sees the set full;
3. that one merges the parts in page order into ``result.json``, completes the job and deletes the parts.

A job that asked for ``outputs: ["pdf"]`` gets its searchable result.pdf from the merging run, through the
``write_pdf`` its route passes (the CPU processor's chunk run has the whole document on disk); a PDF that
cannot be written fails the job, it never completes without what it asked for.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, Literal

from ocr_platform.core import defaults
from ocr_platform.core.chunks import Chunk
from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.page_failures import check_failed_share
from ocr_platform.core.results import OcrResult
from ocr_platform.core.s3_layout import StorageLayout
from ocr_platform.jobs.store import JobStore
from ocr_platform.outputs.formats import format_locations
from ocr_platform.outputs.result_store import delete_chunk_results, publish_result, put_chunk_result, read_merged_result

logger = logging.getLogger(__name__)

FanInOutcome = Literal["chunk_done", "completed", "failed", "skipped"]
#: Writes and uploads the job's result.pdf from the merged result when the job asked for it: its URI, else
#: ``None``. Called before result.json is written (it may add its timing); an exception fails the job.
WritePdf = Callable[[OcrResult], str | None]


def record_chunk_result(
    chunk: Chunk, result: OcrResult, *, store: JobStore, s3: Any, layout: StorageLayout, raw: Any = None,
    write_pdf: WritePdf | None = None, max_failed_percent: int = defaults.MAX_FAILED_PAGE_PERCENT, formats: Sequence[str] = (),
) -> tuple[FanInOutcome, str | None]:
    """Record one chunk's partial result; merge and complete the job when it is the last one.

    Returns the outcome and, when this chunk merged, the result URI. ``skipped``: the chunk was recorded
    already (a duplicate), or the job is no longer PROCESSING (another chunk failed it). ``write_pdf`` is
    called only by the chunk that merges (:func:`merge_split_job`).
    """
    job_id = result["job_id"]
    put_chunk_result(s3, layout, job_id, chunk.index, result, raw)
    done = store.mark_chunk_done(job_id, chunk.index)
    if done is None:
        return "skipped", None
    if done < chunk.count:
        return "chunk_done", None
    return merge_split_job(job_id, chunk.count, store=store, s3=s3, layout=layout, write_pdf=write_pdf,
                           max_failed_percent=max_failed_percent, formats=formats)


def merge_split_job(
    job_id: str, chunk_count: int, *, store: JobStore, s3: Any, layout: StorageLayout, write_pdf: WritePdf | None = None,
    max_failed_percent: int = defaults.MAX_FAILED_PAGE_PERCENT, formats: Sequence[str] = (),
) -> tuple[FanInOutcome, str | None]:
    """Join the chunks' partial results in page order into the job's result.json, then complete the job.

    With ``write_pdf``, the searchable result.pdf is written from the merged result first and the job
    completes with its ``result_pdf``; if it cannot be written the job fails ``engine_failed`` (as an
    unsplit job's does), with no result.json.

    The chunks' failed pages are checked against ``max_failed_percent`` of the whole job: past it the job
    fails naming them (``core.page_failures.check_failed_share``), else it completes with ``pages_failed``.
    """
    try:
        result, raw = read_merged_result(s3, layout, job_id, chunk_count)
    except Exception as err:
        return _merge_failed(store, job_id, chunk_count, err)
    try:
        check_failed_share(result.get("pages_failed", []), read=result["page_count"], max_percent=max_failed_percent)
    except JobError as err:
        store.mark_failed(job_id, err)
        delete_chunk_results(s3, layout, job_id, chunk_count)
        return "failed", None
    try:
        result_pdf = write_pdf(result) if write_pdf is not None else None
    except Exception as err:
        logger.exception("Could not write result.pdf of job %s", job_id)
        store.mark_failed(job_id, err if isinstance(err, JobError) else JobError(
            ErrorCode.ENGINE_FAILED, f"The searchable result.pdf could not be written: {type(err).__name__}: {err}"
        ))
        return "failed", None
    try:
        result_uri = publish_result(s3, layout, result, raw, formats=formats)
    except Exception as err:
        return _merge_failed(store, job_id, chunk_count, err)
    completed = store.mark_completed(
        job_id, result_uri=result_uri, page_count=result["page_count"], warnings=result["warnings"], result_pdf=result_pdf,
        pages_failed=result.get("pages_failed"),
        formats=format_locations(layout, result, list(formats)),
    )
    delete_chunk_results(s3, layout, job_id, chunk_count)
    return ("completed" if completed else "skipped"), result_uri


def _merge_failed(store: JobStore, job_id: str, chunk_count: int, err: Exception) -> tuple[FanInOutcome, str | None]:
    logger.exception("Could not merge the %d chunks of job %s", chunk_count, job_id)
    store.mark_failed(job_id, JobError(
        ErrorCode.INTERNAL_ERROR, f"The {chunk_count} chunk results could not be merged: {type(err).__name__}: {err}"
    ))
    return "failed", None
