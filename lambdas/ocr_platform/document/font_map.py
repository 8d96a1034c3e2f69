"""A text layer's guessed characters checked against the embedded font's own character map: the round trip.

Where a PDF font gives no Unicode value for a glyph (no ``/ToUnicode`` entry, no encoding pdfium knows), pdfium hands
the glyph's character code over as its text and flags it (``FPDFText_HasUnicodeMapError``). That guess is right where
the PDF's maker used Unicode values as codes (pdf.js's ``javauninstall-7r.pdf``: Japanese, every character flagged)
and garbage where the codes are glyph numbers. The font program embedded in the PDF usually carries its own
character map (a TrueType or OpenType ``cmap``: which glyph draws each Unicode character), so a guess can be checked
without reading the ink: it is taken as mapped when the embedded font's own map sends the guessed character to a
glyph of the very shape drawn, that is the same ink extent about its origin (``Extent``: left, right, bottom and top
as shares of the advance width, within ``MATCH_TOLERANCE``). A wrong guess lands on another glyph, or on none.

FreeType, through Pillow (``ImageFont``), reads the font program the way pdfium drew it (``FPDFFont_GetFontData``
gives its bytes). A font that is not embedded (what is drawn is this machine's substitute), or whose program has no
Unicode map (a CID-keyed CFF font, such as the Korean ``KoPubWorld`` fonts of docling's ``skipped_1page.pdf``),
confirms nothing: its guessed characters stay unmapped.

>>> within((0.06, 0.94, -0.04, 0.77), (0.06, 0.93, -0.04, 0.76)), within((0.06, 0.94, -0.04, 0.77), (0.3, 0.7, 0.5, 0.9))
(True, False)
"""

from __future__ import annotations

import ctypes
import functools
import io
from dataclasses import dataclass, field
from typing import Any

#: A glyph's ink about its origin: left, right, bottom, top, each a share of its advance width (y up).
Extent = tuple[float, float, float, float]

#: Pixels per em the font's glyphs are drawn at to measure them (FreeType's hinting moves an edge by under 1 %).
RENDER_SIZE = 256
#: How far (share of the advance width) each edge of the drawn glyph and of the font's glyph for the guess may differ.
MATCH_TOLERANCE = 0.05
#: Font programs kept loaded, by content: a document's fonts recur on every page.
FONT_CACHE = 32
#: A character no font maps (a Unicode noncharacter): what the font draws for it is its missing-glyph box.
_NO_CHARACTER = "\uffff"


def within(drawn: Extent, font: Extent) -> bool:
    """Whether two glyph extents are the same shape's, within ``MATCH_TOLERANCE``."""
    return all(abs(a - b) <= MATCH_TOLERANCE for a, b in zip(drawn, font, strict=True))


@dataclass
class _Program:
    """One embedded font program, loaded, with the extents measured so far (``None``: the font has no glyph for it)."""

    font: Any
    missing: tuple[Any, ...]
    extents: dict[str, Extent | None] = field(default_factory=dict)

    def extent(self, char: str) -> Extent | None:
        if char not in self.extents:
            self.extents[char] = self._measure(char)
        return self.extents[char]

    def _measure(self, char: str) -> Extent | None:
        try:
            mask, (x, y) = self.font.getmask2(char, mode="L", anchor="ls")
            advance = float(self.font.getlength(char))
        except (OSError, ValueError):
            return None
        if (mask.size, (x, y), advance) == self.missing or advance <= 0:
            return None
        box = mask.getbbox()
        if box is None:
            return None
        return (x + box[0]) / advance, (x + box[2]) / advance, -(y + box[3]) / advance, -(y + box[1]) / advance


@functools.lru_cache(maxsize=FONT_CACHE)
def _program(data: bytes) -> _Program | None:
    """The font program ``data`` loaded with its Unicode map, or ``None`` (no Unicode map, or not a font FreeType reads)."""
    from PIL import ImageFont

    try:
        font = ImageFont.truetype(io.BytesIO(data), RENDER_SIZE, layout_engine=ImageFont.Layout.BASIC)
        mask, offset = font.getmask2(_NO_CHARACTER, mode="L", anchor="ls")
        return _Program(font=font, missing=(mask.size, offset, float(font.getlength(_NO_CHARACTER))))
    except (OSError, ValueError):
        return None


class FontMaps:
    """The embedded font programs of one page's text, by pdfium font handle (``FPDFTextObj_GetFont``)."""

    def __init__(self) -> None:
        import pypdfium2.raw as pdfium_c

        self._c = pdfium_c
        self._programs: dict[int, _Program | None] = {}

    def confirms(self, font: Any, char: str, drawn: Extent | None) -> bool:
        """Whether the embedded ``font``'s own character map sends ``char`` to a glyph of the ``drawn`` extent."""
        if drawn is None or not font:
            return False
        program = self._load(font)
        if program is None:
            return False
        extent = program.extent(char)
        return extent is not None and within(drawn, extent)

    def _load(self, font: Any) -> _Program | None:
        key = ctypes.cast(font, ctypes.c_void_p).value or 0
        if key not in self._programs:
            self._programs[key] = _program(self._data(font)) if self._c.FPDFFont_GetIsEmbedded(font) == 1 else None
        return self._programs[key]

    def _data(self, font: Any) -> bytes:
        size = ctypes.c_size_t()
        if not self._c.FPDFFont_GetFontData(font, None, 0, ctypes.byref(size)) or not size.value:
            return b""
        buffer = (ctypes.c_uint8 * size.value)()
        if not self._c.FPDFFont_GetFontData(font, buffer, size.value, ctypes.byref(size)):
            return b""
        return bytes(buffer)
