"""Regenerates the sample documents in this folder (run: .venv/bin/python samples/make_samples.py).

invoice.pdf: a one-page, born-digital A4 invoice (fpdf2, DejaVu Sans embedded).
scan.png: the same kind of page as a 150 DPI raster image, as a scanner would produce it.
report.png: a 150 DPI page with a title, a paragraph and a ruled table, for the layout models
(`--model pp-structurev3`).
invoice-mail.eml: an email with a short body and invoice.pdf attached (Python's email package).
"""

from __future__ import annotations

from email.message import EmailMessage
from pathlib import Path

from fpdf import FPDF
from PIL import Image, ImageDraw, ImageFont

HERE = Path(__file__).parent
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"

INVOICE = [
    ("Northwind Paper Supplies", 20),
    ("Invoice 2026-0042", 16),
    ("Date: 22 November 2026", 12),
    ("Bill to: Harbour Street 42, 0150 Oslo", 12),
    ("A4 copy paper, 10 boxes      245.00 EUR", 12),
    ("Toner cartridge, 2 pieces      118.50 EUR", 12),
    ("Total due: 363.50 EUR", 14),
    ("Payment within 30 days to IBAN NO93 8601 1117 947", 12),
]


def invoice_pdf(path: Path) -> None:
    pdf = FPDF(format="A4")
    pdf.add_font("DejaVu", fname=FONT)
    pdf.add_page()
    for text, size in INVOICE:
        pdf.set_font("DejaVu", size=size)
        pdf.cell(0, size * 0.9, text, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(2)
    pdf.output(str(path))


def scan_png(path: Path) -> None:
    image = Image.new("RGB", (1240, 1754), "white")
    draw = ImageDraw.Draw(image)
    y = 150
    for text, size in INVOICE:
        draw.text((120, y), text, fill="black", font=ImageFont.truetype(FONT, int(size * 2.6)))
        y += int(size * 5)
    image.save(path, optimize=True)


REPORT_TITLE = "Northwind Paper Supplies"
REPORT_PARAGRAPH = [
    "Orders shipped to the Oslo office in November 2026.",
    "Prices are per box and include delivery; the totals",
    "are due within 30 days of the invoice date.",
]
REPORT_TABLE = [
    ["Item", "Boxes", "Price", "Total"],
    ["A4 copy paper", "10", "24.50", "245.00"],
    ["Toner cartridge", "2", "59.25", "118.50"],
    ["Envelopes C5", "4", "12.00", "48.00"],
]


def report_png(path: Path) -> None:
    image = Image.new("RGB", (1240, 1754), "white")
    draw = ImageDraw.Draw(image)
    body = ImageFont.truetype(FONT, 32)
    draw.text((120, 150), REPORT_TITLE, fill="black", font=ImageFont.truetype(FONT.replace("DejaVuSans", "DejaVuSans-Bold"), 56))
    for index, text in enumerate(REPORT_PARAGRAPH):
        draw.text((120, 290 + index * 52), text, fill="black", font=body)
    top, row_height, lefts = 520, 76, [120, 500, 680, 900, 1120]
    for row, cells in enumerate(REPORT_TABLE):
        for column, text in enumerate(cells):
            draw.text((lefts[column] + 20, top + row * row_height + 18), text, fill="black", font=body)
    for row in range(len(REPORT_TABLE) + 1):
        draw.line([(lefts[0], top + row * row_height), (lefts[-1], top + row * row_height)], fill="black", width=3)
    for x in lefts:
        draw.line([(x, top), (x, top + len(REPORT_TABLE) * row_height)], fill="black", width=3)
    image.save(path, optimize=True)


def invoice_mail(path: Path, invoice: Path) -> None:
    message = EmailMessage()
    message["From"] = "Northwind Paper Supplies <billing@northwind.example>"
    message["To"] = "Accounts Payable <ap@harbour.example>"
    message["Subject"] = "Invoice 2026-0042"
    message["Date"] = "Sun, 22 Nov 2026 09:30:00 +0100"
    message["Message-ID"] = "<invoice-2026-0042@northwind.example>"
    message.set_content("Hello,\n\nplease find invoice 2026-0042 attached, due within 30 days.\n\nNorthwind Paper Supplies\n")
    message.add_attachment(invoice.read_bytes(), maintype="application", subtype="pdf", filename=invoice.name)
    message.set_boundary("invoice-2026-0042")
    path.write_bytes(bytes(message))


if __name__ == "__main__":
    invoice_pdf(HERE / "invoice.pdf")
    scan_png(HERE / "scan.png")
    report_png(HERE / "report.png")
    invoice_mail(HERE / "invoice-mail.eml", HERE / "invoice.pdf")
    print("wrote", HERE / "invoice.pdf", HERE / "scan.png", HERE / "report.png", HERE / "invoice-mail.eml")
