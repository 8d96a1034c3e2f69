"""A text layer's guessed characters checked against the embedded font's own character map: the round trip.

Where a PDF font gives no Unicode value for a glyph (no ``/ToUnicode`` entry, no encoding pdfium knows), pdfium hands
the glyph's character code over as its text and flags it (``FPDFText_HasUnicodeMapError``). That guess is right where
the PDF's maker used Unicode values as codes (pdf.js's ``javauninstall-7r.pdf``: Japanese, every character flagged)
and garbage where the codes are glyph numbers. The font program embedded in the PDF usually carries its own
character map (a TrueType or OpenType ``cmap``: which glyph draws each Unicode character), so a guess can be checked
without reading the ink: it is taken as mapped when the embedded font's own map sends the guessed character to a
glyph of the very shape drawn: the same ink extent about its origin (``Extent``: left, right, bottom and top, as pdfium
measures a character against its loose box, the advance width joined with the ink; within ``MATCH_TOLERANCE`` of an
em). A wrong guess lands on another glyph, or on none, though a glyph of about the same shape is near enough one time
in ten to two (a wrong map, guesses one code off: 5-50 % of them match), so a font's guesses stand only together:
where at least ``MIN_CONFIRMED_SHARE`` of its distinct guessed characters on the page hold (``FontMaps.confirmed``).

FreeType, through Pillow (``ImageFont``), reads the font program the way pdfium drew it (``FPDFFont_GetFontData``
gives its bytes). A font that is not embedded (what is drawn is this machine's substitute), or whose program has no
Unicode map (a CID-keyed CFF font, such as the Korean ``KoPubWorld`` fonts of docling's ``skipped_1page.pdf``),
confirms nothing: its guessed characters stay unmapped.

>>> matches((0.06, 0.94, -0.04, 0.77), ((0.06, 0.93, -0.04, 0.76), 1.0)), matches((0.06, 0.94, -0.04, 0.77), ((0.3, 0.7, 0.5, 0.9), 1.0))
(True, False)
>>> matches((0.15, 1.0, 0.0, 0.94), ((0.16, 1.06, 0.0, 1.0), 0.5))  # ink past the advance: the loose box is the wider
True
"""

from __future__ import annotations

import ctypes
import functools
import io
from dataclasses import dataclass, field
from typing import Any

#: A glyph's ink about its origin: left, right, bottom, top, each a share of its advance width (y up).
Extent = tuple[float, float, float, float]
#: A glyph of the font program: its ``Extent`` and its advance width in ems.
Glyph = tuple[Extent, float]

#: Pixels per em the font's glyphs are drawn at to measure them (FreeType's hinting moves an edge by under 1 %).
RENDER_SIZE = 256
#: How far (ems) each edge of the drawn glyph and of the font's glyph for the guess may differ (pdfium raises a glyph's
#: top by 1/64 of itself, hinting moves an edge by under 1 %).
MATCH_TOLERANCE = 0.05
#: The share of a font's distinct guessed characters on a page that must round-trip for any of them to count as mapped.
MIN_CONFIRMED_SHARE = 0.9
#: ... and how many distinct ones that takes at least (fewer say nothing about the font's map).
MIN_CONFIRMED_CHARS = 4
#: Font programs kept loaded, by content: a document's fonts recur on every page.
FONT_CACHE = 32
#: A character no font maps (a Unicode noncharacter): what the font draws for it is its missing-glyph box.
_NO_CHARACTER = "\uffff"


def matches(drawn: Extent, glyph: Glyph) -> bool:
    """Whether a character's ``drawn`` extent, measured against its loose box (pdfium's: the advance joined with the
    ink), is the font ``glyph``'s, within ``MATCH_TOLERANCE`` ems."""
    (left, right, bottom, top), advance = glyph
    loose = max(1.0, right) - min(0.0, left)  # the loose box's width, in advances
    return all(abs(a * loose - b) * advance <= MATCH_TOLERANCE for a, b in zip(drawn, (left, right, bottom, top), strict=True))


@dataclass
class _Program:
    """One embedded font program, loaded, with the glyphs measured so far (``None``: the font has no glyph for it)."""

    font: Any
    missing: tuple[Any, ...]
    glyphs: dict[str, Glyph | None] = field(default_factory=dict)

    def glyph(self, char: str) -> Glyph | None:
        if char not in self.glyphs:
            self.glyphs[char] = self._measure(char)
        return self.glyphs[char]

    def _measure(self, char: str) -> Glyph | None:
        try:
            mask, (x, y) = self.font.getmask2(char, mode="L", anchor="ls")
            advance = float(self.font.getlength(char))
        except (OSError, ValueError):
            return None
        if (mask.size, (x, y), advance) == self.missing:
            return None
        box = mask.getbbox()
        if box is None:
            return None
        if advance <= 0:  # a combining mark: drawn over the letter before it, no advance to measure it by
            return (0.0, 0.0, 0.0, 0.0), 0.0
        extent = (x + box[0]) / advance, (x + box[2]) / advance, -(y + box[3]) / advance, -(y + box[1]) / advance
        return extent, advance / RENDER_SIZE


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

    def confirmed(self, guesses: list[tuple[Any, str, Extent | None]]) -> list[bool]:
        """For each guessed character of a page (its font handle, the character, its drawn extent): whether its round
        trip holds and so do those of ``MIN_CONFIRMED_SHARE`` of its font's distinct guesses (``MIN_CONFIRMED_CHARS``)."""
        holds = [self.confirms(font, char, drawn) for font, char, drawn in guesses]
        tally: dict[int, dict[str, bool]] = {}
        for (font, char, _), held in zip(guesses, holds, strict=True):
            seen = tally.setdefault(ctypes.cast(font, ctypes.c_void_p).value or 0, {})
            if not self._mark(font, char):  # a mark the font has holds with its font, and does not vote
                seen[char] = seen.get(char, True) and held
        fonts = {key for key, seen in tally.items() if len(seen) >= MIN_CONFIRMED_CHARS and sum(seen.values()) >= MIN_CONFIRMED_SHARE * len(seen)}
        return [held and (ctypes.cast(font, ctypes.c_void_p).value or 0) in fonts for (font, _, _), held in zip(guesses, holds, strict=True)]

    def confirms(self, font: Any, char: str, drawn: Extent | None) -> bool:
        """Whether the embedded ``font``'s own character map sends ``char`` to a glyph of the ``drawn`` extent."""
        if drawn is None or not font:
            return False
        program = self._load(font)
        if program is None:
            return False
        glyph = program.glyph(char)
        return glyph is not None and matches(drawn, glyph)

    def _mark(self, font: Any, char: str) -> bool:
        program = self._load(font)
        glyph = program.glyph(char) if program is not None else None
        return glyph is not None and glyph[1] == 0

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
