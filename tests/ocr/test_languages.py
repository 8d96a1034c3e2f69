"""The language -> PP-OCRv5 recognition model table (``engines.languages``) against the installed PaddleOCR.

PaddleOCR has no public function for this mapping: ``PaddleOCR(lang=..., ocr_version="PP-OCRv5")``
resolves it in its constructor and then loads the models. ``paddleocr_choice`` builds that public class
with its one pipeline-creation hook (``_create_paddlex_pipeline``) left out, so nothing is loaded and
nothing is downloaded, and reads the chosen model back through the public
``export_paddlex_config_to_yaml``. The languages asked about are the table's and those of PaddleOCR's own
language groups, which only this test reads from PaddleOCR's private modules; where they cannot be found
the test fails and says so rather than passing on an empty list. A PaddleOCR upgrade that changes the
mapping fails here.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
import yaml

from ocr_platform.core.errors import JobError
from ocr_platform.engines.languages import (
    MULTILINGUAL_LANGUAGES,
    MULTILINGUAL_REC_MODEL,
    PPOCRV6_LANGUAGES,
    RECOGNITION_MODELS,
    SCRIPT_GROUPS,
    check_ppocrv6_language,
    recognition_model_for,
)

# Where the table replaces PaddleOCR's choice on purpose (engines.languages says why): PaddleOCR's pick.
PADDLEOCR_CHOICES_REPLACED = {
    "ch": "PP-OCRv5_server_rec",
    "chinese_cht": "PP-OCRv5_server_rec",
    "japan": "PP-OCRv5_server_rec",
    "en": "en_PP-OCRv5_mobile_rec",
}
# Codes no PP-OCRv5 recogniser reads (Georgian has only a PP-OCRv3 one).
NOT_READ = ("ka", "klingon")
# Modules that have held PaddleOCR's language groups: 3.7 keeps them in _utils.langs, 3.0-3.6 in the OCR pipeline.
PADDLEOCR_GROUP_MODULES = ("paddleocr._utils.langs", "paddleocr._pipelines.ocr")


@pytest.fixture(scope="module")
def paddleocr_groups() -> dict[str, frozenset[str]]:
    """PaddleOCR's own ``<GROUP>_LANGS`` constants for the table's script groups."""
    for name in PADDLEOCR_GROUP_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        groups = {group: getattr(module, f"{group.upper()}_LANGS", None) for group in SCRIPT_GROUPS}
        if all(languages is not None for languages in groups.values()):
            return {group: frozenset(languages) for group, languages in groups.items()}
    pytest.fail(
        f"The installed PaddleOCR keeps its language groups ({', '.join(g.upper() + '_LANGS' for g in SCRIPT_GROUPS)}) "
        f"in none of {PADDLEOCR_GROUP_MODULES}; find where it keeps them now and add that module to PADDLEOCR_GROUP_MODULES."
    )


@pytest.fixture(scope="module")
def paddleocr_choice(tmp_path_factory: pytest.TempPathFactory):
    """``lang`` -> the recognition model PaddleOCR's constructor picks for PP-OCRv5, ``None`` when it has none."""
    from paddleocr import PaddleOCR

    if not callable(getattr(PaddleOCR, "_create_paddlex_pipeline", None)):
        pytest.fail("PaddleOCR no longer builds its pipeline through _create_paddlex_pipeline; update this probe so it loads no model.")

    class ResolveOnly(PaddleOCR):
        def _create_paddlex_pipeline(self) -> None:
            return None

    config = tmp_path_factory.mktemp("paddleocr-config") / "ocr.yaml"

    def choice(language: str, version: str = "PP-OCRv5") -> str | None:
        try:
            pipeline = ResolveOnly(lang=language, ocr_version=version)
        except ValueError:  # "No models are available for lang=..."
            return None
        pipeline.export_paddlex_config_to_yaml(str(config))
        return yaml.safe_load(Path(config).read_text(encoding="utf-8"))["SubModules"]["TextRecognition"]["model_name"]

    return choice


def test_every_language_reads_with_the_model_paddleocr_picks(paddleocr_groups, paddleocr_choice) -> None:
    languages = set(RECOGNITION_MODELS) | set().union(*paddleocr_groups.values()) | set(NOT_READ)

    differences = {}
    for language in sorted(languages):
        ours, theirs = RECOGNITION_MODELS.get(language), paddleocr_choice(language)
        expected = PADDLEOCR_CHOICES_REPLACED.get(language, ours)
        if theirs != expected:
            differences[language] = {"this table": ours, "PaddleOCR": theirs}

    assert differences == {}
    assert {language for language, model in RECOGNITION_MODELS.items() if model == MULTILINGUAL_REC_MODEL} == MULTILINGUAL_LANGUAGES
    assert set(PADDLEOCR_CHOICES_REPLACED) == MULTILINGUAL_LANGUAGES


def test_pp_ocrv6_reads_the_languages_paddleocr_gives_it(paddleocr_groups, paddleocr_choice) -> None:
    languages = set(RECOGNITION_MODELS) | set().union(*paddleocr_groups.values()) | set(NOT_READ)

    read_by_v6 = {language for language in languages if paddleocr_choice(language, "PP-OCRv6") is not None}

    assert read_by_v6 == PPOCRV6_LANGUAGES
    for language in sorted(languages - PPOCRV6_LANGUAGES):
        with pytest.raises(JobError, match="use pp-ocrv5"):
            check_ppocrv6_language(language)


def test_the_script_groups_are_paddleocrs(paddleocr_groups) -> None:
    assert SCRIPT_GROUPS == paddleocr_groups


@pytest.mark.parametrize("language", NOT_READ)
def test_a_language_no_recogniser_reads_fails_with_its_code(language: str) -> None:
    with pytest.raises(JobError) as info:
        recognition_model_for(language)
    assert info.value.code == "unsupported_language" and repr(language) in info.value.message
