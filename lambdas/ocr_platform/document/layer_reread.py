"""A page's text layer read a second way, where pdfium's text page leaves whole text objects out.

pdfium's text page skips a text object whose box has no width. A vertical CID font (``Identity-V``) that is not
embedded, with no system font to stand in for it, draws its glyphs with no width, so pdfium's text keeps only the
columns holding a glyph it can measure (pdfminer.six's ``jo.pdf``: 262 of its 880 characters). Where a page has
such objects, pdfminer.six, which reads a font's characters from its CMap and its advance from the font's metrics,
reads the page's characters again, each with its box and whether its font writes vertically; ``document.text_layer``
keeps that reading where it holds more characters than pdfium's.

pdfminer.six is pure Python: it reads about 100,000 bytes of drawing instructions a second and holds about 1 KB a
byte, so a page whose instructions unpack past ``max_reread_content_bytes`` (counted first, as intake counts every
page: ``document.pdf_budget``) is not read again and keeps pdfium's reading.

A vertical character goes to the line builder turned a quarter turn clockwise (``VERTICAL_QUARTER``), so a column
reads from top to bottom as a line reads left to right, and columns follow one another from right to left.
"""

from __future__ import annotations

import io
import logging
import math
from dataclasses import dataclass
from typing import Any

from ocr_platform.core import defaults
from ocr_platform.core.errors import JobError
from ocr_platform.document.char_boxes import ANGLE_TOLERANCE, Box
from ocr_platform.document.layer_text import is_surrogate
from ocr_platform.document.pdf_budget import PdfContentBudget

#: Quarter turns (counter-clockwise) of vertical text: it runs down the page.
VERTICAL_QUARTER = 3
#: pdfium's text page skips a text object narrower than this (points): pdfium's ``kSizeEpsilon``.
NO_WIDTH = 1e-4


@dataclass(frozen=True)
class ReadChar:
    """One character of the second reading: its text (U+FFFD without a Unicode mapping), page-space box, quarter
    turns (its matrix's, ``VERTICAL_QUARTER`` more where its font writes vertically) and font name."""

    text: str
    box: Box
    quarter: int
    font: str
    unmapped: bool


def left_out_objects(page: Any) -> int:
    """The text objects of an open pypdfium2 page that pdfium's text page skips: a height but no width."""
    import pypdfium2.raw as pdfium_c

    left_out = 0
    for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_TEXT]):
        left, bottom, right, top = obj.get_bounds()
        left_out += right - left < NO_WIDTH < top - bottom
    return left_out


def reread_page(page: Any, index: int, *, max_content_bytes: int = defaults.max_reread_content_bytes()) -> list[ReadChar] | None:
    """The characters of page ``index`` (from 0) of ``page``'s document as pdfminer.six reads them, in the order the
    page draws them; upright, turned by quarter turns or vertical (slanted or mirrored text is OCR's). ``None`` for a
    page whose drawing instructions unpack past ``max_content_bytes``."""
    import pypdfium2 as pdfium
    from pdfminer.layout import LTChar
    from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
    from pdfminer.pdfpage import PDFPage

    single = pdfium.PdfDocument.new()
    try:
        single.import_pages(page.pdf, [index])
        single[0].set_rotation(0)  # pdfminer turns its coordinates by /Rotate; pdfium's boxes are unturned
        buffer = io.BytesIO()
        single.save(buffer)
    finally:
        single.close()
    buffer.seek(0)
    try:
        PdfContentBudget(buffer, max_content_bytes).check(1)
    except JobError:
        logging.getLogger(__name__).info("page %d draws more than %d bytes: pdfium's reading is kept", index + 1, max_content_bytes)
        return None
    buffer.seek(0)
    manager = PDFResourceManager()
    device = _aggregator(manager)
    interpreter = PDFPageInterpreter(manager, device)
    chars: list[ReadChar] = []
    for pdf_page in PDFPage.get_pages(buffer):
        x0, y0 = pdf_page.mediabox[0], pdf_page.mediabox[1]  # pdfminer's coordinates start at the media box
        interpreter.process_page(pdf_page)
        items = [item for item in _walk(device.get_result()) if isinstance(item, LTChar)]
        for item, vertical in zip(items, device.vertical, strict=True):
            turns = _quarter_turns(item.matrix)
            if turns is None:
                continue
            text = "".join("\ufffd" if is_surrogate(ord(letter)) else letter for letter in item.get_text())  # a lone half
            unmapped = text.startswith("(cid:")
            box = (item.x0 + x0, item.y0 + y0, item.x1 + x0, item.y1 + y0)
            quarter = (turns + VERTICAL_QUARTER * vertical) % 4
            chars.append(ReadChar("\ufffd" if unmapped else text, box, quarter, item.fontname, unmapped))
        break
    return chars


def _quarter_turns(matrix: tuple[float, float, float, float, float, float]) -> int | None:
    """A character's rendering matrix as quarter turns (counter-clockwise); ``None`` when slanted or mirrored.

    >>> _quarter_turns((1, 0, 0, 1, 5, 5)), _quarter_turns((0, 1, -1, 0, 5, 5)), _quarter_turns((-1, 0.0, 0.0, -1, 0, 0))
    (0, 1, 2)
    >>> _quarter_turns((1, 0.5, 0, 1, 0, 0)), _quarter_turns((1, 0, 0, -1, 0, 0))
    (None, None)
    """
    a, b, c, d, _, _ = matrix
    if a * d - b * c <= 0:
        return None
    turns = math.atan2(b, a) / (math.pi / 2)
    nearest = round(turns)
    if abs(turns - nearest) * (math.pi / 2) > ANGLE_TOLERANCE or abs(math.remainder(math.atan2(-c, d) - math.atan2(b, a), math.tau)) > ANGLE_TOLERANCE:
        return None
    return nearest % 4


def _walk(container: Any) -> Any:
    """The items of a pdfminer layout, those of its figures (form XObjects) in their place: the order drawn."""
    from pdfminer.layout import LTFigure

    for item in container:
        if isinstance(item, LTFigure):
            yield from _walk(item)
        else:
            yield item


def _aggregator(manager: Any) -> Any:
    """pdfminer's page aggregator, without layout analysis, noting whether each character's font writes vertically
    (pdfminer.six is imported only for a page read again)."""
    from pdfminer.converter import PDFPageAggregator

    class Aggregator(PDFPageAggregator):
        def __init__(self) -> None:
            super().__init__(manager, laparams=None)
            self.vertical: list[bool] = []

        def begin_page(self, page: Any, ctm: Any) -> None:
            self.vertical = []
            super().begin_page(page, ctm)

        def render_char(self, matrix: Any, font: Any, *args: Any) -> float:
            advance: float = super().render_char(matrix, font, *args)
            self.vertical.append(bool(font.is_vertical()))
            return advance

    return Aggregator()
