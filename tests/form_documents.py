"""Filled-in paper forms made in code, with their truth: printed labels, the answers written beside or under them
(in other faces than the labels, as a hand or a typewriter fills a form), check boxes ticked with a stroke, a cross
or ink, and the page scanned: turned by a fraction of a degree, blurred and speckled.

``filled_form(seed)`` gives one page and what a reader should find on it: each label's answer (``None`` where the
form was left blank) and each box's option label, state and box. The forms vary with the seed (fields, where the
answers go, one or two columns, how boxes are ticked), so a set of seeds is a small benchmark
(benchmarks/forms.py) and one seed a test's page (tests/ocr/test_forms.py).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from PIL import Image, ImageDraw, ImageFilter, ImageFont

from tests.documents import LATIN_FONT

FONTS = LATIN_FONT.parent
LABEL_FONT = FONTS / "DejaVuSans.ttf"
ANSWER_FONTS = [FONTS / "DejaVuSerif-Italic.ttf", FONTS / "DejaVuSans-Oblique.ttf", FONTS / "DejaVuSansMono.ttf", FONTS / "DejaVuSerif.ttf"]
TITLES = ["Membership Application", "Patient Registration", "Change of Address", "Equipment Loan Request"]
FIELDS = [
    ("Full name:", "Ada Lovelace"), ("Date of birth:", "10 Dec 1815"), ("Email:", "ada@example.org"),
    ("Phone:", "020 7946 0958"), ("City:", "London"), ("Postcode:", "SW1A 1AA"), ("Occupation:", "Mathematician"),
    ("Employer:", "Analytical Engines Ltd"), ("Country:", "United Kingdom"), ("Reference:", "AX-4471-B"),
    ("Account number:", "60161331926819"), ("Start date:", "27 Nov 1852"), ("Department:", "Research"),
    ("Manager:", "Charles Babbage"), ("Room:", "B 214"), ("Amount:", "1,250.00"),
]
QUESTIONS = [
    ("Member before:", ["Yes", "No"]), ("Payment:", ["Card", "Cash", "Transfer"]),
    ("Contact by:", ["Phone", "Email"]), ("Shift:", ["Early", "Late", "Night"]),
]
SINGLE_BOXES = ["Send me the newsletter", "I agree to the terms", "Urgent", "Keep my details on file"]


@dataclass
class FormTruth:
    """What a reader should find on a generated form.

    Attributes:
        pairs: ``(label, answer)`` per text field, the answer ``None`` where the form was left blank.
        marks: ``(option label, selected, box)`` per check box, the box in the scanned page's pixels.
    """

    pairs: list[tuple[str, str | None]] = field(default_factory=list)
    marks: list[tuple[str, bool, tuple[float, float, float, float]]] = field(default_factory=list)


def filled_form(seed: int, size: tuple[int, int] = (1240, 1754)) -> tuple[Image.Image, FormTruth]:
    """A scanned, filled-in form page (about 150 dpi A4) and its truth."""
    rng = random.Random(seed)
    page = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(page)
    label_font = ImageFont.truetype(str(LABEL_FONT), 30)
    answer_font = ImageFont.truetype(str(rng.choice(ANSWER_FONTS)), 32)
    draw.text((100, 90), rng.choice(TITLES), fill="black", font=ImageFont.truetype(str(FONTS / "DejaVuSans-Bold.ttf"), 46))
    truth = FormTruth()
    columns = [(100, 600), (660, 1160)] if rng.random() < 0.5 else [(100, 1160)]
    fields = rng.sample(FIELDS, 8 if len(columns) == 2 else 6)
    y = 210
    row_below = False
    for index, (label, answer) in enumerate(fields):
        left, right = columns[index % len(columns)]
        written: str | None = None if rng.random() < 0.12 else answer
        label_width = draw.textlength(label, font=label_font)
        gap = rng.choice([18, 30, 60])
        below = rng.random() < 0.3 or left + label_width + gap + draw.textlength(answer, font=answer_font) > right - 30
        row_below |= below
        if below:
            answer_at = (left + 10, y + 48)
            draw.line((left, y + 88, right - 40, y + 88), fill=(90, 90, 90), width=2)
        else:
            answer_at = (left + label_width + gap, y - 2)
            draw.line((answer_at[0] - 6, y + 38, right - 40, y + 38), fill=(90, 90, 90), width=2)
        draw.text((left, y), label, fill="black", font=label_font)
        if written:
            draw.text(answer_at, written, fill=(20, 30, 120), font=answer_font)
        truth.pairs.append((label, written))
        if index % len(columns) == len(columns) - 1:
            y += 150 if row_below or rng.random() < 0.2 else 95
            row_below = False
    y += 40
    for question, options in rng.sample(QUESTIONS, 2):
        draw.text((100, y), question, fill="black", font=label_font)
        x = 100 + draw.textlength(question, font=label_font) + 40
        chosen = rng.randrange(len(options))
        for index, option in enumerate(options):
            box = (x, y + 2, x + 32, y + 34)
            _box(draw, box, ticked=index == chosen, rng=rng)
            truth.marks.append((option, index == chosen, box))
            draw.text((x + 46, y), option, fill="black", font=label_font)
            x += 46 + draw.textlength(option, font=label_font) + 60
        y += 90
    for text in rng.sample(SINGLE_BOXES, 2):
        ticked = rng.random() < 0.5
        box = (100, y + 2, 132, y + 34)
        _box(draw, box, ticked=ticked, rng=rng)
        draw.text((146, y), text, fill="black", font=label_font)
        truth.marks.append((text, ticked, box))
        y += 80
    return _scanned(page, truth, rng)


def _box(draw: ImageDraw.ImageDraw, box: tuple[float, float, float, float], *, ticked: bool, rng: random.Random) -> None:
    draw.rectangle(box, outline="black", width=3)
    if not ticked:
        return
    x0, y0, x1, y1 = box
    side = x1 - x0
    style = rng.choice(["tick", "cross", "fill"])
    ink = (20, 30, 120)
    if style == "tick":
        draw.line((x0 + side * 0.15, y0 + side * 0.5, x0 + side * 0.42, y0 + side * 0.82, x0 + side * 0.95, y0 - side * 0.15), fill=ink, width=5)
    elif style == "cross":
        draw.line((x0 + 6, y0 + 6, x1 - 6, y1 - 6), fill=ink, width=4)
        draw.line((x0 + 6, y1 - 6, x1 - 6, y0 + 6), fill=ink, width=4)
    else:
        draw.rectangle((x0 + 7, y0 + 7, x1 - 7, y1 - 7), fill=ink)


def _scanned(page: Image.Image, truth: FormTruth, rng: random.Random) -> tuple[Image.Image, FormTruth]:
    """``page`` as a scanner returns it: turned a little, blurred, speckled; the truth's boxes turned with it."""
    angle = rng.uniform(-0.8, 0.8)
    centre = (page.width / 2, page.height / 2)
    turned = page.rotate(angle, resample=Image.Resampling.BICUBIC, center=centre, fillcolor="white")
    turned = turned.filter(ImageFilter.GaussianBlur(0.8))
    pixels = turned.load()
    for _ in range(page.width * page.height // 400):
        x, y = rng.randrange(page.width), rng.randrange(page.height)
        pixels[x, y] = (0, 0, 0) if rng.random() < 0.5 else (255, 255, 255)  # type: ignore[index]
    cos, sin = math.cos(math.radians(angle)), math.sin(math.radians(angle))

    def moved(x: float, y: float) -> tuple[float, float]:  # PIL turns counter-clockwise for a positive angle
        dx, dy = x - centre[0], y - centre[1]
        return centre[0] + dx * cos + dy * sin, centre[1] - dx * sin + dy * cos

    marks = []
    for label, selected, (x0, y0, x1, y1) in truth.marks:
        corners = [moved(x, y) for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1))]
        xs, ys = [c[0] for c in corners], [c[1] for c in corners]
        marks.append((label, selected, (min(xs), min(ys), max(xs), max(ys))))
    return turned.convert("RGB"), FormTruth(pairs=truth.pairs, marks=marks)
