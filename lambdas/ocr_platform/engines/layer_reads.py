"""What the page's ink says where a PDF text layer's lines lie, for ``engines.text_layer_choice``: the lines' crops
recognised by a page engine's recogniser, or a layout engine's own reading of the page at the same place.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from typing import Any

from ocr_platform.document.intake import PageImage
from ocr_platform.document.text_layer import LayerLine
from ocr_platform.engines.conversion import PageContent
from ocr_platform.engines.layer_lines import has_ink
from ocr_platform.engines.regions import line_bbox, overlap_area

#: Recognises line crops (BGR arrays): ``(text, score)`` per crop.
Recognize = Callable[[Sequence[Any]], list[tuple[str, float]]]
#: What was read where each sampled layer line lies (``None`` where nothing could be).
ReadSample = Callable[[list[LayerLine]], list[str | None]]
#: Recognises layer lines from the page image: ``(text, score)`` per line that lies on the page.
ConfidentReads = Callable[[list[LayerLine]], list[tuple[str, float]]]


def recognized_sample(image: PageImage, recognize: Recognize) -> ReadSample:
    """Reads sampled layer lines from the page image with ``recognize``: ``None`` where there is no ink, or nothing
    legible in it (no letter or digit read: type too small or too faint for the recogniser judges nothing)."""

    def read(lines: list[LayerLine]) -> list[str | None]:
        crops = [crop if crop is not None and has_ink(crop) else None for crop in (line_crop(image, line) for line in lines)]
        texts = iter(recognize([crop for crop in crops if crop is not None]) if any(crop is not None for crop in crops) else [])
        reads = [next(texts)[0] if crop is not None else None for crop in crops]
        return [read if read is not None and any(ch.isalnum() for ch in read) else None for read in reads]

    return read

def confident_reads(image: PageImage, recognize: Recognize) -> ConfidentReads:
    """Recognises lines with ``recognize``: ``(text, score)`` each, for ``_false_script``."""

    def read(lines: list[LayerLine]) -> list[tuple[str, float]]:
        crops = [line_crop(image, line) for line in lines]
        texts = iter(recognize([crop for crop in crops if crop is not None]) if any(crop is not None for crop in crops) else [])
        return [next(texts) if crop is not None else ("", 0.0) for crop in crops]

    return read


def read_by_engine(content: PageContent) -> ReadSample:
    """What a layout engine read where each sampled layer line lies: its lines over the line's box, else the text
    of the block holding it, narrowed to the stretch that best matches the line."""

    def read(lines: list[LayerLine]) -> list[str | None]:
        texts: list[str | None] = []
        for line in lines:
            over = [ocr["text"] for ocr in content.get("lines", []) if overlap_area(line_bbox(ocr), line.box) > 0]
            if over:
                texts.append(" ".join(over))
                continue
            holders = [block.get("text", "") for block in content.get("blocks", []) if "bbox" in block and centre_in(line.box, block["bbox"])]
            texts.append(_best_stretch(" ".join(holders), line.text) if holders else None)
        return texts

    return read


def _best_stretch(text: str, wanted: str) -> str:
    """The stretch of ``text`` (as long as ``wanted``) that ``wanted`` matches best.

    >>> _best_stretch("Invoice 2026 Total due: 1,234.56 EUR", "Total due: 1,234.56")
    'Total due: 1,234.56'
    """
    match = difflib.SequenceMatcher(None, text, wanted, autojunk=False).find_longest_match(0, len(text), 0, len(wanted))
    begin = max(0, match.a - match.b)
    return text[begin : begin + len(wanted)]


def centre_in(box: tuple[float, float, float, float], bbox: list[float]) -> bool:
    x, y = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return bbox[0] <= x <= bbox[2] and bbox[1] <= y <= bbox[3]


def line_crop(image: PageImage, line: LayerLine) -> Any | None:
    """The line's pixels as a BGR array, upright (a turned line is turned back), or ``None`` off the page."""
    import numpy as np

    x0, y0, x1, y1 = line.box
    pad = 0.15 * min(x1 - x0, y1 - y0)
    box = (max(0, int(x0 - pad)), max(0, int(y0 - pad)), min(image.width, int(x1 + pad + 1)), min(image.height, int(y1 + pad + 1)))
    if box[2] - box[0] < 2 or box[3] - box[1] < 2:
        return None
    crop = image.image.crop(box)
    (ax, ay), (bx, by) = line.polygon[0], line.polygon[1]
    if abs(by - ay) > abs(bx - ax):  # text runs down or up the page
        crop = crop.rotate(90 if by > ay else -90, expand=True)
    elif bx < ax:
        crop = crop.rotate(180)
    return np.ascontiguousarray(np.asarray(crop)[:, :, ::-1])
