"""Characters a PDF's fonts give no Unicode value for, built here byte by byte: pdfium's guess for each is checked against
the embedded font's own character map (``document.font_map``), and a line of such characters in a script the recogniser
does not read keeps what is mapped instead of being OCR'd into another script's garbage.

The fonts are DejaVu Sans (Debian's fonts-dejavu-core) and Noto Sans CJK (``tests.documents.cjk_font_path``), subset
with fontTools to the characters drawn.
"""

from __future__ import annotations

import io
import re
import zlib
from pathlib import Path

from ocr_platform.cpu.job_runner import ocr_document
from tests.documents import LATIN_FONT, cjk_font_path
from tests.text_layer_corpus import write_every_format

#: Cyrillic and Greek words: letters the default recogniser does not read as themselves.
WORDS = "Привет мир Γειά σου κόσμε"


def _pdf(objects: list[bytes]) -> bytes:
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, obj in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + obj + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode() + "".join(f"{o:010d} 00000 n \n" for o in offsets).encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def _stream(data: bytes, extra: str = "") -> bytes:
    packed = zlib.compress(data)
    return f"<< /Length {len(packed)} /Filter /FlateDecode {extra}>>\nstream\n".encode() + packed + b"\nendstream"


def unicode_coded_pdf(path: Path, text: str = WORDS, *, code_offset: int = 0, font_map: bool = True) -> Path:
    """A PDF drawing ``text`` (16 points) in an embedded subset of DejaVu Sans through an Identity-H CID font without ``/ToUnicode``:
    each character's code is its Unicode value plus ``code_offset``, and ``/CIDToGIDMap`` sends that code to the glyph
    the font's own character map gives the character, so the page shows ``text`` either way. pdfium then guesses each
    character's text from its code: right with offset 0 (as pdf.js's ``javauninstall-7r.pdf`` is coded), wrong otherwise.
    Without ``font_map`` the embedded program has no character map of its own (as many subset fonts have none)."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    options = subset.Options()
    options.glyph_names, options.notdef_outline = True, True
    font = TTFont(str(LATIN_FONT))
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=[ord(ch) for ch in set(text)])
    subsetter.subset(font)
    cmap, order = font.getBestCmap(), font.getGlyphOrder()
    if not font_map:  # no cmap, and no glyph names FreeType could make one from
        del font["cmap"]
        font["post"].formatType = 3.0
    program = io.BytesIO()
    font.save(program)
    codes = [ord(ch) + code_offset for ch in text]
    gids = bytearray(2 * (max(codes) + 1))
    for ch, code in zip(text, codes, strict=True):
        gids[2 * code : 2 * code + 2] = order.index(cmap[ord(ch)]).to_bytes(2, "big")
    scale = 1000 / font["head"].unitsPerEm
    widths = " ".join(f"{code} [{round(font['hmtx'][cmap[ord(ch)]][0] * scale)}]" for ch, code in zip(text, codes, strict=True))
    content = f"BT /F1 16 Tf 60 700 Td <{''.join(f'{code:04X}' for code in codes)}> Tj ET".encode()
    path.write_bytes(_pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type0 /BaseFont /AAAAAA+DejaVuSans /Encoding /Identity-H /DescendantFonts [6 0 R] >>",
        _stream(content),
        f"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /AAAAAA+DejaVuSans /CIDSystemInfo << /Registry (Adobe) /Ordering "
        f"(Identity) /Supplement 0 >> /FontDescriptor 7 0 R /W [{widths}] /CIDToGIDMap 8 0 R >>".encode(),
        b"<< /Type /FontDescriptor /FontName /AAAAAA+DejaVuSans /Flags 32 /FontBBox [-1021 -463 1793 1232] /ItalicAngle 0 "
        b"/Ascent 928 /Descent -236 /CapHeight 729 /StemV 80 /FontFile2 9 0 R >>",
        _stream(bytes(gids)),
        _stream(program.getvalue()),
    ]))
    return path


def _read_layer(path: Path):  # type: ignore[no-untyped-def]
    import pypdfium2 as pdfium

    from ocr_platform.document.text_layer import read_text_layer

    pdf = pdfium.PdfDocument(str(path))
    try:
        page = pdf[0]
        return read_text_layer(page, page.get_textpage(), scale=2.0)
    finally:
        pdf.close()


def test_guessed_characters_that_round_trip_through_the_embedded_font_map_are_mapped(tmp_path: Path) -> None:
    layer = _read_layer(unicode_coded_pdf(tmp_path / "unicode-coded.pdf"))
    assert [line.text for line in layer.lines] == [WORDS]
    assert layer.unmapped == 0
    assert layer.font_mapped == len(WORDS.replace(" ", ""))


def test_guesses_that_name_other_glyphs_than_those_drawn_stay_unmapped(tmp_path: Path) -> None:
    # Each code one past its character: pdfium reads "Рсйгжу!нйс" for "Привет мир"; the font draws the right glyphs, so
    # its map sends each guess to another glyph than the one drawn (a few of similar shape match by chance, alone).
    layer = _read_layer(unicode_coded_pdf(tmp_path / "off-by-one.pdf", code_offset=1))
    assert [line.text for line in layer.lines] == ["".join(chr(ord(ch) + 1) for ch in WORDS)]
    assert layer.font_mapped == 0
    assert layer.unmapped == len(WORDS)


def test_a_true_layer_whose_fonts_lack_a_map_is_read_from_it_in_a_script_the_recogniser_does_not_read(ppocr_v6, tmp_path: Path) -> None:
    path = unicode_coded_pdf(tmp_path / "unicode-coded.pdf")
    result, raw = ocr_document(path, job_id="t", model="pp-ocrv6", engine=ppocr_v6)
    [page] = result["pages"]
    assert page["text_source"] == "text_layer"
    assert [line["text"] for line in page["lines"]] == [WORDS]
    assert raw["pages"][0]["text_layer"]["font_mapped_chars"] == len(WORDS.replace(" ", ""))


def test_a_latin_layer_without_any_map_is_kept_where_its_ink_reads_the_same(ppocr_v6, tmp_path: Path) -> None:
    # No /ToUnicode and no character map in the font program: every character is pdfium's guess and nothing confirms it
    # but the ink, which the recogniser reads; most of the layer unmapped is no reason to refuse it then.
    text = "Invoice 2026 for consulting services, total due 1,234.56 EUR"
    path = unicode_coded_pdf(tmp_path / "latin.pdf", text, font_map=False)
    layer = _read_layer(path)
    assert layer.unmapped == len(text.replace(" ", "")) and layer.font_mapped == 0
    result, raw = ocr_document(path, job_id="t", model="pp-ocrv6", engine=ppocr_v6)
    [page] = result["pages"]
    assert page["text_source"] == "text_layer"
    assert [line["text"] for line in page["lines"]] == [text]


#: A Korean line (a heading of docling's ``skipped_2pages.pdf``) and the characters whose ``/ToUnicode`` entry is
#: rewritten to a private-use code point, as a font without a map leaves them.
HANGUL = "차세대 지능형 정보 보안 기술 발전 방향"
UNMAPPED = "지능형"


def hangul_pdf_with_unmapped_glyphs(path: Path) -> Path:
    """``HANGUL`` in Noto Sans CJK (fpdf2), its ``/ToUnicode`` entries for ``UNMAPPED`` sent to U+E000."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.add_font("Noto", fname=str(cjk_font_path()))
    pdf.set_font("Noto", size=20)
    pdf.cell(text=HANGUL)
    data = bytes(pdf.output())
    import pypdf
    from pypdf.generic import NameObject, StreamObject

    reader = pypdf.PdfReader(io.BytesIO(data))
    writer = pypdf.PdfWriter(clone_from=reader)
    for font in writer.pages[0]["/Resources"]["/Font"].values():
        cmap = font.get_object()["/ToUnicode"].get_object()
        text = cmap.get_data().decode("latin-1")
        for ch in UNMAPPED:
            text = re.sub(rf"<([0-9A-F]{{4}})> <{ord(ch):04X}>", r"<\1> <E000>", text)
        replacement = StreamObject()
        replacement.set_data(text.encode("latin-1"))
        font.get_object()[NameObject("/ToUnicode")] = writer._add_object(replacement)
    with path.open("wb") as handle:
        writer.write(handle)
    return path


def test_a_line_whose_unmapped_characters_are_in_a_script_the_recogniser_does_not_read_keeps_its_mapped_words(ppocr_v6, tmp_path: Path) -> None:
    path = hangul_pdf_with_unmapped_glyphs(tmp_path / "hangul.pdf")
    result, raw = ocr_document(path, job_id="t", model="pp-ocrv6", engine=ppocr_v6)
    write_every_format(path, result, tmp_path)
    [page] = result["pages"]
    # The mapped words as typed, the unmapped ones left out; no OCR of Hangul ink into Han or Latin look-alikes.
    assert page["text_source"] == "text_layer"
    assert [line["text"] for line in page["lines"]] == [HANGUL.replace(f"{UNMAPPED} ", "")]
    [dropped] = raw["pages"][0]["text_layer"]["dropped_lines"]
    assert dropped["kept"] == HANGUL.replace(f"{UNMAPPED} ", "")
    assert "left out" in dropped["reason"]
    assert {warning["code"] for warning in result["warnings"]} >= {"language_mismatch"}
