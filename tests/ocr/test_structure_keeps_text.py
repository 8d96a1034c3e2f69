"""The ``pp-structurev3`` route (its local substitute, on real weights) keeps every word of a page whatever
label the layout gives its region, on a real public page (``tests/documents/public``): all in its blocks, and
all but page furniture (headers, footers), which PP-StructureV3's Markdown leaves out, in its Markdown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ocr_platform.core.text_metrics import words
from ocr_platform.engines.local_structure import LocalStructureEngine
from ocr_platform.engines.reading import ocr_document
from ocr_platform.engines.regions import MARKDOWN_IGNORED_LABELS

FORM_PAGE = Path(__file__).parents[1] / "documents" / "public" / "SF424_page2.pdf"


def word_recall(reference: str, hypothesis: str) -> float:
    """The share of ``reference``'s words (with their counts) that ``hypothesis`` has."""
    ref = words(reference)
    return sum((ref & words(hypothesis)).values()) / max(1, sum(ref.values()))


def markdown_recall(read: str, page: dict[str, Any]) -> float:
    """The share of ``read``'s words, less those of the page's furniture blocks (headers, footers), that the page's
    Markdown has."""
    furniture = words("\n".join(block.get("text", "") for block in page["blocks"] if block["label"] in MARKDOWN_IGNORED_LABELS))
    ref = words(read) - furniture
    return sum((ref & words(page["markdown"])).values()) / max(1, sum(ref.values()))


@pytest.fixture(scope="module")
def structure_engine(ppocr) -> LocalStructureEngine:
    return LocalStructureEngine(ppocr, reason="PP-StructureV3 weights are not installed here")


@pytest.fixture(scope="module")
def form_results(ppocr, structure_engine: LocalStructureEngine) -> tuple[Any, Any]:
    options = {"text_layer": "ignore"}  # what OCR reads: the text layer has its own test
    text, _ = ocr_document(FORM_PAGE, job_id="form-text", model="pp-ocrv5", engine=ppocr, options=options)
    structure, _ = ocr_document(FORM_PAGE, job_id="form-structure", model="pp-structurev3", engine=structure_engine, options=options)
    return text, structure


def test_the_layout_calls_the_form_a_figure(form_results: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """The premise: the page's words lie mostly in a region the layout model labels ``figure``."""
    _, structure = form_results
    [page] = structure["pages"]
    figure_words = sum(len(block["text"].split()) for block in page["blocks"] if block["label"] == "figure")
    assert figure_words >= 0.8 * len(" ".join(line["text"] for line in page["lines"]).split())


def test_every_word_the_text_route_reads_is_in_the_structure_routes_markdown_and_blocks(
    form_results: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    text, structure = form_results
    [text_page], [page] = text["pages"], structure["pages"]
    read = "\n".join(line["text"] for line in text_page["lines"])
    assert len(read.split()) >= 80

    assert markdown_recall(read, page) >= 0.95
    assert word_recall(read, "\n".join(block.get("text", "") for block in page["blocks"])) >= 0.95
    # The OMB number the layout calls a header: in its block, not in the Markdown (as PP-StructureV3 writes it).
    [header] = [block for block in page["blocks"] if "4040-0004" in block.get("text", "")]
    assert header["label"] == "header" and "4040-0004" not in page["markdown"]
    assert word_recall(read, structure["text"]) >= 0.95


@pytest.mark.parametrize("document", ["form", "vector_pdf"])
def test_the_structure_route_uses_the_text_layer_as_the_text_route_does(
    ppocr, structure_engine: LocalStructureEngine, docs: dict[str, Path], document: str
) -> None:
    """Same ``text_source`` and lines as ``pp-ocrv5`` on born-digital pages, and no whole-page OCR where the layer is used."""
    path = FORM_PAGE if document == "form" else docs["vector_pdf"]
    text, _ = ocr_document(path, job_id="layer-text", model="pp-ocrv5", engine=ppocr, options={"text_layer": "auto"})
    structure, raw = ocr_document(path, job_id="layer-structure", model="pp-structurev3", engine=structure_engine, options={"text_layer": "auto"})

    sources = [page["text_source"] for page in structure["pages"]]
    assert sources == [page["text_source"] for page in text["pages"]] and set(sources) == {"text_layer"}
    assert structure["timings"]["text"] == 0.0  # no page was recognised whole: its text came from the file
    for text_page, page in zip(text["pages"], structure["pages"], strict=True):
        assert page["lines"] == text_page["lines"] and page["blocks"]
        read = "\n".join(line["text"] for line in text_page["lines"])
        assert markdown_recall(read, page) >= 0.95
    assert raw["pages"][0]["text_layer"]["source"] == "text_layer"
