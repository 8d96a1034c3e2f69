"""The ink on a PDF page that its text layer does not account for: what ``text_layer: auto`` sends to OCR.

An ink mask of the render (pixels darker than ``INK_LEVEL``) minus the layer's line boxes, each grown by
``BOX_MARGIN`` of its height, leaves the ink the layer lacks. Its connected components are filtered:

- specks (under ``MIN_COMPONENT_PIXELS``) and rules (``RULE_ASPECT`` times longer than thick, thinner than a
  third of a line) are dropped;
- frames (larger than ``FRAME_SIZE`` line heights each way, filling less than ``FRAME_FILL`` of their box) are
  dropped, and so are solid shapes (more than a line height each way, filling ``SOLID_FILL`` of their box: a
  coloured band or button behind light text, a photograph), which are no character's ink;
- of the rest, only components the size and weight of a character count as text (``_is_glyph``: not a tick
  under ``MIN_GLYPH`` line heights, not a drawn stroke thinner than ``STROKE_POINTS``).

What remains is grown into regions; a region with fewer than ``MIN_REGION_CHARS`` character-like components
(arrows, brackets, ticks) is not text. Each region is snapped to ``REGION_GRID`` so that the same logo gives
the same crop on every page. The layer's share of the page's text ink (its coverage) counts the
character-like components. ``painted_out`` gives the page with the layer's lines painted white, so that OCR
of a region reads only what the layer lacks.

Plain image arithmetic (NumPy and OpenCV) with no OCR in it; ``engines.text_layer_choice`` decides with it.
"""

from __future__ import annotations

from ocr_platform.document.intake import PageImage
from ocr_platform.document.text_layer import LayerLine

#: A region of a page, in pixels: ``(x0, y0, x1, y1)``.
Box = tuple[int, int, int, int]

#: Gray level (0 black .. 255 white) below which a pixel is ink.
INK_LEVEL = 160
#: A layer line covers its box grown by this many line heights on every side (antialiasing, ascenders).
BOX_MARGIN = 0.3
#: Uncovered ink is text only in components of at least this many pixels (smaller ones are specks).
MIN_COMPONENT_PIXELS = 12
#: A component this many times longer than thick, and thinner than a third of a text line, is a rule.
RULE_ASPECT = 8.0
#: A component larger than this many line heights both ways ...
FRAME_SIZE = 3.0
#: ... that fills less than this share of its box is a frame: graphics, not text.
FRAME_FILL = 0.15
#: A component more than a line height each way that fills this share of its box is a solid shape, not a glyph.
SOLID_FILL = 0.6
#: A component shorter than this many line heights is a dot or a tick, not a character on its own.
MIN_GLYPH = 0.4
#: A long component thinner than this on average (PDF points; pixels = points x scale) is a drawn stroke.
STROKE_POINTS = 2.0
#: A region is read only with at least this many character-like components, and an OCR line read there is kept
#: only with this many letters or digits (a bracket read as "K", an arrowhead as "V").
MIN_REGION_CHARS = 2
#: Regions are grown out to multiples of this many pixels (``_snapped``).
REGION_GRID = 16
#: The line height assumed where the layer has no lines to measure (pixels).
DEFAULT_LINE_HEIGHT = 24.0


def uncovered_regions(image: PageImage, lines: list[LayerLine]) -> tuple[list[Box], float]:
    """Boxes around the text ink no layer line covers, and the layer's share of the page's text ink."""
    import cv2
    import numpy as np

    ink = np.asarray(image.image.convert("L")) < INK_LEVEL
    covered = np.zeros(ink.shape, dtype=np.uint8)
    for line in lines:
        x0, y0, x1, y1 = _covering_box(line)
        covered[max(0, int(y0)) : int(y1) + 1, max(0, int(x0)) : int(x1) + 1] = 1
    covered_ink = int(np.count_nonzero(ink & covered.astype(bool)))
    uncovered = (ink & ~covered.astype(bool)).astype(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(uncovered, connectivity=8)
    line_height = median_height(lines)
    text = np.zeros(ink.shape, dtype=np.uint8)
    text_ink = 0
    glyph_centres = []
    for label in range(1, count):
        x, y, w, h, area = (int(v) for v in stats[label])
        if area < MIN_COMPONENT_PIXELS or _is_rule(w, h, line_height) or _is_frame(w, h, area, line_height) or _is_solid(w, h, area, line_height):
            continue
        text[y : y + h, x : x + w][labels[y : y + h, x : x + w] == label] = 1
        if _is_glyph(w, h, area, line_height, image.scale):
            glyph_centres.append((y + h // 2, x + w // 2))
            text_ink += area
    coverage = covered_ink / (covered_ink + text_ink) if covered_ink + text_ink else 1.0
    if not glyph_centres:
        return [], coverage
    reach = max(3, int(line_height * 0.8))
    grown = cv2.dilate(text, cv2.getStructuringElement(cv2.MORPH_RECT, (2 * reach + 1, reach + 1)))
    count, grown_labels, stats, _ = cv2.connectedComponentsWithStats(grown, connectivity=8)
    glyphs_in: dict[int, int] = {}
    for y, x in glyph_centres:
        label = int(grown_labels[y, x])
        glyphs_in[label] = glyphs_in.get(label, 0) + 1
    regions = []
    for label in sorted(label for label, glyphs in glyphs_in.items() if label and glyphs >= MIN_REGION_CHARS):
        x, y, w, h, _ = (int(v) for v in stats[label])
        regions.append(_snapped((x, y, x + w, y + h), image.width, image.height))
    return regions, coverage


def _is_glyph(width: int, height: int, area: int, line_height: float, scale: float) -> bool:
    """Whether a component can be a character: not a tick or dot (under ``MIN_GLYPH`` line heights), not a
    stroke of a drawing (longer than a line height and on average thinner than ``STROKE_POINTS``: arrows,
    brackets, connectors). A region of a diagram with no such component holds no text to read."""
    longest = max(width, height)
    if longest < MIN_GLYPH * line_height:
        return False
    return not (longest > line_height and area / longest < STROKE_POINTS * scale)


def _snapped(box: Box, width: int, height: int) -> Box:
    """``box`` grown out to the ``REGION_GRID``: the same logo on every page then gives the same crop (and cache key)
    although antialiasing at a layer line's edge moves its ink box by a pixel or two.

    >>> _snapped((22, 27, 377, 153), 1000, 1000), _snapped((24, 28, 375, 152), 1000, 1000)
    ((16, 16, 384, 160), (16, 16, 384, 160))
    """
    x0, y0, x1, y1 = box
    grid = REGION_GRID
    return (x0 // grid * grid, y0 // grid * grid, min(width, -(-x1 // grid) * grid), min(height, -(-y1 // grid) * grid))


def _is_frame(width: int, height: int, area: int, line_height: float) -> bool:
    big = min(width, height) > FRAME_SIZE * line_height
    return big and area < FRAME_FILL * width * height


def _is_solid(width: int, height: int, area: int, line_height: float) -> bool:
    """A filled shape larger than a line each way (no glyph fills its box that far: a band, a button, a photo).

    >>> _is_solid(1500, 280, 360_000, 24.0), _is_solid(30, 30, 400, 24.0)
    (True, False)
    """
    return min(width, height) > line_height and area >= SOLID_FILL * width * height


def painted_out(image: PageImage, lines: list[LayerLine]) -> PageImage:
    """A copy of the page with the layer's lines (their boxes grown by ``BOX_MARGIN``) painted white."""
    from PIL import ImageDraw

    copy = image.image.copy()
    draw = ImageDraw.Draw(copy)
    for line in lines:
        draw.rectangle(_covering_box(line), fill="white")
    return PageImage(page=image.page, image=copy, scale=image.scale)


def median_height(lines: list[LayerLine]) -> float:
    """The median height of the layer's lines (``DEFAULT_LINE_HEIGHT`` without any)."""
    import statistics

    return statistics.median(line.height for line in lines) if lines else DEFAULT_LINE_HEIGHT


def _is_rule(width: int, height: int, line_height: float) -> bool:
    thick, long = min(width, height), max(width, height)
    return long >= RULE_ASPECT * thick and thick < line_height / 3


def _covering_box(line: LayerLine) -> tuple[float, float, float, float]:
    """The pixels a layer line accounts for: its box grown by ``BOX_MARGIN`` of its height on every side."""
    x0, y0, x1, y1 = line.box
    margin = BOX_MARGIN * min(x1 - x0, y1 - y0)
    return x0 - margin, y0 - margin, x1 + margin, y1 + margin
