"""Labels without a colon: most labels on real forms are bare text ("Date", "SUPPLIER CODE", "Total Cost") with
their answer further along the row (FUNSD's training split: 37 % of its question-answer links, against 22 % for
colon-ended labels with their answer on the row). ``engines.forms`` pairs the colon-ended labels and the check
boxes first; ``bare_pairs`` then finds bare labels among the text left over, by text and geometry alone.

Each threshold here was chosen on FUNSD's training split only (docs/performance/forms.md, "FUNSD").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from ocr_platform.core.forms import Box

#: A bare label is short: at most this many words and characters, with at least this many letters.
BARE_WORDS = 6
BARE_CHARS = 40
BARE_LETTERS = 3
#: How far (in line heights) a bare label's answer may be to its right: as far as a colon label's
#: (``engines.forms.RIGHT_GAP``); 16 or 20 measured no better on FUNSD's training split.
BARE_GAP = 12.0


class Part(Protocol):
    """A run of words of one line (``engines.forms.Segment``)."""

    box: Box

    @property
    def text(self) -> str: ...

    @property
    def is_label(self) -> bool: ...


def bare_label(text: str) -> bool:
    """Whether ``text`` reads as a label without its colon: a few words (``BARE_WORDS``, ``BARE_CHARS``), mostly
    letters (more than twice as many as digits, ``BARE_LETTERS`` at least) and not ending in a digit (an answer
    such as "Room 214" or "May 1, 1985" ends in one; a label seldom does).

    >>> [bare_label(t) for t in ("Tipping Length", "PHONE No.", "May 1, 1985", "mm", "25 mm", "Room 214")]
    [True, True, False, False, False, False]
    """
    letters = sum(c.isalpha() for c in text)
    digits = sum(c.isdigit() for c in text)
    return (0 < len(text.split()) <= BARE_WORDS and len(text) <= BARE_CHARS and letters >= BARE_LETTERS
            and letters > 2 * digits and not text.rstrip()[-1].isdigit())


def headings(key: str, value: str) -> bool:
    """Whether two texts side by side are two column headings rather than a label and its answer: both bare
    labels in capitals without a digit ("BASE   SCORE", "RECIPIENT   COMPANY").

    >>> headings("RECIPIENT", "COMPANY"), headings("COUNTRY", "Belgium"), headings("PAGE", "1 OF 4")
    (True, False, False)
    """
    return all(bare_label(t) and t.isupper() and not any(c.isdigit() for c in t) for t in (key, value))


def bare_pairs(parts: Sequence[Part], taken: set[int], height: float, same_row: Callable[[Box, Box], bool],
               tables: Sequence[Box] = ()) -> list[tuple[int, int]]:
    """The bare labels among ``parts`` (indexes not in ``taken``, in reading order) and each one's answer: the
    nearest text after it on its row (``BARE_GAP`` line heights away at most) that is neither a colon label nor
    taken nor, with it, a row of headings (``headings``). A label and its answer are added to ``taken``; text
    with nothing after it on its row (a title, a sentence's last line) is no label, nor is text in one of the
    layout's ``tables`` (a cell beside a cell: the table's cells are in its own output)."""
    taken = taken | {i for i, s in enumerate(parts) if any(_inside(s.box, t) for t in tables)}
    found: list[tuple[int, int]] = []
    for i, part in enumerate(parts):
        if i in taken or not bare_label(part.text):
            continue
        row = [j for j, s in enumerate(parts) if j != i and j not in taken and same_row(part.box, s.box) and s.box[0] >= part.box[2] - 0.3 * height]
        if not row:
            continue
        j = min(row, key=lambda j: parts[j].box[0])
        if parts[j].is_label or parts[j].box[0] - part.box[2] > BARE_GAP * height or headings(part.text, parts[j].text):
            continue
        taken.update((i, j))
        found.append((i, j))
    return found


def _inside(box: Box, table: Box) -> bool:
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return table[0] <= cx <= table[2] and table[1] <= cy <= table[3]
