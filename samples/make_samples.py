"""Regenerates the sample documents in this folder (run: .venv/bin/python samples/make_samples.py).

invoice.pdf: a one-page, born-digital A4 invoice (fpdf2, DejaVu Sans embedded).
scan.png: the same kind of page as a 150 DPI raster image, as a scanner would produce it.
"""

from __future__ import annotations

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


if __name__ == "__main__":
    invoice_pdf(HERE / "invoice.pdf")
    scan_png(HERE / "scan.png")
    print("wrote", HERE / "invoice.pdf", HERE / "scan.png")
