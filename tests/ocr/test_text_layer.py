"""``text_layer: auto`` on the real PP-OCRv5 engine: a born-digital PDF is read from its own text, a scan is
read by OCR exactly as with ``ignore``, a half-typeset page mixes both, and a wrong earlier-OCR layer is
refused in favour of OCR."""

from __future__ import annotations

from pathlib import Path

import pytest

from ocr_platform.core.text_metrics import word_f1
from ocr_platform.cpu.job_runner import ocr_document
from tests import documents
from tests.ocr import polygon_iou


def _read(ppocr, path: Path, mode: str) -> dict:
    result, _ = ocr_document(path, job_id="t", model="pp-ocrv5", engine=ppocr, options={"text_layer": mode})
    return result


@pytest.fixture(scope="module")
def born_digital(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return documents.write_born_digital_pdf(tmp_path_factory.mktemp("layer") / "report.pdf")


def test_a_born_digital_pdf_is_read_from_its_text_layer_where_the_ocr_would_see_the_same_words(ppocr, born_digital: Path) -> None:
    from pypdf import PdfReader

    auto, ocr = _read(ppocr, born_digital, "auto"), _read(ppocr, born_digital, "ignore")

    assert [page["text_source"] for page in auto["pages"]] == ["text_layer", "text_layer"]
    assert any(m.startswith("PDF text layer (pypdfium2 ") for m in auto["engine"]["models"])
    assert not any(m.startswith("PDF text layer") for m in ocr["engine"]["models"])
    extracted = [page.extract_text() for page in PdfReader(born_digital).pages]
    for page, reference in zip(auto["pages"], extracted, strict=True):
        assert word_f1(reference, " ".join(line["text"] for line in page["lines"])) >= 0.99
    # Every word's layer line overlaps the OCR line that read the same word.
    overlaps = []
    for layer_page, ocr_page in zip(auto["pages"], ocr["pages"], strict=True):
        for line in layer_page["lines"]:
            for word in line["text"].split():
                candidates = [o for o in ocr_page["lines"] if word in o["text"].split()]
                best = max((polygon_iou(line["polygon"], o["polygon"]) for o in candidates), default=0.0)
                overlaps.append(best)
    assert sum(iou >= 0.5 for iou in overlaps) >= 0.9 * len(overlaps), overlaps
    assert (auto["pages"][0]["width"], auto["pages"][0]["scale"]) == (ocr["pages"][0]["width"], ocr["pages"][0]["scale"])


def test_a_scan_without_a_text_layer_reads_the_same_with_auto_as_with_ignore(ppocr, tmp_path: Path) -> None:
    scan = documents.write_image_pdf(tmp_path / "scan.pdf", documents.ENGLISH_PAGES[:2])

    auto, ocr = _read(ppocr, scan, "auto"), _read(ppocr, scan, "ignore")

    assert [page["text_source"] for page in auto["pages"]] == ["ocr", "ocr"]
    assert auto["pages"] == ocr["pages"]
    assert auto["text"] == ocr["text"] and auto["engine"] == ocr["engine"]


def test_a_page_half_typeset_and_half_an_image_of_text_is_read_from_both(ppocr, tmp_path: Path) -> None:
    page_pdf = documents.write_half_image_pdf(tmp_path / "half.pdf", tmp_path)

    [page] = _read(ppocr, page_pdf, "auto")["pages"]

    assert page["text_source"] == "mixed"
    text = "\n".join(line["text"] for line in page["lines"])
    for expected in documents.BORN_DIGITAL_PAGES[0] + documents.IMAGE_HALF_LINES:
        assert expected in text
    typeset = [line for line in page["lines"] if line["score"] == 1.0]
    assert [line["text"] for line in typeset] == documents.BORN_DIGITAL_PAGES[0]


def test_a_scan_whose_invisible_layer_is_for_another_page_is_read_by_ocr(ppocr, tmp_path: Path) -> None:
    wrong = documents.write_scan_with_layer(tmp_path / "wrong.pdf", documents.ENGLISH_PAGES[0], documents.ENGLISH_PAGES[1])
    right = documents.write_scan_with_layer(tmp_path / "right.pdf", documents.ENGLISH_PAGES[0], documents.ENGLISH_PAGES[0])

    wrong_auto, wrong_ocr = _read(ppocr, wrong, "auto"), _read(ppocr, wrong, "ignore")
    right_auto = _read(ppocr, right, "auto")

    assert wrong_auto["pages"][0]["text_source"] == "ocr"
    assert wrong_auto["text"] == wrong_ocr["text"]
    for line in documents.ENGLISH_PAGES[1]:
        assert line not in wrong_auto["text"]
    assert right_auto["pages"][0]["text_source"] == "text_layer"
    assert right_auto["text"] == "\n".join(documents.ENGLISH_PAGES[0])


def test_the_frames_and_arrows_of_a_diagram_are_not_read_as_missing_text(ppocr, tmp_path: Path) -> None:
    chart = documents.write_flowchart_pdf(tmp_path / "chart.pdf")

    result, raw = ocr_document(chart, job_id="t", model="pp-ocrv5", engine=ppocr, options={"text_layer": "auto"})

    [page] = result["pages"]
    assert page["text_source"] == "text_layer", raw["pages"][0]["text_layer"]
    assert raw["pages"][0]["text_layer"]["ocr_regions"] == []  # nothing was sent to OCR (raw.json)
    assert [line["text"] for line in page["lines"]] == ["Nodule found on ultrasound", "Fine needle aspiration", "Benign: follow up in 12 months"]


def test_layout_still_comes_from_the_image_and_the_blocks_take_the_layers_text(ppocr, born_digital: Path) -> None:
    from ocr_platform.engines.local_structure import LocalStructureEngine

    structure = LocalStructureEngine(ppocr, reason="PP-StructureV3 weights are not installed here")

    auto, _ = ocr_document(born_digital, job_id="t", model="pp-structurev3", engine=structure, options={"text_layer": "auto"})
    ocr, _ = ocr_document(born_digital, job_id="t", model="pp-structurev3", engine=structure, options={"text_layer": "ignore"})

    assert [page["text_source"] for page in auto["pages"]] == ["text_layer", "text_layer"]
    assert any(m.startswith("PDF text layer (pypdfium2 ") for m in auto["engine"]["models"])
    for layered, read, lines in zip(auto["pages"], ocr["pages"], documents.BORN_DIGITAL_PAGES, strict=True):
        # The same blocks (labels and boxes: layout ran on the image), their text now the layer's exactly.
        assert [(b["label"], b["bbox"]) for b in layered["blocks"]] == [(b["label"], b["bbox"]) for b in read["blocks"]]
        assert "\n".join(block["text"] for block in layered["blocks"]) == "\n".join(lines)
        assert lines[0] in layered["markdown"]


def test_a_layer_whose_fonts_map_to_no_unicode_is_not_used(ppocr, tmp_path: Path) -> None:
    broken = documents.write_unmapped_pdf(tmp_path / "unmapped.pdf", tmp_path)

    auto, raw = ocr_document(broken, job_id="t", model="pp-ocrv5", engine=ppocr, options={"text_layer": "auto"})
    ocr, _ = ocr_document(broken, job_id="t", model="pp-ocrv5", engine=ppocr, options={"text_layer": "ignore"})

    assert [page["text_source"] for page in auto["pages"]] == ["ocr", "ocr"]
    assert "no Unicode mapping" in raw["pages"][0]["text_layer"]["reason"]
    assert auto["text"] == ocr["text"] and "Annual maintenance report 2026" in auto["text"]
