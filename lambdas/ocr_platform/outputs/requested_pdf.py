"""The searchable result.pdf a job asks for (``outputs: ["pdf"]``), written where its document is on disk.

The CPU processor writes and uploads it (:func:`write_requested_pdf`, from ``ocr_platform.cpu.job_runner``); the GPU
endpoint, which stores nothing itself, writes it (:func:`write_local_pdf`) and puts it in its answer
(``ocr_platform.gpu.model_server``). The PDF itself is ``ocr_platform.outputs.searchable_pdf``'s.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ocr_platform.core.results import OUTPUT_UNAVAILABLE, OcrResult
from ocr_platform.core.s3_layout import StorageLayout
from ocr_platform.jobs.messages import JobMessage
from ocr_platform.outputs.result_store import publish_searchable_pdf


def wants_pdf(message: JobMessage) -> bool:
    """Whether the job asked for a searchable result.pdf (``outputs: ["pdf"]``)."""
    return "pdf" in (message.options.get("outputs") or [])


def write_requested_pdf(s3: Any, layout: StorageLayout, message: JobMessage, path: Path, result: OcrResult) -> str | None:
    """Write and upload result.pdf when the job asked for it (``outputs: ["pdf"]``); its URI, else ``None``.

    ``path`` is the whole document; ``result`` the job's whole result (a split job's merged one), given its
    ``pdf`` timing. Used by the processor (``job_runner``: an unsplit job, the chunk that merges a split one).
    """
    target = write_local_pdf(message, path, result)
    return None if target is None else publish_searchable_pdf(s3, layout, message.job_id, target)


def write_local_pdf(message: JobMessage, path: Path, result: OcrResult) -> Path | None:
    """Write result.pdf beside the document when the job asked for it, timed as ``result``'s ``pdf``; its path,
    else ``None``. The endpoint answers with it; the processor uploads it (:func:`write_requested_pdf`)."""
    if not wants_pdf(message):
        return None
    if result.get("document_type"):  # an Office or HTML file read from its content: no page images to lay text over
        kind = str(result.get("document_type")).upper()
        result["warnings"].append({
            "code": OUTPUT_UNAVAILABLE, "requested": "result.pdf", "ran": "result.json",
            "reason": f"A {kind} file is read from its own content, without page images for a searchable PDF's pages.",
            "message": f"result.pdf is not written for a {kind} file; its text, Markdown and tables are in result.json.",
        })
        return None
    from ocr_platform.outputs.searchable_pdf import write_searchable_pdf

    writing = time.perf_counter()
    output = path.parent / "searchable"  # apart from the input, whatever the input is called
    output.mkdir(exist_ok=True)
    target = write_searchable_pdf(path, result, output / "result.pdf")
    result["timings"]["pdf"] = round(time.perf_counter() - writing, 4)
    return target
