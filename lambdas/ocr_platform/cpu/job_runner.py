"""Run one job on this machine: fetch the input, run the engine, publish result.json, finish the job.

This is what the CPU processor Lambda does for ``pp-ocrv5`` and ``pp-structurev3``. Every outcome ends the
job: a ``JobError`` (bad input, engine missing) and any other exception from the engine mark it FAILED
with a code; only a crash of the process itself (out of memory, timeout) escapes, and the processor's
on-failure destination finishes the job then.

A long document is split (``process_job`` with a ``FanOut``): the run that opened it launches one
asynchronous processor invocation per chunk and ends; each chunk runs ``process_chunk``, and the one that
completes the set merges the result (``ocr_platform.core.chunks``) and, for ``outputs: ["pdf"]``, writes result.pdf
from it with the document it downloaded.
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from botocore.exceptions import ClientError

from ocr_platform.core import defaults
from ocr_platform.core.chunks import Chunk, plan_chunks
from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.results import OcrResult
from ocr_platform.core.s3_layout import S3Uri, StorageLayout, safe_file_name
from ocr_platform.document.intake import IntakeLimits, file_type, selected_pages
from ocr_platform.engines import Engine
from ocr_platform.engines.options import TEXT_LAYER_MODES
from ocr_platform.engines.reading import ocr_document
from ocr_platform.jobs.admission import ProcessorSlots, slot_token
from ocr_platform.jobs.messages import JobMessage
from ocr_platform.jobs.store import TERMINAL_STATUSES, JobStatus, JobStore
from ocr_platform.outputs.fan_in import record_chunk_result
from ocr_platform.outputs.figures import add_figures
from ocr_platform.outputs.formats import format_locations, requested_formats
from ocr_platform.outputs.page_images import add_page_images
from ocr_platform.outputs.requested_pdf import wants_pdf, write_requested_pdf
from ocr_platform.outputs.result_store import publish_result

logger = logging.getLogger(__name__)

Outcome = Literal["completed", "failed", "skipped", "fanned_out", "chunk_done"]


@dataclass(frozen=True)
class ProcessResult:
    outcome: Outcome
    result_uri: str | None = None
    error: JobError | None = None


def download_input(s3: Any, uri: str, directory: Path) -> Path:
    """Copy the job's document to ``directory``; a missing object is ``JobError(input_not_found)``."""
    location = S3Uri.parse(uri)
    target = directory / safe_file_name(location.key)
    try:
        s3.download_file(location.bucket, location.key, str(target))
    except ClientError as err:
        code = err.response.get("Error", {}).get("Code", "")
        if code in {"404", "NoSuchKey", "NotFound", "403", "AccessDenied"}:
            raise JobError(ErrorCode.INPUT_NOT_FOUND, f"The input {uri} does not exist or cannot be read ({code}).") from None
        raise
    return target


class ChunkLauncher(Protocol):
    """Starts one chunk of a split job: the processor invokes itself asynchronously with the chunk, and with
    the token of the processor slot the chunk holds (``None`` without admission control)."""

    def __call__(self, message: JobMessage, chunk: Chunk, slot: str | None = None) -> None: ...


@dataclass(frozen=True)
class FanOut:
    """How the processor splits a long job.

    Attributes:
        pages_per_chunk: a job of more selected pages than this is split into chunks of at most this many.
        launch: starts one chunk (``LambdaChunkLauncher`` in the processor).
        slots: the stage's processor semaphore (``ocr_platform.jobs.admission``): each chunk is launched holding a
            slot, the run that splits the job hands its own to the first chunk, each chunk that ends hands
            its slot to the next one, and the rest wait for free slots. ``None``: every chunk is launched at
            once (the processor's reserved concurrency bounds them).
    """

    pages_per_chunk: int
    launch: ChunkLauncher
    slots: ProcessorSlots | None = None


@dataclass(frozen=True)
class HeldSlot:
    """The processor slot an invocation holds: the token its event's ``slot`` field carries."""

    slots: ProcessorSlots
    token: str

    def release(self) -> None:
        self.slots.release(self.token)


@dataclass(frozen=True)
class LambdaChunkLauncher:
    """Invokes the processor function asynchronously (``InvocationType=Event``) once per chunk.

    The event is the job message's body with a ``chunk`` field (``Chunk.to_payload``).
    """

    lambda_client: Any
    function_name: str

    def __call__(self, message: JobMessage, chunk: Chunk, slot: str | None = None) -> None:
        payload = {**message.to_body(), "chunk": chunk.to_payload(), **({"slot": slot} if slot else {})}
        self.lambda_client.invoke(FunctionName=self.function_name, InvocationType="Event", Payload=json.dumps(payload).encode())


def process_job(
    message: JobMessage,
    *,
    store: JobStore,
    s3: Any,
    layout: StorageLayout,
    engine_for: Callable[[str], Engine],
    attempt_id: str | None = None,
    lease_seconds: float = defaults.PROCESSOR_TIMEOUT_SECONDS,
    limits: IntakeLimits | None = None,
    fan_out: FanOut | None = None,
    held: HeldSlot | None = None,
    max_failed_percent: int = defaults.MAX_FAILED_PAGE_PERCENT,
) -> ProcessResult:
    """Process ``message`` end to end and leave the job COMPLETED or FAILED, or split it into chunks.

    The run is claimed first (``JobStore.claim_step("run")``) as ``attempt_id`` for ``lease_seconds``
    (the processor passes its request id and the time its invocation has left). A job that is already
    terminal, or whose run another live invocation holds (Lambda delivered the async event twice), is
    skipped without touching it.

    ``held`` is the processor slot the invoker took for the job: given back when the run ends (or handed to
    the first chunk), kept when the run is skipped for another live invocation of the same job, which holds it.

    The document is opened first: its selected pages are checked against ``limits`` and counted into the
    item's ``page_count``. With ``fan_out``, a job of more than ``fan_out.pages_per_chunk`` pages is split:
    the chunks are recorded on the item and launched, and this run ends ``fanned_out``; the chunks finish the
    job (:func:`process_chunk`). Pages that fail are left out (``pages_failed``) up to ``max_failed_percent``
    of the job's pages (``ocr_platform.core.page_failures``); past it the job fails naming them.
    """
    result = _run_job(
        message, store=store, s3=s3, layout=layout, engine_for=engine_for, attempt_id=attempt_id,
        lease_seconds=lease_seconds, limits=limits, fan_out=fan_out, held=held, max_failed_percent=max_failed_percent,
    )
    _give_back_slot(held, result, store, message.job_id)
    return result


def _run_job(
    message: JobMessage,
    *,
    store: JobStore,
    s3: Any,
    layout: StorageLayout,
    engine_for: Callable[[str], Engine],
    attempt_id: str | None,
    lease_seconds: float,
    limits: IntakeLimits | None,
    fan_out: FanOut | None,
    held: HeldSlot | None,
    max_failed_percent: int,
) -> ProcessResult:
    job = store.get(message.job_id)
    if job and job.get("status") in TERMINAL_STATUSES:
        logger.warning("Job %s is already %s; not processing it again", message.job_id, job["status"])
        return ProcessResult("skipped")
    if job and job.get("chunk_count"):
        logger.warning("Job %s was split into %s chunks already; not processing it again", message.job_id, job["chunk_count"])
        return ProcessResult("skipped")
    if not job or job.get("status") == JobStatus.QUEUED:
        store.mark_processing(message.job_id, "lambda", job=message.as_new_job())
    attempt_id = attempt_id or uuid.uuid4().hex
    claim = store.claim_step(message.job_id, "run", attempt_id=attempt_id, lease_seconds=lease_seconds)
    if not claim.acquired:
        current = claim.job or {}
        logger.warning("Job %s is %s and its run is held by %s; not processing it again", message.job_id,
                       current.get("status"), current.get("run_attempt"))
        return ProcessResult("skipped")

    started = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix=f"ocr-{message.job_id}-") as tmp:
            path = download_input(s3, message.input, Path(tmp))
            download_s = time.perf_counter() - started
            selected = selected_pages(path, pages=message.pages, limits=limits or IntakeLimits())
            kind = file_type(path, limits)  # an Office or HTML file is read in one run (engines.native_reading)
            store.record_page_count(message.job_id, len(selected), document_type=kind.value)
            if fan_out is not None and len(selected) > fan_out.pages_per_chunk and not kind.native:
                chunks = plan_chunks(selected, pages_per_chunk=fan_out.pages_per_chunk, page_costs=page_costs(path, selected, message))
                if len(chunks) > 1:
                    return _start_chunks(message, chunks, store=store, fan_out=fan_out, attempt_id=attempt_id, held=held)
            engine = engine_for(message.model)
            result, raw = ocr_document(
                path, job_id=message.job_id, model=message.model, engine=engine,
                language=message.language, pages=message.pages, options=message.options,
                on_page=_count_pages(store, message.job_id), max_failed_percent=max_failed_percent,
            )
            add_page_images(s3, layout, result, path, limits or IntakeLimits())
            add_figures(s3, layout, result, path, limits or IntakeLimits())
            result_pdf = write_requested_pdf(s3, layout, message, path, result)
        result["timings"].update(download=round(download_s, 4), total=round(time.perf_counter() - started, 4))
        formats = requested_formats(message.options)
        result_uri = publish_result(s3, layout, result, raw, formats=formats)
    except JobError as err:
        return _fail(store, message, err)
    except Exception as err:
        logger.exception("Engine failed on job %s", message.job_id)
        return _fail(store, message, JobError(ErrorCode.ENGINE_FAILED, f"OCR failed: {type(err).__name__}: {err}"))

    if store.mark_completed(
        message.job_id, result_uri=result_uri, page_count=result["page_count"], warnings=result["warnings"], result_pdf=result_pdf,
        pages_failed=result.get("pages_failed"),
        formats=format_locations(layout, result, formats),
    ):
        return ProcessResult("completed", result_uri=result_uri)
    return ProcessResult("skipped", result_uri=result_uri)


def _count_pages(store: JobStore, job_id: str) -> Callable[[int, int], None]:
    """The engine's ``on_page`` callback: one more page done on the job item (its ``pages_done``)."""

    def count(done: int, total: int) -> None:
        store.add_pages_done(job_id)

    return count


def page_costs(path: Path, selected: list[int], message: JobMessage) -> dict[int, float] | None:
    """What each selected page costs to read, in OCR pages, for the chunk planner: with ``text_layer: auto`` a PDF
    page with a text layer costs ``defaults.TEXT_LAYER_PAGE_COST``; ``None`` (every page 1.0) otherwise."""
    if message.options.get("text_layer", TEXT_LAYER_MODES[0]) != "auto":  # the engine checks the options themselves
        return None
    from ocr_platform.document.text_layer import layered_pages

    return {page: defaults.TEXT_LAYER_PAGE_COST for page in layered_pages(path, selected)} or None


def _start_chunks(
    message: JobMessage, chunks: list[Chunk], *, store: JobStore, fan_out: FanOut, attempt_id: str, held: HeldSlot | None
) -> ProcessResult:
    pages = [chunk.page_spec for chunk in chunks]
    if not store.start_chunks(message.job_id, len(chunks), attempt_id=attempt_id, chunk_pages=pages):
        logger.warning("Job %s was split by another run; not starting its chunks again", message.job_id)
        return ProcessResult("skipped")
    try:
        launched = launch_waiting_chunks(message, store=store, fan_out=fan_out, held=held)
    except ChunkLaunchError as err:
        return _fail(store, message, err.error)
    logger.info("Job %s split into %d chunks, %d launched now", message.job_id, len(chunks), launched)
    return ProcessResult("fanned_out")


class ChunkLaunchError(Exception):
    """A chunk's invocation could not be started; the job fails with :attr:`error`."""

    def __init__(self, error: JobError) -> None:
        super().__init__(error.message)
        self.error = error


def launch_waiting_chunks(message: JobMessage, *, store: JobStore, fan_out: FanOut, held: HeldSlot | None) -> int:
    """Launch the split job's chunks that are not running yet, as far as processor slots allow; how many.

    ``held`` (the slot of the run that split the job, or of a chunk that just ended) goes to the first chunk
    launched, or is given back when no chunk is left, so a split job always has a chunk in flight until the
    last is launched. Without a semaphore every waiting chunk is launched at once.

    Raises:
        ChunkLaunchError: an invocation could not be started (its slot is given back).
    """
    launched = 0
    while True:
        token = _slot_for_next_chunk(message.job_id, fan_out.slots, held)
        held = None
        if fan_out.slots is not None and token is None:
            return launched
        taken = store.claim_chunk_launch(message.job_id)
        if taken is None:
            if token is not None and fan_out.slots is not None:
                fan_out.slots.release(token)
            return launched
        index, count, pages = taken
        chunk = Chunk.from_payload({"index": index, "count": count, "pages": pages})
        try:
            fan_out.launch(message, chunk, token)
        except Exception as err:
            logger.exception("Could not start %s of job %s", chunk.label, message.job_id)
            if token is not None and fan_out.slots is not None:
                fan_out.slots.release(token)
            raise ChunkLaunchError(JobError(
                ErrorCode.INTERNAL_ERROR, f"The job could not start its {chunk.label}: {type(err).__name__}: {err}"
            )) from err
        launched += 1


def _slot_for_next_chunk(job_id: str, slots: ProcessorSlots | None, held: HeldSlot | None) -> str | None:
    """A slot token for the next chunk: ``held``'s slot handed over, else a free one; ``None`` when none is free
    (or there is no semaphore)."""
    if slots is None:
        return None
    token = slot_token(job_id, "chunk")
    if held is not None and held.slots.hand_over(held.token, token):
        return token
    return token if slots.acquire(token) else None


def process_chunk(
    message: JobMessage,
    chunk: Chunk,
    *,
    store: JobStore,
    s3: Any,
    layout: StorageLayout,
    engine_for: Callable[[str], Engine],
    attempt_id: str | None = None,
    lease_seconds: float = defaults.PROCESSOR_TIMEOUT_SECONDS,
    limits: IntakeLimits | None = None,
    fan_out: FanOut | None = None,
    held: HeldSlot | None = None,
    max_failed_percent: int = defaults.MAX_FAILED_PAGE_PERCENT,
) -> ProcessResult:
    """Read one chunk of a split job; the chunk that completes the set merges the job's result.

    The chunk's run is claimed (``JobStore.claim_chunk``), so a duplicate delivery of its event, while it
    runs or after it is done, changes nothing. A chunk that fails fails the job, once, with the chunk's
    pages in the message; the other chunks then find the job FAILED and stop.

    A chunk that ends well hands its processor slot (``held``) to the next chunk still waiting, and launches
    more where slots are free (``fan_out``); the last one gives its slot back, as does one that failed or
    found the job ended.
    """
    result = _run_chunk(message, chunk, store=store, s3=s3, layout=layout, engine_for=engine_for,
                        attempt_id=attempt_id, lease_seconds=lease_seconds, limits=limits, max_failed_percent=max_failed_percent)
    if result.outcome == "chunk_done" and fan_out is not None:
        try:
            launch_waiting_chunks(message, store=store, fan_out=fan_out, held=held)
        except ChunkLaunchError as err:
            _fail(store, message, err.error)
        return result
    _give_back_slot(held, result, store, message.job_id)
    return result


def _give_back_slot(held: HeldSlot | None, result: ProcessResult, store: JobStore, job_id: str) -> None:
    """Give ``held`` back once this run's work ended (completed, failed, or a chunk done with no one to hand the
    slot to), or once the job ended elsewhere. A run skipped for a live twin keeps it: the twin holds the same
    token. A run that fanned out handed it to its first chunk."""
    if held is not None and (result.outcome in ("completed", "failed", "chunk_done") or _has_ended(store, job_id)):
        held.release()


def _has_ended(store: JobStore, job_id: str) -> bool:
    job = store.get(job_id)
    return bool(job and job.get("status") in TERMINAL_STATUSES)


def _run_chunk(
    message: JobMessage,
    chunk: Chunk,
    *,
    store: JobStore,
    s3: Any,
    layout: StorageLayout,
    engine_for: Callable[[str], Engine],
    attempt_id: str | None,
    lease_seconds: float,
    limits: IntakeLimits | None,
    max_failed_percent: int,
) -> ProcessResult:
    claim = store.claim_chunk(message.job_id, chunk.index, attempt_id=attempt_id or uuid.uuid4().hex, lease_seconds=lease_seconds)
    if not claim.acquired:
        current = claim.job or {}
        logger.warning("Not running %s of job %s: the job is %s, or the chunk is done or held", chunk.label,
                       message.job_id, current.get("status"))
        return ProcessResult("skipped")

    started = time.perf_counter()
    # The document stays on disk until the chunk is recorded: the chunk that merges writes result.pdf from it.
    with tempfile.TemporaryDirectory(prefix=f"ocr-{message.job_id}-{chunk.index}-") as tmp:
        try:
            engine = engine_for(message.model)
            path = download_input(s3, message.input, Path(tmp))
            download_s = time.perf_counter() - started
            result, raw = ocr_document(
                path, job_id=message.job_id, model=message.model, engine=engine,
                language=message.language, pages=chunk.page_spec, options=message.options,
                on_page=_count_pages(store, message.job_id),
            )
            add_page_images(s3, layout, result, path, limits or IntakeLimits())
            add_figures(s3, layout, result, path, limits or IntakeLimits())
            result["timings"].update(download=round(download_s, 4))
        except JobError as err:
            return _fail(store, message, JobError(err.code, f"{chunk.label}: {err.message}"))
        except Exception as err:
            logger.exception("Engine failed on %s of job %s", chunk.label, message.job_id)
            return _fail(store, message, JobError(ErrorCode.ENGINE_FAILED, f"{chunk.label}: OCR failed: {type(err).__name__}: {err}"))

        def write_pdf(merged: OcrResult) -> str | None:
            return write_requested_pdf(s3, layout, message, path, merged)

        outcome, result_uri = record_chunk_result(chunk, result, store=store, s3=s3, layout=layout, raw=raw,
                                                  write_pdf=write_pdf if wants_pdf(message) else None,
                                                  max_failed_percent=max_failed_percent,
                                                  formats=requested_formats(message.options))
    return ProcessResult(outcome, result_uri=result_uri)


def _fail(store: JobStore, message: JobMessage, error: JobError) -> ProcessResult:
    logger.warning("Job %s failed: %s", message.job_id, error)
    store.mark_failed(message.job_id, error, job=message.as_new_job())
    return ProcessResult("failed", error=error)
