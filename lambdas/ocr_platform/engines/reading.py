"""Reading a document with an engine: the one code path from a file on disk to result.json.

Both routes and the command line call it: the CPU processor (``ocr_platform.cpu.job_runner``), the GPU endpoint's
server (``ocr_platform.gpu.model_server``) and ``ocr-platform ocr``. It knows engines and the result schema, and
nothing of jobs, queues or AWS.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ocr_platform.core import defaults
from ocr_platform.core.page_failures import check_failed_share
from ocr_platform.core.results import OcrResult, build_result
from ocr_platform.engines import Engine


def ocr_document(
    path: Path,
    *,
    job_id: str,
    model: str,
    engine: Engine,
    language: str = defaults.LANGUAGE,
    pages: str | None = None,
    options: dict[str, Any] | None = None,
    on_page: Callable[[int, int], None] | None = None,
    max_failed_percent: int | None = None,
) -> tuple[OcrResult, Any]:
    """Run ``engine`` on a local file and build the result document; returns ``(result, raw_output)``.

    The one code path from a file to result.json, used by the processor, the endpoint and ``ocr-platform ocr``.
    Pages the engine could not read are left out and named in ``pages_failed``; with ``max_failed_percent``
    (a whole job; a chunk's share is the merge's to check), more of them than that share raises the job's
    ``JobError`` (``ocr_platform.core.page_failures.check_failed_share``).
    """
    from ocr_platform.engines.native_reading import native_result

    native = native_result(path, job_id=job_id, model=model, engine=engine, language=language, pages=pages, options=options, on_page=on_page)
    if native is not None:  # an Office or HTML file: its own text, its pictures read by the engine
        return native
    started = time.perf_counter()
    kwargs: dict[str, Any] = {"language": language, "pages": pages, "options": options or {}}
    if on_page is not None:
        kwargs["on_page"] = on_page
    output = engine.predict(path, **kwargs)
    timings = {**output.timings, "ocr": time.perf_counter() - started}
    result = build_result(job_id, model, output.engine or engine.info, output.pages, timings, output.warnings, output.pages_failed)
    if max_failed_percent is not None:
        check_failed_share(output.pages_failed, read=len(output.pages), max_percent=max_failed_percent)
    return result, output.raw


