"""A PDF page's own text layer, read beside its render: lines in the pixels of the rendered page.

Most PDFs a business sends were never scanned: their pages carry the text exactly. pypdfium2 reads it with
a box per character in about 5 ms a dense page, against seconds to recognise the same page. This module only
reads what the layer says; whether to believe it is decided against the page image by
``ocr_platform.engines.text_layer_choice``.

What a ``TextLayer`` holds:

- ``lines``: runs of characters on one baseline, split where pdfium ends a line or where a horizontal gap
  is wider than ``LINE_GAP`` line heights (columns, table cells), in the same shape as an OCR line. The
  polygon is the union of the characters' loose boxes (the font's ascent to descent, as a text detector
  draws a line) in the pixel coordinates of the rendered page: scaled by the render scale, turned by the
  page's ``/Rotate`` and offset by its crop box, so an overlay lines up with an OCR line's polygon.
- ``unmapped``: characters whose font gives no Unicode value (pdfium's Unicode map errors, and private-use
  or replacement code points): such a layer is text a reader cannot use.
- ``invisible``: whether any character is drawn in an invisible render mode (3, or 7 when it only clips),
  the mark of an earlier OCR's layer over a scan; ``covered_by_image`` whether an image covers most of
  the page, under which visible text is just as hidden.
- ``fonts``: each line's font, so a born-digital document's character maps are checked once per font.
- ``replaced``: surrogate halves without their other half, written as U+FFFD (``document.layer_text``: every
  character is made into writable, normalised text here, once, so no output format meets a surrogate, a control
  character or a presentation form).
- ``skipped``: characters not used for lines: slanted (neither upright nor turned by a multiple of 90
  degrees; OCR reads them instead), without a box, or off the crop box.

>>> layer = TextLayer(lines=[], chars=0, unmapped=0, invisible=False, covered_by_image=False, skipped=0)
>>> layer.empty, layer.unmapped_share
(True, 0.0)
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ocr_platform.core.words import word_spans
from ocr_platform.document.char_boxes import char_gap, turn, turned_box, union_box
from ocr_platform.document.layer_text import ZWNJ, code_point, is_joiner_space, is_surrogate, layer_chars, normal_text, unreadable
from ocr_platform.document.marks import LineChars, attach_marks, is_mark, stands_over

#: Characters further apart than this many line heights start a new line (a column gap, a table cell).
LINE_GAP = 1.2
#: A character further than this (radians) from a multiple of 90 degrees is slanted text, left to OCR.
ANGLE_TOLERANCE = 0.05
#: Text render modes that draw nothing (3 invisible, 7 clip only): the layer an earlier OCR left over a scan.
INVISIBLE_RENDER_MODES = frozenset({3, 7})
#: An image covering this share of the page hides any text drawn beneath it.
IMAGE_COVER_SHARE = 0.5


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
    """

    text: str
    polygon: list[list[float]]
    font: str = ""
    invisible: bool = False
    words: list[tuple[str, list[list[float]]]] = field(default_factory=list)
    unmapped: int = 0

    @property
    def box(self) -> tuple[float, float, float, float]:
        xs = [p[0] for p in self.polygon]
        ys = [p[1] for p in self.polygon]
        return min(xs), min(ys), max(xs), max(ys)

    @property
    def height(self) -> float:
        x0, y0, x1, y1 = self.box
        return y1 - y0


@dataclass
class TextLayer:
    """What one page's text layer says (see the module docstring)."""

    lines: list[LayerLine]
    chars: int
    unmapped: int
    invisible: bool
    covered_by_image: bool
    skipped: int
    fonts: set[str] = field(default_factory=set)
    replaced: int = 0

    @property
    def empty(self) -> bool:
        return not any(line.text.strip() for line in self.lines)

    @property
    def unmapped_share(self) -> float:
        return self.unmapped / self.chars if self.chars else 0.0

    @property
    def hidden(self) -> bool:
        """Text a reader of the page cannot see: an earlier OCR's layer, not the page's own typesetting."""
        return self.invisible or self.covered_by_image


@dataclass(frozen=True)
class PageGeometry:
    """How a point of a PDF page's user space lands on its render (pdfium renders the crop box, turned by ``/Rotate``),
    and back: the text layer maps characters to pixels, the searchable PDF maps a result's pixels to user space.

    >>> geometry = PageGeometry(left=0, bottom=0, right=600, top=800, rotation=0, scale=2.0)
    >>> geometry.to_pixels(100, 700)
    (200.0, 200.0)
    >>> turned = PageGeometry(left=0, bottom=0, right=600, top=800, rotation=90, scale=1.0)
    >>> turned.to_pixels(100, 700), turned.to_user(700, 100)
    ((700.0, 100.0), (100.0, 700.0))
    """

    left: float
    bottom: float
    right: float
    top: float
    rotation: int
    scale: float

    def to_pixels(self, x: float, y: float) -> tuple[float, float]:
        u, v = x - self.left, self.top - y
        width, height = self.right - self.left, self.top - self.bottom
        if self.rotation == 90:
            u, v = height - v, u
        elif self.rotation == 180:
            u, v = width - u, height - v
        elif self.rotation == 270:
            u, v = v, width - u
        return u * self.scale, v * self.scale

    def to_user(self, x: float, y: float) -> tuple[float, float]:
        """The user-space point of the rendered pixel (``x``, ``y``): ``to_pixels`` undone."""
        u, v = x / self.scale, y / self.scale
        width, height = self.right - self.left, self.top - self.bottom
        if self.rotation == 90:
            u, v = v, height - u
        elif self.rotation == 180:
            u, v = width - u, height - v
        elif self.rotation == 270:
            u, v = width - v, u
        return self.left + u, self.top - v


def layer_label() -> str:
    """How ``engine.models`` names the text layer where a page's text came from it."""
    from importlib.metadata import version

    return f"PDF text layer (pypdfium2 {version('pypdfium2')})"


def used_layer(pages: list[Any]) -> bool:
    """Whether any result page took text from its layer (``text_source`` ``text_layer`` or ``mixed``)."""
    return any(page.get("text_source") in ("text_layer", "mixed") for page in pages)


#: A page with at least this many characters in its text layer is priced as read from it (``layered_pages``).
MIN_LAYER_CHARS = 20


def layered_pages(path: Path, pages: Sequence[int]) -> set[int]:
    """The ``pages`` of the PDF at ``path`` that carry a text layer (``MIN_LAYER_CHARS`` characters), for
    pricing a job before it is split: about 2 ms a page, no rendering. Not a PDF: none. A page pdfium cannot
    load has none (the page loop fails that page alone, ``core.page_failures``)."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    try:
        pdf = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError:
        return set()
    layered = set()
    try:
        for number in pages:
            try:
                page = pdf[number - 1]
            except pdfium.PdfiumError:
                continue
            textpage = page.get_textpage()
            if pdfium_c.FPDFText_CountChars(textpage.raw) >= MIN_LAYER_CHARS:
                layered.add(number)
            textpage.close()
            page.close()
    finally:
        pdf.close()
    return layered


def read_text_layer(page: Any, textpage: Any, *, scale: float) -> TextLayer:
    """The text layer of an open pypdfium2 page (``page.get_textpage()`` as ``textpage``), in pixels at ``scale``."""
    import pypdfium2.raw as pdfium_c

    left, bottom, right, top = page.get_bbox()  # the crop box, inherited from the page tree where the page has none
    geometry = PageGeometry(left=left, bottom=bottom, right=right, top=top, rotation=page.get_rotation() % 360, scale=scale)
    handle = textpage.raw
    reader = _CharReader(handle, geometry)
    builder = _LineBuilder(geometry)
    unmapped = skipped = replaced = 0
    invisible = False
    # About 2,500 characters a dense page: the pdfium calls are bound once, and upright text skips the turn.
    unicode_of, generated, map_error, angle_of = (
        pdfium_c.FPDFText_GetUnicode, pdfium_c.FPDFText_IsGenerated, pdfium_c.FPDFText_HasUnicodeMapError, pdfium_c.FPDFText_GetCharAngle,
    )
    count = max(pdfium_c.FPDFText_CountChars(handle), 0)
    paired = -1  # the index of a low surrogate already joined to the high one before it
    for index in range(count):
        if index == paired:
            continue
        code = unicode_of(handle, index)
        if is_surrogate(code):
            joined = code_point(code, unicode_of(handle, index + 1) if index + 1 < count else None)
            if joined is None:
                replaced += 1
            else:
                paired = index + 1
            code = joined or 0xFFFD
        char = chr(code) if 0 < code < 0x110000 else "\ufffd"
        if generated(handle, index):
            builder.generated(char)
            continue
        if char.isspace():
            builder.space(reader.box(index))
            continue
        lacks_map = bool(map_error(handle, index)) or unreadable(char)
        unmapped += lacks_map
        char = layer_chars(char)
        if not char:  # a control character: no text
            skipped += 1
            continue
        style = reader.style(index)
        invisible = invisible or style.invisible
        quarter = _quarter_turns(angle_of(handle, index))
        box = reader.box(index) if quarter is not None else None
        if box is None or quarter is None:
            skipped += 1
            builder.break_line()
            continue
        builder.add(char, turned_box(box, quarter) if quarter else box, quarter, style, unmapped=lacks_map)
    lines = builder.finish()
    return TextLayer(
        lines=lines,
        chars=builder.chars + skipped,
        unmapped=unmapped,
        invisible=invisible,
        covered_by_image=bool(lines) and _image_covers_page(page, geometry),
        skipped=skipped,
        fonts={line.font for line in lines},
        replaced=replaced,
    )


@dataclass(frozen=True)
class _Style:
    font: str
    invisible: bool


class _CharReader:
    """Per-character boxes (pixels) and styles (font, render mode), the style cached per text object."""

    def __init__(self, textpage: Any, geometry: PageGeometry) -> None:
        import pypdfium2.raw as pdfium_c

        self._c = pdfium_c
        self._textpage = textpage
        self._geometry = geometry
        self._rect = pdfium_c.FS_RECTF()
        self._styles: dict[int, _Style] = {}

    def box(self, index: int) -> tuple[float, float, float, float] | None:
        """The character's loose box in page space (``left, bottom, right, top``); ``None`` off the crop box."""
        if not self._c.FPDFText_GetLooseCharBox(self._textpage, index, ctypes.byref(self._rect)):
            return None
        rect, page = self._rect, self._geometry
        if rect.right <= rect.left or rect.top <= rect.bottom:
            return None
        x, y = (rect.left + rect.right) / 2, (rect.top + rect.bottom) / 2
        if not (page.left <= x <= page.right and page.bottom <= y <= page.top):
            return None
        return rect.left, rect.bottom, rect.right, rect.top

    def style(self, index: int) -> _Style:
        obj = self._c.FPDFText_GetTextObject(self._textpage, index)
        key = ctypes.cast(obj, ctypes.c_void_p).value or 0
        style = self._styles.get(key)
        if style is None:
            style = self._styles[key] = self._read_style(obj) if key else _Style("", False)
        return style

    def _read_style(self, obj: Any) -> _Style:
        mode = self._c.FPDFTextObj_GetTextRenderMode(obj)
        font = self._c.FPDFTextObj_GetFont(obj)
        name = ""
        if font:
            buffer = ctypes.create_string_buffer(128)
            length = self._c.FPDFFont_GetBaseFontName(font, buffer, len(buffer))
            name = buffer.raw[: max(0, min(length, len(buffer)) - 1)].decode("latin-1")
        return _Style(font=name, invisible=mode in INVISIBLE_RENDER_MODES)


class _LineBuilder:
    """Collects characters into lines: same direction and baseline, no wide gap, no line break from pdfium.

    Boxes arrive in the text's own frame (``turned_box``: the page turned so the text runs left to
    right, y up); a finished line's corners are turned back and mapped to pixels, so its polygon starts
    at the line's top-left in reading direction whatever the text's or the page's rotation.
    """

    def __init__(self, geometry: PageGeometry) -> None:
        self.geometry = geometry
        self.lines: list[LayerLine] = []
        self.chars = 0
        self._text: list[str] = []
        self._boxes: list[tuple[float, float, float, float] | None] = []  # each of _text's characters' (None: a space)
        self._line_chars: list[LineChars] = []  # each finished line's characters, for marks put back (document.marks)
        self._marks: list[tuple[str, tuple[float, float, float, float], int]] = []
        self._box: list[float] | None = None
        self._last: tuple[float, float, float, float] | None = None
        self._quarter = 0
        self._style = _Style("", False)
        self._pending_space = False
        self._unmapped = 0
        self._tops: list[tuple[int, float]] = []  # each line's quarter turns and top, in its text's own frame

    def generated(self, char: str) -> None:
        if char in "\r\n":
            self.break_line()
        else:
            self.space()

    def space(self, box: tuple[float, float, float, float] | None = None) -> None:
        """A space; one drawn over the Arabic letter before it is no gap between words but a non-joiner (``layer_text``)."""
        if box is not None and self._last is not None and not self._quarter and is_joiner_space(self._text[-1], self._last, box):
            self._text.append(ZWNJ)
            self._boxes.append(self._last)
            return
        self._pending_space = bool(self._text)

    def break_line(self) -> None:
        if self._text and self._box is not None:
            chars = LineChars(self._text, self._boxes, self._quarter)
            text, words = self._text_and_words(chars)
            if text:
                polygon = self._polygon(self._box, self._quarter)
                self.lines.append(LayerLine(
                    text=text, polygon=polygon, font=self._style.font, invisible=self._style.invisible, words=words, unmapped=self._unmapped,
                ))
                self._line_chars.append(chars)
                self._tops.append((self._quarter, self._box[3]))
        self._text, self._boxes, self._box, self._last, self._pending_space, self._unmapped = [], [], None, None, False, 0

    def _text_and_words(self, chars: LineChars) -> tuple[str, list[tuple[str, list[list[float]]]]]:
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

    def add(self, char: str, box: tuple[float, float, float, float], quarter: int, style: _Style, *, unmapped: bool = False) -> None:
        self.chars += 1
        if is_mark(char) and not (self._last is not None and quarter == self._quarter and stands_over(box, self._last)):
            self._marks.append((char, box, quarter))  # away from its letter: put back by finish
            return
        if self._text and (quarter != self._quarter or not self._continues(box)):
            self.break_line()
        if not self._text:
            self._style, self._quarter = style, quarter
        elif self._pending_space or self._apart(box):
            self._text.append(" ")
            self._boxes.append(None)
        self._pending_space = False
        self._unmapped += unmapped
        self._text.extend(char)
        self._boxes.extend([box] * len(char))
        x0, y0, x1, y1 = box
        self._box = [x0, y0, x1, y1] if self._box is None else [min(self._box[0], x0), min(self._box[1], y0), max(self._box[2], x1), max(self._box[3], y1)]
        self._last = box

    def finish(self) -> list[LayerLine]:
        """The lines, top to bottom: pdfium hands the characters of some turned pages (``/Rotate 90``) over from
        the last line up, so lines that mostly climb the page are put back in reading order."""
        self.break_line()
        for index in attach_marks(self._line_chars, self._marks):
            self.lines[index].text, self.lines[index].words = self._text_and_words(self._line_chars[index])
        steps = [b - a for (qa, a), (qb, b) in zip(self._tops, self._tops[1:], strict=False) if qa == qb]
        if sum(step > 0 for step in steps) > sum(step < 0 for step in steps):
            self.lines.reverse()
        return self.lines

    def _continues(self, box: tuple[float, float, float, float]) -> bool:
        assert self._last is not None and self._box is not None
        height = max(self._box[3] - self._box[1], 1e-3)
        middle, line_middle = (box[1] + box[3]) / 2, (self._box[1] + self._box[3]) / 2
        if abs(middle - line_middle) > height / 2:
            return False
        return -height <= char_gap(self._last, box) <= LINE_GAP * height

    def _apart(self, box: tuple[float, float, float, float]) -> bool:
        """Characters with a gap of a quarter line height between them are separate words, spaced or not."""
        assert self._last is not None and self._box is not None
        return char_gap(self._last, box) > 0.25 * max(self._box[3] - self._box[1], 1e-3)


def _quarter_turns(angle: float) -> int | None:
    """A character's angle (radians, counter-clockwise; -1 when pdfium has none) as quarter turns; ``None`` when slanted."""
    if angle < 0:
        return 0
    turns = angle / (math.pi / 2)
    nearest = round(turns)
    if abs(turns - nearest) * (math.pi / 2) > ANGLE_TOLERANCE:
        return None
    return nearest % 4


def _image_covers_page(page: Any, geometry: PageGeometry) -> bool:
    """Whether one image object covers ``IMAGE_COVER_SHARE`` of the page (a scan, with any text beneath it hidden)."""
    import pypdfium2.raw as pdfium_c

    page_area = (geometry.right - geometry.left) * (geometry.top - geometry.bottom)
    if page_area <= 0:
        return False
    for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=2):
        x0, y0, x1, y1 = obj.get_bounds()
        if (x1 - x0) * (y1 - y0) >= IMAGE_COVER_SHARE * page_area:
            return True
    return False
