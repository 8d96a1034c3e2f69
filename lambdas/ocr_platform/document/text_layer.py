"""A PDF page's own text layer, read beside its render: lines in the pixels of the rendered page.

Most PDFs a business sends were never scanned: their pages carry the text exactly. pypdfium2 reads it with
a box per character in about 5 ms a dense page, against seconds to recognise the same page. This module only
reads what the layer says; whether to believe it is decided against the page image by
``ocr_platform.engines.text_layer_choice``.

What a ``TextLayer`` holds:

- ``lines``: runs of characters on one baseline, split where pdfium ends a line or where a horizontal gap
  is wider than ``LINE_GAP`` line heights (columns, table cells; ``document.layer_line``), in the same shape as an OCR line. The
  polygon is the union of the characters' loose boxes (the font's ascent to descent, as a text detector
  draws a line) in the pixel coordinates of the rendered page: scaled by the render scale, turned by the
  page's ``/Rotate`` and offset by its crop box, so an overlay lines up with an OCR line's polygon.
- ``unmapped``: characters whose font gives no Unicode value (pdfium's Unicode map errors, and private-use
  or replacement code points): such a layer is text a reader cannot use. A character pdfium flags is mapped after
  all where the round trip through the embedded font's own character map holds (``document.font_map``:
  ``font_mapped`` counts them).
- ``invisible``: whether any character is drawn in an invisible render mode (3, or 7 when it only clips),
  the mark of an earlier OCR's layer over a scan; ``covered_by_image`` whether an image covers most of
  the page, under which visible text is just as hidden.
- ``fonts``: each line's font, so a born-digital document's character maps are checked once per font.
- ``replaced``: surrogate halves without their other half, written as U+FFFD (``document.layer_text``: every
  character is made into writable, normalised text here, once, so no output format meets a surrogate, a control
  character or a presentation form).
- ``skipped``: characters not used for lines: slanted (neither upright nor turned by a multiple of 90
  degrees; OCR reads them instead), without a box, or off the crop box.

A page with text objects that pdfium's text page skips (no width: a vertical font that is not embedded) is read again
with pdfminer.six (``document.layer_reread``), and read so where that finds more of its characters (``reread``).

>>> layer = TextLayer(lines=[], chars=0, unmapped=0, invisible=False, covered_by_image=False, skipped=0)
>>> layer.empty, layer.unmapped_share
(True, 0.0)
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ocr_platform.document.char_boxes import ANGLE_TOLERANCE, PageGeometry, turned_box
from ocr_platform.document.font_map import Extent, FontMaps
from ocr_platform.document.layer_line import LayerLine, LineBuilder, Style
from ocr_platform.document.layer_reread import left_out_objects, reread_page
from ocr_platform.document.layer_text import code_point, is_surrogate, layer_chars, unreadable

__all__ = ["LayerLine", "PageGeometry", "TextLayer", "layer_labels", "layered_pages", "read_text_layer"]

#: Text render modes that draw nothing (3 invisible, 7 clip only): the layer an earlier OCR left over a scan.
INVISIBLE_RENDER_MODES = frozenset({3, 7})
#: A page read again (``document.layer_reread``) is read so where that finds this many times pdfium's characters: a
#: reading that differs by a character or two is no reason to leave pdfium's (the layer check knows its fonts).
REREAD_GAIN = 1.1
#: An image covering this share of the page hides any text drawn beneath it.
IMAGE_COVER_SHARE = 0.5


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
    font_mapped: int = 0
    reread: bool = False

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


def layer_labels(pages: Sequence[Any], raw_pages: Sequence[Mapping[str, Any]]) -> list[str]:
    """How ``engine.models`` names the readers of the text layer, where some result page took text from it
    (``text_source`` ``text_layer`` or ``mixed``): pdfium's, and pdfminer.six's where a page was read again
    (its raw page's ``text_layer.read_by``); none where no page did."""
    from importlib.metadata import version

    if not any(page.get("text_source") in ("text_layer", "mixed") for page in pages):
        return []
    labels = [f"PDF text layer (pypdfium2 {version('pypdfium2')})"]
    if any((raw.get("text_layer") or {}).get("read_by") == "pdfminer.six" for raw in raw_pages):
        labels.append(f"PDF text layer (pdfminer.six {version('pdfminer.six')})")
    return labels


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


def read_text_layer(page: Any, textpage: Any, *, scale: float, index: int | None = None) -> TextLayer:
    """The text layer of an open pypdfium2 page (``page.get_textpage()`` as ``textpage``), in pixels at ``scale``;
    ``index`` (the page's, from 0) lets a page whose text objects pdfium's text page skips be read again
    (``document.layer_reread``)."""
    import pypdfium2.raw as pdfium_c

    left, bottom, right, top = page.get_bbox()  # the crop box, inherited from the page tree where the page has none
    geometry = PageGeometry(left=left, bottom=bottom, right=right, top=top, rotation=page.get_rotation() % 360, scale=scale)
    handle = textpage.raw
    if index is not None and left_out_objects(page):
        reread = _reread_layer(page, index, geometry, handle)
        if reread is not None:
            return reread
    reader = _CharReader(handle, geometry)
    builder = LineBuilder(geometry)
    unmapped = skipped = replaced = 0
    invisible = False
    # About 2,500 characters a dense page: the pdfium calls are bound once, and upright text skips the turn.
    unicode_of, generated, map_error, angle_of = (
        pdfium_c.FPDFText_GetUnicode, pdfium_c.FPDFText_IsGenerated, pdfium_c.FPDFText_HasUnicodeMapError, pdfium_c.FPDFText_GetCharAngle,
    )
    count = max(pdfium_c.FPDFText_CountChars(handle), 0)
    font_mapped = _font_mapped(reader, range(count))
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
        guessed = bool(map_error(handle, index))
        lacks_map = guessed or unreadable(char)
        letters = layer_chars(char)
        if not letters:  # a control character: no text
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
        lacks_map = lacks_map and index not in font_mapped  # pdfium's guess, drawn by the glyph the font's own map gives it
        unmapped += lacks_map
        builder.add(letters, turned_box(box, quarter) if quarter else box, quarter, style, unmapped=lacks_map)
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
        font_mapped=len(font_mapped),
    )


def _reread_layer(page: Any, index: int, geometry: PageGeometry, handle: Any) -> TextLayer | None:
    """The page's layer as pdfminer.six reads it, where that holds ``REREAD_GAIN`` times the characters (spaces aside)
    of pdfium's text page (``document.layer_reread``); ``None`` otherwise. Its text objects' render modes still say whether it is invisible."""
    import pypdfium2.raw as pdfium_c

    try:
        reread = reread_page(page, index)
    except Exception:  # noqa: BLE001 - the second reader failing on a page leaves it pdfium's reading, not a failed page
        return None
    if reread is None:
        return None
    chars = [char for char in reread if not char.text.isspace()]
    indexes = range(max(pdfium_c.FPDFText_CountChars(handle), 0))
    kept = sum(not pdfium_c.FPDFText_IsGenerated(handle, i) and not chr(pdfium_c.FPDFText_GetUnicode(handle, i) or 32).isspace() for i in indexes)
    if len(chars) < REREAD_GAIN * kept or not chars:
        return None
    modes = {pdfium_c.FPDFTextObj_GetTextRenderMode(obj.raw) for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_TEXT])}
    invisible = bool(modes & INVISIBLE_RENDER_MODES)
    style_invisible = bool(modes) and modes <= INVISIBLE_RENDER_MODES
    builder = LineBuilder(geometry)
    unmapped = skipped = replaced = 0
    for char in chars:
        replaced += "\ufffd" in char.text and not char.unmapped
        letters = layer_chars(char.text)
        inside = geometry.left <= (char.box[0] + char.box[2]) / 2 <= geometry.right and geometry.bottom <= (char.box[1] + char.box[3]) / 2 <= geometry.top
        if not letters or not inside:
            skipped += 1
            builder.break_line()
            continue
        unmapped += char.unmapped
        builder.add(letters, turned_box(char.box, char.quarter), char.quarter, Style(char.font, style_invisible), unmapped=char.unmapped)
    lines = builder.finish()
    return TextLayer(
        lines=lines, chars=builder.chars + skipped, unmapped=unmapped, invisible=invisible,
        covered_by_image=bool(lines) and _image_covers_page(page, geometry), skipped=skipped, fonts={line.font for line in lines},
        replaced=replaced, reread=True,
    )


class _CharReader:
    """Per-character boxes (pixels) and styles (font, render mode), the style cached per text object."""

    def __init__(self, textpage: Any, geometry: PageGeometry) -> None:
        import pypdfium2.raw as pdfium_c

        self._c = pdfium_c
        self.textpage = textpage
        self._geometry = geometry
        self._rect = pdfium_c.FS_RECTF()
        self._styles: dict[int, Style] = {}
        self._fonts: dict[int, Any] = {}

    def box(self, index: int) -> tuple[float, float, float, float] | None:
        """The character's loose box in page space (``left, bottom, right, top``); ``None`` off the crop box."""
        if not self._c.FPDFText_GetLooseCharBox(self.textpage, index, ctypes.byref(self._rect)):
            return None
        rect, page = self._rect, self._geometry
        if rect.right <= rect.left or rect.top <= rect.bottom:
            return None
        x, y = (rect.left + rect.right) / 2, (rect.top + rect.bottom) / 2
        if not (page.left <= x <= page.right and page.bottom <= y <= page.top):
            return None
        return rect.left, rect.bottom, rect.right, rect.top

    def style(self, index: int) -> Style:
        obj = self._c.FPDFText_GetTextObject(self.textpage, index)
        key = ctypes.cast(obj, ctypes.c_void_p).value or 0
        style = self._styles.get(key)
        if style is None:
            style = self._styles[key] = self._read_style(obj) if key else Style("", False)
        return style

    def font(self, index: int) -> Any:
        """The pdfium font handle of the character's text object (``None`` without one)."""
        obj = self._c.FPDFText_GetTextObject(self.textpage, index)
        key = ctypes.cast(obj, ctypes.c_void_p).value or 0
        if key not in self._fonts:
            self._fonts[key] = self._c.FPDFTextObj_GetFont(obj) if key else None
        return self._fonts[key]

    def extent(self, index: int, loose: tuple[float, float, float, float]) -> Extent | None:
        """The ink of an upright character about its origin, as shares of its advance (the width of its ``loose`` box)."""
        left, right, bottom, top = (ctypes.c_double() for _ in range(4))
        x, y = ctypes.c_double(), ctypes.c_double()
        advance = loose[2] - loose[0]
        if advance <= 0 or not self._c.FPDFText_GetCharBox(self.textpage, index, *map(ctypes.byref, (left, right, bottom, top))):
            return None
        if not self._c.FPDFText_GetCharOrigin(self.textpage, index, ctypes.byref(x), ctypes.byref(y)):
            return None
        return (left.value - x.value) / advance, (right.value - x.value) / advance, (bottom.value - y.value) / advance, (top.value - y.value) / advance

    def _read_style(self, obj: Any) -> Style:
        mode = self._c.FPDFTextObj_GetTextRenderMode(obj)
        font = self._c.FPDFTextObj_GetFont(obj)
        name = ""
        if font:
            buffer = ctypes.create_string_buffer(128)
            length = self._c.FPDFFont_GetBaseFontName(font, buffer, len(buffer))
            name = buffer.raw[: max(0, min(length, len(buffer)) - 1)].decode("latin-1")
        return Style(font=name, invisible=mode in INVISIBLE_RENDER_MODES)


def _font_mapped(reader: _CharReader, indexes: range) -> set[int]:
    """The characters pdfium guessed (no Unicode mapping) whose guess round-trips through the embedded font's own
    character map (``document.font_map``): upright ones of a font whose guesses on the page hold together."""
    import pypdfium2.raw as pdfium_c

    handle = reader.textpage
    guessed = []
    for index in indexes:
        code = pdfium_c.FPDFText_GetUnicode(handle, index)
        if not pdfium_c.FPDFText_HasUnicodeMapError(handle, index) or not 0 < code < 0x110000 or is_surrogate(code) or unreadable(chr(code)):
            continue
        box = reader.box(index) if _quarter_turns(pdfium_c.FPDFText_GetCharAngle(handle, index)) == 0 else None
        if box is not None:
            guessed.append((index, reader.font(index), chr(code), reader.extent(index, box)))
    if not guessed:
        return set()
    held = FontMaps().confirmed([(font, char, drawn) for _, font, char, drawn in guessed])
    return {index for (index, *_), ok in zip(guessed, held, strict=True) if ok}


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
