"""A page whose vertical Japanese font is not embedded: pdfium's text page skips the text objects it cannot measure,
and the page is read again (``document.layer_reread``), its columns in reading order."""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium
from pypdf import PdfWriter
from pypdf.generic import ArrayObject, DecodedStreamObject, DictionaryObject, NameObject, NumberObject, TextStringObject

from ocr_platform.document.intake import open_document
from ocr_platform.document.layer_reread import left_out_objects

#: Adobe-Japan1 CIDs of the words (as pdfminer.six's ``jo.pdf`` codes them): わたくしといふ現象は, then 現象はくし.
COLUMNS = ["03980368035803600371034d037e077109c50378", "077109c5037803580360"]
TEXTS = ["わたくしといふ現象は", "現象はくし"]


def _vertical_pdf(path: Path, copies: int = 1) -> Path:
    """Two columns of vertical Japanese (``Identity-V``) in Ryumin-Light, not embedded, the right one drawn first
    (``copies`` times over, one on another)."""
    writer = PdfWriter()
    page = writer.add_blank_page(width=400, height=400)
    descendant = DictionaryObject({
        NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/CIDFontType0"),
        NameObject("/BaseFont"): NameObject("/Ryumin-Light"),
        NameObject("/CIDSystemInfo"): DictionaryObject({
            NameObject("/Registry"): TextStringObject("Adobe"), NameObject("/Ordering"): TextStringObject("Japan1"),
            NameObject("/Supplement"): NumberObject(2),
        }),
        NameObject("/FontDescriptor"): writer._add_object(DictionaryObject({
            NameObject("/Type"): NameObject("/FontDescriptor"), NameObject("/FontName"): NameObject("/Ryumin-Light"),
            NameObject("/Flags"): NumberObject(6), NameObject("/FontBBox"): ArrayObject([NumberObject(v) for v in (-170, -331, 1024, 903)]),
            NameObject("/ItalicAngle"): NumberObject(0), NameObject("/Ascent"): NumberObject(723), NameObject("/Descent"): NumberObject(-241),
            NameObject("/CapHeight"): NumberObject(709), NameObject("/StemV"): NumberObject(69),
        })),
    })
    font = DictionaryObject({
        NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type0"),
        NameObject("/BaseFont"): NameObject("/Ryumin-Light-Identity-V"), NameObject("/Encoding"): NameObject("/Identity-V"),
        NameObject("/DescendantFonts"): ArrayObject([writer._add_object(descendant)]),
    })
    page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): DictionaryObject({NameObject("/F1"): writer._add_object(font)})})
    content = DecodedStreamObject()
    content.set_data(f"BT /F1 20 Tf 1 0 0 1 300 360 Tm <{COLUMNS[0]}> Tj 1 0 0 1 270 360 Tm <{COLUMNS[1]}> Tj ET\n".encode() * copies)
    page[NameObject("/Contents")] = writer._add_object(content)
    page.compress_content_streams()
    writer.write(path)
    return path


def test_a_vertical_font_not_embedded_reads_every_column_top_to_bottom_right_to_left(tmp_path: Path) -> None:
    source = _vertical_pdf(tmp_path / "vertical.pdf")
    with open_document(source, text_layers=True) as doc:
        [image] = list(doc.pages())
    layer = image.text_layer
    assert layer is not None and [line.text for line in layer.lines] == TEXTS
    assert layer.unmapped == 0 and not layer.hidden
    # Each column's polygon stands upright on the page: taller than wide, the first right of the second.
    boxes = [line.box for line in layer.lines]
    assert all(y1 - y0 > 3 * (x1 - x0) for x0, y0, x1, y1 in boxes)
    assert boxes[0][0] > boxes[1][2]


def test_a_page_drawing_more_than_the_second_readers_budget_keeps_pdfiums_reading(tmp_path: Path) -> None:
    """A 2 KB file whose page unpacks past the second reader's budget keeps what pdfium reads (drawn as plain strings,
    that many bytes would be 300,000 characters: about 3 s and 330 MB of pdfminer.six)."""
    from ocr_platform.core import defaults

    copies = defaults.max_reread_content_bytes() // 126 + 1  # one copy of the two columns draws 126 bytes
    source = _vertical_pdf(tmp_path / "vertical.pdf", copies=copies)
    assert source.stat().st_size < 10_000
    with open_document(source, text_layers=True) as doc:
        [image] = list(doc.pages())
    layer = image.text_layer
    assert layer is not None and not layer.reread
    with open_document(_vertical_pdf(tmp_path / "one.pdf"), text_layers=True) as doc:
        [image] = list(doc.pages())
    assert image.text_layer is not None and image.text_layer.reread


def test_a_page_pdfium_reads_whole_is_not_read_again(tmp_path: Path) -> None:
    from tests import documents

    source = documents.write_born_digital_pdf(tmp_path / "report.pdf")
    pdf = pdfium.PdfDocument(source)
    assert left_out_objects(pdf[0]) == 0


def test_a_second_reader_that_fails_leaves_the_page_pdfiums_reading(tmp_path: Path, monkeypatch) -> None:
    import ocr_platform.document.text_layer as text_layer

    def broken(page, index):
        raise ValueError("a content stream pdfminer.six cannot parse")

    monkeypatch.setattr(text_layer, "reread_page", broken)
    source = _vertical_pdf(tmp_path / "vertical.pdf")
    with open_document(source, text_layers=True) as doc:
        [image] = list(doc.pages())
    layer = image.text_layer
    pdf = pdfium.PdfDocument(source)
    page = pdf[0]
    pdfium_only = text_layer.read_text_layer(page, page.get_textpage(), scale=image.scale)
    assert layer is not None and [line.text for line in layer.lines] == [line.text for line in pdfium_only.lines]
