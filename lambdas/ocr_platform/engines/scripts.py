"""Which writing system a text is in, and which scripts each recogniser reads: what ``text_layer: auto`` needs
to know before it asks a recogniser to judge a PDF's text layer, and what a result page says it holds.

A letter's script is the first word of its Unicode name (``unicodedata``): ``HANGUL SYLLABLE GA`` is Hangul,
``ARABIC LETTER ALEF`` Arabic, ``CJK UNIFIED IDEOGRAPH-4E00`` Han, ``FULLWIDTH LATIN SMALL LETTER A`` Latin
(width prefixes are skipped). Only letters count (``str.isalpha``): digits, punctuation and symbols belong to
every script. A text's script is the one most of its letters are in (``dominant_script``).

A recogniser covers the scripts of its character set (``covered_scripts``, from ``engines.languages``'
model names): a recogniser cannot judge a line in a script it does not read, so such a line is not sampled
and a visible, fully mapped layer in that script is trusted on its own (``text_layer_choice``). Every
PP-OCRv5 character set also holds the basic Latin letters, so Latin is covered by all of them.

>>> dominant_script("Invoice 2026"), dominant_script("한글 문서 2026"), dominant_script("انواع الخطوط")
('Latin', 'Hangul', 'Arabic')
>>> sorted(covered_scripts("korean_PP-OCRv5_mobile_rec"))
['Hangul', 'Latin']
>>> "Arabic" in covered_scripts("PP-OCRv5_mobile_rec")
False
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable

from ocr_platform.core.results import ResultWarning

#: A result warning's ``code`` when a page's text is in a script the job's language does not read.
LANGUAGE_MISMATCH = "language_mismatch"

#: Name words that say how a letter is drawn, not which script it is in (the next word is the script).
_FORM_PREFIXES = frozenset({"FULLWIDTH", "HALFWIDTH", "SMALL", "MATHEMATICAL"})
#: First name words that are not a script's name, mapped to it.
_NAME_TO_SCRIPT = {"CJK": "Han", "KATAKANA-HIRAGANA": "Katakana", "IDEOGRAPHIC": "Han"}

#: The scripts each recogniser's character set holds (by the model name's prefix); Latin is in every one.
_RECOGNISER_SCRIPTS: dict[str, frozenset[str]] = {
    "": frozenset({"Han", "Hiragana", "Katakana", "Latin", "Bopomofo"}),  # PP-OCRv5_mobile_rec: ch, chinese_cht, en, japan
    "latin": frozenset({"Latin"}),
    "eslav": frozenset({"Cyrillic", "Latin"}),
    "cyrillic": frozenset({"Cyrillic", "Latin"}),
    "arabic": frozenset({"Arabic", "Latin"}),
    "devanagari": frozenset({"Devanagari", "Latin"}),
    "korean": frozenset({"Hangul", "Latin"}),
    "el": frozenset({"Greek", "Latin"}),
    "ta": frozenset({"Tamil", "Latin"}),
    "te": frozenset({"Telugu", "Latin"}),
    "th": frozenset({"Thai", "Latin"}),
}
#: The scripts PP-OCRv6's recogniser reads well enough to judge a text layer: Chinese and Latin-script languages. Its
#: character set holds kana, but it reads them as Han look-alikes (``を`` as ``在``, ``の`` as ``D``: agreement 0.3-0.5
#: with the true layers of pdf.js's ``issue15340.pdf`` and ``issue16063.pdf``), so a line mostly in kana is not its to judge.
PPOCRV6_SCRIPTS = frozenset({"Han", "Latin", "Bopomofo"})

#: The PaddleOCR language code a script names unambiguously (Arabic script is ar, fa, ur...: none).
_SCRIPT_LANGUAGE = {"Hangul": "korean", "Hiragana": "japan", "Katakana": "japan", "Thai": "th", "Greek": "el", "Tamil": "ta", "Telugu": "te"}
#: The PaddleOCR language to suggest for a script (the first of its group where the script says no more).
_SCRIPT_SUGGESTION = {**_SCRIPT_LANGUAGE, "Arabic": "ar (or fa, ur)", "Cyrillic": "ru", "Devanagari": "hi", "Han": "ch", "Latin": "en"}


def letter_script(char: str) -> str | None:
    """The script of one letter (``None`` for a character that is not a letter, or has no name).

    >>> letter_script("a"), letter_script("ㄱ"), letter_script("ی"), letter_script("7"), letter_script("ｱ")
    ('Latin', 'Hangul', 'Arabic', None, 'Katakana')
    """
    if not char.isalpha():
        return None
    words = unicodedata.name(char, "").split()
    while words and words[0] in _FORM_PREFIXES:
        words = words[1:]
    if not words:
        return None
    return _NAME_TO_SCRIPT.get(words[0], words[0].capitalize())


def script_counts(texts: Iterable[str]) -> Counter[str]:
    """How many letters of ``texts`` are in each script."""
    counts: Counter[str] = Counter()
    for text in texts:
        for char in text:
            script = letter_script(char)
            if script is not None:
                counts[script] += 1
    return counts


def dominant_script(*texts: str) -> str | None:
    """The script most letters of ``texts`` are in (``None`` without letters)."""
    counts = script_counts(texts)
    return counts.most_common(1)[0][0] if counts else None


def covered_scripts(rec_model: str) -> frozenset[str]:
    """The scripts the recogniser ``rec_model`` (a PP-OCRv5 name from ``engines.languages``, or PP-OCRv6's) reads."""
    if "PP-OCRv6" in rec_model:
        return PPOCRV6_SCRIPTS
    prefix = rec_model.split("_PP-OCR", 1)[0] if "_PP-OCR" in rec_model else ""
    return _RECOGNISER_SCRIPTS.get(prefix, frozenset({"Latin"}))


#: Scripts written right to left.
RIGHT_TO_LEFT_SCRIPTS = frozenset({"Arabic", "Hebrew", "Syriac", "Thaana", "Nko"})


def reads_right_to_left(rec_model: str) -> bool:
    """Whether the recogniser ``rec_model`` reads a right-to-left script (``arabic_PP-OCRv5_mobile_rec``)."""
    return bool(covered_scripts(rec_model) & RIGHT_TO_LEFT_SCRIPTS)


def logical_order(text: str) -> str:
    """Text a recogniser read left to right across a line's image (visual order) in the order it is typed (logical
    order), by the Unicode bidirectional algorithm (python-bidi) with a right-to-left paragraph; a text without a
    right-to-left letter is returned as it is.

    PaddleX 3.7 decodes every recogniser's output from the left of the crop to the right, so an Arabic line comes
    out mirrored (its text-recognition decoder has a ``reverse`` step for Arabic that nothing turns on).

    >>> logical_order("هدنز 2026 یسراف نابز")
    'زبان فارسی 2026 زنده'
    >>> logical_order("Total 2026")
    'Total 2026'
    """
    if not any(letter_script(char) in RIGHT_TO_LEFT_SCRIPTS for char in text):
        return text
    from bidi import get_display

    return str(get_display(text, base_dir="R"))


def script_language(script: str) -> str | None:
    """The PaddleOCR language code the script names without doubt (``korean`` for Hangul), else ``None``."""
    return _SCRIPT_LANGUAGE.get(script)


def language_mismatch_warning(*, language: str, script: str, pages: list[int]) -> ResultWarning:
    """The ``language_mismatch`` warning for ``pages`` whose text is in ``script``, which ``language`` does not read.

    >>> warning = language_mismatch_warning(language="en", script="Hangul", pages=[1, 2])
    >>> warning["message"].split(";")[0], warning["message"].endswith("needs --lang korean (or --lang auto).")
    ("Pages 1, 2 are in Hangul script, which the job's language 'en' does not read", True)
    """
    suggestion = _SCRIPT_SUGGESTION.get(script, "a language that reads it")
    where = f"Page {pages[0]} is" if len(pages) == 1 else f"Pages {', '.join(map(str, pages))} are"
    return {
        "code": LANGUAGE_MISMATCH,
        "requested": language,
        "ran": script,
        "reason": f"the pages' letters are mostly {script}; the recogniser for {language!r} reads {script} letters as others",
        "message": (
            f"{where} in {script} script, which the job's language {language!r} does not read; a PDF text layer on them "
            f"was used where it was true, and OCR of them needs --lang {suggestion} (or --lang auto)."
        ),
    }
