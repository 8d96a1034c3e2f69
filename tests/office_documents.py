"""Office and HTML test files: the public ones in tests/documents/public/office/, and the inputs no public file
exists for, made here from them (an XLSX and an HTML page with a picture, and the bad inputs: an encrypted
DOCX, a ZIP bomb, a truncated DOCX, a macro-enabled DOCM, a 50 MB HTML file)."""

from __future__ import annotations

import base64
import io
import re
import zipfile
from pathlib import Path

OFFICE = Path(__file__).parent / "documents" / "public" / "office"
#: python-docx's test file: three pictures (the Python logo, a Monty Python poster, "python powered"), no text.
DOCX_PICTURES = OFFICE / "having-images.docx"
#: python-docx's test file: paragraphs and tables, no picture.
DOCX_TEXT = OFFICE / "blk-paras-and-tables.docx"
#: python-pptx's test file: one slide with a picture, a text box, a group and a 2 x 2 table.
PPTX_MIXED = OFFICE / "test_slides.pptx"
#: python-pptx's test file: two slides, a picture on each ("python powered" on slide 1).
PPTX_PICTURES = OFFICE / "shp-picture.pptx"
#: python-pptx's test file: one sheet, the numbers 1, 2, 3 in a column.
XLSX_TEXT = OFFICE / "shp-embedded-xlsx.xlsx"
#: readme_renderer's test fixture: two tables, one with row and column spans.
HTML_TABLES = OFFICE / "test_rst_tables.html"
#: olefile's test file: a Word 97-2003 document (an OLE container, no ZIP): "Test OLE file, saved as Word 97-2003 Document."
LEGACY_DOC = OFFICE / "test-ole-file.doc"
#: The "python powered" picture of python-docx's tests (140 x 56, transparent).
PICTURE = OFFICE / "python-powered.png"


def xlsx_with_picture(path: Path) -> Path:
    """The public sheet with the public picture anchored at C1 (openpyxl, as Excel stores a pasted picture)."""
    import openpyxl
    from openpyxl.drawing.image import Image

    book = openpyxl.load_workbook(XLSX_TEXT)
    book.active.add_image(Image(str(PICTURE)), "C1")
    book.save(path)
    return path


def html_with_picture(remote: str = "https://example.com/logo.png") -> bytes:
    """An HTML page with a heading, a paragraph, a picture embedded as a data: URI, a script and a remote picture."""
    data = base64.b64encode(PICTURE.read_bytes()).decode()
    return (
        "<!DOCTYPE html><html><head><title>T</title><style>p {color: red}</style>"
        f'<script>document.title = "script ran"</script></head><body><h1>Quarterly report</h1><p>Read before the picture.</p>'
        f'<p><img src="data:image/png;base64,{data}" alt="logo"></p><p>Read after the picture.</p>'
        f'<img src="{remote}" alt="remote chart"><ul><li>first point</li><li>second point</li></ul>'
        '<script>document.write("script ran")</script></body></html>'
    ).encode()


def encrypted_docx() -> bytes:
    """The public DOCX, password protected as Office does it (ECMA-376 agile encryption, msoffcrypto-tool)."""
    from msoffcrypto.format.ooxml import OOXMLFile

    with DOCX_TEXT.open("rb") as handle:
        out = io.BytesIO()
        OOXMLFile(handle).encrypt("secret", out)
    return out.getvalue()


def zip_bomb() -> bytes:
    """A DOCX whose document part unpacks 8 MiB of spaces from a few KB (a ratio over 1000 to 1)."""
    out = io.BytesIO()
    with zipfile.ZipFile(DOCX_TEXT) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as bomb:
        for info in source.infolist():
            data = source.read(info.filename)
            if info.filename == "word/document.xml":
                data = data + b" " * (8 * 1024 * 1024)
            bomb.writestr(info.filename, data)
    return out.getvalue()


def truncated_docx() -> bytes:
    """The public DOCX cut in half, as an interrupted upload leaves it."""
    data = DOCX_TEXT.read_bytes()
    return data[: len(data) // 2]


def docm(source: Path = DOCX_TEXT) -> bytes:
    """The public DOCX as Word saves a macro-enabled one: the macro main content type and a ``vbaProject.bin`` part."""
    out = io.BytesIO()
    with zipfile.ZipFile(source) as plain, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as macro:
        for info in plain.infolist():
            data = plain.read(info.filename)
            if info.filename == "[Content_Types].xml":
                data = re.sub(rb"application/vnd\.openxmlformats-officedocument\.wordprocessingml\.document\.main\+xml",
                              b"application/vnd.ms-word.document.macroEnabled.main+xml", data)
                data = data.replace(b"<Default ", b'<Default Extension="bin" ContentType="application/vnd.ms-office.vbaProject"/><Default ', 1)
            macro.writestr(info.filename, data)
        macro.writestr("word/vbaProject.bin", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"Sub AutoOpen(): Shell \"calc\": End Sub" * 20)
    return out.getvalue()


def huge_html(size: int = 50 * 1024 * 1024) -> bytes:
    """An HTML file of ``size`` bytes: a page of paragraphs."""
    body = b"<p>A paragraph of an exported wiki page.</p>\n"
    return b"<!DOCTYPE html><html><body>\n" + body * (size // len(body)) + b"</body></html>"
