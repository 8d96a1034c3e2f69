"""Line by line judgement of a PDF text layer against the page's ink, for ``engines.text_layer_choice``.

A page may mix true and untrue text: a body font whose character map is right beside a heading font without one,
or a line of Thai and English where the recogniser reads only the English. So a layer is judged per line:

- ``folded``: what a Latin-script recogniser makes of a line in another alphabet that shares its shapes. PP-OCR's
  recognisers read Cyrillic and Greek ink as their Latin look-alikes (``Привет, мир`` as ``∏puBeT, mиp``); the
  folded layer text and the folded reading agree when the layer is true.
- ``read_agrees``: whether a reading of a line's ink agrees with what the layer says (``MIN_AGREEMENT``), folded.
- ``explained``: whether a confident reading that disagrees with the layer shares enough with it
  (``FALSE_SCRIPT_AGREEMENT``) to be the same ink read in part, not ink of another script (a font that maps Cyrillic
  glyphs to Hangul code points reads ``Перв.`` where the layer says ``킘킽킲.``: agreement 0).
- ``has_ink``: whether a line's crop holds any ink: a font that is not embedded and that this machine lacks draws
  nothing, and a line with nothing drawn cannot be judged by its ink (its layer is all a reader has).

>>> folded("Привет, мир") == folded("∏puBeT, mиp")
True
>>> read_agrees("Привет, мир", "∏puBeT, mиp"), explained("Перв. примен.", "킘킽킲. 킿킾킴킻.")
(True, False)
"""

from __future__ import annotations

import difflib
import unicodedata
from typing import Any

from ocr_platform.document.text_layer import LayerLine
from ocr_platform.engines.scripts import dominant_script, letter_script, script_counts

#: Lines of a hidden layer recognised per page.
HIDDEN_SAMPLE = 3
#: A sampled line has at least this many letters or digits (symbol fonts are not sampled).
MIN_SAMPLE_CHARS = 4
#: A sampled line of a visible layer has at most this many characters (recognition cost grows with length;
#: a font with a broken character map garbles every line, short ones too).
MAX_SAMPLE_CHARS = 20
#: Agreement (0..1) below which a sampled line says the layer is wrong.
MIN_AGREEMENT = 0.7
#: A confident reading sharing at least this agreement with the layer line is that line's ink read in part (a script
#: the recogniser half reads, a mixed-script line), not evidence that the layer names another script.
FALSE_SCRIPT_AGREEMENT = 0.3
#: A line in a script the recogniser does not read, with at most this share of its characters lacking a Unicode
#: mapping, is trusted as one fully mapped (pdfium's guesses for a few glyphs are right as often as not; no ink test
#: can judge them), subject to the false-script probe; a line with more is dropped to OCR.
MOSTLY_MAPPED = 0.25
#: A line with characters lacking a Unicode mapping, in a script the recogniser does not read, keeps its mapped characters
#: alone when at least this share of it is mapped (``trusted_part``) ...
PARTIAL_MIN_MAPPED = 0.5
#: ... and at least this share of the mapped letters are in one script, the rest in at most one other (Thai with the
#: Latin letters of its formulas).
PARTIAL_ONE_SCRIPT = 0.75
#: A crop whose darkest pixels are this close to its lightest (0..255) holds no ink.
MIN_INK_CONTRAST = 40

#: Cyrillic and Greek letters (lower case) as the Latin letters a Latin recogniser reads them as, and the symbols it
#: reads some capitals as.
_LOOK_ALIKES = str.maketrans({
    "а": "a", "б": "6", "в": "b", "г": "r", "д": "a", "е": "e", "ё": "e", "ж": "x", "з": "3", "и": "u", "й": "u", "к": "k",
    "л": "n", "м": "m", "н": "h", "о": "o", "п": "n", "р": "p", "с": "c", "т": "t", "у": "y", "ф": "o", "х": "x", "ц": "u",
    "ч": "y", "ш": "w", "щ": "w", "ъ": "b", "ы": "bl", "ь": "b", "э": "e", "ю": "io", "я": "r", "і": "i", "ї": "i", "є": "e",
    "α": "a", "β": "b", "γ": "y", "δ": "d", "ε": "e", "ζ": "z", "η": "n", "θ": "o", "ι": "i", "κ": "k", "λ": "a", "μ": "u",
    "ν": "v", "ξ": "e", "ο": "o", "π": "n", "ρ": "p", "σ": "o", "ς": "c", "τ": "t", "υ": "u", "φ": "o", "χ": "x", "ψ": "w",
    "ω": "w", "∏": "n", "∑": "e", "√": "v",
})


def folded(text: str) -> str:
    """``text`` without spaces, case or accents, its Cyrillic and Greek letters as their Latin look-alikes."""
    plain = "".join(ch for ch in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(ch) and not ch.isspace())
    return plain.translate(_LOOK_ALIKES)


def agreement(read: str, layer: str) -> float:
    """How closely recognised text matches the layer's (0..1), ignoring spaces and case.

    >>> agreement("Total due: 1,234.56", "Total due: 1,234.56")
    1.0
    >>> agreement("Invoice 2026", "Shipping address") < 0.3
    True
    """
    a = "".join(read.split()).casefold()
    b = "".join(layer.split()).casefold()
    if not a and not b:
        return 1.0
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def read_agrees(layer: str, read: str, scripts: frozenset[str] | None = None) -> bool:
    """Whether ``read`` (the line's ink, recognised) says what the layer says, as written or folded; in a line that
    mixes scripts, its letters in the recogniser's ``scripts`` found in the reading (the Latin of ``والذي ( Cicero(``,
    the ``ICT`` of ``그린 ICT``) are enough.

    >>> read_agrees("والذي ( Cicero(", "lgJl ( Cicero(", frozenset({"Latin"})), read_agrees("والذي ( Cicero(", "lgJl ( Cicero(")
    (True, False)
    >>> read_agrees("그린 ICT", "28ICT", frozenset({"Latin"})), read_agrees("Afi لا", "ABCDEFG", frozenset({"Latin"}))
    (True, False)
    """
    if max(agreement(read, layer), agreement(folded(read), folded(layer))) >= MIN_AGREEMENT:
        return True
    if scripts is None:
        return False
    own = "".join(ch for ch in layer if letter_script(ch) in scripts)
    foreign = sum(1 for ch in layer if letter_script(ch) not in scripts and letter_script(ch) is not None)
    if not foreign or not own:
        return False
    # Its own letters found in the reading, in order: the others' ink is read as letters of its own (``그린`` as ``28``).
    letters = "".join(ch for ch in read if ch.isalpha()).casefold()
    blocks = difflib.SequenceMatcher(None, letters, own.casefold(), autojunk=False).get_matching_blocks()
    return sum(block.size for block in blocks) >= MIN_AGREEMENT * len(own)


def explained(read: str, layer: str) -> bool:
    """Whether a confident ``read`` of a line in a script the recogniser does not read is that line's ink read in part."""
    return max(agreement(read, layer), agreement(folded(read), folded(layer))) >= FALSE_SCRIPT_AGREEMENT


def has_ink(crop_bgr: Any) -> bool:
    """Whether a line's crop (a BGR array) holds any ink: its darkest pixel stands out from its lightest."""
    import numpy as np

    gray = np.asarray(crop_bgr).mean(axis=2) if np.asarray(crop_bgr).ndim == 3 else np.asarray(crop_bgr)
    return bool(gray.size) and float(gray.max() - gray.min()) >= MIN_INK_CONTRAST


def foreign_to(text: str, scripts: frozenset[str]) -> bool:
    """Whether a recogniser of ``scripts`` cannot judge ``text``: most of its letters are in another script, or it has
    no letters and has numerals of another script (``١٤٣٤``, Old Hungarian's ``𐳺𐳻``).

    >>> foreign_to("한글 문서", frozenset({"Latin"})), foreign_to("١٤٣٤-", frozenset({"Latin"})), foreign_to("2026", frozenset({"Latin"}))
    (True, True, False)
    >>> foreign_to("\U00010cfa\U00010cfb", frozenset({"Latin"})), foreign_to("½ ²", frozenset({"Latin"}))
    (True, False)
    """
    script = dominant_script(text)
    if script is None:
        return any(ch.isnumeric() and not ch.isascii() and unicodedata.name(ch, "").split(" ")[0] not in _SCRIPTLESS_NUMERALS for ch in text)
    return script not in scripts


#: First words of the Unicode names of numerals that belong to no script (``FULLWIDTH DIGIT ONE``, ``VULGAR FRACTION ONE
#: HALF``, ``SUPERSCRIPT TWO``), where other numerals' names start with their script (``ARABIC-INDIC DIGIT ONE``).
_SCRIPTLESS_NUMERALS = frozenset({
    "", "FULLWIDTH", "CIRCLED", "NEGATIVE", "PARENTHESIZED", "DIGIT", "SUPERSCRIPT", "SUBSCRIPT", "VULGAR", "FRACTION", "ROMAN",
    "DINGBAT", "MATHEMATICAL", "DOUBLE", "NUMBER", "SMALL",
})


def trusted_part(line: LayerLine, scripts: frozenset[str] | None) -> LayerLine | None:
    """The part of a line holding characters without a Unicode mapping that stands on its own (``LayerLine.mapped``):
    where the recogniser cannot judge it (``unjudgeable``), at least ``PARTIAL_MIN_MAPPED`` of the line is mapped, and
    the mapped letters keep mostly to one script (``PARTIAL_ONE_SCRIPT``); else ``None``. A font whose map is broken leaves
    scattered characters of many scripts and combining marks (pdf.js's ``complex_ttf_font.pdf``); a font without a map
    beside a mapped one leaves the mapped one's words with gaps (``차세대 비 체( A ) 킹 방지``, as pdftotext reads it)."""
    mapped = line.mapped
    if mapped is None or line.unmapped > (1 - PARTIAL_MIN_MAPPED) * len(line.text) or not unjudgeable(mapped.text, scripts):
        return None
    return mapped if keeps_to_a_script(mapped.text) else None


def keeps_to_a_script(*texts: str) -> bool:
    """Whether the letters of ``texts`` (two at least) are in at most two scripts, ``PARTIAL_ONE_SCRIPT`` of them in one.

    >>> keeps_to_a_script("ในข้อดังกล่าว ij"), keeps_to_a_script("ܞ̽ೌ ഁ ࣧ ܆"), keeps_to_a_script("разве не выражает")
    (True, False, True)
    """
    counts = script_counts(texts)
    letters = sum(counts.values())
    return letters >= 2 and len(counts) <= 2 and counts.most_common(1)[0][1] >= PARTIAL_ONE_SCRIPT * letters


def unjudgeable(text: str, scripts: frozenset[str] | None) -> bool:
    """Whether ``text`` has letters and most are in a script outside the recogniser's ``scripts``: no reading of its ink
    by that recogniser can confirm or refute it (``None``: the recogniser reads every script).

    >>> unjudgeable("차세대 비 체( A ) 킹", frozenset({"Latin"})), unjudgeable("(1A7)", frozenset({"Latin"})), unjudgeable("", frozenset())
    (True, False, False)
    """
    script = dominant_script(text)
    return scripts is not None and script is not None and script not in scripts


def foreign_fonts(lines: list[LayerLine], scripts: frozenset[str]) -> set[str]:
    """The fonts whose lines with letters are all in scripts outside ``scripts``: such a font may draw its digits in
    that script's own shapes too (a Persian font draws ``1403`` as ``۱۴۰۳``), which a Latin recogniser misreads."""
    lettered = [(line.font, dominant_script(line.text)) for line in lines]
    foreign = {font for font, script in lettered if script is not None and script not in scripts}
    return foreign - {font for font, script in lettered if script in scripts}


def unlettered_in(line: LayerLine, fonts: set[str]) -> bool:
    """Whether ``line`` has no letters and is set in one of ``fonts`` (``foreign_fonts``)."""
    return line.font in fonts and dominant_script(line.text) is None


def mixed_script(text: str, scripts: frozenset[str] | None) -> bool:
    """Whether ``text`` holds letters both in and out of the recogniser's ``scripts`` (``Korean: 안녕하세요``): a sample
    line that disagrees then speaks for itself, not for its font (whose other lines may be in either)."""
    if scripts is None:
        return False
    found = {letter_script(ch) for ch in text} - {None}
    return bool(found & scripts) and bool(found - scripts)


def mostly_mapped(line: LayerLine) -> bool:
    """Whether at most ``MOSTLY_MAPPED`` of the line's characters lack a Unicode mapping."""
    return line.unmapped <= MOSTLY_MAPPED * len(line.text)


def sampleable(line: LayerLine) -> bool:
    return sum(ch.isalnum() for ch in line.text) >= MIN_SAMPLE_CHARS


def hidden_sample(lines: list[LayerLine]) -> list[LayerLine]:
    return sorted((line for line in lines if sampleable(line)), key=lambda line: -len(line.text))[:HIDDEN_SAMPLE]


def font_sample(lines: list[LayerLine], verified: set[str]) -> list[LayerLine]:
    """One line per font not yet verified: its longest line of at most ``MAX_SAMPLE_CHARS`` characters (else its shortest)."""
    by_font: dict[str, list[LayerLine]] = {}
    for line in lines:
        if line.font not in verified and sampleable(line):
            by_font.setdefault(line.font, []).append(line)
    sample = []
    for candidates in by_font.values():
        short = [line for line in candidates if len(line.text) <= MAX_SAMPLE_CHARS]
        sample.append(max(short, key=lambda line: len(line.text)) if short else min(candidates, key=lambda line: len(line.text)))
    return sample


def offset(x0: float, y0: float, x: float, y: float) -> tuple[float, float]:
    """A region's point ``(x, y)`` on the page, the region's top-left corner at ``(x0, y0)``."""
    return x + x0, y + y0
