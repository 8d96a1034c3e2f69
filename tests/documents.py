"""Test documents with known text, rendered here (no downloads): PNG, JPEG, image PDF, vector PDF,
multi-page TIFF, a Chinese page, and the bad inputs intake must refuse.

Fonts: DejaVu Sans (Debian's fonts-dejavu-core, on every machine of this kind) for Latin text and Noto
Sans CJK (the PyPI package cvttf-NotoSansCJK-Regular, a test dependency) for Chinese.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

#: Public documents nobody here made; tests/documents/public/README.md says where each comes from.
PUBLIC = Path(__file__).resolve().parent / "documents" / "public"
#: Born-digital public PDFs whose text layer is in a script the multilingual PP-OCRv5 recogniser does not read:
#: (file, pages, the pages' script, their PaddleOCR language where the script names one).
SCRIPT_LAYER_PDFS = [
    ("hangul-jamo.pdf", "1", "Hangul", "korean"),
    ("arabic-cid-truetype.pdf", "1", "Arabic", None),
    ("persian-pure-words.pdf", "1-3", "Arabic", None),
]
LATIN_FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")

# Short, varied lines: words, digits and punctuation a real document has.
ENGLISH_PAGES = [
    ["Invoice 2026-0042", "Total due: 1,234.56 EUR", "Payment within 30 days"],
    ["Shipping address", "42 Harbour Street, Oslo", "Order reference AB-7781"],
    ["Thank you for your business", "Questions? Call +47 22 33 44 55", "Page three of three"],
]
CHINESE_LINES = ["光学字符识别", "发票号码二零二六", "欢迎使用文字识别服务"]


def cjk_font_path() -> Path:
    import cvttf_NotoSansCJK_Regular

    return Path(cvttf_NotoSansCJK_Regular.get_TTF_path())


def render_page(lines: list[str], *, font_path: Path = LATIN_FONT, size: tuple[int, int] = (1240, 1754), font_size: int = 40) -> Image.Image:
    """A white page (A4 at 150 DPI by default) with ``lines`` in black, one per row."""
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(str(font_path), font_size)
    for index, text in enumerate(lines):
        draw.text((120, 160 + index * int(font_size * 2.2)), text, fill="black", font=font)
    return image


# One short text box per direction on the mixed-orientation page: degrees clockwise -> its lines.
MIXED_ORIENTATION_BOXES = {
    0: ["Upright heading 2026", "Delivery note 4471"],
    90: ["Turned to the right", "Batch number 5512"],
    180: ["Upside down remark", "Signed by Kari Nordmann"],
    270: ["Turned to the left", "Archive shelf 38"],
}


def render_mixed_orientation_page(size: tuple[int, int] = (1240, 1754), font_size: int = 40) -> Image.Image:
    """A page with one text box in each direction of ``MIXED_ORIENTATION_BOXES`` (a stamped or
    annotated page): upright at the top, turned ones down the side, the upside-down one at the foot."""
    page = Image.new("RGB", size, "white")
    font = ImageFont.truetype(str(LATIN_FONT), font_size)
    places = {0: (120, 140), 90: (1020, 500), 180: (260, 1400), 270: (120, 500)}
    for degrees, lines in MIXED_ORIENTATION_BOXES.items():
        box = Image.new("RGB", (760, int(font_size * 2.2) * len(lines) + 40), "white")
        draw = ImageDraw.Draw(box)
        for index, text in enumerate(lines):
            draw.text((20, 20 + index * int(font_size * 2.2)), text, fill="black", font=font)
        turned = box.rotate(-degrees, expand=True, fillcolor="white")
        page.paste(turned, places[degrees])
    return page


# Slanted stamps (degrees counter-clockwise -> text), the last one slanted and upside down.
SLANTED_STAMPS = {30: "Diagonal stamp 7731", -30: "Received 2026-11-24", 150: "Slanted upside 4410"}


def render_slanted_page(size: tuple[int, int] = (1240, 1754), font_size: int = 40) -> Image.Image:
    """A page with the ``SLANTED_STAMPS`` pasted at their angles, as rubber stamps land on a page."""
    page = Image.new("RGB", size, "white")
    font = ImageFont.truetype(str(LATIN_FONT), font_size)
    for (degrees, text), place in zip(SLANTED_STAMPS.items(), [(150, 300), (500, 900), (300, 1300)], strict=True):
        stamp = Image.new("RGB", (640, 90), "white")
        ImageDraw.Draw(stamp).text((20, 20), text, fill="black", font=font)
        page.paste(stamp.rotate(degrees, expand=True, fillcolor="white"), place)
    return page


def write_png(path: Path, lines: list[str], **kwargs) -> Path:
    render_page(lines, **kwargs).save(path, format="PNG")
    return path


def write_image_pdf(path: Path, pages: list[list[str]]) -> Path:
    """A scanned-style PDF: each page one raster image (Pillow's PDF writer), 150 DPI."""
    images = [render_page(lines) for lines in pages]
    images[0].save(path, format="PDF", save_all=True, append_images=images[1:], resolution=150.0)
    return path


def write_vector_pdf(path: Path, pages: list[list[str]], *, password: str | None = None) -> Path:
    """A born-digital PDF with real text objects (fpdf2, DejaVu embedded); optionally encrypted."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.add_font("DejaVu", fname=str(LATIN_FONT))
    for lines in pages:
        pdf.add_page()
        pdf.set_font("DejaVu", size=18)
        for text in lines:
            pdf.cell(0, 14, text, new_x="LMARGIN", new_y="NEXT")
    if password:
        pdf.set_encryption(owner_password=password + "-owner", user_password=password)
    pdf.output(str(path))
    return path


def with_corrupt_pages(data: bytes, pages: list[int]) -> bytes:
    """The PDF ``data`` with the page objects of ``pages`` (1-based) damaged in place, byte for byte.

    Each page object's ``/Type /Page`` becomes ``/Type /Junk`` (same length: the cross-reference table still
    points right), as a broken writer or a bad transfer leaves it: pdfium refuses to load that page ("Failed
    to load page.") and reads the others. (A damaged content or image stream is no such failure: pdfium draws
    what it can, and the page comes back with less on it.)
    """
    import io
    import re

    import pypdf

    damaged = bytearray(data)
    reader = pypdf.PdfReader(io.BytesIO(data))
    for page in pages:
        number = reader.pages[page - 1].indirect_reference.idnum  # type: ignore[union-attr]
        start = re.search(rb"(?<![0-9])%d 0 obj" % number, damaged).start()  # type: ignore[union-attr]
        end = damaged.index(b"endobj", start)
        body, count = re.subn(rb"/Type\s*/Page(?![A-Za-z])", lambda m: m.group(0)[:-4] + b"Junk", bytes(damaged[start:end]))
        assert count == 1, body
        damaged[start:end] = body
    return bytes(damaged)


def blank_pdf(page_count: int) -> bytes:
    """A PDF of ``page_count`` empty A4 pages (pypdfium2), for plumbing tests that only count pages."""
    import io

    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument.new()
    for _ in range(page_count):
        pdf.new_page(595, 842)
    buffer = io.BytesIO()
    pdf.save(buffer)
    pdf.close()
    return buffer.getvalue()


def tiny_png() -> bytes:
    """A valid 8 x 8 white PNG: a document intake accepts, for plumbing tests whose engine is not OCR."""
    import io

    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), "white").save(buffer, format="PNG")
    return buffer.getvalue()


def write_tiff(path: Path, pages: list[list[str]]) -> Path:
    images = [render_page(lines) for lines in pages]
    images[0].save(path, format="TIFF", save_all=True, append_images=images[1:], compression="tiff_deflate")
    return path


# A report page for the layout engines: a title, a paragraph and a ruled table, top to bottom.
REPORT_TITLE = "Quarterly Supply Report"
REPORT_PARAGRAPH = [
    "The kitchen ordered the goods below for the spring menu.",
    "Prices are per kilogram and include delivery to the",
    "restaurant. Please check each quantity before paying.",
]
REPORT_TABLE = [["Item", "Quantity", "Price"], ["Tea", "12", "4.50"], ["Coffee", "3", "9.20"], ["Sugar", "40", "1.10"]]


def render_report_page(size: tuple[int, int] = (1240, 1754)) -> Image.Image:
    """A white A4 page at 150 DPI with ``REPORT_TITLE`` (bold, large), ``REPORT_PARAGRAPH`` and
    ``REPORT_TABLE`` drawn as a table with a rule around every cell."""
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    title_font = ImageFont.truetype(str(LATIN_FONT.with_name("DejaVuSans-Bold.ttf")), 60)
    body_font = ImageFont.truetype(str(LATIN_FONT), 34)
    draw.text((120, 150), REPORT_TITLE, fill="black", font=title_font)
    for index, text in enumerate(REPORT_PARAGRAPH):
        draw.text((120, 300 + index * 56), text, fill="black", font=body_font)
    top, row_height, column_lefts = 550, 80, [120, 520, 820, 1120]
    for row, cells in enumerate(REPORT_TABLE):
        for column, text in enumerate(cells):
            draw.text((column_lefts[column] + 24, top + row * row_height + 20), text, fill="black", font=body_font)
    bottom = top + len(REPORT_TABLE) * row_height
    for row in range(len(REPORT_TABLE) + 1):
        draw.line([(column_lefts[0], top + row * row_height), (column_lefts[-1], top + row * row_height)], fill="black", width=3)
    for x in column_lefts:
        draw.line([(x, top), (x, bottom)], fill="black", width=3)
    return image


def write_report_png(path: Path) -> Path:
    render_report_page().save(path, format="PNG")
    return path


def write_bomb_png(path: Path, width: int = 100_000, height: int = 100_000) -> Path:
    """A tiny PNG whose header claims ``width`` x ``height`` pixels (a decompression bomb)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    row = b"\x00" + b"\xff" * 16
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(row)) + chunk(b"IEND", b""))
    return path


def character_error_rate(recognised: str, reference: str) -> float:
    """Levenshtein distance / reference length, ignoring whitespace differences."""
    a, b = "".join(recognised.split()), "".join(reference.split())
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1] / max(1, len(b))


# Text-layer documents: a born-digital report, a page half typeset and half an image of text, a scan
# with an earlier OCR's invisible layer. Pages are A4 (595 x 842 pt); the layer tests read them at 2x.
BORN_DIGITAL_PAGES = [
    [
        "Annual maintenance report 2026",
        "The plant ran 8,412 hours this year, 3.5 % more than last year.",
        "Two pumps were replaced in March; the filters were cleaned twice.",
        "Energy use fell to 1,970 MWh after the new controls went live.",
        "Spare parts on hand: 41 valves, 12 seals and 7 impellers.",
        "Next inspection: 14 April 2027, by the regional authority.",
    ],
    [
        "Costs by quarter (EUR)",
        "Q1 18,250.00 labour and 4,100.75 parts",
        "Q2 16,980.40 labour and 2,310.00 parts",
        "Q3 17,400.00 labour and 9,870.25 parts",
        "Q4 19,120.60 labour and 3,450.90 parts",
        "Prepared by the operations office, Bergen.",
    ],
]
IMAGE_HALF_LINES = ["Stamped copy received", "Archive number 55-1207"]


def write_born_digital_pdf(path: Path, pages: list[list[str]] = BORN_DIGITAL_PAGES) -> Path:
    """A born-digital PDF with real text objects: a bold heading and body lines per page (fpdf2, DejaVu embedded)."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.add_font("DejaVu", fname=str(LATIN_FONT))
    pdf.add_font("DejaVu", style="B", fname=str(LATIN_FONT.with_name("DejaVuSans-Bold.ttf")))
    for lines in pages:
        pdf.add_page()
        pdf.set_font("DejaVu", style="B", size=20)
        pdf.cell(0, 16, lines[0], new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("DejaVu", size=13)
        for text in lines[1:]:
            pdf.cell(0, 11, text, new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))
    return path


def write_half_image_pdf(path: Path, tmp: Path) -> Path:
    """One page: ``BORN_DIGITAL_PAGES[0]`` typeset in the top half, an image of ``IMAGE_HALF_LINES`` in the bottom half."""
    from fpdf import FPDF

    picture = tmp / "image-half.png"
    image = Image.new("RGB", (1000, 300), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(str(LATIN_FONT), 44)
    for index, text in enumerate(IMAGE_HALF_LINES):
        draw.text((30, 40 + index * 110), text, fill="black", font=font)
    image.save(picture)
    pdf = FPDF(format="A4")
    pdf.add_font("DejaVu", fname=str(LATIN_FONT))
    pdf.add_page()
    pdf.set_font("DejaVu", size=13)
    for text in BORN_DIGITAL_PAGES[0]:
        pdf.cell(0, 11, text, new_x="LMARGIN", new_y="NEXT")
    pdf.image(str(picture), x=20, y=170, w=150)
    pdf.output(str(path))
    return path


def write_scan_with_layer(path: Path, scanned: list[str], layer: list[str]) -> Path:
    """A scan of ``scanned`` (one raster image, A4 at 150 DPI) carrying an invisible text layer (render mode 3)
    of ``layer``, one layer line over each scanned line: an earlier OCR, right or wrong."""
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfbase.pdfmetrics import stringWidth
    from reportlab.pdfgen import canvas

    image = render_page(scanned)
    scanned_font = ImageFont.truetype(str(LATIN_FONT), 40)
    width, height = 595.0, 842.0
    pdf = canvas.Canvas(str(path), pagesize=(width, height))
    pdf.drawImage(ImageReader(image), 0, 0, width=width, height=height)
    points_per_pixel = width / image.width
    text = pdf.beginText()
    text.setTextRenderMode(3)
    for index, line in enumerate(layer):
        font_size = 40 * points_per_pixel
        baseline = height - (160 + index * int(40 * 2.2) + 38) * points_per_pixel
        text.setFont("Helvetica", font_size)
        # As an OCR layer is laid: each line stretched over the width of the scanned line beneath it.
        beneath = scanned_font.getlength(scanned[min(index, len(scanned) - 1)]) * points_per_pixel
        text.setHorizScale(100 * beneath / stringWidth(line, "Helvetica", font_size))
        text.setTextOrigin(120 * points_per_pixel, baseline)
        text.textOut(line)
    pdf.drawText(text)
    pdf.showPage()
    pdf.save()
    return path



def write_flowchart_pdf(path: Path) -> Path:
    """A born-digital flowchart: typeset labels in framed boxes joined by arrows and a bracket (fpdf2)."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.add_font("DejaVu", fname=str(LATIN_FONT))
    pdf.add_page()
    pdf.set_font("DejaVu", size=11)
    for index, label in enumerate(["Nodule found on ultrasound", "Fine needle aspiration", "Benign: follow up in 12 months"]):
        top = 30 + index * 40
        pdf.rect(20, top, 80, 10)
        pdf.text(24, top + 7, label)
        pdf.line(60, top + 10, 60, top + 38)
        pdf.line(58, top + 35, 60, top + 38)
        pdf.line(62, top + 35, 60, top + 38)
    pdf.line(110, 40, 110, 80)  # a bracket that forks to two arrows, as a guideline's decision tree has
    pdf.line(110, 60, 118, 52)
    pdf.line(110, 60, 118, 68)
    pdf.output(str(path))
    return path


def write_unmapped_pdf(path: Path, tmp: Path) -> Path:
    """``write_born_digital_pdf`` with its fonts' character maps (``/ToUnicode``) removed, as some PDF writers
    leave them: the text draws correctly, but its layer's characters map to no Unicode text."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import NameObject

    writer = PdfWriter(clone_from=PdfReader(write_born_digital_pdf(tmp / "mapped.pdf")))
    for page in writer.pages:
        for font in page["/Resources"]["/Font"].values():
            font.get_object().pop(NameObject("/ToUnicode"), None)
    writer.write(path)
    return path
