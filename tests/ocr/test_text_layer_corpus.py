"""A sample of the non-Latin text-layer corpus (``tests/documents/text_layers``, public PDFs), read through the default
settings in CI: each file is read, written in every output format, and scored against poppler's ``pdftotext``
(``tests.text_layer_corpus``; the whole corpus is ``benchmarks/text_layer_corpus.py``). About 21 s with the engine
loaded, on a shared 2-core machine."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.text_layer_corpus import CORPUS, CORPUS_MODEL, read_and_score

pytestmark = pytest.mark.skipif(shutil.which("pdftotext") is None, reason="poppler's pdftotext is not installed (scripts/setup.sh)")

#: One or two files per script whose layer is true: (file, the script its pages say).
SAMPLE = [
    ("fpdf2-arabic.pdf", "Arabic"),
    ("purepersian-persian-pure-words.pdf", "Arabic"),
    # A Persian form whose digits its Persian font draws in Persian shapes: once refused and OCR'd into Latin garbage.
    ("docling-right-to-left-03.pdf", "Arabic"),
    # A Korean report with lone surrogate halves and glyphs without a map: once a crash, then Han garbage from OCR.
    ("docling-skipped-2pages.pdf", "Hangul"),
    # Japanese without a single mapped character, every guess confirmed by the embedded font's own map.
    ("pdfjs-javauninstall-7r.pdf", "Katakana"),
    ("pdfjs-issue11656.pdf", "Hebrew"),
    ("pdfjs-issue8424.pdf", "Hangul"),
    ("pdfjs-issue15340.pdf", "Han"),
    # Vertical Japanese in a font that is not embedded: pdfium's text page keeps 262 of its 880 characters.
    ("pdfminer-jo.pdf", "Hiragana"),
    ("pymupdf-chinese-tables.pdf", "Han"),
    ("fpdf2-kerning.pdf", "Cyrillic"),
    ("fpdf2-thai-wraps-zerowidthspace.pdf", "Thai"),
    ("pymupdf-test-3887.pdf", "Greek"),
]
#: Files whose layer once crashed every output format (surrogate halves from pdfium).
CRASHED = ["pdfjs-bug1175962.pdf", "pdfjs-issue7426.pdf", "fpdf2-fallback-font-with-non-alpha-on-fontkey.pdf", "docling-skipped-2pages.pdf"]


@pytest.mark.parametrize(("name", "script"), SAMPLE)
def test_a_true_layer_in_any_script_reads_at_word_f1_095_against_pdftotext(ppocr_v6, tmp_path: Path, name: str, script: str) -> None:
    row = read_and_score(CORPUS / name, ppocr_v6, workdir=tmp_path)
    assert row["min_f1"] >= 0.95, row["detail"]
    assert script in row["scripts"]
    assert set(row["sources"]) <= {"text_layer", "mixed"}, row["detail"]


@pytest.mark.parametrize("name", CRASHED)
def test_a_layer_that_crashed_the_writers_is_written_by_every_format(ppocr_v6, tmp_path: Path, name: str) -> None:
    row = read_and_score(CORPUS / name, ppocr_v6, workdir=tmp_path)  # raises where a writer cannot encode the text
    assert row["pages"] >= 1


def test_vertical_japanese_reads_its_columns_top_to_bottom_from_right_to_left(ppocr_v6) -> None:
    from ocr_platform.core.results import page_text
    from ocr_platform.cpu.job_runner import ocr_document

    result, raw = ocr_document(CORPUS / "pdfminer-jo.pdf", job_id="t", model=CORPUS_MODEL, engine=ppocr_v6)
    assert raw["pages"][0]["text_layer"]["read_by"] == "pdfminer.six"  # pdfium's text page keeps 262 of its 880 characters
    assert [m.split(" ")[3].lstrip("(") for m in result["engine"]["models"] if m.startswith("PDF text layer")] == ["pypdfium2", "pdfminer.six"]
    lines = page_text(result["pages"][0]).splitlines()
    # The upper block's first columns, as a reader reads them (the title, then the poem's first three columns).
    first = ["序", "わたくしといふ現象は", "假定された有機交流電燈の", "ひとつの青い照明です"]
    assert [line.strip() for line in lines if line.strip()][:4] == first, lines[:6]


def test_a_lam_alef_ligature_mapped_in_visual_order_reads_as_typed(ppocr_v6) -> None:
    # Word's Arabic fonts map the lam-alef glyph to alef then lam; pdftotext (and the layer as pdfium reads it) write
    # "اإلنتاجية" and "المشكالت". docling's own reading of the file, and a reader, say "الإنتاجية" and "المشكلات".
    from ocr_platform.core.results import page_text
    from ocr_platform.cpu.job_runner import ocr_document

    result, _ = ocr_document(CORPUS / "docling-right-to-left-01.pdf", job_id="t", model=CORPUS_MODEL, engine=ppocr_v6)
    text = page_text(result["pages"][0])
    assert "الإنتاجية" in text and "المشكلات" in text
    assert "اإلنتاجية" not in text and "المشكالت" not in text
