"""Run one job on this machine: fetch the input, run the engine, publish result.json, finish the job.

This is what the CPU processor Lambda does for ``pp-ocrv5`` and ``pp-structurev3``. Every outcome ends the
job: a ``JobError`` (bad input, engine missing) and any other exception from the engine mark it FAILED
with a code; only a crash of the process itself (out of memory, timeout) escapes, and the processor's
on-failure destination finishes the job then.
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
from typing import Any, Literal

from botocore.exceptions import ClientError

from ocr_platform import defaults
from ocr_platform.engines import Engine
from ocr_platform.errors import ErrorCode, JobError
from ocr_platform.jobs import TERMINAL_STATUSES, JobStatus, JobStore
from ocr_platform.messages import JobMessage
from ocr_platform.results import OcrResult, build_result
from ocr_platform.s3_layout import S3Uri, StorageLayout, safe_file_name

logger = logging.getLogger(__name__)

Outcome = Literal["completed", "failed", "skipped"]


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


def ocr_document(
    path: Path,
    *,
    job_id: str,
    model: str,
    engine: Engine,
    language: str = "en",
    pages: str | None = None,
    options: dict[str, Any] | None = None,
    on_page: Callable[[int, int], None] | None = None,
) -> tuple[OcrResult, Any]:
    """Run ``engine`` on a local file and build the result document; returns ``(result, raw_output)``.

    The one code path from a file to result.json, used by the processor, the endpoint and ``ocr-platform ocr``.
    """
    started = time.perf_counter()
    kwargs: dict[str, Any] = {"language": language, "pages": pages, "options": options or {}}
    if on_page is not None:
        kwargs["on_page"] = on_page
    output = engine.predict(path, **kwargs)
    timings = {**output.timings, "ocr": time.perf_counter() - started}
    result = build_result(job_id, model, output.engine or engine.info, output.pages, timings, output.warnings)
    return result, output.raw


def publish_result(s3: Any, layout: StorageLayout, result: OcrResult, raw: Any = None) -> str:
    """Write result.json (and raw.json when the engine gave raw output); return the result URI."""
    job_id = result["job_id"]
    if raw is not None:
        s3.put_object(
            Bucket=layout.bucket,
            Key=layout.raw_result_key(job_id),
            Body=json.dumps(raw, ensure_ascii=False, default=str).encode(),
            ContentType="application/json",
        )
    s3.put_object(
        Bucket=layout.bucket,
        Key=layout.result_key(job_id),
        Body=json.dumps(result, ensure_ascii=False).encode(),
        ContentType="application/json",
    )
    return layout.result_uri(job_id)


def process_job(
    message: JobMessage,
    *,
    store: JobStore,
    s3: Any,
    layout: StorageLayout,
    engine_for: Callable[[str], Engine],
    attempt_id: str | None = None,
    lease_seconds: float = defaults.PROCESSOR_TIMEOUT_SECONDS,
) -> ProcessResult:
    """Process ``message`` end to end and leave the job COMPLETED or FAILED.

    The run is claimed first (``JobStore.claim_step("run")``) as ``attempt_id`` for ``lease_seconds``
    (the processor passes its request id and the time its invocation has left). A job that is already
    terminal, or whose run another live invocation holds (Lambda delivered the async event twice), is
    skipped without touching it.
    """
    job = store.get(message.job_id)
    if job and job.get("status") in TERMINAL_STATUSES:
        logger.warning("Job %s is already %s; not processing it again", message.job_id, job["status"])
        return ProcessResult("skipped")
    if not job or job.get("status") == JobStatus.QUEUED:
        store.mark_processing(message.job_id, "lambda", job=message.as_new_job())
    claim = store.claim_step(message.job_id, "run", attempt_id=attempt_id or uuid.uuid4().hex, lease_seconds=lease_seconds)
    if not claim.acquired:
        current = claim.job or {}
        logger.warning("Job %s is %s and its run is held by %s; not processing it again", message.job_id,
                       current.get("status"), current.get("run_attempt"))
        return ProcessResult("skipped")

    started = time.perf_counter()
    try:
        engine = engine_for(message.model)
        with tempfile.TemporaryDirectory(prefix=f"ocr-{message.job_id}-") as tmp:
            path = download_input(s3, message.input, Path(tmp))
            download_s = time.perf_counter() - started
            result, raw = ocr_document(
                path, job_id=message.job_id, model=message.model, engine=engine,
                language=message.language, pages=message.pages, options=message.options,
            )
        result["timings"].update(download=round(download_s, 4), total=round(time.perf_counter() - started, 4))
        result_uri = publish_result(s3, layout, result, raw)
    except JobError as err:
        return _fail(store, message, err)
    except Exception as err:
        logger.exception("Engine failed on job %s", message.job_id)
        return _fail(store, message, JobError(ErrorCode.ENGINE_FAILED, f"OCR failed: {type(err).__name__}: {err}"))

    if store.mark_completed(
        message.job_id, result_uri=result_uri, page_count=result["page_count"], warnings=result["warnings"]
    ):
        return ProcessResult("completed", result_uri=result_uri)
    return ProcessResult("skipped", result_uri=result_uri)


def _fail(store: JobStore, message: JobMessage, error: JobError) -> ProcessResult:
    logger.warning("Job %s failed: %s", message.job_id, error)
    store.mark_failed(message.job_id, error, job=message.as_new_job())
    return ProcessResult("failed", error=error)
