"""Forms from lines and pixels (``engines.forms``, ``engines.checkboxes``) on pages built in code: which text is a
label and which its answer, check boxes found and told ticked or not, and the things that look like boxes but are
not (letters, a comb field's cells, a table's cells). The whole route on a scanned form is tests/ocr/test_forms.py."""

from __future__ import annotations

from typing import Any

import pytest
from PIL import Image, ImageDraw, ImageFont

from ocr_platform.core.errors import JobError
from ocr_platform.core.forms import field_forms
from ocr_platform.engines.checkboxes import find_marks
from ocr_platform.engines.forms import read_forms
from ocr_platform.engines.options import parse_options
from ocr_platform.engines.orientation import submitted_point
from tests.documents import LATIN_FONT


def line(text: str, x0: float, y0: float, x1: float, y1: float, score: float = 0.95) -> dict[str, Any]:
    return {"text": text, "polygon": [[x0, y0], [x1, y0], [x1, y1], [x0, y1]], "score": score}


def pairs_of(lines: list[dict[str, Any]], image: Image.Image | None = None) -> list[tuple[str, str | None]]:
    found, _ = read_forms(image or Image.new("RGB", (1200, 900), "white"), lines)  # type: ignore[arg-type]
    return [(p["key"]["text"], p["value"]["text"] if p["value"] else None) for p in found]


def test_a_label_takes_the_text_after_it_on_its_row_or_under_it_and_a_blank_is_null() -> None:
    lines = [
        line("Name: Ada Lovelace", 100, 100, 520, 140),        # label and answer read as one line
        line("Date of birth:", 100, 200, 330, 240), line("10 Dec 1815", 420, 198, 640, 240),  # the answer further on
        line("Address:", 100, 300, 250, 340), line("12 St James's Square, London", 110, 350, 600, 390),  # under it
        line("Phone:", 100, 500, 210, 540),                    # left blank
        line("Thank you for applying", 100, 700, 500, 740),    # no label: no pair
    ]

    assert pairs_of(lines) == [
        ("Name:", "Ada Lovelace"), ("Date of birth:", "10 Dec 1815"), ("Address:", "12 St James's Square, London"), ("Phone:", None),
    ]


def test_two_columns_keep_their_answers_apart() -> None:
    lines = [
        line("City:", 100, 100, 180, 140), line("London", 220, 100, 360, 140),
        line("Country:", 650, 100, 790, 140), line("United Kingdom", 830, 100, 1100, 140),
    ]

    assert pairs_of(lines) == [("City:", "London"), ("Country:", "United Kingdom")]


def test_a_label_without_a_colon_takes_the_text_after_it_on_its_row_and_headings_are_no_pair() -> None:
    lines = [
        line("Tipping Length", 100, 100, 330, 140), line("25 mm", 800, 100, 900, 140),  # its answer in a column further on
        line("Tipping Paper:", 100, 200, 330, 240), line("Ecusta", 400, 200, 520, 240),  # two fields on one row:
        line("Color", 700, 200, 800, 240), line("Imitation Cork", 900, 200, 1150, 240),  # the colon label's ends at the gap
        line("RECIPIENT", 100, 300, 300, 340), line("COMPANY", 600, 300, 800, 340),  # two column headings
        line("Thank you for applying", 100, 400, 500, 440),  # nothing after it: no label
    ]

    assert pairs_of(lines) == [("Tipping Length", "25 mm"), ("Tipping Paper:", "Ecusta"), ("Color", "Imitation Cork")]


def test_cells_of_a_table_the_layout_found_are_no_label_and_answer() -> None:
    row = [line("Tea", 100, 500, 200, 540), line("12", 400, 500, 460, 540)]
    page = Image.new("RGB", (1200, 900), "white")

    in_table, _ = read_forms(page, row, tables=[[80.0, 480.0, 600.0, 560.0]])  # type: ignore[arg-type]

    assert pairs_of(row) == [("Tea", "12")] and in_table == []


def _page_with_boxes(ticked: list[bool], labels: list[str]) -> tuple[Image.Image, list[dict[str, Any]]]:
    """A row of check boxes, each followed by its option, the ticked ones crossed; and the lines OCR would read."""
    page = Image.new("RGB", (1200, 400), "white")
    draw = ImageDraw.Draw(page)
    font = ImageFont.truetype(str(LATIN_FONT), 30)
    lines = [line("Payment:", 100, 100, 240, 140)]
    draw.text((100, 102), "Payment:", fill="black", font=font)
    x = 300
    for tick, label in zip(ticked, labels, strict=True):
        draw.rectangle((x, 104, x + 32, 136), outline="black", width=3)
        if tick:
            draw.line((x + 6, 110, x + 26, 130), fill="black", width=4)
            draw.line((x + 6, 130, x + 26, 110), fill="black", width=4)
        draw.text((x + 46, 102), label, fill="black", font=font)
        width = draw.textlength(label, font=font)
        lines.append(line(label, x + 46, 100, x + 46 + width, 140))
        x += int(46 + width + 60)
    return page, lines


def test_each_option_is_the_key_of_its_own_box() -> None:
    page, lines = _page_with_boxes([False, True, False], ["Card", "Cash", "Transfer"])

    found, marks = read_forms(page, lines)  # type: ignore[arg-type]

    assert [(p["key"]["text"], p["value"] and p["value"].get("state")) for p in found] == [
        ("Card", "unselected"), ("Cash", "selected"), ("Transfer", "unselected")]
    assert [m["state"] for m in marks] == ["unselected", "selected", "unselected"]
    assert all(0.5 <= m["confidence"] <= 1 for m in marks)


def test_options_the_recogniser_read_as_one_word_over_the_boxes_are_cut_at_them() -> None:
    page, lines = _page_with_boxes([True, False, False], ["Card", "Cash", "Transfer"])
    merged = line("□CardCash□Transfer", lines[1]["polygon"][0][0] - 46, 100, lines[-1]["polygon"][1][0], 140)

    found, _ = read_forms(page, [lines[0], merged])  # type: ignore[arg-type]

    assert [(p["key"]["text"], p["value"] and p["value"].get("state")) for p in found] == [
        ("Card", "selected"), ("Cash", "unselected"), ("Transfer", "unselected")]


@pytest.mark.filterwarnings("error")  # a division by zero on the glyph's empty text, not only a wrong answer
def test_a_box_the_recogniser_read_as_a_word_of_its_own_is_a_mark_not_an_error() -> None:
    page, lines = _page_with_boxes([True, False], ["Yes", "No"])
    no_box = lines[1]["polygon"][1][0] + 60
    glyphs = [line("☑", 292, 100, 352, 140), line("□", no_box - 8, 100, no_box + 52, 140)]  # running onto the option's ink

    found, marks = read_forms(page, [*lines, *glyphs])  # type: ignore[arg-type]

    assert [m["state"] for m in marks] == ["selected", "unselected"]
    assert [(p["key"]["text"], p["value"] and p["value"].get("state")) for p in found] == [("Yes", "selected"), ("No", "unselected")]


def test_radio_buttons_are_marks_and_a_bullet_is_not() -> None:
    page = Image.new("RGB", (1200, 400), "white")
    draw = ImageDraw.Draw(page)
    for x in (300, 500):
        draw.ellipse((x, 100, x + 32, 132), outline="black", width=3)
    draw.ellipse((508, 108, 524, 124), fill="black")  # the chosen one's dot
    draw.ellipse((700, 100, 732, 132), fill="black")  # a bullet: a disc of ink, no ring

    marks, _ = find_marks(page, line_height=40)

    assert [(m["state"], [round(v) for v in m["polygon"][0]]) for m in marks] == [("unselected", [300, 100]), ("selected", [500, 100])]


def test_radio_buttons_the_recogniser_read_as_the_letter_o_are_still_marks() -> None:
    page = Image.new("RGB", (1200, 400), "white")
    draw = ImageDraw.Draw(page)
    font = ImageFont.truetype(str(LATIN_FONT), 30)
    for x, option in ((300, "Female"), (520, "Male")):
        draw.ellipse((x, 100, x + 32, 132), outline="black", width=3)
        draw.text((x + 44, 100), option, fill="black", font=font)
    draw.ellipse((528, 108, 544, 124), fill="black")
    lines = [line("O Female O Male", 300, 98, 640, 136)]  # the rings read as the letter O

    found, marks = read_forms(page, lines)  # type: ignore[arg-type]

    assert [m["state"] for m in marks] == ["unselected", "selected"]
    assert [(p["key"]["text"], p["value"] and p["value"].get("state")) for p in found] == [("Female", "unselected"), ("Male", "selected")]


def test_an_option_named_o_beside_its_box_keeps_its_name() -> None:
    page, lines = _page_with_boxes([False, False, False, True], ["A", "B", "AB", "O"])  # a blood group

    found, marks = read_forms(page, lines)  # type: ignore[arg-type]

    assert len(marks) == 4
    assert [(p["key"]["text"], p["value"] and p["value"].get("state")) for p in found][-1] == ("O", "selected")


def test_letters_comb_cells_and_table_cells_are_not_check_boxes() -> None:
    page = Image.new("RGB", (1200, 700), "white")
    draw = ImageDraw.Draw(page)
    draw.text((100, 80), "ODD LOGO 0800", fill="black", font=ImageFont.truetype(str(LATIN_FONT.with_name("DejaVuSans-Bold.ttf")), 44))
    for i in range(10):  # a comb field: ten touching cells for an account number
        draw.rectangle((100 + i * 34, 250, 134 + i * 34, 284), outline="black", width=2)
    for row in range(3):  # a table whose cells are wider than a line
        for column in range(4):
            draw.rectangle((100 + column * 200, 400 + row * 60, 300 + column * 200, 460 + row * 60), outline="black", width=2)
    draw.rectangle((700, 250, 732, 282), outline="black", width=3)  # the one check box

    marks, _ = find_marks(page, line_height=40, words=[([[100, 80], [520, 80], [520, 130], [100, 130]], "ODD LOGO 0800")])

    assert [[round(v) for v in m["polygon"][0]] for m in marks] == [[700, 250]]


def test_graph_paper_has_no_check_boxes() -> None:
    page = Image.new("RGB", (1200, 1700), "white")
    draw = ImageDraw.Draw(page)
    for x in range(0, 1200, 28):
        draw.line((x, 0, x, 1700), fill="black")
    for y in range(0, 1700, 28):
        draw.line((0, y, 1200, y), fill="black")

    assert read_forms(page, []) == ([], [])


def test_a_page_without_a_form_has_no_pairs_and_no_marks() -> None:
    page = Image.new("RGB", (1200, 900), "white")
    lines = [line("Quarterly report", 100, 100, 500, 150), line("Sales grew in every region this year.", 100, 200, 900, 240)]

    assert read_forms(page, lines) == ([], [])  # type: ignore[arg-type]
    assert read_forms(page, []) == ([], [])


@pytest.mark.parametrize("rotation", [90, 180, 270])
def test_a_page_read_at_a_turn_pairs_as_upright_and_answers_on_the_page_as_submitted(rotation: int) -> None:
    width, height = 1200, 900
    upright = [line("City:", 100, 100, 180, 140), line("London", 220, 100, 360, 140)]
    upright_size = (height, width) if rotation in (90, 270) else (width, height)
    submitted = []
    for item in upright:  # the lines as the page loop gives them: on the page as submitted
        corners = [list(submitted_point(x, y, rotation, *upright_size)) for x, y in item["polygon"]]
        submitted.append({**item, "polygon": corners})
    page = Image.new("RGB", upright_size, "white").rotate(rotation, expand=True)  # the submitted page

    found, _ = read_forms(page, submitted, rotation=rotation)  # type: ignore[arg-type]

    assert [(p["key"]["text"], p["value"]["text"] if p["value"] else None) for p in found] == [("City:", "London")]
    value_box = found[0]["value"]["polygon"]  # type: ignore[index]
    assert sorted(map(tuple, value_box)) == sorted(tuple(float(v) for v in p) for p in submitted[1]["polygon"])


def test_pdf_form_fields_are_pairs_keyed_by_their_printed_label() -> None:
    fields = [
        {"name": "txt1", "type": "text", "value": "Alice", "bbox": [300.0, 100.0, 500.0, 140.0]},
        {"name": "chk", "type": "checkbox", "value": "Yes", "selected": True, "bbox": [100.0, 200.0, 130.0, 230.0]},
        {"name": "btn", "type": "button", "value": "", "bbox": [100.0, 300.0, 200.0, 340.0]},
    ]
    lines = [line("First name:", 100, 100, 280, 140), line("I agree", 145, 198, 260, 232)]

    found, marks = read_forms(Image.new("RGB", (1200, 900), "white"), lines, fields=fields)  # type: ignore[arg-type]

    assert [(p["key"]["text"], p["value"]["text"] if p["value"] else None, p["source"]) for p in found] == [
        ("First name:", "Alice", "form_field"), ("I agree", ":selected:", "form_field")]
    assert [m["state"] for m in marks] == ["selected"]
    assert field_forms(fields)[0][0]["key"]["text"] == "txt1"  # without a label finder: the field's name


def test_features_is_checked_like_every_option() -> None:
    assert parse_options({"features": ["forms"]}).forms
    assert not parse_options({}).forms
    with pytest.raises(JobError, match="'features' must be a list of forms"):
        parse_options({"features": ["tables"]})
    with pytest.raises(JobError, match="'features' must be a list"):
        parse_options({"features": "forms"})
