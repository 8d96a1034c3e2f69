"""Combining marks (Arabic harakat such as fathatan, Hebrew points, accents typed apart) put back on their letter.

A mark is drawn over or under its letter, but a PDF's content stream may hold it elsewhere: XeLaTeX's Persian
output puts the fathatan of ``حتماً`` before the word, and pdfium, seeing a glyph higher than the line, hands it
over on a line of its own (``persian-pure-words.pdf`` page 3: 12 of its 13 marks stood alone or at the start of
another word). ``document.text_layer`` keeps a mark that follows a letter it stands over where it is, and gives
the others to ``attach_marks``, which puts each after the letter whose box it stands over, so the word reads as
typed (``حتماً``, not ``ً`` and ``حتما``).

>>> lines = [LineChars(chars=list("حتما"), boxes=[(30, 0, 40, 10), (20, 0, 30, 10), (10, 0, 20, 10), (0, 0, 5, 10)])]
>>> attach_marks(lines, [("\\u064b", (0.5, 3, 4.5, 13), 0)])
{0}
>>> "".join(lines[0].chars) == "حتما\\u064b"
True
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

#: A character box: ``left, bottom, right, top`` in the text's own frame (y up).
Box = tuple[float, float, float, float]


def is_mark(char: str) -> bool:
    """A non-spacing combining mark (Unicode category ``Mn``): drawn on the letter before it (``char`` may be the
    letters of a ligature: no mark)."""
    return len(char) == 1 and unicodedata.category(char) == "Mn"


def stands_over(mark: Box, letter: Box) -> bool:
    """Whether the mark's middle lies across the letter (above, on or below it)."""
    middle = (mark[0] + mark[2]) / 2
    return letter[0] <= middle <= letter[2]


@dataclass
class LineChars:
    """A layer line's characters and their boxes (``None`` for a space), its quarter turns, and which of its characters
    lack a Unicode mapping (empty: none do)."""

    chars: list[str]
    boxes: list[Box | None]
    quarter: int = 0
    unmapped: list[bool] = field(default_factory=list)


def attach_marks(lines: list[LineChars], marks: list[tuple[str, Box, int]]) -> set[int]:
    """Insert each mark after the letter of ``lines`` it stands over whose middle is nearest its own, within one
    letter height (the last letter of a ligature, whose letters share a box; after marks already on it); return the
    indexes of the lines changed. A mark over no letter is left out: a mark alone is no text."""
    changed: set[int] = set()
    for mark, box, quarter in marks:
        best: tuple[float, int, int] | None = None
        for i, line in enumerate(lines):
            if line.quarter != quarter:
                continue
            for j, letter in enumerate(line.boxes):
                if letter is None or is_mark(line.chars[j]) or not stands_over(box, letter):
                    continue
                # Loose boxes run from the font's descent to its ascent, a mark's too: the nearest middles belong together.
                distance = abs((box[1] + box[3]) / 2 - (letter[1] + letter[3]) / 2)
                if distance <= letter[3] - letter[1] and (best is None or distance <= best[0]):  # a ligature's last letter
                    best = (distance, i, j)
        if best is None:
            continue
        _, i, j = best
        line = lines[i]
        at = j + 1
        while at < len(line.chars) and is_mark(line.chars[at]):
            at += 1
        line.chars.insert(at, mark)
        line.boxes.insert(at, box)
        if line.unmapped:
            line.unmapped.insert(at, False)
        changed.add(i)
    return changed
