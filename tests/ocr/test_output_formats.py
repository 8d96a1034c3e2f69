"""hOCR and ALTO from real results (PP-OCRv5 on a scan, a public form's text layer, Chinese, a page read at a turn,
the layout route's report page): each document passes its published checker (hocr-spec's validator, the ALTO 4.4
XSD in tests/schemas), reads back as the result's lines and words, and a tool that consumes hOCR (hocr-tools'
hocr-pdf) puts every word where the result has it; the Textract-shaped JSON reads in AWS's own Textract libraries
(amazon-textract-textractor, amazon-textract-response-parser) as the same pages, lines, words, layout and tables."""

from __future__ import annotations

import json
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

from ocr_platform.core.results import EngineInfo, OcrResult, build_result
from ocr_platform.engines.local_structure import LocalStructureEngine
from ocr_platform.engines.reading import ocr_document
from ocr_platform.outputs.alto import ALTO_NAMESPACE, alto_document
from ocr_platform.outputs.hocr import hocr_document
from ocr_platform.outputs.textract import textract_document
from tests.documents import ENGLISH_PAGES, REPORT_TABLE, render_mixed_orientation_page, render_report_page, write_image_pdf, write_report_png
from tests.result_schema import assert_valid_result

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



def _result_words(result: OcrResult) -> list[str]:
    return [word["text"] for page in result["pages"] for line in page["lines"] for word in line["words"]]


@pytest.mark.parametrize("name", ["scan", "form", "chinese", "turned", "report"])
def test_textract_json_reads_in_textractor_and_the_response_parser_as_the_result(results: dict[str, OcrResult], name: str) -> None:
    """amazon-textract-textractor's ``Document.open`` and amazon-textract-response-parser's ``trp.Document`` read the
    same pages, lines, words (with their boxes) and text as result.json."""
    import trp
    from textractor.entities.document import Document

    result = results[name]
    response = json.loads(json.dumps(textract_document(result)))  # as it is stored: plain JSON
    document = Document.open(response)

    assert len(document.pages) == result["page_count"]
    # textractor orders a page's lines by where they lie; each WORD block is written in the result's order
    word_blocks = [block["Id"] for block in response["Blocks"] if block["BlockType"] == "WORD"]
    result_words = {block_id: (page, word) for block_id, (page, word) in zip(
        word_blocks, [(page, word) for page in result["pages"] for line in page["lines"] for word in line["words"]], strict=True)}
    for page, expected in zip(document.pages, result["pages"], strict=True):
        # textractor joins a line's words with spaces, a Chinese line's characters too: compared without them
        assert sorted(line.text.replace(" ", "") for line in page.lines) == sorted(line["text"].replace(" ", "") for line in expected["lines"])
        words = [word for line in page.lines for word in line.words]
        assert sorted(word.text for word in words) == sorted(word["text"] for line in expected["lines"] for word in line["words"])
        for word in words:
            size, mine = result_words[word.id]
            x0, y1 = min(p[0] for p in mine["polygon"]), max(p[1] for p in mine["polygon"])
            assert word.text == mine["text"]
            assert word.bbox.x * size["width"] == pytest.approx(max(0, x0), abs=0.01)
            assert (word.bbox.y + word.bbox.height) * size["height"] == pytest.approx(min(size["height"], y1), abs=0.01)
            assert word.raw_object["Confidence"] == pytest.approx(mine["score"] * 100, abs=0.01)  # Textract's 0-100
            assert word.confidence == pytest.approx(mine["score"], abs=1e-4)  # textractor's own 0-1
    parsed = trp.Document(response)
    # a LINE's text is its words joined by single spaces, as in Textract's own responses
    assert [line.text for page in parsed.pages for line in page.lines] == [
        " ".join(word["text"] for word in line["words"]) for page in result["pages"] for line in page["lines"]]
    assert [word.text for page in parsed.pages for line in page.lines for word in line.words] == _result_words(result)


def test_textract_layout_and_table_match_the_report_page(results: dict[str, OcrResult]) -> None:
    import trp
    from textractor.entities.document import Document

    result = results["report"]
    response = textract_document(result)
    document = Document.open(response)

    assert [layout.layout_type for layout in document.pages[0].layouts] == ["LAYOUT_TITLE", "LAYOUT_TEXT", "LAYOUT_TABLE"]
    [table] = document.tables
    assert [[cell.strip() for cell in row] for row in table.to_pandas().values.tolist()] == REPORT_TABLE
    [parsed] = trp.Document(response).pages[0].tables
    assert [[cell.text.strip() for cell in row.cells] for row in parsed.rows] == REPORT_TABLE
    assert "Quarterly Supply Report" in document.get_text() and "Coffee\t3\t9.20" in document.get_text()


def test_textract_merged_cells_and_form_fields_on_a_hand_built_page() -> None:
    """A page with a spanning table cell and PDF form fields (``form_fields``, as a PDF's AcroForm gives them)."""
    import trp
    from textractor.entities.document import Document

    def line(text: str, x0: float, y0: float, x1: float, y1: float) -> dict[str, Any]:
        return {"text": text, "polygon": [[x0, y0], [x1, y0], [x1, y1], [x0, y1]], "score": 0.9}

    page: dict[str, Any] = {
        "page": 1, "width": 1000, "height": 1000, "scale": 1.0,
        "lines": [line("Name Total", 100, 100, 400, 130), line("Tea 12", 100, 150, 400, 180), line("Both", 100, 200, 400, 230)],
        "blocks": [{"label": "table", "bbox": [90, 90, 410, 240], "text": "",
                    "html": "<table><tr><th>Name</th><th>Total</th></tr><tr><td>Tea</td><td>12</td></tr><tr><td colspan=2>Both</td></tr></table>"}],
        "form_fields": [
            {"name": "Applicant", "type": "text", "value": "Kari Nordmann", "bbox": [100, 500, 400, 530]},
            {"name": "Agree", "type": "checkbox", "value": "Yes", "selected": True, "bbox": [100, 600, 120, 620]},
            {"name": "Decline", "type": "checkbox", "value": "Off", "selected": False, "bbox": [100, 650, 120, 670]},
        ],
    }
    result = build_result("hand", "pp-structurev3", EngineInfo(name="test", models=[], version="1"), [page])  # type: ignore[list-item]
    response = textract_document(result)

    merged = [block for block in response["Blocks"] if block["BlockType"] == "MERGED_CELL"]
    assert [(b["RowIndex"], b["ColumnIndex"], b["RowSpan"], b["ColumnSpan"], len(b["Relationships"][0]["Ids"])) for b in merged] == [(3, 1, 1, 2, 2)]
    document = Document.open(response)
    assert [(kv.key.text.strip(), kv.value.text.strip()) for kv in document.key_values] == [("Applicant", "Kari Nordmann")]
    assert [(kv.key.text.strip(), kv.value.children[0].is_selected()) for kv in document.checkboxes] == [("Agree", True), ("Decline", False)]
    assert [[cell.strip() for cell in row] for row in document.tables[0].to_pandas().values.tolist()] == [["Name", "Total"], ["Tea", "12"], ["Both", ""]]
    fields = trp.Document(response).pages[0].form.fields
    assert [(f.key.text, f.value.text) for f in fields] == [("Applicant", "Kari Nordmann"), ("Agree", "SELECTED"), ("Decline", "NOT_SELECTED")]


def test_cli_ocr_writes_each_format_from_the_same_read(ppocr, docs: dict[str, Path], tmp_path: Path) -> None:
    from ocr_platform.cli import commands as cli

    for fmt, name in (("alto", "page.alto.xml"), ("textract", "page.textract.json"), ("pdf", "page.pdf")):
        assert cli.main(["ocr", str(docs["png"]), "--model", "pp-ocrv5", "--format", fmt, "--output", str(tmp_path / name)]) == 0
    alto = etree.parse(str(tmp_path / "page.alto.xml")).getroot()
    assert _alto_schema().validate(alto)
    assert "Invoice" in [s.get("CONTENT") for s in alto.iter(f"{ALTO}String")]
    assert json.loads((tmp_path / "page.textract.json").read_text())["DocumentMetadata"] == {"Pages": 1}
    assert (tmp_path / "page.pdf").read_bytes().startswith(b"%PDF")


@pytest.mark.parametrize("name", ["scan", "form", "chinese", "turned", "report"])
def test_result_json_of_each_real_route_matches_the_published_schema(results: dict[str, OcrResult], name: str) -> None:
    assert_valid_result(results[name])


def test_pp_ocrv6_result_matches_the_published_schema(ppocr_v6, docs: dict[str, Path]) -> None:
    result, _ = ocr_document(docs["png"], job_id="v6", model="pp-ocrv6", engine=ppocr_v6)
    assert result["pages"][0]["lines"]
    assert_valid_result(result)


def test_the_schema_refuses_a_result_that_breaks_the_contract(results: dict[str, OcrResult]) -> None:
    broken = json.loads(json.dumps(results["scan"]))
    broken["pages"][0]["lines"][0]["words"][0]["polygon"] = [[0, 0], [1, 1]]
    with pytest.raises(AssertionError, match="polygon"):
        assert_valid_result(broken)
