"""PaddleOCR's language codes as BCP 47 tags (RFC 5646: ISO 639 language subtag, ISO 15924 script subtag where
one language is written in two scripts), and the direction a line's text runs: the one mapping every output
format (hOCR, ALTO, Textract-shaped JSON) uses where it names a language.

>>> bcp47("en"), bcp47("ch"), bcp47("chinese_cht"), bcp47("japan"), bcp47("korean"), bcp47("rs_latin"), bcp47("ka")
('en', 'zh-Hans', 'zh-Hant', 'ja', 'ko', 'sr-Latn', 'kn')
>>> bcp47("auto"), bcp47("latin"), bcp47("")
(None, None, None)
>>> is_right_to_left("مرحبا بالعالم 2024"), is_right_to_left("Hello 2024"), is_right_to_left("")
(True, False, False)
"""

from __future__ import annotations

import unicodedata

#: PaddleOCR codes that are not the ISO 639 code of their language. Every other code PaddleOCR uses for one
#: language is already its ISO 639-1 or 639-3 code (``fr``, ``ar``, ``ady``, ``bho`` ...).
_PADDLE_TO_BCP47: dict[str, str] = {
    "ch": "zh-Hans",
    "chinese_cht": "zh-Hant",
    "japan": "ja",
    "korean": "ko",
    "german": "de",
    "french": "fr",
    "ka": "kn",  # PaddleOCR's "ka" is Kannada (ISO 639-1 "kn"), not Georgian
    "rs_latin": "sr-Latn",
    "rs_cyrillic": "sr-Cyrl",
    "mo": "ro-Cyrl",  # Moldovan in Cyrillic; ISO 639 folded "mo" into "ro"
    "ava": "av",
    "che": "ce",
    "bh": "bh",
}

#: PaddleOCR's script-group names and ``auto``: no one language, so no tag.
_NOT_LANGUAGES = frozenset({"auto", "latin", "arabic", "cyrillic", "devanagari", "eslav"})


def bcp47(code: str | None) -> str | None:
    """The BCP 47 tag of a PaddleOCR language code (``None`` for no code, ``auto`` or a script group)."""
    if not code or code in _NOT_LANGUAGES:
        return None
    return _PADDLE_TO_BCP47.get(code, code)


def is_right_to_left(text: str) -> bool:
    """Whether most of ``text``'s letters are right-to-left ones (Arabic, Hebrew, Syriac, Thaana ...), by the
    characters' Unicode bidirectional class; digits and punctuation do not count."""
    rtl = ltr = 0
    for char in text:
        kind = unicodedata.bidirectional(char)
        if kind in ("R", "AL"):
            rtl += 1
        elif kind == "L":
            ltr += 1
    return rtl > ltr
