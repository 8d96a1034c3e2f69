"""A text layer that is not text (lone surrogate halves, a pair that pdfium reversed, a control character, a ligature,
an Arabic presentation form) is read, normalised once, and written by every output format without an encoding error;
a lone half becomes U+FFFD with a ``layer_text_repaired`` warning. The PDF is built here, byte by byte, with a
``/ToUnicode`` map that sends its glyphs to those code units."""

from __future__ import annotations

from pathlib import Path

import pytest

from ocr_platform.cpu.job_runner import ocr_document
from tests.text_layer_corpus import write_every_format

#: The body line is true text, long enough that the hostile line's lone halves are under the layer check's 2 %.
BODY = "Invoice 2026 for consulting services, total due 1,234.56 EUR."
#: The hostile line's glyphs (Helvetica's A..G) and what its ``/ToUnicode`` map says each one is.
HOSTILE = {"A": "D800", "B": "0041", "C": "FB01", "D": "0003", "E": "FEFB", "F": "D83DDE00", "G": "DC00"}


def hostile_layer_pdf(path: Path, body: str = BODY, cmap: dict[str, str] = HOSTILE, size: int = 16) -> Path:
    """A one-page PDF: ``body`` in Helvetica at ``size`` points, then ``cmap``'s glyphs in a Helvetica whose ``/ToUnicode`` is ``cmap``."""
    cmap_text = "/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Hostile def\n"
    cmap_text += "1 begincodespacerange <00> <FF> endcodespacerange\n"
    cmap_text += f"{len(cmap)} beginbfchar\n" + "".join(f"<{ord(k):02X}> <{v}>\n" for k, v in cmap.items()) + "endbfchar\n"
    cmap_text += "endcmap CMapName currentdict /CMap defineresource pop end end\n"
    content = f"BT /F1 {size} Tf 50 750 Td ({body}) Tj ET\nBT /F2 28 Tf 50 700 Td ({''.join(cmap)}) Tj ET\n"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R /F2 5 0 R >> >> /Contents 6 0 R >>",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 7 0 R >>",
        f"<< /Length {len(content)} >>\nstream\n{content}endstream",
        f"<< /Length {len(cmap_text)} >>\nstream\n{cmap_text}endstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, obj in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{obj}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode() + "".join(f"{o:010d} 00000 n \n" for o in offsets).encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(bytes(out))
    return path


def test_the_layer_reads_as_text_surrogates_paired_or_replaced_forms_as_their_letters(tmp_path: Path) -> None:
    import pypdfium2 as pdfium

    from ocr_platform.document.text_layer import read_text_layer

    pdf = pdfium.PdfDocument(str(hostile_layer_pdf(tmp_path / "hostile.pdf")))
    try:
        page = pdf[0]
        layer = read_text_layer(page, page.get_textpage(), scale=2.0)
    finally:
        pdf.close()
    texts = [line.text for line in layer.lines]
    assert texts[0] == BODY
    # D800 alone and DC00 alone: U+FFFD; the emoji's pair (reversed by pdfium's right-to-left run) joined; the control
    # dropped; the ligature and lam-alef as their letters.
    assert texts[1] == "\ufffdAfi لا \ufffd\U0001f600"
    assert layer.replaced == 2
    assert all(text.encode("utf-8") for text in texts)


def test_a_lone_half_in_a_true_layer_is_written_as_u_fffd_by_every_format_with_a_warning(ppocr_v6, tmp_path: Path) -> None:
    body = BODY + " Payment by bank transfer within thirty days of the invoice date, reference INV-2026-0042."
    cmap = {**{ch: f"{ord(ch):04X}" for ch in "ABCDEFGHIJKLMNOPQR"}, "S": "D800"}  # true but one glyph: a lone half
    path = hostile_layer_pdf(tmp_path / "hostile.pdf", body=body, cmap=cmap, size=8)
    result, raw = ocr_document(path, job_id="t", model="pp-ocrv6", engine=ppocr_v6)
    write_every_format(path, result, tmp_path)  # raises on an encoding error or XML a parser refuses
    texts = [line["text"] for line in result["pages"][0]["lines"]]
    assert texts == [body, "ABCDEFGHIJKLMNOPQR\ufffd"]
    [warning] = [w for w in result["warnings"] if w["code"] == "layer_text_repaired"]
    assert warning["message"].startswith("Page 1 took its text from the PDF text layer, where 1 characters")
    assert raw["pages"][0]["text_layer"]["replaced_chars"] == 1


def test_a_line_whose_layer_is_mostly_not_text_is_read_from_its_ink_and_the_rest_of_the_layer_kept(ppocr_v6, tmp_path: Path) -> None:
    path = hostile_layer_pdf(tmp_path / "hostile.pdf")
    result, raw = ocr_document(path, job_id="t", model="pp-ocrv6", engine=ppocr_v6)
    write_every_format(path, result, tmp_path)
    [page] = result["pages"]
    assert page["text_source"] == "mixed"
    assert [line["text"] for line in page["lines"]] == [BODY, "ABCDEFG"]  # the layer's line, then OCR of the dropped one
    layer = raw["pages"][0]["text_layer"]
    assert [line["text"] for line in layer["dropped_lines"]] == ["\ufffdAfi لا \ufffd\U0001f600"]
    assert "the ink reads otherwise" in layer["dropped_lines"][0]["reason"]


@pytest.mark.parametrize("cmap", [{"A": "D800"}, {"A": "DC00", "B": "DBFF"}], ids=["high-alone", "low-then-high-alone"])
def test_a_layer_of_nothing_but_lone_halves_does_not_crash_the_job(ppocr_v6, tmp_path: Path, cmap: dict[str, str]) -> None:
    path = hostile_layer_pdf(tmp_path / "halves.pdf", body="Total 42", cmap={**cmap, "C": "D800"})
    result, _ = ocr_document(path, job_id="t", model="pp-ocrv6", engine=ppocr_v6)
    write_every_format(path, result, tmp_path)
    text = "\n".join(line["text"] for line in result["pages"][0]["lines"])
    assert "Total 42" in text
    assert not any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)


def test_noncharacters_and_private_use_in_a_layer_are_written_by_every_format(ppocr_v6, tmp_path: Path) -> None:
    # U+FFFE (pdfium's own mark for a character without a value) is not allowed in XML: hOCR and ALTO once came out
    # unparseable. Noncharacters are dropped; a private-use character is written as it is (it is valid text).
    body = BODY + " Payment by bank transfer within thirty days of the invoice date, reference INV-2026-0042."
    cmap = {**{ch: f"{ord(ch):04X}" for ch in "ABCDEFGHIJKLMNOP"}, "Q": "FFFE", "R": "FDD0", "S": "E000"}
    path = hostile_layer_pdf(tmp_path / "nonchar.pdf", body=body, cmap=cmap, size=8)
    result, _ = ocr_document(path, job_id="t", model="pp-ocrv6", engine=ppocr_v6)
    write_every_format(path, result, tmp_path)  # hOCR and ALTO are parsed as XML
    text = "\n".join(line["text"] for line in result["pages"][0]["lines"])
    assert "ABCDEFGHIJKLMNOP" in text
    assert "\ufffe" not in text and "\ufdd0" not in text
