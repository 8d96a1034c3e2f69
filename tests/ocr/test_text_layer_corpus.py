"""A sample of the non-Latin text-layer corpus (``tests/documents/text_layers``, public PDFs), read through the default
settings in CI: each file is read, written in every output format, and scored against poppler's ``pdftotext``
(``tests.text_layer_corpus``; the whole corpus is ``benchmarks/text_layer_corpus.py``). About 15 s with the engine
loaded."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.text_layer_corpus import CORPUS, read_and_score

pytestmark = pytest.mark.skipif(shutil.which("pdftotext") is None, reason="poppler's pdftotext is not installed (scripts/setup.sh)")

#: One or two files per script whose layer is true: (file, the script its pages say).
SAMPLE = [
    ("fpdf2-arabic.pdf", "Arabic"),
    ("purepersian-persian-pure-words.pdf", "Arabic"),
    ("pdfjs-issue11656.pdf", "Hebrew"),
    ("pdfjs-issue8424.pdf", "Hangul"),
    ("pdfjs-issue15340.pdf", "Han"),
    ("pymupdf-chinese-tables.pdf", "Han"),
    ("fpdf2-kerning.pdf", "Cyrillic"),
    ("fpdf2-thai-wraps-zerowidthspace.pdf", "Thai"),
    ("pymupdf-test-3887.pdf", "Greek"),
]
#: Files whose layer once crashed every output format (surrogate halves from pdfium).
CRASHED = ["pdfjs-bug1175962.pdf", "pdfjs-issue7426.pdf", "fpdf2-fallback-font-with-non-alpha-on-fontkey.pdf"]


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
