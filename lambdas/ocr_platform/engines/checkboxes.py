"""Check boxes and radio buttons on a page image, and whether each is ticked: the selection marks of a form.

Found by image morphology with OpenCV (in the CPU image already, for PaddleOCR), no model:

1. The page is binarised (ink = 1) with a local threshold, so a grey scan or a shadow does not fill boxes.
2. Candidate outlines come from two images: the ink itself, and the ink reduced to its horizontal and vertical
   strokes (an opening with a line kernel each way), which keeps a box's sides and drops a tick or a cross that
   runs over them. A candidate is a closed outline that is about square, the size of a text line's height
   (``MIN_SIDE``/``MAX_SIDE`` of the page's median line height), and a rectangle (four corners, filling its
   bounding box) or a ring (radio button: round, short of filling its box, paper between outline and dot).
3. A candidate whose surroundings are mostly ink is a hole (in a letter, or a box side's inner edge), not an
   outline on paper; one inside a recognised word that holds a letter with a closed outline (an ``O``, a ``D``)
   is that letter (``words``); one with a stroke as tall as itself just beside it, or whose top and bottom run on
   past it, is a comb field's, a table's or graph paper's cell; one inside a bigger candidate is the same box's
   inner edge.
4. The state is the ink inside the box, away from its sides (``INSET`` of the side): ``FILLED`` or more is
   ``selected``. The confidence grows with the distance from that threshold.

>>> from PIL import Image, ImageDraw
>>> page = Image.new("RGB", (400, 200), "white")
>>> draw = ImageDraw.Draw(page)
>>> draw.rectangle((50, 50, 80, 80), outline="black", width=2)
>>> draw.rectangle((150, 50, 180, 80), outline="black", width=2)
>>> draw.line((155, 65, 163, 75, 176, 54), fill="black", width=3)
>>> [(mark["state"], mark["polygon"][0]) for mark in find_marks(page, line_height=30)[0]]
[('unselected', [50.0, 50.0]), ('selected', [150.0, 50.0])]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ocr_platform.core.results import SelectionMark

#: A mark's side against the page's median text line height: smaller is a dot or a letter's hole, bigger a cell.
MIN_SIDE = 0.45
MAX_SIDE = 2.6
#: Width over height a box may have (a square drawn by hand, or a scan's uneven pixels, is not exactly 1).
MAX_ASPECT = 1.45
#: How much of its bounding box a rectangle's outline must enclose, and how round a radio button must be
#: (4 pi area / perimeter squared: 1 for a circle, 0.785 for a square).
MIN_RECTANGULARITY = 0.8
MIN_CIRCULARITY = 0.82
#: Where inside a round candidate (a share of its radius, between a radio button's outline and its dot) paper is
#: looked for.
RING = 0.72
#: What a recogniser reads a row of empty radio buttons as, and how far from square (a share of the height) a ring
#: among them may be; a digit 0 is narrower (about 0.8 of its height in a sans face).
ROUND_READINGS = "OoＯ0０"
RING_ASPECT = 0.12
#: Letters whose outline is a closed box or ring about a line high (a candidate where a word has one is it).
CLOSED_LETTERS = "O0DQo口回日目田囗"
#: The share of the side left out at each edge when the inside is measured (the outline and its blur).
INSET = 0.2
#: Ink over the inside area from which a box is ticked (tuned on the generated and public forms,
#: docs/performance/forms.md).
FILLED = 0.07
#: Boxes closer than this (a share of the side) beside each other are a comb field's cells.
COMB_GAP = 0.25
#: The share of ink in the band around a candidate above which it is a hole in ink, not an outline on paper.
OUTSIDE_INK = 0.35
#: A line height to assume on a page where no text was read.
DEFAULT_LINE_HEIGHT_SHARE = 1 / 70


@dataclass(frozen=True)
class _Candidate:
    box: tuple[int, int, int, int]  # x0, y0, x1, y1
    round: bool

    @property
    def side(self) -> int:
        return max(self.box[2] - self.box[0], self.box[3] - self.box[1])


def find_marks(image: Any, *, line_height: float | None = None, words: Sequence[tuple[Sequence[Sequence[float]], str]] = ()) -> tuple[list[SelectionMark], Any]:
    """The selection marks on ``image`` (a ``PIL`` image or a grey ``numpy`` array), in reading order (rows top
    to bottom, then left to right), and the page's binary image they were found on (``numpy``, ink 1).

    ``line_height``: the page's median text line height in pixels (the scale of a box); ``words``: the polygons and
    texts of the recognised words (a candidate where one has a letter with a closed outline is that letter).
    """
    import cv2
    import numpy as np

    gray = np.asarray(image.convert("L")) if hasattr(image, "convert") else np.asarray(image)
    height = float(line_height or gray.shape[0] * DEFAULT_LINE_HEIGHT_SHARE)
    low, high = max(6, round(MIN_SIDE * height)), max(10, round(MAX_SIDE * height))
    block = max(15, round(height * 1.5)) | 1
    ink = cv2.adaptiveThreshold(gray, 1, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV, block, 12)
    length = max(3, round(low * 0.6))
    strokes = cv2.bitwise_or(cv2.morphologyEx(ink, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_RECT, (length, 1))),
                             cv2.morphologyEx(ink, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_RECT, (1, length))))
    strokes = cv2.morphologyEx(strokes, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
    candidates = _outlines(ink, low, high, circles=True) + _outlines(strokes, low, high, circles=False)
    letters = [(_box_of(polygon), text) for polygon, text in words if text]
    kept = _distinct(_apart(ink, [c for c in candidates if not any(_letter(c, box, text) for box, text in letters)]))
    marks = [_mark(ink, candidate) for candidate in kept]
    return sorted(marks, key=lambda mark: (round(mark["polygon"][0][1] / height), mark["polygon"][0][0])), ink


def _outlines(binary: Any, low: int, high: int, *, circles: bool) -> list[_Candidate]:
    import cv2

    contours, _ = cv2.findContours(binary, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
    found = []
    for contour in contours:
        x, y, w, h = cv2.boundingRect(contour)
        if not (low <= w <= high and low <= h <= high) or max(w, h) > MAX_ASPECT * min(w, h):
            continue
        area, perimeter = cv2.contourArea(contour), cv2.arcLength(contour, True)
        if perimeter <= 0:
            continue
        if _enclosed(binary, x, y, w, h):
            continue  # a letter's hole ("o", "p"): a box is drawn on paper, a hole on ink
        corners = cv2.approxPolyDP(contour, 0.08 * perimeter, True)
        if len(corners) == 4 and cv2.isContourConvex(corners) and area >= MIN_RECTANGULARITY * w * h:
            found.append(_Candidate((x, y, x + w, y + h), round=False))
        elif (circles and 4 * 3.14159 * area / perimeter**2 >= MIN_CIRCULARITY and area < MIN_RECTANGULARITY * w * h
              and _hollow(binary, x, y, w, h)):
            found.append(_Candidate((x, y, x + w, y + h), round=True))
    return found


def _hollow(binary: Any, x: int, y: int, w: int, h: int) -> bool:
    """Whether a round candidate is a ring (a radio button, its dot well inside it) rather than a disc of ink (a
    bullet, a blot): most of a circle at ``RING`` of its radius, inside the outline, is paper."""
    import numpy as np

    angles = np.linspace(0, 2 * np.pi, 32, endpoint=False)
    xs = np.clip(np.round(x + w / 2 + RING * w / 2 * np.cos(angles)).astype(int), 0, binary.shape[1] - 1)
    ys = np.clip(np.round(y + h / 2 + RING * h / 2 * np.sin(angles)).astype(int), 0, binary.shape[0] - 1)
    return float(binary[ys, xs].mean()) < 0.5


def _enclosed(binary: Any, x: int, y: int, w: int, h: int) -> bool:
    """Whether the band just outside a candidate's box is mostly ink (``OUTSIDE_INK``): the inside of a letter's
    stroke, or of a box's own side, rather than an outline on the paper."""
    band = max(2, round(0.12 * max(w, h)))
    top, left = max(0, y - band), max(0, x - band)
    around = binary[top:y + h + band, left:x + w + band]
    inside = binary[y:y + h, x:x + w]
    ring = float(around.sum()) - float(inside.sum())
    area = around.size - inside.size
    return area > 0 and ring / area > OUTSIDE_INK


def _distinct(candidates: list[_Candidate]) -> list[_Candidate]:
    """One candidate per box: the biggest of those that share a centre (a stroke's outer and inner edges, the
    same box found in both images)."""
    kept: list[_Candidate] = []
    for candidate in sorted(candidates, key=lambda c: -c.side):
        x0, y0, x1, y1 = candidate.box
        centre = ((x0 + x1) / 2, (y0 + y1) / 2)
        if not any(k.box[0] <= centre[0] <= k.box[2] and k.box[1] <= centre[1] <= k.box[3] for k in kept):
            kept.append(candidate)
    return kept


def _apart(ink: Any, candidates: list[_Candidate]) -> list[_Candidate]:
    """The candidates that stand apart. A box is a comb field's cell (one character each, an account number's
    digits), a table's or graph paper's when, just beside it (``COMB_GAP`` of its side away at most), there is a
    stroke as tall as itself, or its top and bottom sides run on past it."""
    kept = []
    for candidate in candidates:
        x0, y0, x1, y1 = candidate.box
        reach = max(2, round(COMB_GAP * candidate.side))
        rows = ink[y0 + 2:y1 - 1]
        beside = [rows[:, max(0, x0 - reach):x0], rows[:, x1:x1 + reach]]  # x1 is the first column past the box
        wall = any(band.size and (band.mean(axis=0) >= 0.8).any() for band in beside)
        sides_run_on = any(
            top.size and bottom.size and top.any(axis=0).mean() >= 0.8 and bottom.any(axis=0).mean() >= 0.8
            for top, bottom in ((ink[y0:y0 + 3, max(0, x0 - reach):x0], ink[max(0, y1 - 3):y1, max(0, x0 - reach):x0]),
                                (ink[y0:y0 + 3, x1:x1 + reach], ink[max(0, y1 - 3):y1, x1:x1 + reach])))
        if not (wall or sides_run_on):
            kept.append(candidate)
    return kept


def _mark(ink: Any, candidate: _Candidate) -> SelectionMark:
    x0, y0, x1, y1 = candidate.box
    dx, dy = round((x1 - x0) * INSET), round((y1 - y0) * INSET)
    inside = ink[y0 + dy:y1 - dy, x0 + dx:x1 - dx]
    fill = float(inside.mean()) if inside.size else 0.0
    selected = fill >= FILLED
    distance = (fill - FILLED) / (1 - FILLED) if selected else (FILLED - fill) / FILLED
    polygon = [[float(x0), float(y0)], [float(x1), float(y0)], [float(x1), float(y1)], [float(x0), float(y1)]]
    return {"state": "selected" if selected else "unselected", "polygon": polygon,
            "confidence": round(0.5 + 0.5 * min(1.0, 3 * distance), 3)}


def _box_of(polygon: Sequence[Sequence[float]]) -> tuple[float, float, float, float]:
    xs, ys = [p[0] for p in polygon], [p[1] for p in polygon]
    return min(xs), min(ys), max(xs), max(ys)


def _letter(candidate: _Candidate, word: tuple[float, float, float, float], text: str) -> bool:
    """Whether ``candidate`` is a letter of the word ``text`` read at ``word``: its centre in the word, where (at
    the word's pitch, give or take a character) the word has a letter with a closed outline (``CLOSED_LETTERS``).
    A ring as wide as it is tall (``RING_ASPECT``) in a word of nothing but round letters (``ROUND_READINGS``:
    ``"O"``, ``"OO"``, ``"0000"``) is a row of radio buttons the recogniser read as letters, not a letter."""
    box = candidate.box
    width, height = box[2] - box[0], box[3] - box[1]
    if candidate.round and text.strip() and set(text.strip()) <= set(ROUND_READINGS) and abs(width / max(1, height) - 1) <= RING_ASPECT:
        return False
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    if not (word[0] <= cx <= word[2] and word[1] <= cy <= word[3]) or box[3] - box[1] > 1.1 * (word[3] - word[1]):
        return False
    at = int((cx - word[0]) / max(1.0, (word[2] - word[0]) / len(text)))
    return any(c in CLOSED_LETTERS for c in text[max(0, at - 1):at + 2])
