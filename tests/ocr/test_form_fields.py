"""PDF form fields (``document.form_fields``) on public filled-in forms, and on result pages read by the real
PP-OCRv5 engine: each field's name, value, selection and box, the box on the text its appearance shows.

- tests/documents/public/pypdf-libreoffice-form.pdf: LibreOffice's form of pypdf's test resources, with
  ``First Name`` = ``Alice`` and ``First Name_2`` = ``Bob`` filled in;
- tests/documents/public/pdfjs-annotation-button-widget.pdf: pdf.js's checkboxes and radio buttons, some
  ticked.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pypdf

from ocr_platform.document.form_fields import read_form_fields
from ocr_platform.jobs.store import NewJob
from tests.conftest import Platform

PUBLIC = Path(__file__).parents[1] / "documents/public"
LIBREOFFICE_FORM = PUBLIC / "pypdf-libreoffice-form.pdf"
BUTTONS = PUBLIC / "pdfjs-annotation-button-widget.pdf"


def test_text_and_choice_fields_carry_their_values() -> None:
    fields = read_form_fields(LIBREOFFICE_FORM, [1])[1]

    assert [(f["name"], f["type"], f["value"]) for f in fields] == [
        ("Last Name", "text", ""), ("First Name", "text", "Alice"), ("Birthday", "text", ""),
        ("female", "radio", "1"), ("female", "radio", "2"), ("Nationality", "combobox", ""),
        ("gdpr", "checkbox", "Yes"), ("other", "checkbox", "Yes"), ("First Name_2", "text", "Bob"),
    ]
    assert [f.get("selected") for f in fields if f["type"] in ("radio", "checkbox")] == [False, False, False, False]
    first = next(f for f in fields if f["name"] == "First Name")
    assert first["bbox"] == [119.55, 123.75, 203.9, 131.5]  # points from the top-left corner of the A4 page


def test_checkboxes_and_radio_buttons_say_whether_they_are_selected() -> None:
    fields = read_form_fields(BUTTONS, [1])[1]

    selected = {(f["name"].rsplit(".", 1)[-1], f["value"]): f["selected"] for f in fields}
    assert selected == {
        ("Selectievakje1[0]", "1"): False, ("Selectievakje2[0]", "1"): False, ("Selectievakje3[0]", "1"): True,
        ("LijstKeuzerondje[0]", "1"): False, ("LijstKeuzerondje[0]", "2"): True,
        ("LijstKeuzerondje[1]", "1"): False, ("LijstKeuzerondje[1]", "2"): False,
        ("LijstKeuzerondje[2]", "1"): False, ("LijstKeuzerondje[2]", "2"): False,
    }
    assert {f["type"] for f in fields} == {"checkbox", "radio"}


def test_a_pdf_without_a_form_has_no_fields() -> None:
    assert read_form_fields(PUBLIC / "pikepdf-fourpages.pdf", [1, 2, 3, 4]) == {}


def _box(polygon: list[list[float]]) -> list[float]:
    xs, ys = [p[0] for p in polygon], [p[1] for p in polygon]
    return [min(xs), min(ys), max(xs), max(ys)]


def _beside(label: list[float], field: list[float], *, across: int, gap: float) -> bool:
    """Whether ``field`` sits next to ``label`` along the text: their bands across it overlap (``across``: 1 for
    text running left to right, 0 for text running down the page), and they are at most ``gap`` apart along it."""
    along = 1 - across
    overlap = min(label[across + 2], field[across + 2]) - max(label[across], field[across])
    distance = max(field[along] - label[along + 2], label[along] - field[along + 2], 0)
    return overlap > 0 and distance <= gap


def _run(platform: Platform, job_id: str, document: bytes) -> dict[str, Any]:
    message = {"job_id": job_id, "model": "pp-ocrv5", "input": platform.put_document(job_id, "form.pdf", document),
               "language": "en", "options": {"text_layer": "ignore"}}
    platform.store.create(NewJob(job_id, "pp-ocrv5", message["input"], options=message["options"]))
    platform.store.mark_processing(job_id, "lambda")
    assert platform.run_processor(message)["outcome"] == "completed"
    return platform.read_json(f"results/{job_id}/result.json")


def test_a_result_page_carries_its_fields_in_pixels_beside_their_labels(platform: Platform, ppocr: object) -> None:
    [page] = _run(platform, "job-form1", LIBREOFFICE_FORM.read_bytes())["pages"]

    fields = {f["name"]: f for f in page["form_fields"]}
    assert fields["First Name"]["value"] == "Alice" and fields["First Name_2"]["value"] == "Bob"
    # The answers are in the fields only: this form shows no appearance for them, so OCR cannot read them.
    assert not {"Alice", "Bob"} & {line["text"] for line in page["lines"]}
    assert fields["First Name"]["bbox"] == [round(v * page["scale"], 2) for v in (119.55, 123.75, 203.9, 131.5)]
    labels = {line["text"]: _box(line["polygon"]) for line in page["lines"]}
    assert _beside(labels["First Name"], fields["First Name"]["bbox"], across=1, gap=30), (labels["First Name"], fields["First Name"])
    assert _beside(labels["Last Name"], fields["Last Name"]["bbox"], across=1, gap=30)


def test_a_rotated_page_has_its_field_boxes_on_the_page_as_displayed(platform: Platform, ppocr: object) -> None:
    writer = pypdf.PdfWriter(clone_from=LIBREOFFICE_FORM)
    writer.pages[0].rotate(90)
    rotated = io.BytesIO()
    writer.write(rotated)

    [page] = _run(platform, "job-form2", rotated.getvalue())["pages"]

    assert (page["rotation"], page["width"] > page["height"]) == (270, True)  # landscape, as a viewer shows it
    fields = {f["name"]: f for f in page["form_fields"]}
    labels = {line["text"]: _box(line["polygon"]) for line in page["lines"]}
    # The text runs down the page: a label's field is below it, in the same column.
    assert _beside(labels["First Name"], fields["First Name"]["bbox"], across=0, gap=30), (labels["First Name"], fields["First Name"])
    assert _beside(labels["Last Name"], fields["Last Name"]["bbox"], across=0, gap=30)


def test_the_layout_route_carries_the_same_fields(ppocr: object) -> None:
    """``pp-structurev3`` (here its local substitute) reads through the same page loop as every route, the GPU
    endpoint's ``paddleocr-vl`` engine included."""
    from ocr_platform.engines.local_structure import LocalStructureEngine

    engine = LocalStructureEngine(ppocr, reason="PP-StructureV3 weights are not installed here")  # type: ignore[arg-type]

    [page] = engine.predict(BUTTONS, options={"text_layer": "ignore"}).pages

    assert page["form_fields"] == [{**field, "bbox": [round(v * page["scale"], 2) for v in field["bbox"]]}
                                   for field in read_form_fields(BUTTONS, [1])[1]]
    assert page["blocks"]
