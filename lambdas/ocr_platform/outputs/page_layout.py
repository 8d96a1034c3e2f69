"""A result page as the nested formats need it: its lines grouped into the layout blocks they lie in, boxes
around polygons, and where a line's text puts a space between two words. hOCR (``outputs.hocr``), ALTO
(``outputs.alto``) and the Textract-shaped JSON (``outputs.textract``) are written from these.

A line belongs to the first block, in reading order, whose box holds the line's centre. A page without
blocks (the PP-OCR routes) is one region of all its lines; lines of a page with blocks that fall in none
make one more region after the blocks.

>>> line = {"text": "ab cd", "polygon": [[0, 0], [50, 0], [50, 10], [0, 10]], "score": 0.9,
...         "words": [{"text": "ab", "polygon": [[0, 0], [20, 0], [20, 10], [0, 10]], "score": 0.9},
...                   {"text": "cd", "polygon": [[30, 0], [50, 0], [50, 10], [30, 10]], "score": 0.9}]}
>>> page = {"page": 1, "width": 100, "height": 40, "scale": 1.0, "lines": [line]}
>>> [(region.block, region.box, len(region.lines)) for region in regions(page)]
[(None, (0.0, 0.0, 50.0, 10.0), 1)]
>>> [(word["text"], spaced) for word, spaced in spaced_words(line)]
[('ab', True), ('cd', False)]
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ocr_platform.core.results import Block, Line, Page
from ocr_platform.core.words import Word, estimated_words

Box = tuple[float, float, float, float]


class ElementIds:
    """The ids of one page's elements, numbered per kind in the order they are made.

    >>> next_id = ElementIds(3)
    >>> next_id("line"), next_id("line"), next_id("word")
    ('line_3_1', 'line_3_2', 'word_3_1')
    """

    def __init__(self, page: int) -> None:
        self.page = page
        self._counts: Counter[str] = Counter()

    def __call__(self, kind: str) -> str:
        self._counts[kind] += 1
        return f"{kind}_{self.page}_{self._counts[kind]}"


def box_of(polygon: Sequence[Sequence[float]]) -> Box:
    """The ``(x0, y0, x1, y1)`` box around a polygon."""
    xs, ys = [float(p[0]) for p in polygon], [float(p[1]) for p in polygon]
    return min(xs), min(ys), max(xs), max(ys)


def union(boxes: Iterable[Box]) -> Box:
    """The box around ``boxes`` (at least one)."""
    boxes = list(boxes)
    return min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes)


def clamped(box: Box, width: float, height: float) -> Box:
    """``box`` cut to the page (a detector's polygon may reach a pixel or two past the edge)."""
    x0, y0, x1, y1 = box
    return max(0.0, min(x0, width)), max(0.0, min(y0, height)), max(0.0, min(x1, width)), max(0.0, min(y1, height))


@dataclass
class Region:
    """A layout block with the lines that lie in it (``block`` is ``None`` for lines in no block)."""

    block: Block | None
    box: Box
    lines: list[Line] = field(default_factory=list)


def regions(page: Page) -> list[Region]:
    """The page's blocks in reading order, each with its lines, then the lines in no block (see the module docstring)."""
    blocks = [block for block in page.get("blocks", []) if len(block.get("bbox", [])) == 4]
    found = [Region(block, box_of([block["bbox"][:2], block["bbox"][2:]])) for block in blocks]
    loose: list[Line] = []
    for line in text_lines(page):
        x0, y0, x1, y1 = box_of(line["polygon"])
        centre = ((x0 + x1) / 2, (y0 + y1) / 2)
        home = next((r for r in found if r.box[0] <= centre[0] <= r.box[2] and r.box[1] <= centre[1] <= r.box[3]), None)
        (home.lines if home is not None else loose).append(line)
    if loose:
        found.append(Region(None, union(box_of(line["polygon"]) for line in loose), loose))
    return found


def text_lines(page: Page) -> list[Line]:
    """The page's lines that hold text (a result.json written before empty lines were dropped may still have some)."""
    return [line for line in page["lines"] if str(line.get("text") or "").strip()]


def line_words(line: Line) -> list[Word]:
    """The line's words (estimated for a line that has none, as ``core.results.with_words`` does)."""
    words = line.get("words")
    found = list(words) if isinstance(words, list) else estimated_words(dict(line))
    return [word for word in found if str(word.get("text") or "").strip()]


def spaced_words(line: Line) -> list[tuple[Word, bool]]:
    """The line's words, each with whether the line's text has a space after it (none between the characters of a
    Chinese line, nor after the last word)."""
    words = line_words(line)
    text, cursor = line["text"], 0
    marked: list[tuple[Word, bool]] = []
    for index, word in enumerate(words):
        found = text.find(word["text"], cursor)
        cursor = found + len(word["text"]) if found >= 0 else cursor
        spaced = index + 1 < len(words) and cursor < len(text) and text[cursor].isspace()
        marked.append((word, spaced))
    return marked


def text_angle(polygon: Sequence[Sequence[float]]) -> int:
    """Which way a line's text is turned, in quarter turns counter-clockwise (0, 90, 180 or 270 degrees), from the
    direction its polygon's first edge runs: 0 for a line that is upright or only skewed. hOCR's ``textangle``
    (which Tesseract writes for turned text alone, leaving skew to the ``baseline``) and ALTO's ``ROTATION``.

    >>> text_angle([[0, 100], [0, 0], [20, 0], [20, 100]]), text_angle([[0, 0], [100, 9], [100, 29], [0, 20]])
    (90, 0)
    """
    (ax, ay), (bx, by) = polygon[0], polygon[1]
    angle = math.degrees(math.atan2(float(ay) - float(by), float(bx) - float(ax))) % 360
    return (round(angle / 90) % 4) * 90
