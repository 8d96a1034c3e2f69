"""hOCR and ALTO from real results (PP-OCRv5 on a scan, a public form's text layer, Chinese, a page read at a turn,
the layout route's report page): each document passes its published checker (hocr-spec's validator, the ALTO 4.4
XSD in tests/schemas), reads back as the result's lines and words, and a tool that consumes hOCR (hocr-tools'
hocr-pdf) puts every word where the result has it."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pytest
from hocr_spec import HocrValidator
from hocr_tools_lib.tools.hocr_lines import lines as hocr_lines
from hocr_tools_lib.tools.hocr_pdf import export_pdf
from lxml import etree

from ocr_platform.core.results import OcrResult
from ocr_platform.engines.local_structure import LocalStructureEngine
from ocr_platform.engines.reading import ocr_document
from ocr_platform.outputs.alto import ALTO_NAMESPACE, alto_document
from ocr_platform.outputs.hocr import hocr_document
from tests.documents import ENGLISH_PAGES, render_mixed_orientation_page, render_report_page, write_image_pdf, write_report_png

SCHEMAS = Path(__file__).resolve().parents[1] / "schemas"
PUBLIC = Path(__file__).resolve().parents[1] / "documents" / "public"
ALTO = f"{{{ALTO_NAMESPACE}}}"


@pytest.fixture(scope="module")
def results(ppocr, docs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, OcrResult]:
    root = tmp_path_factory.mktemp("formats")
    mixed = root / "mixed.png"
    render_mixed_orientation_page().save(mixed)
    structure = LocalStructureEngine(ppocr, reason="PP-StructureV3 weights are not installed here")
    runs: dict[str, tuple[Path, Any, dict[str, Any]]] = {
        "scan": (write_image_pdf(root / "scan.pdf", ENGLISH_PAGES[:2]), ppocr, {}),
        "form": (PUBLIC / "SF424_page2.pdf", ppocr, {}),
        "chinese": (docs["chinese"], ppocr, {"language": "ch"}),
        "turned": (mixed, ppocr, {}),
        "report": (write_report_png(root / "report.png"), structure, {"model": "pp-structurev3"}),
    }
    found = {}
    for name, (path, engine, kwargs) in runs.items():
        model = kwargs.pop("model", "pp-ocrv5")
        found[name], _ = ocr_document(path, job_id=name, model=model, engine=engine, **kwargs)
    return found


def _alto_schema() -> etree.XMLSchema:
    class LocalXlink(etree.Resolver):
        def resolve(self, url: str, pubid: str, context: Any) -> Any:
            return self.resolve_filename(str(SCHEMAS / "xlink.xsd"), context) if url.endswith("/xlink.xsd") else None

    parser = etree.XMLParser(no_network=True)
    parser.resolvers.add(LocalXlink())
    return etree.XMLSchema(etree.parse(str(SCHEMAS / "alto-4-4.xsd"), parser))


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.parametrize("name", ["scan", "form", "chinese", "turned", "report"])
def test_hocr_passes_the_hocr_spec_validator_and_reads_back_as_the_lines(results: dict[str, OcrResult], name: str, tmp_path: Path) -> None:
    result = results[name]
    path = tmp_path / "result.hocr"
    path.write_text(hocr_document(result), encoding="utf-8")

    report = HocrValidator("standard").validate(str(path), parse_strict=True)
    assert report.is_valid(), report.format("text")
    expected = [_squeezed(line["text"]) for page in result["pages"] for line in page["lines"]]
    assert sorted(hocr_lines(path)) == sorted(expected)
    root = etree.parse(str(path), etree.XMLParser()).getroot()
    words = root.findall(".//{http://www.w3.org/1999/xhtml}span[@class='ocrx_word']")
    result_words = [word for page in result["pages"] for line in page["lines"] for word in line["words"]]
    assert sorted(word.text for word in words) == sorted(word["text"] for word in result_words)
    assert all(re.fullmatch(r"bbox \d+ \d+ \d+ \d+; x_wconf \d{1,3}", word.get("title")) for word in words)
    assert len(root.findall(".//{http://www.w3.org/1999/xhtml}div[@class='ocr_page']")) == result["page_count"]


@pytest.mark.parametrize("name", ["scan", "form", "chinese", "turned", "report"])
def test_alto_is_valid_alto_4_and_its_strings_are_the_words(results: dict[str, OcrResult], name: str) -> None:
    result = results[name]
    document = etree.fromstring(alto_document(result).encode("utf-8"))

    schema = _alto_schema()
    assert schema.validate(document), schema.error_log
    pages = document.findall(f".//{ALTO}Page")
    assert [int(page.get("PHYSICAL_IMG_NR")) for page in pages] == [page["page"] for page in result["pages"]]
    text_lines = sorted(
        "".join(" " if part.tag == f"{ALTO}SP" else part.get("CONTENT") for part in line)
        for line in document.iter(f"{ALTO}TextLine")
    )
    assert text_lines == sorted(_squeezed(line["text"]) for page in result["pages"] for line in page["lines"])
    confidences = [float(string.get("WC")) for string in document.iter(f"{ALTO}String")]
    scores = [word["score"] for page in result["pages"] for line in page["lines"] for word in line["words"]]
    assert sorted(confidences) == pytest.approx(sorted(scores), abs=1e-4)


def test_layout_blocks_become_hocr_content_areas_and_tagged_alto_text_blocks(results: dict[str, OcrResult]) -> None:
    result = results["report"]
    labels = [block["label"] for block in result["pages"][0]["blocks"]]
    assert labels == ["title", "text", "table"]

    hocr = etree.fromstring(hocr_document(result).encode("utf-8"))
    areas = hocr.findall(".//{http://www.w3.org/1999/xhtml}div[@class='ocr_carea']")
    assert len(areas) == 3
    assert "Quarterly" in "".join(areas[0].itertext()) and "Coffee" in "".join(areas[2].itertext())
    alto = etree.fromstring(alto_document(result).encode("utf-8"))
    tags = {tag.get("ID"): tag.get("LABEL") for tag in alto.iter(f"{ALTO}LayoutTag")}
    assert [tags[block.get("TAGREFS")] for block in alto.iter(f"{ALTO}TextBlock")] == labels


def test_hocr_tools_hocr_pdf_places_every_word_where_the_result_has_it(results: dict[str, OcrResult], tmp_path: Path) -> None:
    """hocr-pdf builds a searchable PDF from page images and their hOCR: its words are the result's, each on the
    result word's box (the image saved at 72 DPI, so a pixel is a PDF point)."""
    result = results["report"]
    page = result["pages"][0]
    render_report_page().save(tmp_path / "00001.jpg", dpi=(72, 72))
    (tmp_path / "00001.hocr").write_text(hocr_document(result), encoding="utf-8")

    export_pdf(tmp_path, tmp_path / "out.pdf", default_dpi=72)

    pdf = pdfium.PdfDocument(str(tmp_path / "out.pdf"))
    textpage = pdf[0].get_textpage()
    height = pdf[0].get_height()
    boxes = {}
    for word in (w for line in page["lines"] for w in line["words"]):
        xs, ys = [p[0] for p in word["polygon"]], [p[1] for p in word["polygon"]]
        # hocr-pdf sets a word on its line's bottom edge (no baseline given), a pixel or two below the word's own box
        found = textpage.get_text_bounded(min(xs) - 1, height - max(ys) - 3, max(xs) + 1, height - min(ys) + 1)
        boxes[word["text"]] = found
    assert sum(_squeezed(found) == text for text, found in boxes.items()) >= 0.9 * len(boxes), [(t, f) for t, f in boxes.items() if _squeezed(f) != t]
    extracted = Counter(_squeezed(textpage.get_text_range()).split())
    expected = Counter(w["text"] for line in page["lines"] for w in line["words"])
    assert sum((extracted & expected).values()) >= 0.95 * sum(expected.values()), (extracted, expected)

