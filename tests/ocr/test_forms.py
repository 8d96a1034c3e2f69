"""Forms on paper, through the whole CPU route with the real PP-OCRv5 engine: a scanned, filled-in form (made in
code, ``tests/form_documents.py``) asked with ``features: ["forms"]`` comes back with each printed label paired
with its answer, each blank as ``null`` and each box's tick; the Textract-shaped JSON written beside it reads back
in AWS's own Textract libraries (amazon-textract-textractor, amazon-textract-response-parser) as the same pairs and
boxes. The layout route finds forms unasked; a PDF's own fields are the truth for their page."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from rapidfuzz import fuzz

from ocr_platform.jobs.store import NewJob
from tests.conftest import Platform
from tests.form_documents import FormTruth, filled_form
from tests.result_schema import assert_valid_result

PUBLIC = Path(__file__).parents[1] / "documents/public"
#: A generated form with two columns, answers beside and under their labels, a blank, ticks and crosses.
FORM_SEED = 1003


def _same(a: str | None, b: str | None) -> bool:
    def norm(text: str | None) -> str:
        return "".join((text or "").lower().split())

    return (a is None) == (b is None) and fuzz.ratio(norm(a), norm(b)) >= 80


def _run(platform: Platform, job_id: str, name: str, data: bytes, options: dict[str, Any], model: str = "pp-ocrv5") -> dict[str, Any]:
    message = {"job_id": job_id, "model": model, "input": platform.put_document(job_id, name, data), "language": "en", "options": options}
    platform.store.create(NewJob(job_id, model, message["input"], options=options))
    platform.store.mark_processing(job_id, "lambda")
    assert platform.run_processor(message)["outcome"] == "completed"
    return platform.read_json(f"results/{job_id}/result.json")  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def form() -> tuple[bytes, FormTruth]:
    image, truth = filled_form(FORM_SEED)
    data = io.BytesIO()
    image.save(data, format="PNG")
    return data.getvalue(), truth


def test_a_scanned_filled_form_pairs_each_label_with_its_answer_and_states_each_tick(
    platform: Platform, ppocr: object, form: tuple[bytes, FormTruth]
) -> None:
    data, truth = form

    result = _run(platform, "job-form-scan", "form.png", data, {"features": ["forms"], "outputs": ["textract"]})

    assert_valid_result(result)
    [page] = result["pages"]
    texts = [(p["key"]["text"], p["value"]["text"] if p["value"] else None) for p in page["key_values"] if not (p["value"] or {}).get("state")]
    assert len(texts) == len(truth.pairs)
    for label, answer in truth.pairs:
        assert any(_same(key, label) and _same(value, answer) for key, value in texts), (label, answer, texts)
    ticks = [(p["key"]["text"], p["value"]["state"]) for p in page["key_values"] if (p["value"] or {}).get("state")]
    assert len(ticks) == len(truth.marks)
    for label, selected, _ in truth.marks:
        assert any(_same(key, label) and state == ("selected" if selected else "unselected") for key, state in ticks), (label, ticks)
    assert [m["state"] == "selected" for m in page["selection_marks"]].count(True) == sum(s for _, s, _ in truth.marks)
    for pair in page["key_values"]:
        assert 0 < pair["confidence"] <= 1 and pair["source"] == "layout"
        assert all(word["text"] in pair["key"]["text"] for word in pair["key"]["words"])
    assert "forms" in result["timings"]

    # The same pairs and boxes, read back by AWS's own libraries from the Textract-shaped JSON.
    import trp
    from textractor.entities.document import Document

    response = platform.read_json("results/job-form-scan/textract.json")
    document = Document.open(response)
    read = [(kv.key.text.strip(), kv.value.text.strip() if kv.value else "") for kv in document.key_values]
    for label, answer in truth.pairs:
        assert any(_same(key, label) and _same(value or None, answer) for key, value in read), (label, answer, read)
    boxes = [(kv.key.text.strip(), kv.value.children[0].is_selected()) for kv in document.checkboxes]
    for label, selected, _ in truth.marks:
        assert any(_same(key, label) and ticked == selected for key, ticked in boxes), (label, boxes)
    fields = trp.Document(response).pages[0].form.fields
    assert len(fields) == len(page["key_values"])
    assert {f.value.text for f in fields if f.value and f.value.text in ("SELECTED", "NOT_SELECTED")} <= {"SELECTED", "NOT_SELECTED"}


def test_without_asking_a_text_route_reads_no_forms(platform: Platform, ppocr: object, form: tuple[bytes, FormTruth]) -> None:
    [page] = _run(platform, "job-form-plain", "form.png", form[0], {})["pages"]

    assert "key_values" not in page and "selection_marks" not in page
    assert any("Payment" in line["text"] or "Contact" in line["text"] or "Shift" in line["text"] for line in page["lines"])


def test_the_layout_route_reads_forms_unasked_and_a_page_without_one_has_empty_lists(ppocr: object, tmp_path: Path) -> None:
    from ocr_platform.engines.local_structure import LocalStructureEngine
    from tests.documents import write_report_png

    engine = LocalStructureEngine(ppocr, reason="PP-StructureV3 weights are not installed here")  # type: ignore[arg-type]
    image, truth = filled_form(FORM_SEED)
    image.save(tmp_path / "form.png")

    [page] = engine.predict(tmp_path / "form.png").pages
    [report] = engine.predict(write_report_png(tmp_path / "report.png")).pages

    assert sum(bool(p["value"] and p["value"].get("state")) for p in page["key_values"]) == len(truth.marks)
    assert any(_same(p["key"]["text"], truth.pairs[0][0]) for p in page["key_values"])
    assert report["key_values"] == [] and report["selection_marks"] == []
    assert report["blocks"]  # the layout is still there


def test_a_filled_pdf_forms_fields_are_its_pairs_keyed_by_their_printed_labels(platform: Platform, ppocr: object) -> None:
    result = _run(platform, "job-form-pdf", "form.pdf", (PUBLIC / "pypdf-libreoffice-form.pdf").read_bytes(),
                  {"features": ["forms"], "text_layer": "ignore", "outputs": ["textract"]})

    [page] = result["pages"]
    pairs = {p["key"]["text"]: p for p in page["key_values"]}
    assert all(p["source"] == "form_field" for p in page["key_values"])
    # The answers are in the fields only (no appearance on the page), keyed by the label printed beside each field.
    assert pairs["First Name"]["value"]["text"] == "Alice" and pairs["Last Name"]["value"] is None
    assert len(page["selection_marks"]) == 4 and {m["state"] for m in page["selection_marks"]} == {"unselected"}

    from textractor.entities.document import Document

    document = Document.open(platform.read_json("results/job-form-pdf/textract.json"))
    assert ("First Name", "Alice") in [(kv.key.text.strip(), kv.value.text.strip()) for kv in document.key_values]
    assert len(document.checkboxes) == 4 and not any(kv.value.children[0].is_selected() for kv in document.checkboxes)
