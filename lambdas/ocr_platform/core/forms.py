"""Forms in a result (docs/contracts.md, "Forms"): the shapes every producer of ``key_values`` and
``selection_marks`` shares, and a PDF's own form fields as such pairs and marks.

A filled-in PDF form knows its answers (``form_fields``, ``document.form_fields``): on such a page they are the
truth, and ``field_forms`` turns them into the same ``key_values`` and ``selection_marks`` that the page's
pixels give elsewhere (``engines.forms``). A field's key is its printed label where the caller finds one
(``label_for``), else the field's name; a text field left empty has no value; a check box or radio button is a
selection mark, and the value of its key.

>>> fields = [{"name": "Applicant", "type": "text", "value": "Kari", "bbox": [100.0, 10.0, 200.0, 30.0]},
...           {"name": "Agree", "type": "checkbox", "value": "Yes", "selected": True, "bbox": [10.0, 50.0, 30.0, 70.0]}]
>>> pairs, marks = field_forms(fields)
>>> [(p["key"]["text"], p["value"] and p["value"]["text"]) for p in pairs], [m["state"] for m in marks]
([('Applicant', 'Kari'), ('Agree', ':selected:')], ['selected'])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ocr_platform.core.results import FormField, FormText, FormValue, KeyValue, SelectionMark
from ocr_platform.core.words import Word, placed_words

#: What ``state`` a selection mark has, and the text its value stands for (Azure AI Document Intelligence writes
#: a selection mark in a value's content the same way).
SELECTED, UNSELECTED = "selected", "unselected"
MARK_TEXT = {SELECTED: ":selected:", UNSELECTED: ":unselected:"}
#: ``KeyValue.source``: read from the page (text and marks), or from the PDF's own form field.
FROM_LAYOUT, FROM_FORM_FIELD = "layout", "form_field"
#: Form field types that are answers: text and choices (a value), check boxes and radio buttons (a mark).
TEXT_FIELDS = frozenset({"text", "combobox", "listbox"})
MARK_FIELDS = frozenset({"checkbox", "radio"})

Box = tuple[float, float, float, float]
LabelFinder = Callable[[Box], "FormText | None"]


def quad(box: Sequence[float]) -> list[list[float]]:
    """The four corners of ``box`` (``x0, y0, x1, y1``), clockwise from the top-left, as polygons are written.

    >>> quad((1, 2, 3, 4))
    [[1.0, 2.0], [3.0, 2.0], [3.0, 4.0], [1.0, 4.0]]
    """
    x0, y0, x1, y1 = (round(float(v), 2) for v in box)
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]


def bounds(polygons: Sequence[Sequence[Sequence[float]]]) -> Box:
    """The box around ``polygons``."""
    xs = [float(p[0]) for polygon in polygons for p in polygon]
    ys = [float(p[1]) for polygon in polygons for p in polygon]
    return min(xs), min(ys), max(xs), max(ys)


def form_text(words: Sequence[Word]) -> FormText:
    """A key's or value's text made of ``words`` (in reading order): their text joined by spaces, the box around them."""
    return {"text": " ".join(w["text"] for w in words), "polygon": quad(bounds([w["polygon"] for w in words])), "words": list(words)}


def mark_value(mark: SelectionMark) -> FormValue:
    """A selection mark as the value of the key it answers."""
    return {"text": MARK_TEXT[mark["state"]], "polygon": mark["polygon"], "words": [], "state": mark["state"]}


def field_forms(fields: Sequence[FormField], label_for: LabelFinder | None = None) -> tuple[list[KeyValue], list[SelectionMark]]:
    """The key-value pairs and selection marks of a page's PDF form ``fields`` (boxes in the page's pixels), each
    keyed by the printed label ``label_for`` finds beside the field, else by the field's name."""
    pairs: list[KeyValue] = []
    marks: list[SelectionMark] = []
    for field in fields:
        kind = field["type"]
        if kind not in TEXT_FIELDS and kind not in MARK_FIELDS or len(field["bbox"]) != 4:
            continue
        x0, y0, x1, y1 = (float(v) for v in field["bbox"])
        box: Box = (x0, y0, x1, y1)
        key = label_for(box) if label_for else None
        if key is None:
            name = field["name"] if kind != "radio" or not field["value"] else f"{field['name']} = {field['value']}"
            key = _text_over(name, box)
        value: FormValue | None = None
        if kind in MARK_FIELDS:
            mark: SelectionMark = {"state": SELECTED if field.get("selected") else UNSELECTED, "polygon": quad(box), "confidence": 1.0}
            marks.append(mark)
            value = mark_value(mark)
        elif field["value"].strip():
            value = {**_text_over(field["value"], box)}
        pairs.append({"key": key, "value": value, "confidence": 1.0, "source": FROM_FORM_FIELD})
    return pairs, marks


def _text_over(text: str, box: Box) -> FormText:
    """``text`` set over ``box`` (a field's name or value, which no line of the page holds), its words spread evenly."""
    words = placed_words(text, quad(box), 1.0)
    return {"text": text, "polygon": quad(box), "words": words}
