"""The words of a line: how a line's text splits into words, and where each word lies on the line's polygon.

A word is a run of characters between spaces. Scripts written without spaces get **one word per
character**: Chinese (Han), Japanese (Hiragana, Katakana) and their full-width punctuation, as Amazon
Textract and hOCR engines such as Tesseract do; Korean (Hangul) is written with spaces and splits there.

A word's polygon is a stretch of its line's quadrilateral: ``extents`` say where each character starts
and ends along the line, as fractions of its length (0 at the polygon's first corner, 1 at its second);
without them, every character is given the same share. The stretch is cut across both long edges, so a
word of a slanted line is slanted with it, in the line's own coordinates.

>>> [w["text"] for w in placed_words("Total: 4.50 EUR", [[0, 0], [150, 0], [150, 10], [0, 10]], 0.9)]
['Total:', '4.50', 'EUR']
>>> placed_words("ab cd", [[0, 0], [50, 0], [50, 10], [0, 10]], 0.9)[1]["polygon"]
[[30.0, 0.0], [50.0, 0.0], [50.0, 10.0], [30.0, 10.0]]
>>> [w["text"] for w in placed_words("東京 2024年", [[0, 0], [70, 0], [70, 10], [0, 10]], 1.0)]
['東', '京', '2024', '年']
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from typing import Any, TypedDict


class Word(TypedDict):
    """One word of a line: its text, its quadrilateral (same corners and coordinates as the line's) and score."""

    text: str
    polygon: list[list[float]]
    score: float


#: Code point ranges of scripts written without spaces between words (a word per character).
_UNSPACED = (
    (0x3000, 0x303F),  # CJK symbols and punctuation
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF00, 0xFF60),  # full-width forms
    (0x20000, 0x2FA1F),  # CJK extensions B onwards
)


def unspaced(char: str) -> bool:
    """Whether ``char`` belongs to a script written without spaces (one word per character).

    >>> unspaced("字"), unspaced("カ"), unspaced("a"), unspaced("한")
    (True, True, False, False)
    """
    code = ord(char)
    return any(low <= code <= high for low, high in _UNSPACED)


def word_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` character indexes of the words of ``text`` (see the module docstring).

    >>> word_spans(" a bc  漢字x")
    [(1, 2), (3, 5), (7, 8), (8, 9), (9, 10)]
    """
    spans: list[tuple[int, int]] = []
    start: int | None = None
    for index, char in enumerate(text):
        if char.isspace() or unicodedata.category(char) == "Zs":
            if start is not None:
                spans.append((start, index))
            start = None
        elif unspaced(char):
            if start is not None:
                spans.append((start, index))
            spans.append((index, index + 1))
            start = None
        elif start is None:
            start = index
    if start is not None:
        spans.append((start, len(text)))
    return spans


def stretch(polygon: Sequence[Sequence[float]], start: float, end: float, *, across: bool = False) -> list[list[float]]:
    """The part of a quadrilateral between fractions ``start`` and ``end`` of its length: along its top and bottom
    edges (corner 0 to 1, 3 to 2), or with ``across`` along its left and right edges (corner 0 to 3, 1 to 2).

    >>> stretch([[0, 0], [100, 0], [100, 10], [0, 10]], 0.25, 0.5)
    [[25.0, 0.0], [50.0, 0.0], [50.0, 10.0], [25.0, 10.0]]
    """
    p0, p1, p2, p3 = ([float(v) for v in point] for point in polygon)
    if across:  # the text runs from the top edge down: the polygon read as (p0, p3, p2, p1)
        p1, p3 = p3, p1

    def at(a: list[float], b: list[float], t: float) -> list[float]:
        return [round(a[0] + (b[0] - a[0]) * t, 1), round(a[1] + (b[1] - a[1]) * t, 1)]

    start, end = max(0.0, min(1.0, start)), max(0.0, min(1.0, end))
    corners = [at(p0, p1, start), at(p0, p1, end), at(p3, p2, end), at(p3, p2, start)]
    if across:
        corners = [corners[0], corners[3], corners[2], corners[1]]
    return corners


def placed_words(
    text: str,
    polygon: Sequence[Sequence[float]],
    score: float,
    extents: Sequence[tuple[float, float]] | None = None,
    *,
    across: bool = False,
) -> list[Word]:
    """The words of a line of ``text`` on its ``polygon``, each with the line's ``score``.

    ``extents`` give each character's ``(start, end)`` along the line (fractions of its length, one per
    character of ``text``); without them every character gets an equal share. ``across``: the text runs
    down the polygon's left edge (a tall line, see ``stretch``).
    """
    if not text or len(polygon) != 4:
        return []
    if extents is None or len(extents) != len(text):
        share = 1.0 / len(text)
        extents = [(i * share, (i + 1) * share) for i in range(len(text))]
    words: list[Word] = []
    for start, end in word_spans(text):
        first, last = min(e[0] for e in extents[start:end]), max(e[1] for e in extents[start:end])
        words.append({"text": text[start:end], "polygon": stretch(polygon, first, last, across=across), "score": score})
    return words


def estimated_words(line: dict[str, object]) -> list[Word]:
    """Words for a line that came without any (a layout engine's, the GPU model's): equal shares per character.

    >>> estimated_words({"text": "ab", "polygon": [[0, 0], [20, 0], [20, 5], [0, 5]], "score": 0.5})[0]["polygon"]
    [[0.0, 0.0], [20.0, 0.0], [20.0, 5.0], [0.0, 5.0]]
    """
    polygon = line.get("polygon")
    text = line.get("text")
    score = line.get("score", 0.0)
    if not isinstance(text, str) or not isinstance(polygon, list) or len(polygon) != 4:
        return []
    return placed_words(text, polygon, float(score) if isinstance(score, int | float) else 0.0)


def mapped_line(line: Any, point: Callable[[float, float], Sequence[float]]) -> Any:
    """``line`` (a result line) with its polygon and its words' polygons mapped point by point by ``point``.

    >>> square = [[0, 0], [1, 0], [1, 1], [0, 1]]
    >>> line = {"text": "a", "polygon": square, "score": 1.0, "words": [{"text": "a", "polygon": square, "score": 1.0}]}
    >>> mapped_line(line, lambda x, y: (x + 10, y))["words"][0]["polygon"][0]
    [10.0, 0.0]
    """

    def mapped(polygon: Sequence[Sequence[float]]) -> list[list[float]]:
        return [[round(float(v), 1) for v in point(x, y)] for x, y in polygon]

    moved = {**line, "polygon": mapped(line["polygon"])}
    if isinstance(line.get("words"), list):
        moved["words"] = [{**word, "polygon": mapped(word["polygon"])} for word in line["words"]]
    return moved
