"""Whether to believe a page's text layer, decided against the page image, and what to OCR beside it.

``text_layer: auto`` reads a PDF page's own text where it is real and recognises only what it lacks.
"Real" is measured, not trusted (``TextLayerChoice.read``):

1. **Readable.** A layer with more than ``MAX_UNMAPPED_SHARE`` of characters that map to no Unicode value
   (a font without a character map) is not used.
2. **Truthful.** A sample of the layer's lines is recognised from the image and compared with what the
   layer says (``agreement``). A visible layer can only be wrong through a font's character map, so each
   font is checked once per document (``verified_fonts``); a hidden layer (an invisible render mode or text
   under a page-sized image: an earlier OCR) is checked on every page, with ``HIDDEN_SAMPLE`` lines. A
   sample that agrees less than ``MIN_AGREEMENT`` rejects the page's layer.
3. **Complete.** An ink mask of the render (pixels darker than ``INK_LEVEL``) minus the layer's line
   boxes (grown by ``BOX_MARGIN`` line heights) leaves the ink the layer lacks. Specks and rules (thin,
   long strokes) are dropped; what remains is grouped into regions, and only those regions are read by
   OCR (``read_region``, the engine's own page reader on a crop). A layer that covers less than
   ``MIN_COVERAGE`` of the page's text ink is not used.

A rejected layer gives no content, and the caller OCRs the whole page, exactly as ``text_layer: ignore``
would. Otherwise the page's lines are the layer's lines plus the OCR lines of the regions, and its
``text_source`` is ``text_layer`` or ``mixed``. A region that repeats on every page (a letterhead, a
logo) is read once per document: regions are snapped to a grid and keyed by a digest of their pixels.
"""

from __future__ import annotations

import difflib
import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ocr_platform.engines.conversion import PageContent
from ocr_platform.intake import PageImage
from ocr_platform.results import Line
from ocr_platform.text_layer import LayerLine, TextLayer

TextSource = Literal["text_layer", "ocr", "mixed"]
#: Reads one page image (a region of a page) and returns its content in that image's pixels.
ReadRegion = Callable[[PageImage], PageContent]
#: Recognises line crops (BGR arrays) and returns their text, one per crop.
Recognize = Callable[[Sequence[Any]], list[str]]

#: Share of a layer's characters that may lack a Unicode mapping before the layer is not used.
MAX_UNMAPPED_SHARE = 0.02
#: Lines of a hidden layer recognised per page.
HIDDEN_SAMPLE = 3
#: Agreement (0..1, ``agreement``) below which a sampled line says the layer is wrong.
MIN_AGREEMENT = 0.7
#: A sampled line has at least this many letters or digits (symbol fonts are not sampled).
MIN_SAMPLE_CHARS = 4
#: A sampled line of a visible layer has at most this many characters (recognition cost grows with length).
MAX_SAMPLE_CHARS = 40
#: Gray level (0 black .. 255 white) below which a pixel is ink.
INK_LEVEL = 160
#: A layer line covers its box grown by this many line heights on every side (antialiasing, ascenders).
BOX_MARGIN = 0.3
#: Uncovered ink is text only in components of at least this many pixels (smaller ones are specks).
MIN_COMPONENT_PIXELS = 12
#: A component this many times longer than thick, and thinner than a third of a text line, is a rule.
RULE_ASPECT = 8.0
#: The layer's share of the page's text ink below which the layer is not used (it covers too little).
MIN_COVERAGE = 0.25
#: OCR lines from regions scoring below this are dropped (a region may be a picture, not text).
MIN_REGION_SCORE = 0.6
#: Regions are grown out to multiples of this many pixels (``_snapped``).
REGION_GRID = 16
#: The line height assumed where the layer has no lines to measure (pixels).
DEFAULT_LINE_HEIGHT = 24.0


@dataclass
class LayerReading:
    """One page read with its text layer.

    Attributes:
        content: the page's lines (layer lines first in their order, region lines placed by position);
            ``None`` when the layer is not used and the whole page is to be read by OCR.
        source: ``text_layer`` (every line from the layer), ``mixed`` (some from OCR of regions) or
            ``ocr`` (the layer is not used).
        raw: what was decided and why, for raw.json (``reason`` when the layer is not used).
    """

    content: PageContent | None
    source: TextSource
    raw: dict[str, Any]


@dataclass
class TextLayerChoice:
    """The per-document state of ``text_layer: auto`` (see the module docstring).

    Args:
        recognize: recognises line crops, for the truthfulness sample.

    Attributes:
        verified_fonts: fonts of a visible layer whose sample agreed with the image.
        timings: ``layer_check`` (sample recognition and ink test) and ``layer_ocr`` (regions) in seconds.
    """

    recognize: Recognize
    verified_fonts: set[str] = field(default_factory=set)
    timings: dict[str, float] = field(default_factory=lambda: {"layer_check": 0.0, "layer_ocr": 0.0})
    _regions: dict[str, list[Line]] = field(default_factory=dict)

    def read(self, image: PageImage, layer: TextLayer, read_region: ReadRegion) -> LayerReading:
        """The page read from its layer plus OCR of what the layer lacks, or why the layer is not used."""
        started = time.perf_counter()
        try:
            verdict = self._judge(image, layer)
            if isinstance(verdict, str):
                return _rejected(verdict)
            regions, coverage = verdict
        finally:
            self.timings["layer_check"] += time.perf_counter() - started
        if coverage < MIN_COVERAGE:
            return _rejected(f"the layer covers {coverage:.0%} of the page's text")
        reading = time.perf_counter()
        region_lines = [line for box in regions for line in self._read_region(image, box, read_region)]
        region_lines = [line for line in region_lines if not _repeats_layer(line, layer.lines)]
        self.timings["layer_ocr"] += time.perf_counter() - reading
        lines = _in_reading_order([_as_line(line) for line in layer.lines], region_lines)
        source: TextSource = "mixed" if region_lines else "text_layer"
        raw = {"source": source, "layer_lines": len(layer.lines), "ocr_regions": [list(box) for box in regions], "coverage": round(coverage, 4)}
        return LayerReading(content={"lines": lines}, source=source, raw=raw)

    def _judge(self, image: PageImage, layer: TextLayer) -> str | tuple[list[tuple[int, int, int, int]], float]:
        """A reason not to use the layer, or the regions it lacks and its share of the page's text ink."""
        if layer.empty:
            return "the page has no text layer"
        if layer.unmapped_share > MAX_UNMAPPED_SHARE:
            return f"{layer.unmapped_share:.0%} of the layer's characters have no Unicode mapping"
        disagreement = self._disagreement(image, layer)
        if disagreement:
            return disagreement
        return _uncovered_regions(image, layer.lines)

    def _disagreement(self, image: PageImage, layer: TextLayer) -> str | None:
        sample = _hidden_sample(layer.lines) if layer.hidden else _font_sample(layer.lines, self.verified_fonts)
        if not sample:
            return None
        crops = [_crop(image, line) for line in sample]
        texts = self.recognize([crop for crop in crops if crop is not None])
        read = iter(texts)
        for line, crop in zip(sample, crops, strict=True):
            score = agreement(next(read), line.text) if crop is not None else 0.0
            if score < MIN_AGREEMENT:
                return f"the layer says {line.text!r} where the page reads otherwise (agreement {score:.2f})"
        if not layer.hidden:
            self.verified_fonts.update(line.font for line in sample)
        return None

    def _read_region(self, image: PageImage, box: tuple[int, int, int, int], read_region: ReadRegion) -> list[Line]:
        x0, y0, x1, y1 = box
        crop = image.image.crop(box)
        key = hashlib.blake2b(crop.tobytes(), digest_size=16).hexdigest() + f"{crop.width}x{crop.height}"
        if key not in self._regions:
            content = read_region(PageImage(page=image.page, image=crop, scale=image.scale))
            self._regions[key] = [line for line in content.get("lines", []) if line["score"] >= MIN_REGION_SCORE and line["text"].strip()]
        return [{**line, "polygon": [[round(x + x0, 1), round(y + y0, 1)] for x, y in line["polygon"]]} for line in self._regions[key]]


def agreement(read: str, layer: str) -> float:
    """How closely recognised text matches the layer's (0..1), ignoring spaces and case.

    >>> agreement("Total due: 1,234.56", "Total due: 1,234.56")
    1.0
    >>> agreement("Invoice 2026", "Shipping address") < 0.3
    True
    """
    a = "".join(read.split()).casefold()
    b = "".join(layer.split()).casefold()
    if not a and not b:
        return 1.0
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def _rejected(reason: str) -> LayerReading:
    return LayerReading(content=None, source="ocr", raw={"source": "ocr", "reason": reason})


def _sampleable(line: LayerLine) -> bool:
    return sum(ch.isalnum() for ch in line.text) >= MIN_SAMPLE_CHARS


def _hidden_sample(lines: list[LayerLine]) -> list[LayerLine]:
    return sorted((line for line in lines if _sampleable(line)), key=lambda line: -len(line.text))[:HIDDEN_SAMPLE]


def _font_sample(lines: list[LayerLine], verified: set[str]) -> list[LayerLine]:
    """One line per font not yet verified: its longest line of at most ``MAX_SAMPLE_CHARS`` characters (else its shortest)."""
    by_font: dict[str, list[LayerLine]] = {}
    for line in lines:
        if line.font not in verified and _sampleable(line):
            by_font.setdefault(line.font, []).append(line)
    sample = []
    for candidates in by_font.values():
        short = [line for line in candidates if len(line.text) <= MAX_SAMPLE_CHARS]
        sample.append(max(short, key=lambda line: len(line.text)) if short else min(candidates, key=lambda line: len(line.text)))
    return sample


def _crop(image: PageImage, line: LayerLine) -> Any | None:
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


def _uncovered_regions(image: PageImage, lines: list[LayerLine]) -> tuple[list[tuple[int, int, int, int]], float]:
    """Boxes around the text ink no layer line covers, and the layer's share of the page's text ink."""
    import cv2
    import numpy as np

    ink = np.asarray(image.image.convert("L")) < INK_LEVEL
    covered = np.zeros(ink.shape, dtype=np.uint8)
    heights = [line.height for line in lines] or [DEFAULT_LINE_HEIGHT]
    for line in lines:
        x0, y0, x1, y1 = line.box
        margin = BOX_MARGIN * min(x1 - x0, y1 - y0)
        covered[max(0, int(y0 - margin)) : int(y1 + margin) + 1, max(0, int(x0 - margin)) : int(x1 + margin) + 1] = 1
    covered_ink = int(np.count_nonzero(ink & covered.astype(bool)))
    uncovered = (ink & ~covered.astype(bool)).astype(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(uncovered, connectivity=8)
    line_height = float(np.median(heights))
    text = np.zeros(ink.shape, dtype=np.uint8)
    text_ink = 0
    for label in range(1, count):
        x, y, w, h, area = (int(v) for v in stats[label])
        if area < MIN_COMPONENT_PIXELS or _is_rule(w, h, line_height):
            continue
        text[y : y + h, x : x + w][labels[y : y + h, x : x + w] == label] = 1
        text_ink += area
    coverage = covered_ink / (covered_ink + text_ink) if covered_ink + text_ink else 1.0
    if not text_ink:
        return [], coverage
    reach = max(3, int(line_height * 0.8))
    grown = cv2.dilate(text, cv2.getStructuringElement(cv2.MORPH_RECT, (2 * reach + 1, reach + 1)))
    count, _, stats, _ = cv2.connectedComponentsWithStats(grown, connectivity=8)
    regions = []
    for label in range(1, count):
        x, y, w, h, _ = (int(v) for v in stats[label])
        regions.append(_snapped((x, y, x + w, y + h), image.width, image.height))
    return regions, coverage


def _snapped(box: tuple[int, int, int, int], width: int, height: int) -> tuple[int, int, int, int]:
    """``box`` grown out to the ``REGION_GRID``: the same logo on every page then gives the same crop (and cache key)
    although antialiasing at a layer line's edge moves its ink box by a pixel or two.

    >>> _snapped((22, 27, 377, 153), 1000, 1000), _snapped((24, 28, 375, 152), 1000, 1000)
    ((16, 16, 384, 160), (16, 16, 384, 160))
    """
    x0, y0, x1, y1 = box
    grid = REGION_GRID
    return (x0 // grid * grid, y0 // grid * grid, min(width, -(-x1 // grid) * grid), min(height, -(-y1 // grid) * grid))


def _is_rule(width: int, height: int, line_height: float) -> bool:
    thick, long = min(width, height), max(width, height)
    return long >= RULE_ASPECT * thick and thick < line_height / 3


def _as_line(line: LayerLine) -> Line:
    return {"text": line.text, "polygon": [list(point) for point in line.polygon], "score": 1.0}


def _box(polygon: list[list[float]]) -> tuple[float, float, float, float]:
    xs, ys = [p[0] for p in polygon], [p[1] for p in polygon]
    return min(xs), min(ys), max(xs), max(ys)


def _repeats_layer(line: Line, layer_lines: list[LayerLine]) -> bool:
    """An OCR line mostly inside a layer line's box reads ink the layer already has (a bold stroke past its box)."""
    x0, y0, x1, y1 = _box(line["polygon"])
    area = max((x1 - x0) * (y1 - y0), 1e-6)
    for other in layer_lines:
        a0, b0, a1, b1 = other.box
        overlap = max(0.0, min(x1, a1) - max(x0, a0)) * max(0.0, min(y1, b1) - max(y0, b0))
        if overlap / area > 0.5:
            return True
    return False


def _in_reading_order(layer_lines: list[Line], region_lines: list[Line]) -> list[Line]:
    """The layer's lines in their own order, each region line placed before the first layer line below it."""
    lines = list(layer_lines)
    for line in sorted(region_lines, key=lambda line: _box(line["polygon"])[1]):
        top = _box(line["polygon"])[1]
        at = next((i for i, other in enumerate(lines) if _box(other["polygon"])[1] > top), len(lines))
        lines.insert(at, line)
    return lines
