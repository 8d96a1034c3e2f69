"""Page images beside the result: each page as submitted, so a viewer can draw the OCR over it without a
PDF library of its own.

``results/{job_id}/pages/{page:05d}.jpg``: the page rendered by intake exactly as for the engine (same
scale and pixel budget), before any orientation turn, so the result's polygons and boxes, which are on
the page as submitted, are in its pixels. JPEG at quality 80: a dense
A4 page at 144 DPI is about 320 KiB and takes 32 ms to render and encode again (measured on 10 pages of a
two-column guideline), about 1.5 % of its OCR.

The CPU processor stores them itself (:func:`add_page_images`); the GPU endpoint, which makes no AWS call, puts
them in its answer (:func:`page_images_of`) and the completion function stores them at the same keys.
"""

from __future__ import annotations

import io
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ocr_platform.core.chunks import page_ranges
from ocr_platform.core.results import OcrResult
from ocr_platform.core.s3_layout import StorageLayout
from ocr_platform.document.intake import IntakeLimits, open_document

JPEG_QUALITY = 80


def render_page_images(path: Path, *, pages: Sequence[int], limits: IntakeLimits) -> Iterator[tuple[int, bytes]]:
    """Render ``pages`` of the document at ``path``: each page and its JPEG, in page order."""
    with open_document(path, pages=page_ranges(sorted(pages)), limits=limits) as document:
        for image in document.pages():
            buffer = io.BytesIO()
            image.image.convert("RGB").save(buffer, "JPEG", quality=JPEG_QUALITY, optimize=True)
            yield image.page, buffer.getvalue()


def store_page_images(
    s3: Any, layout: StorageLayout, job_id: str, path: Path, *, pages: Sequence[int], limits: IntakeLimits
) -> list[str]:
    """Render ``pages`` of the document at ``path`` and write each as a JPEG beside the job's result; returns
    the keys written."""
    keys = []
    for page, image in render_page_images(path, pages=pages, limits=limits):
        key = layout.page_image_key(job_id, page)
        s3.put_object(Bucket=layout.bucket, Key=key, Body=image, ContentType="image/jpeg")
        keys.append(key)
    return keys


def add_page_images(s3: Any, layout: StorageLayout, result: OcrResult, path: Path, limits: IntakeLimits) -> None:
    """Store the images of ``result``'s pages beside it, and time that as ``result``'s ``page_images``."""
    started = time.perf_counter()
    # A file read from its own content has no page to render (its pages have width 0; an email's attachment pages
    # come from the attachment, not from this file).
    pages = [] if result.get("document_type") else [page["page"] for page in result["pages"] if page["width"]]
    if pages:
        store_page_images(s3, layout, result["job_id"], path, pages=pages, limits=limits)
    result["timings"]["page_images"] = round(time.perf_counter() - started, 4)


def page_images_of(result: OcrResult, path: Path, limits: IntakeLimits) -> dict[int, bytes]:
    """The images of ``result``'s pages, kept for the answer of a network-isolated endpoint (which stores nothing
    itself), timed as ``result``'s ``page_images``."""
    started = time.perf_counter()
    images = dict(render_page_images(path, pages=[page["page"] for page in result["pages"]], limits=limits))
    result["timings"]["page_images"] = round(time.perf_counter() - started, 4)
    return images
