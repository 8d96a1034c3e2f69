"""Word polygons for OCR'd lines, from where the recogniser put each character.

PaddleOCR's recogniser is a CTC model: it reads a line crop as a row of columns and each character it
outputs comes from one column. Asked with ``return_word_box=True`` (PaddleX 3.7), it returns beside a
line's text the number of columns that cover the crop and each character's column; PaddleX's pipeline
then hands those to ``cal_ocr_word_box`` for the line's word boxes. That function draws axis-aligned boxes,
splits words on any character outside ``[a-zA-Z0-9]`` (``café`` becomes two words) and sorts the boxes apart
from their texts, so ``install_word_boxes`` puts ``line_word_boxes`` in its place: the words of
``core.words`` (spaces; one word per Chinese or Japanese character), each the stretch of the line's own
quadrilateral that its characters' columns cover, so a slanted line's words are slanted with it.

A character spans its column, half the line's median column step before it and 0.8 of it after (``REACH_*``). A line read turned
by 180 degrees (``TurnedLineCheck``) has its columns counted from the other end (``turned_columns``); a
right-to-left line's characters come out in the opposite order to their columns.

>>> info = [20.0, [list("ab"), [" "], list("cd")], [[1, 3], [5], [7, 9]], ["en&num", "symbol", "en&num"]]
>>> texts, boxes = line_word_boxes("ab cd", [[0, 0], [100, 0], [100, 10], [0, 10]], info)
>>> texts, [box[0][0] for box in boxes], [box[1][0] for box in boxes]
(['ab', 'cd'], [0.0, 30.0], [22.5, 53.0])
"""

from __future__ import annotations

import math
import statistics
import unicodedata
from collections.abc import Sequence
from typing import Any

from ocr_platform.core.words import placed_words

#: A crop this much taller than wide is read turned a quarter turn (PaddleX's ``get_minarea_rect_crop``).
TALL_CROP = 1.5


def character_columns(info: Sequence[Any]) -> tuple[float, list[float]]:
    """The columns covering the crop and each character's column, from the recogniser's word info
    (``[columns, words, word_columns, states]``)."""
    columns = float(info[0])
    return columns, [float(column) for word in info[2] for column in word]


#: How far a character reaches before and after its column, in the line's median step between characters: a CTC
#: recogniser fires early in a character, so it reaches further after its column than before. Read back by the
#: recogniser, 96 % of 103 words' boxes gave the word exactly (86 % with half a step each side; tests/ocr/test_words.py).
REACH_BEFORE, REACH_AFTER = 0.5, 0.8
#: How much of a space, either side of its column, no word reaches into (steps): the gap a reader of the searchable PDF
#: or of hOCR sees between two words.
SPACE_KEEP = 0.25


def character_extents(text: str, columns: float, positions: list[float]) -> list[tuple[float, float]] | None:
    """Each character's ``(start, end)`` as fractions of the line, from its column; ``None`` when they do not match.
    Columns that fall along the text run forwards; ones that rise against it (a line read turned) run backwards.

    >>> [(round(a, 2), round(b, 2)) for a, b in character_extents("ab", 10.0, [2.0, 4.0])]
    [(0.1, 0.36), (0.3, 0.56)]
    """
    if columns <= 0 or len(positions) != len(text) or not text:
        return None
    if any(unicodedata.bidirectional(char) in ("R", "AL") for char in text):
        positions = positions[::-1]
    steps = [abs(b - a) for a, b in zip(positions, positions[1:], strict=False) if b != a]
    step = statistics.median(steps) if steps else columns / max(len(text), 1)
    backwards = len(positions) > 1 and positions[-1] < positions[0]
    before, after = (REACH_AFTER * step, REACH_BEFORE * step) if backwards else (REACH_BEFORE * step, REACH_AFTER * step)
    spans = [[p - before, p + after] for p in positions]
    keep = SPACE_KEEP * step
    for index, char in enumerate(text):  # the characters beside a space stop short of it: words stay apart
        if char.isspace():
            space = positions[index]
            for neighbour, side in ((index - 1, -1), (index + 1, 1)):
                if 0 <= neighbour < len(text):
                    if (side < 0) != backwards:  # the neighbour lies at lower columns
                        spans[neighbour][1] = min(spans[neighbour][1], space - keep)
                    else:
                        spans[neighbour][0] = max(spans[neighbour][0], space + keep)
    return [(max(0.0, low / columns), min(1.0, max(low, high) / columns)) for low, high in spans]


def line_word_boxes(rec_str: str, box: Any, rec_word_info: Sequence[Any]) -> tuple[list[str], list[Any]]:
    """Drop-in for PaddleX's ``cal_ocr_word_box``: a line's word texts and their quadrilaterals (see the module docstring)."""
    polygon = [[float(x), float(y)] for x, y in (box.tolist() if hasattr(box, "tolist") else box)]
    if len(polygon) != 4:
        xs, ys = [p[0] for p in polygon], [p[1] for p in polygon]
        polygon = [[min(xs), min(ys)], [max(xs), min(ys)], [max(xs), max(ys)], [min(xs), max(ys)]]
    columns, positions = character_columns(rec_word_info)
    extents = character_extents(rec_str, columns, positions)
    width, height = math.dist(polygon[0], polygon[1]), math.dist(polygon[0], polygon[3])
    across = height >= TALL_CROP * max(width, 1e-6)
    words = placed_words(rec_str, polygon, 0.0, extents, across=across)
    return [word["text"] for word in words], [word["polygon"] for word in words]


def turned_columns(info: Sequence[Any]) -> list[Any]:
    """The word info of a crop read turned by 180 degrees, with its columns counted from the crop's other end.

    >>> turned_columns([10.0, [["a"]], [[2]], ["en&num"]])[2]
    [[7.0]]
    """
    columns = float(info[0])
    return [info[0], info[1], [[columns - 1 - float(column) for column in word] for word in info[2]], *info[3:]]


_PIPELINE_MODULE = "paddlex.inference.pipelines.ocr.pipeline"
_WORD_BOXES = "cal_ocr_word_box"


def install_word_boxes() -> None:
    """Make PaddleX's OCR pipeline draw word boxes with ``line_word_boxes`` (idempotent)."""
    import importlib

    module = importlib.import_module(_PIPELINE_MODULE)
    if not callable(getattr(module, _WORD_BOXES, None)):
        raise RuntimeError(
            f"PaddleX's OCR pipeline no longer computes word boxes with {_PIPELINE_MODULE}.{_WORD_BOXES}; "
            "engines/word_boxes.py was written against paddlex 3.7: pin that version or update install_word_boxes."
        )
    setattr(module, _WORD_BOXES, line_word_boxes)
