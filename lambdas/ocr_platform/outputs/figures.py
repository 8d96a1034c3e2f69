"""Figures as pictures: each picture block's crop beside the result, as docling exports pictures.

``results/{job_id}/figures/{page:05d}-{n:02d}.png``: the block's ``bbox`` cut from the page rendered as for the
engine (same scale and pixel budget as ``ocr_platform.outputs.page_images``, before any orientation turn, so the
block's box is in its pixels), PNG, ``n`` counting the page's pictures in reading order from 1. The block gets
``image`` (the crop's path relative to the result folder) and keeps its text; the page's ``markdown`` links the
crop once, before the picture's text, where the engine did not already.

Pure: :func:`figures_of` returns the crops (bytes) and sets the blocks' ``image``; the CPU processor stores them
itself (:func:`add_figures`), the GPU endpoint puts them in its answer and the completion function stores them at
the same keys.
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ocr_platform.core.chunks import page_ranges
from ocr_platform.core.results import Block, OcrResult, Page
from ocr_platform.core.s3_layout import StorageLayout, figure_name
from ocr_platform.document.intake import IntakeLimits, open_document
from ocr_platform.engines.regions import FIGURE_LABELS, page_markdown


@dataclass(frozen=True)
class Figure:
    """One picture's crop: its page, its number on the page (from 1) and its PNG."""

    page: int
    number: int
    png: bytes

    @property
    def name(self) -> str:
        return figure_name(self.page, self.number)


def picture_blocks(page: Page) -> list[Block]:
    """The page's picture blocks (``figure``, ``image``, ``chart``) that have a box, in reading order."""
    return [b for b in page.get("blocks", []) if b.get("label") in FIGURE_LABELS and len(b.get("bbox") or []) >= 4]


def _crop_box(bbox: list[float], factor_x: float, factor_y: float, size: tuple[int, int]) -> tuple[int, int, int, int] | None:
    x0, y0, x1, y1 = (round(v * f) for v, f in zip(bbox[:4], (factor_x, factor_y, factor_x, factor_y), strict=True))
    x0, y0, x1, y1 = max(0, x0), max(0, y0), min(size[0], x1), min(size[1], y1)
    return (x0, y0, x1, y1) if x1 > x0 and y1 > y0 else None


def _render_crops(result: OcrResult, path: Path, limits: IntakeLimits) -> Iterator[tuple[Page, Block, Figure]]:
    pages = {page["page"]: page for page in result["pages"] if picture_blocks(page)}
    if not pages or result.get("document_type"):  # an email's attachment pages come from the attachment, not this file
        return
    with open_document(path, pages=page_ranges(sorted(pages)), limits=limits) as document:
        for rendered in document.pages():
            page = pages.get(rendered.page)
            if page is None:
                continue
            image = rendered.image
            factor_x = image.width / page["width"] if page.get("width") else 1.0
            factor_y = image.height / page["height"] if page.get("height") else 1.0
            number = 0
            for block in picture_blocks(page):
                box = _crop_box(block["bbox"], factor_x, factor_y, image.size)
                if box is None:
                    continue
                number += 1
                buffer = io.BytesIO()
                crop = image.crop(box)
                crop.convert("RGBA" if crop.mode in ("RGBA", "LA", "P") else "RGB").save(buffer, "PNG", optimize=True)
                yield page, block, Figure(rendered.page, number, buffer.getvalue())


def _without_image(block: Block) -> Block:
    plain = Block(**block)
    plain.pop("image", None)
    return plain


def _link(markdown: str, block: Block) -> str:
    """``markdown`` with the link to ``block``'s crop before the picture's text (at the end when its text is not
    found there); unchanged when it links it already."""
    image = block["image"]
    if f"]({image})" in markdown:
        return markdown
    link = f"![{block.get('label', 'figure')}]({image})"
    text = block.get("text", "").strip()
    at = markdown.find(text) if text else -1
    if at < 0:
        return f"{markdown}\n\n{link}" if markdown else link
    return f"{markdown[:at]}{link}\n\n{markdown[at:]}"


def figures_of(result: OcrResult, path: Path, limits: IntakeLimits, *, max_bytes: int | None = None) -> list[Figure]:
    """Crop ``result``'s pictures from the document at ``path``, set each block's ``image`` and link it from its
    page's ``markdown``; the crops, timed as ``result``'s ``figures``. A crop that would take the total past
    ``max_bytes`` is left out (its block gets no ``image``)."""
    started = time.perf_counter()
    figures: list[Figure] = []
    total = 0
    linked: dict[int, list[Block]] = {}
    for page, block, figure in _render_crops(result, path, limits):
        if max_bytes is not None and total + len(figure.png) > max_bytes:
            continue
        total += len(figure.png)
        figures.append(figure)
        linked.setdefault(id(page), []).append(block)
        block["image"] = figure.name
    for page in result["pages"]:
        blocks = linked.get(id(page))
        if not blocks or "markdown" not in page:
            continue
        markdown = page["markdown"]
        unlinked = [_without_image(b) if any(b is new for new in blocks) else b for b in page.get("blocks", [])]
        if markdown == page_markdown(unlinked):  # the engine's own Markdown of these blocks: written again, linked
            page["markdown"] = page_markdown(page.get("blocks", []))
        else:
            for block in blocks:
                markdown = _link(markdown, block)
            page["markdown"] = markdown
    if figures:
        result["timings"]["figures"] = round(time.perf_counter() - started, 4)
    return figures


def write_figures(result: OcrResult, path: Path, limits: IntakeLimits, write: Callable[[Figure], Any]) -> int:
    """Crop ``result``'s pictures (:func:`figures_of`) and hand each to ``write``; how many."""
    figures = figures_of(result, path, limits)
    for figure in figures:
        write(figure)
    return len(figures)


def add_figures(s3: Any, layout: StorageLayout, result: OcrResult, path: Path, limits: IntakeLimits) -> list[str]:
    """Store the crops of ``result``'s pictures beside it (``results/{job_id}/figures/``); the keys written."""
    keys: list[str] = []

    def put(figure: Figure) -> None:
        key = layout.figure_key(result["job_id"], figure.page, figure.number)
        s3.put_object(Bucket=layout.bucket, Key=key, Body=figure.png, ContentType="image/png")
        keys.append(key)

    write_figures(result, path, limits, put)
    return keys
