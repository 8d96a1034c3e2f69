"""A PDF text layer's characters gathered into lines (``document.text_layer`` reads them from pdfium).

A line is a run of characters on one baseline, in one direction, with no gap wider than ``LINE_GAP`` line heights and
no line break from pdfium; its words are split where the layer has spaces or its characters stand apart. A line
that holds characters without a Unicode mapping also says what it reads without them (``LayerLine.mapped``): the
text a reader can trust of it, each left-out run a word break, as poppler's ``pdftotext`` writes such a line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ocr_platform.core.words import word_spans
from ocr_platform.document.char_boxes import Box, PageGeometry, char_gap, turn, union_box
from ocr_platform.document.layer_text import ZWNJ, is_joiner_space, normal_text
from ocr_platform.document.marks import LineChars, attach_marks, is_mark, stands_over

#: Characters further apart than this many line heights start a new line (a column gap, a table cell).
LINE_GAP = 1.2

Words = list[tuple[str, list[list[float]]]]


@dataclass
class LayerLine:
    """One line of the text layer.

    Attributes:
        text: the characters, with spaces where the layer has them or its words stand apart.
        polygon: four ``[x, y]`` points (top-left, top-right, bottom-right, bottom-left) in rendered pixels.
        font: the font of its first character (its base name), for checking a font's character map once.
        invisible: drawn in an invisible render mode.
        words: each word's text and polygon (the union of its characters' boxes, corners as the line's;
            words as ``core.words`` splits them).
        unmapped: its characters without a Unicode mapping (``TextLayer.unmapped``, line by line).
        mapped: the same line without those characters (its polygon still the whole line's), or ``None`` when it
            has none; its ``text`` is empty when every character lacks one.
    """

    text: str
    polygon: list[list[float]]
    font: str = ""
    invisible: bool = False
    words: Words = field(default_factory=list)
    unmapped: int = 0
    mapped: LayerLine | None = None

    @property
    def box(self) -> tuple[float, float, float, float]:
        xs = [p[0] for p in self.polygon]
        ys = [p[1] for p in self.polygon]
        return min(xs), min(ys), max(xs), max(ys)

    @property
    def height(self) -> float:
        x0, y0, x1, y1 = self.box
        return y1 - y0


@dataclass(frozen=True)
class Style:
    """A text object's font (base name) and whether it is drawn invisibly."""

    font: str
    invisible: bool


class LineBuilder:
    """Collects characters into lines: same direction and baseline, no wide gap, no line break from pdfium.

    Boxes arrive in the text's own frame (``char_boxes.turned_box``: the page turned so the text runs left to
    right, y up); a finished line's corners are turned back and mapped to pixels, so its polygon starts
    at the line's top-left in reading direction whatever the text's or the page's rotation.
    """

    def __init__(self, geometry: PageGeometry) -> None:
        self.geometry = geometry
        self.lines: list[LayerLine] = []
        self.chars = 0
        self._text: list[str] = []
        self._boxes: list[Box | None] = []  # each of _text's characters' (None: a space)
        self._unmapped: list[bool] = []  # each of _text's characters': lacks a Unicode mapping
        self._line_chars: list[LineChars] = []  # each finished line's characters, for marks put back (document.marks)
        self._marks: list[tuple[str, Box, int]] = []
        self._box: list[float] | None = None
        self._last: Box | None = None
        self._quarter = 0
        self._style = Style("", False)
        self._pending_space = False
        self._tops: list[tuple[int, float]] = []  # each line's quarter turns and top, in its text's own frame

    def generated(self, char: str) -> None:
        if char in "\r\n":
            self.break_line()
        else:
            self.space()

    def space(self, box: Box | None = None) -> None:
        """A space; one drawn over the Arabic letter before it is no gap between words but a non-joiner (``layer_text``)."""
        if box is not None and self._last is not None and not self._quarter and is_joiner_space(self._text[-1], self._last, box):
            self._append(ZWNJ, self._last, False)
            return
        self._pending_space = bool(self._text)

    def break_line(self) -> None:
        if self._text and self._box is not None:
            chars = LineChars(self._text, self._boxes, self._quarter, self._unmapped)
            line = self._line(chars, self._polygon(self._box, self._quarter), self._style)
            if line is not None:
                self.lines.append(line)
                self._line_chars.append(chars)
                self._tops.append((self._quarter, self._box[3]))
        self._text, self._boxes, self._unmapped, self._box, self._last, self._pending_space = [], [], [], None, None, False

    def add(self, char: str, box: Box, quarter: int, style: Style, *, unmapped: bool = False) -> None:
        self.chars += 1
        if is_mark(char) and not (self._last is not None and quarter == self._quarter and stands_over(box, self._last)):
            self._marks.append((char, box, quarter))  # away from its letter: put back by finish
            return
        same_glyph = bool(self._text) and box == self._last and quarter == self._quarter  # letters one glyph's map gives
        if self._text and not same_glyph and (quarter != self._quarter or not self._continues(box)):
            self.break_line()
        if not self._text:
            self._style, self._quarter = style, quarter
        elif not same_glyph and (self._pending_space or self._apart(box)):
            self._append(" ", None, False)
        self._pending_space = False
        for letter in char:  # a ligature's letters share its box
            self._append(letter, box, unmapped)
        x0, y0, x1, y1 = box
        self._box = [x0, y0, x1, y1] if self._box is None else [min(self._box[0], x0), min(self._box[1], y0), max(self._box[2], x1), max(self._box[3], y1)]
        self._last = box

    def finish(self) -> list[LayerLine]:
        """The lines, top to bottom: pdfium hands the characters of some turned pages (``/Rotate 90``) over from
        the last line up, so lines that mostly climb the page are put back in reading order."""
        self.break_line()
        for index in attach_marks(self._line_chars, self._marks):
            old = self.lines[index]
            self.lines[index] = self._line(self._line_chars[index], old.polygon, Style(old.font, old.invisible)) or old
        steps = [b - a for (qa, a), (qb, b) in zip(self._tops, self._tops[1:], strict=False) if qa == qb]
        if sum(step > 0 for step in steps) > sum(step < 0 for step in steps):
            self.lines.reverse()
        return self.lines

    def _append(self, char: str, box: Box | None, unmapped: bool) -> None:
        self._text.append(char)
        self._boxes.append(box)
        self._unmapped.append(unmapped)

    def _line(self, chars: LineChars, polygon: list[list[float]], style: Style) -> LayerLine | None:
        """The line of ``chars`` (``None`` when they hold no text), with its ``mapped`` reading where some lack a mapping."""
        lam_alef_in_order(chars)
        text, words = self._text_and_words(chars)
        if not text:
            return None
        unmapped = sum(chars.unmapped)
        mapped = None
        if unmapped:
            known_text, known_words = self._text_and_words(_without_unmapped(chars))
            mapped = LayerLine(text=known_text, polygon=polygon, font=style.font, invisible=style.invisible, words=known_words)
        return LayerLine(text=text, polygon=polygon, font=style.font, invisible=style.invisible, words=words, unmapped=unmapped, mapped=mapped)

    def _text_and_words(self, chars: LineChars) -> tuple[str, Words]:
        """A line's text and its words, each with the union of its characters' boxes (``core.words`` splits them)."""
        joined = "".join(chars.chars)
        text, lead = joined.strip(), len(joined) - len(joined.lstrip())
        words = [(normal_text(text[a:b]), self._polygon(union_box(chars.boxes[lead + a : lead + b]), chars.quarter)) for a, b in word_spans(text)]
        return normal_text(text), words

    def _polygon(self, box: Sequence[float], quarter: int) -> list[list[float]]:
        """A box of the text's own frame as four pixel corners, from its top-left in reading direction."""
        x0, bottom, x1, top = box
        corners = [(x0, top), (x1, top), (x1, bottom), (x0, bottom)]
        return [[round(v, 1) for v in self.geometry.to_pixels(*turn(point, quarter))] for point in corners]

    def _continues(self, box: Box) -> bool:
        assert self._last is not None and self._box is not None
        height = max(self._box[3] - self._box[1], 1e-3)
        middle, line_middle = (box[1] + box[3]) / 2, (self._box[1] + self._box[3]) / 2
        if abs(middle - line_middle) > height / 2:
            return False
        return -height <= char_gap(self._last, box) <= LINE_GAP * height

    def _apart(self, box: Box) -> bool:
        """Characters with a gap of a quarter line height between them are separate words, spaced or not."""
        assert self._last is not None and self._box is not None
        return char_gap(self._last, box) > 0.25 * max(self._box[3] - self._box[1], 1e-3)


#: Arabic alef and its forms (with madda, hamza above or below, wasla): a letter that never joins the one after it.
ALEFS = frozenset("\u0622\u0623\u0625\u0627\u0671")
LAM = "\u0644"


def lam_alef_in_order(chars: LineChars) -> None:
    """Put the letters of each lam-alef ligature glyph in the order they are typed, in place.

    Word's Arabic fonts map the lam-alef glyph (``لا``, ``لإ``) to its letters in visual order, alef first
    (``اإلنتاجية`` for ``الإنتاجية``; pdftotext reads it so too). Alef never joins the letter after it, so one glyph
    standing for an alef and then a lam is always that ligature reversed: its two letters (one box) are swapped.

    >>> chars = LineChars(list("اإلن"), [(0, 0, 1, 1), (1, 0, 2, 1), (1, 0, 2, 1), (2, 0, 3, 1)])
    >>> lam_alef_in_order(chars); "".join(chars.chars) == "الإن"
    True
    """
    boxes = chars.boxes
    for i in range(len(chars.chars) - 1):
        same = boxes[i] is not None and boxes[i] == boxes[i + 1]
        alone = (i == 0 or boxes[i - 1] != boxes[i]) and (i + 2 >= len(boxes) or boxes[i + 2] != boxes[i])
        if same and alone and chars.chars[i] in ALEFS and chars.chars[i + 1] == LAM:
            chars.chars[i], chars.chars[i + 1] = chars.chars[i + 1], chars.chars[i]
            if chars.unmapped:
                chars.unmapped[i], chars.unmapped[i + 1] = chars.unmapped[i + 1], chars.unmapped[i]


def _without_unmapped(chars: LineChars) -> LineChars:
    """``chars`` without those lacking a Unicode mapping, each run of them left out as one space (a word break).

    >>> kept = _without_unmapped(LineChars(list("ab cd"), [(0, 0, 1, 1)] * 5, 0, [False, True, False, True, False]))
    >>> "".join(kept.chars)
    'a d'
    """
    out = LineChars([], [], chars.quarter, [])
    for char, box, unmapped in zip(chars.chars, chars.boxes, chars.unmapped, strict=True):
        if unmapped or (char.isspace() and out.chars and out.chars[-1].isspace()):
            if out.chars and not out.chars[-1].isspace():
                out.chars.append(" ")
                out.boxes.append(None)
                out.unmapped.append(False)
            continue
        out.chars.append(char)
        out.boxes.append(box)
        out.unmapped.append(False)
    return out
