"""A PDF text layer's characters made into text every output format can write.

pdfium hands a text layer over one UTF-16 code unit per character index (``FPDFText_GetUnicode``), in whatever a
font's ``/ToUnicode`` map says. What comes out is not always text: a character beyond the Basic Multilingual Plane
arrives as two surrogate halves, and a broken map sends a glyph to half a pair alone, which no encoder writes
(``UnicodeEncodeError: surrogates not allowed`` in json, hOCR, ALTO and the searchable PDF alike). Fonts also map
glyphs to their presentation forms (Arabic ``ﻻ`` U+FEFB for lam-alef, ``ﺏ`` U+FE8F for beh; the Latin ligature ``ﬁ``),
which search and every other reader of the text treat as different letters from those typed. So, once, where the
layer's lines are built (``document.text_layer``):

- ``code_point``: a high surrogate followed by a low one is one character; a half alone is U+FFFD, counted, and
  the job warns (``LAYER_TEXT_REPAIRED``).
- ``layer_chars``: a presentation form or ligature (``PRESENTATION_RANGES``) becomes the letters it stands for
  (NFKC, on those ranges only: compatibility forms elsewhere, such as full-width digits or superscripts, stay as
  typed); a control character (Unicode category ``Cc``) other than white space, a noncharacter (``noncharacter``) and
  the byte-order mark are no text and are dropped (XML cannot even hold most of them).
- ``is_joiner_space``: a space glyph drawn over the Arabic letter before it stands for a zero-width non-joiner
  (XeLaTeX's Persian typesets ``واژه‌های`` with its non-joiner as a space glyph inside the word; pdfium reads it as a
  word break, ``واژه های``); it is written as U+200C, as typed.
- ``normal_text``: each line's and word's text in NFC (a letter and its combining accent as one character, as
  typed on most keyboards).

>>> layer_chars("\\ufefb"), layer_chars("\\ufb01"), layer_chars("\\x03"), layer_chars("\\uff11")
('لا', 'fi', '', '１')
>>> code_point(0xD83D, 0xDE00), code_point(0xDE00, 0xD83D), code_point(0xD83D, 0x41), code_point(0xDE00, None)
(128512, 128512, None, None)
>>> normal_text("e\\u0301") == "\\u00e9"
True
"""

from __future__ import annotations

import unicodedata

from ocr_platform.core.results import ResultWarning

#: Code points whose compatibility mapping is the letters they are drawn for: Latin, Armenian and Hebrew ligatures and
#: presentation forms (U+FB00-U+FB4F), Arabic presentation forms A (U+FB50-U+FDFF) and B (U+FE70-U+FEFF).
PRESENTATION_RANGES = ((0xFB00, 0xFB4F), (0xFB50, 0xFDFF), (0xFE70, 0xFEFE))
#: Characters dropped from a layer's text: the byte-order mark (a zero-width no-break space in old text).
DROPPED = frozenset({"\ufeff"})
#: The zero-width non-joiner: Persian's mark inside a word where two letters are not to join.
ZWNJ = "\u200c"
#: A result warning's ``code`` when a page's text layer held surrogate halves alone, written as U+FFFD.
LAYER_TEXT_REPAIRED = "layer_text_repaired"


def code_point(code: int, following: int | None) -> int | None:
    """The character a surrogate ``code`` and the next code unit ``following`` make together (high then low, or low
    then high where pdfium reversed a right-to-left run), or ``None`` when they are not a pair."""
    if following is None:
        return None
    if 0xDC00 <= code <= 0xDFFF and 0xD800 <= following <= 0xDBFF:  # a run pdfium turned right to left: the pair reversed
        code, following = following, code
    if 0xD800 <= code <= 0xDBFF and 0xDC00 <= following <= 0xDFFF:
        return 0x10000 + ((code - 0xD800) << 10) + (following - 0xDC00)
    return None


def is_surrogate(code: int) -> bool:
    return 0xD800 <= code <= 0xDFFF


def is_joiner_space(last: str, last_box: tuple[float, float, float, float], box: tuple[float, float, float, float]) -> bool:
    """Whether a space glyph at ``box`` lies mostly over the box of the Arabic letter ``last`` before it (boxes
    ``left, bottom, right, top``).

    >>> is_joiner_space("ه", (494.4, 0, 501.5, 10), (494.4, 0, 497.9, 10)), is_joiner_space("ه", (494.4, 0, 501.5, 10), (490, 0, 494.4, 10))
    (True, False)
    """
    width = box[2] - box[0]
    overlap = min(box[2], last_box[2]) - max(box[0], last_box[0])
    return width > 0 and overlap >= 0.5 * width and unicodedata.name(last, "").startswith("ARABIC")


def unreadable(char: str) -> bool:
    """A character that stands for no letter a reader knows: the replacement character, private use, a C0 control, a
    noncharacter."""
    code = ord(char)
    return code == 0xFFFD or 0xE000 <= code <= 0xF8FF or code < 0x20 or noncharacter(code)


def noncharacter(code: int) -> bool:
    """One of Unicode's 66 noncharacters (U+FDD0-U+FDEF and the last two code points of each plane): never text, and
    U+FFFE and U+FFFF are not even allowed in XML (pdfium hands U+FFFE over for a character it has no value for).

    >>> noncharacter(0xFFFE), noncharacter(0x10FFFF), noncharacter(0xFDD0), noncharacter(0xFFFD)
    (True, True, True, False)
    """
    return 0xFDD0 <= code <= 0xFDEF or code & 0xFFFE == 0xFFFE


def layer_chars(char: str) -> str:
    """What one character of a layer stands for in text: itself, a presentation form's letters, or nothing."""
    if char in DROPPED or (unicodedata.category(char) == "Cc" and not char.isspace()) or noncharacter(ord(char)):
        return ""
    code = ord(char)
    if any(low <= code <= high for low, high in PRESENTATION_RANGES):
        return unicodedata.normalize("NFKC", char).strip()  # an isolated mark's form is a space and the mark
    return char


def normal_text(text: str) -> str:
    """``text`` with each presentation form as its letters (``layer_chars``), controls dropped, in NFC."""
    if text.isascii():
        return "".join(ch for ch in text if ch.isprintable() or ch.isspace())
    return unicodedata.normalize("NFC", "".join(map(layer_chars, text)))


def repaired_warning(pages: dict[int, int]) -> list[ResultWarning]:
    """The ``layer_text_repaired`` warning for pages read from a layer with lone surrogate halves (page: count), if any.

    >>> repaired_warning({3: 2})[0]["message"]
    'Page 3 took its text from the PDF text layer, where 2 characters were half a character code each and are written as U+FFFD.'
    >>> repaired_warning({})
    []
    """
    if not pages:
        return []
    count = sum(pages.values())
    where = f"Page {next(iter(pages))}" if len(pages) == 1 else f"Pages {', '.join(map(str, sorted(pages)))}"
    return [{
        "code": LAYER_TEXT_REPAIRED,
        "requested": "text_layer",
        "ran": "text_layer",
        "reason": "the text layer's character map gave lone UTF-16 surrogate halves, which no text encoding can hold",
        "message": f"{where} took {'its' if len(pages) == 1 else 'their'} text from the PDF text layer, where {count} characters were half a "
        "character code each and are written as U+FFFD.",
    }]
