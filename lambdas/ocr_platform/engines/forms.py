"""Forms on paper: each printed label paired with its answer (``key_values``) and each check box with its tick
(``selection_marks``), from the lines the route read and the page's pixels (docs/contracts.md, "Forms").

No model: geometry over the page's lines, chosen by measurement on FUNSD (docs/performance/forms.md), with
check boxes found by image morphology (``engines.checkboxes``).

1. **Segments.** Each line is cut after a word that ends in ``:`` ("Name: Ada Lovelace" is a label and its
   answer on one line) and where its words are far apart. Words inside a check box (OCR reading a tick as
   ``X`` or ``V``) are left out.
2. **Keys.** A segment that ends in ``:`` is a label, and so is the text beside a check box (the box's label).
3. **Values.** A label's answer is the text that follows it on its row if that is no label (``RIGHT_GAP`` line
   heights away at most), with what follows that closely (``SPLIT_GAP``; text further along is another field's,
   as FUNSD's training split shows), else the text just under it (``BELOW_GAP``) that starts within its width; a check box on its row,
   before any text, is its answer. A label with none has ``value: null`` (a blank field).
   A check box with no ``:`` label beside it is the value of the text next to it (right, else left).
   Then a bare label (no colon: "Date", "SUPPLIER CODE") among the text left over takes the text after it on its
   row (``engines.form_keys``).
4. **Confidence.** The mean recognition score of the pair's words, times how plain the geometry is (a label
   and answer on one line more than an answer found under its label).

A PDF page's own form fields (``form_fields``) are the truth for their page: that page's pairs and marks are
the fields' (``core.forms.field_forms``), keyed by the printed label beside each field where there is one.
Pages are read upright (a page turned to be read is turned here too) and answers mapped back onto the page as
submitted.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ocr_platform.core.forms import FROM_LAYOUT, Box, bounds, field_forms, form_text, mark_value, quad
from ocr_platform.core.results import FormField, FormText, FormValue, KeyValue, Line, SelectionMark
from ocr_platform.core.words import Word, estimated_words, mapped_line, stretch
from ocr_platform.document.intake import PageImage
from ocr_platform.engines.checkboxes import ROUND_READINGS, find_marks
from ocr_platform.engines.form_keys import bare_pairs
from ocr_platform.engines.orientation import submitted_point, turn

#: Characters OCR reads a check box as (a box, a tick, a cross, a dot): not part of any label or answer.
MARK_GLYPHS = "□■☐☑☒✓✔✗✘⊠⊡◻◼▢▣○●◯◉"
#: A label: text that ends in a colon (full-width too), with a letter in it and not a sentence.
LABEL_END = re.compile(r"[:：]\s*$")
MAX_LABEL_CHARS = 60
#: How far (in line heights) an answer may be from its label: to its right on the row, under it.
RIGHT_GAP = 12.0
BELOW_GAP = 1.2
#: Words further apart than this (line heights) on one line are two segments (a label and its answer).
SPLIT_GAP = 2.0
#: How much two boxes must overlap across (a share of the smaller) to be on one row.
SAME_ROW = 0.5
#: How plain each way of pairing is: the pair's confidence is its words' mean score times this.
PLAINNESS = {"line": 1.0, "right": 0.9, "below": 0.75, "mark": 0.85, "label": 0.8, "bare": 0.7}


@dataclass
class Segment:
    """A run of words of one line: a label, an answer or other text."""

    words: list[Word]
    box: Box = field(init=False)

    def __post_init__(self) -> None:
        self.box = bounds([w["polygon"] for w in self.words])

    @property
    def text(self) -> str:
        return " ".join(w["text"] for w in self.words)

    @property
    def height(self) -> float:
        return self.box[3] - self.box[1]

    @property
    def score(self) -> float:
        return sum(w["score"] for w in self.words) / len(self.words)

    @property
    def is_label(self) -> bool:
        text = self.text
        return bool(LABEL_END.search(text)) and len(text) <= MAX_LABEL_CHARS and any(c.isalpha() for c in text)


def line_height(lines: Sequence[Line]) -> float | None:
    """The median height of the page's lines (the scale of its text), ``None`` on a page without lines."""
    heights = [bounds([line["polygon"]])[3] - bounds([line["polygon"]])[1] for line in lines if line.get("polygon")]
    return statistics.median(heights) if heights else None


def segments(lines: Sequence[Line], marks: Sequence[SelectionMark] = (), ink: Any = None) -> list[Segment]:
    """The page's lines cut into segments (step 1), in reading order; ``ink`` (the page's binary image, ink 1)
    places the characters of a word the recogniser read over a check box."""
    boxes = [bounds([m["polygon"]]) for m in marks]
    found: list[Segment] = []
    for line in lines:
        if not line.get("polygon"):
            continue
        read = [w for w in (line.get("words") or estimated_words(dict(line))) if not _ring_read_as_letters(w, boxes)]
        words = [w for w in (piece for w in read for piece in _split_word(w, boxes, ink)) if w["text"] and not _in_any(w, boxes)]
        run: list[Word] = []
        for word in words:
            if run and (_gap(run[-1], word) > SPLIT_GAP * _word_height(word) or _mark_between(run[-1], word, boxes)):
                found.append(Segment(run))
                run = []
            run.append(word)
            if LABEL_END.search(word["text"]) and word is not words[-1]:
                found.append(Segment(run))
                run = []
        if run:
            found.append(Segment(run))
    return sorted(found, key=lambda s: (s.box[1], s.box[0]))


def link(parts: Sequence[Segment], marks: Sequence[SelectionMark], height: float, tables: Sequence[Box] = ()) -> list[KeyValue]:
    """The page's key-value pairs (steps 2-4) from its segments and marks (``tables``: the layout's table boxes)."""
    used: set[int] = set()
    taken_marks: set[int] = set()
    pairs: list[KeyValue] = []
    mark_boxes = [bounds([m["polygon"]]) for m in marks]
    labels = [i for i, s in enumerate(parts) if s.is_label]
    for i in labels:
        label = parts[i]
        mark = _mark_after(label, mark_boxes, taken_marks, parts, height)
        if mark is not None and _text_beside(mark_boxes[mark], parts, {i}, height, right_only=True) is not None:
            continue  # a question whose answers are its options' boxes: each option is a pair of its own
        if mark is not None:
            taken_marks.add(mark)
            pairs.append(_pair(label, mark_value(marks[mark]), marks[mark]["confidence"] * label.score, "mark"))
            continue
        value_parts, how = _value_of(i, parts, used, height)
        used.update(value_parts)
        if value_parts:
            value: FormValue = dict(form_text([w for j in value_parts for w in parts[j].words]))  # type: ignore[assignment]
            score = sum(parts[j].score for j in value_parts) / len(value_parts)
            pairs.append(_pair(label, value, (label.score + score) / 2, how))
        else:
            pairs.append(_pair(label, None, label.score, "below"))
    label_set = set(labels) | used
    for m, box in enumerate(mark_boxes):
        if m in taken_marks:
            continue
        j = _text_beside(box, parts, label_set, height)
        if j is not None:
            label_set.add(j)
            pairs.append(_pair(parts[j], mark_value(marks[m]), marks[m]["confidence"] * parts[j].score, "label"))
    for i, j in bare_pairs(parts, label_set, height, _same_row, tables):
        pairs.append(_pair(parts[i], dict(form_text(parts[j].words)), (parts[i].score + parts[j].score) / 2, "bare"))  # type: ignore[arg-type]
    return sorted(pairs, key=lambda p: (p["key"]["polygon"][0][1], p["key"]["polygon"][0][0]))


def read_forms(
    image: Any, lines: Sequence[Line], *, fields: Sequence[FormField] = (), rotation: int = 0, tables: Sequence[Sequence[float]] = ()
) -> tuple[list[KeyValue], list[SelectionMark]]:
    """The key-value pairs and selection marks of one page: ``image`` (``PIL``, as submitted), its ``lines`` (in
    its pixels), the PDF form ``fields`` on it (in its pixels; they replace what the pixels say), the
    ``rotation`` the page was read at (0, 90, 180, 270: the page is turned upright first) and the boxes of the
    layout's ``tables`` (in its pixels; their text holds no bare label)."""
    width, height = image.width, image.height
    if rotation:
        image = turn(PageImage(page=0, image=image, scale=1.0), rotation).image
        lines = [mapped_line(line, lambda x, y: _upright(x, y, rotation, width, height)) for line in lines]
    scale = line_height(lines)
    if fields:
        parts = segments(lines)
        fields_up = [{**f, "bbox": list(_upright_box(f["bbox"], rotation, width, height))} for f in fields] if rotation else list(fields)
        pairs, marks = field_forms(fields_up, lambda box: _label_of(box, parts, scale or 20.0))  # type: ignore[arg-type]
    else:
        letters = [(w["polygon"], w["text"]) for line in lines for w in (line.get("words") or estimated_words(dict(line)))
                   if not any(c in MARK_GLYPHS for c in w["text"])]
        marks, ink = find_marks(image, line_height=scale, words=letters)
        up = [_upright_box(t, rotation, width, height) for t in tables if len(t) == 4]
        pairs = link(segments(lines, marks, ink), marks, scale or 20.0, up)
    if rotation:
        back = _Back(rotation, width, height)
        pairs = [back.pair(pair) for pair in pairs]
        marks = [{**m, "polygon": back.polygon(m["polygon"])} for m in marks]
    return pairs, marks


def _pair(label: Segment, value: FormValue | None, score: float, how: str) -> KeyValue:
    return {"key": form_text(label.words), "value": value, "confidence": round(max(0.0, min(1.0, score * PLAINNESS[how])), 3), "source": FROM_LAYOUT}


def _value_of(i: int, parts: Sequence[Segment], used: set[int], height: float) -> tuple[list[int], str]:
    """The segments that answer label ``parts[i]``, and how they were found (``line``, ``right``, ``below``)."""
    label = parts[i]
    row = sorted((j for j, s in enumerate(parts) if j != i and j not in used and _same_row(label.box, s.box) and s.box[0] >= label.box[2] - height * 0.3),
                 key=lambda j: parts[j].box[0])
    found: list[int] = []
    for j in row:
        gap = parts[j].box[0] - (parts[found[-1]].box[2] if found else label.box[2])
        if parts[j].is_label or gap > (SPLIT_GAP if found else RIGHT_GAP) * height:
            break
        found.append(j)
    if found:
        return found, "line" if parts[found[0]].box[0] - label.box[2] <= SPLIT_GAP * height else "right"
    below = [j for j, s in enumerate(parts) if j not in used and not s.is_label and j != i
             and -0.4 * height <= s.box[1] - label.box[3] <= BELOW_GAP * height and s.box[1] > label.box[1] + 0.5 * label.height
             and label.box[0] - height <= s.box[0] <= label.box[2]]
    if below:
        return [min(below, key=lambda j: (parts[j].box[1], parts[j].box[0]))], "below"
    return [], "below"


def _mark_after(label: Segment, boxes: Sequence[Box], taken: set[int], parts: Sequence[Segment], height: float) -> int | None:
    """The check box that follows ``label`` on its row with no text between them."""
    ahead = [m for m, box in enumerate(boxes) if m not in taken and _same_row(label.box, box) and 0 <= box[0] - label.box[2] <= RIGHT_GAP * height]
    if not ahead:
        return None
    m = min(ahead, key=lambda m: boxes[m][0])
    between = any(_same_row(label.box, s.box) and label.box[2] <= s.box[0] < boxes[m][0] for s in parts)
    return None if between else m


def _text_beside(box: Box, parts: Sequence[Segment], taken: set[int], height: float, *, right_only: bool = False) -> int | None:
    """The segment a check box labels: the nearest on its row to its right, else to its left (``SPLIT_GAP`` away at most)."""
    right = [j for j, s in enumerate(parts) if j not in taken and _same_row(box, s.box) and 0 <= s.box[0] - box[2] + height * 0.2 <= SPLIT_GAP * height]
    if right or right_only:
        return min(right, key=lambda j: parts[j].box[0]) if right else None
    left = [j for j, s in enumerate(parts) if j not in taken and _same_row(box, s.box) and 0 <= box[0] - s.box[2] + height * 0.2 <= SPLIT_GAP * height]
    return max(left, key=lambda j: parts[j].box[2]) if left else None


def _label_of(box: Box, parts: Sequence[Segment], height: float) -> FormText | None:
    """The printed label of a form field at ``box``: the text that ends nearest before it on its row (a check
    box's label may follow it), else the text just above it."""
    before = [s for s in parts if _same_row(box, s.box) and -height * 0.3 <= box[0] - s.box[2] <= RIGHT_GAP * height]
    if before:
        return form_text(max(before, key=lambda s: s.box[2]).words)
    after = [s for s in parts if _same_row(box, s.box) and 0 <= s.box[0] - box[2] <= SPLIT_GAP * height]
    if after:
        return form_text(min(after, key=lambda s: s.box[0]).words)
    above = [s for s in parts if 0 <= box[1] - s.box[3] <= 2 * height and s.box[0] < box[2] and s.box[2] > box[0]]
    return form_text(max(above, key=lambda s: s.box[3]).words) if above else None


def _same_row(a: Box, b: Box) -> bool:
    overlap = min(a[3], b[3]) - max(a[1], b[1])
    return overlap > SAME_ROW * min(a[3] - a[1], b[3] - b[1])


def _gap(left: Word, right: Word) -> float:
    return bounds([right["polygon"]])[0] - bounds([left["polygon"]])[2]


def _pieces_at_boxes(word: Word, inner: Sequence[Box], ink: Any) -> list[Word]:
    """``word``, read past the check boxes ``inner``, as the pieces between them: its characters shared among the
    stretches between the boxes by the width of the ink in each (``ink``: the page's binary image; without it,
    the stretches' widths), each piece's polygon its stretch's ink."""
    text = word["text"]
    x0, y0, x1, y1 = bounds([word["polygon"]])
    margin = 0.2 * (inner[0][2] - inner[0][0])  # a box's blurred sides are not characters
    edges = [x0, *(v for b in inner for v in (b[0] - margin, b[2] + margin)), x1]
    spans: list[tuple[float, float]] = []
    for left, right in zip(edges[0::2], edges[1::2], strict=True):
        columns = []
        if ink is not None and right > left:
            # A column with a few pixels of ink is a scan's speckle, not a character.
            columns = (ink[int(y0):int(y1) + 1, int(left):int(right) + 1].sum(axis=0) >= max(2, (y1 - y0) / 10)).nonzero()[0]
        spans.append((left + columns[0], left + columns[-1] + 1) if len(columns) else (left, max(left, right)))
    counts = _shares(text, [b - a for a, b in spans])
    pieces: list[Word] = []
    done = 0
    for (left, right), count in zip(spans, counts, strict=True):
        piece = text[done:done + count].strip()
        done += count
        if piece:
            pieces.append({**word, "text": piece, "polygon": quad((left, y0, right, y1))})
    return pieces


def _shares(text: str, widths: Sequence[float]) -> list[int]:
    """How many characters of ``text`` each stretch of ink ``widths`` holds, in order: each cut where the text's
    typical width (``_width``) up to it, scaled to the ink, best matches the ink up to it (none in a stretch
    without ink).

    >>> _shares("CardCashTransfer", [67, 0, 71, 110])
    [4, 0, 4, 8]
    """
    total = sum(widths)
    if total <= 0 or not text:
        return [len(text)] + [0] * (len(widths) - 1)
    sizes = [_width(c) for c in text]
    scale = total / sum(sizes)
    shares, done, ink, typed = [], 0, 0.0, 0.0
    for width in widths[:-1]:
        ink += width
        best, best_typed = done, typed
        for end in range(done, len(text) + 1):
            candidate = typed + sum(sizes[done:end]) * scale
            if abs(candidate - ink) < abs(best_typed + sum(sizes[done:best]) * scale - ink):
                best = end
        typed += sum(sizes[done:best]) * scale
        shares.append(best - done)
        done = best
    return [*shares, len(text) - done]


def _width(char: str) -> float:
    """A character's typical width in a proportional Latin face, in ems (narrow letters, wide letters, capitals)."""
    if char in "ijlI1.,:;'!|ftr()[]":
        return 0.32
    if char in "mwMW@%":
        return 0.88
    if char.isupper() or char.isdigit():
        return 0.66
    return 0.3 if char.isspace() else 0.55


def _split_word(word: Word, boxes: Sequence[Box], ink: Any = None) -> list[Word]:
    """``word`` cut where the recogniser ran over a check box or a label's colon: at each check box it overlaps
    (``"□No"``, ``"Card□Cash"``, ``"CardCash"`` read past the box; the characters shared among the stretches
    between the boxes by their ink), at a space, and after a colon between letters (``"by:Phone"``; the pieces'
    polygons their share of the word's)."""
    box = bounds([word["polygon"]])
    over = sorted(b for b in boxes if b[0] < box[2] - 2 and b[2] > box[0] + 2 and _same_row(box, b))
    if over and ink is not None:
        text = "".join(c for c in word["text"] if c not in MARK_GLYPHS)
        return [part for piece in _pieces_at_boxes({**word, "text": text}, over, ink) for part in _split_word(piece, ())]
    text = word["text"]
    cuts = [i for i, c in enumerate(text) if c in MARK_GLYPHS or c.isspace()]
    cuts += [i + 1 for i, c in enumerate(text[:-1]) if c in ":：" and i > 0 and text[i - 1].isalpha() and text[i + 1].isalpha()]
    return _cut(word, cuts, boxes) if cuts else [word]


def _cut(word: Word, cuts: Sequence[int], boxes: Sequence[Box]) -> list[Word]:
    """``word`` cut before each of the character indexes ``cuts`` (box characters and spaces at the cuts dropped)."""
    text = word["text"]
    pieces: list[Word] = []
    edges = sorted(set(cuts))
    for start, end in zip([0, *edges], [*edges, len(text)], strict=True):
        piece = text[start:end].strip(MARK_GLYPHS + " ")
        if not piece:
            continue
        first = start + text[start:end].index(piece)
        polygon = stretch(word["polygon"], first / len(text), (first + len(piece)) / len(text))
        pieces.append({**word, "text": piece, "polygon": polygon})
    return _off_boxes(pieces, boxes)


def _off_boxes(pieces: list[Word], boxes: Sequence[Box]) -> list[Word]:
    """``pieces`` with each polygon's ends pulled off a check box they reach into (an even share of a word is not
    where its characters are when a box sits among them); a box inside a piece is ``_split_word``'s."""
    moved: list[Word] = []
    for piece in pieces:
        x0, y0, x1, y1 = original = bounds([piece["polygon"]])
        for box in boxes:
            slack = (box[2] - box[0]) / 2
            if _same_row(original, box) and box[0] - slack <= original[0] <= box[2]:
                x0 = max(x0, box[2] + 1)
            elif _same_row(original, box) and box[0] <= original[2] <= box[2] + slack:
                x1 = min(x1, box[0] - 1)
        moved.append({**piece, "polygon": quad((x0, y0, x1, y1))} if x1 > x0 and (x0, x1) != (original[0], original[2]) else piece)
    return moved


def _mark_between(left: Word, right: Word, boxes: Sequence[Box]) -> bool:
    """Whether a check box lies between two words of a line ("Early [ ] Late": two options, not one phrase)."""
    a, b = bounds([left["polygon"]]), bounds([right["polygon"]])
    return any(a[2] - 2 <= (box[0] + box[2]) / 2 <= b[0] + 2 and _same_row(a, box) for box in boxes)


def _word_height(word: Word) -> float:
    box = bounds([word["polygon"]])
    return box[3] - box[1]


def _ring_read_as_letters(word: Word, boxes: Sequence[Box]) -> bool:
    """Whether ``word`` is nothing but round letters (``ROUND_READINGS``: ``"O"``) over a mark, even in part (a
    word's place within its line may be an estimate): a radio button read as a letter. An option "O" printed
    beside its box does not touch it and is kept."""
    text = word["text"].strip()
    if not text or not set(text) <= set(ROUND_READINGS):
        return False
    x0, y0, x1, y1 = bounds([word["polygon"]])
    return any(min(x1, b[2]) > max(x0, b[0]) and _same_row((x0, y0, x1, y1), b) for b in boxes)


def _in_any(word: Word, boxes: Sequence[Box]) -> bool:
    x0, y0, x1, y1 = bounds([word["polygon"]])
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    return any(b[0] <= cx <= b[2] and b[1] <= cy <= b[3] and (x1 - x0) <= 1.5 * (b[2] - b[0]) for b in boxes)


def _upright(x: float, y: float, rotation: int, width: float, height: float) -> tuple[float, float]:
    """Where a point of the submitted ``width`` x ``height`` page lies on the page turned ``rotation`` degrees
    clockwise (``orientation.turn``), the inverse of ``orientation.submitted_point``.

    >>> _upright(*submitted_point(3, 7, 90, 40, 20), 90, 40, 20)
    (3, 7)
    """
    if rotation == 90:
        return height - y, x
    if rotation == 180:
        return width - x, height - y
    if rotation == 270:
        return y, width - x
    return x, y


def _upright_box(bbox: Sequence[float], rotation: int, width: float, height: float) -> Box:
    a, b = _upright(bbox[0], bbox[1], rotation, width, height), _upright(bbox[2], bbox[3], rotation, width, height)
    return min(a[0], b[0]), min(a[1], b[1]), max(a[0], b[0]), max(a[1], b[1])


class _Back:
    """Maps what was read on the upright page back onto the page as submitted."""

    def __init__(self, rotation: int, width: float, height: float) -> None:
        self._point = lambda x, y: submitted_point(x, y, rotation, width, height)

    def polygon(self, polygon: list[list[float]]) -> list[list[float]]:
        return [[round(float(v), 1) for v in self._point(x, y)] for x, y in polygon]

    def text(self, text: FormText) -> Any:
        return {**text, "polygon": self.polygon(text["polygon"]), "words": [{**w, "polygon": self.polygon(w["polygon"])} for w in text["words"]]}

    def pair(self, pair: KeyValue) -> KeyValue:
        return {**pair, "key": self.text(pair["key"]), "value": self.text(pair["value"]) if pair["value"] else None}


__all__ = ["Segment", "line_height", "link", "quad", "read_forms", "segments"]
