"""Reading a PDF page's text layer (no OCR): lines and their polygons in the rendered page's pixels, whatever
the page's rotation or where its crop box comes from, and the marks of an earlier OCR's hidden layer."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
import pytest
from pypdf import PdfReader, PdfWriter

from ocr_platform.document.intake import open_document
from ocr_platform.document.text_layer import read_text_layer
from tests import documents


def _ink_box(image) -> tuple[int, int, int, int]:
    ys, xs = np.nonzero(np.asarray(image.convert("L")) < 160)
    return int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())


@pytest.mark.parametrize("rotation", [0, 90, 180, 270])
def test_layer_lines_cover_the_ink_of_the_rendered_page_at_every_rotation(tmp_path: Path, rotation: int) -> None:
    source = documents.write_born_digital_pdf(tmp_path / "report.pdf")
    writer = PdfWriter()
    page = PdfReader(source).pages[0]
    page.rotate(rotation)
    writer.add_page(page)
    turned = tmp_path / "turned.pdf"
    writer.write(turned)

    with open_document(turned, text_layers=True) as doc:
        [image] = list(doc.pages())
    layer = image.text_layer

    # In reading order, although pdfium hands a /Rotate 90 page's characters over from the last line up.
    assert layer is not None and [line.text for line in layer.lines] == documents.BORN_DIGITAL_PAGES[0]
    boxes = [line.box for line in layer.lines]
    union = (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))
    ink = _ink_box(image.image)
    assert all(abs(a - b) <= 12 for a, b in zip(union, ink, strict=True)), (union, ink)
    # The polygon starts at the line's top-left corner in reading direction: p0 -> p1 runs along the text.
    (ax, ay), (bx, by) = next(line for line in layer.lines if len(line.text) > 20).polygon[:2]
    direction = {0: (bx > ax), 90: (by > ay), 180: (bx < ax), 270: (by < ay)}[rotation]
    assert direction
    assert not layer.hidden and layer.unmapped == 0


def test_a_page_without_its_own_media_box_inherits_the_page_trees(tmp_path: Path) -> None:
    # fpdf2 writes the A4 MediaBox on the page tree, not the pages: the layer must not assume Letter.
    source = documents.write_born_digital_pdf(tmp_path / "report.pdf")
    pdf = pdfium.PdfDocument(source)
    page = pdf[0]
    layer = read_text_layer(page, page.get_textpage(), scale=1.0)
    assert layer.lines[0].box[1] > 0 and layer.skipped == 0
    assert max(line.box[3] for line in layer.lines) < 842


def test_an_invisible_layer_over_a_scan_is_marked_hidden(tmp_path: Path) -> None:
    scan = documents.write_scan_with_layer(tmp_path / "scan.pdf", documents.ENGLISH_PAGES[0], documents.ENGLISH_PAGES[0])
    with open_document(scan, text_layers=True) as doc:
        [image] = list(doc.pages())
    layer = image.text_layer
    assert layer is not None and layer.invisible and layer.covered_by_image and layer.hidden
    assert [line.text for line in layer.lines] == documents.ENGLISH_PAGES[0]


def test_images_and_documents_opened_without_layers_carry_none(tmp_path: Path) -> None:
    png = documents.write_png(tmp_path / "page.png", ["Hello"])
    with open_document(png, text_layers=True) as doc:
        assert next(doc.pages()).text_layer is None
    pdf = documents.write_born_digital_pdf(tmp_path / "report.pdf")
    with open_document(pdf) as doc:
        assert next(doc.pages()).text_layer is None
