"""A page's forms in Textract-shaped JSON (``outputs.textract``), as Amazon Textract's FORMS feature writes them
(https://docs.aws.amazon.com/textract/latest/dg/how-it-works-kvp.html,
https://docs.aws.amazon.com/textract/latest/dg/how-it-works-selectables.html):

- a ``KEY_VALUE_SET`` block with ``EntityTypes: ["KEY"]`` per pair, whose ``CHILD`` relationship holds the
  key's ``WORD`` blocks and whose ``VALUE`` relationship names the value's block;
- a ``KEY_VALUE_SET`` with ``EntityTypes: ["VALUE"]`` whose ``CHILD`` relationship holds the answer's ``WORD``
  blocks, or the ``SELECTION_ELEMENT`` of the check box that answers the key, or nothing (a blank field);
- a ``SELECTION_ELEMENT`` (``SelectionStatus`` ``SELECTED`` or ``NOT_SELECTED``) per selection mark.

The pairs and marks are the page's ``key_values`` and ``selection_marks``; a page that has none but carries a
PDF's own ``form_fields`` gets them from its fields, keyed by name (``core.forms.field_forms``). A word of a key
or value that is a word of the page's lines is that line's ``WORD`` block; any other (a field's name or value, a
word cut at a check box) gets a ``WORD`` block of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ocr_platform.core.forms import SELECTED, field_forms
from ocr_platform.core.results import FormText, KeyValue, Page, SelectionMark
from ocr_platform.core.words import Word

#: ``add(block_type, polygon, **fields)``: a new block over ``polygon`` (the page's pixels) on this page.
AddBlock = Callable[..., dict[str, Any]]
#: The ``WORD`` block of each word of the page's lines, by ``word_key``.
WordIds = Mapping[tuple[str, tuple[float, ...]], str]


def word_key(word: Word) -> tuple[str, tuple[float, ...]]:
    """How a key's or value's word is told to be a word of a line: its text and its corners, to a tenth of a pixel."""
    return word["text"], tuple(round(float(v), 1) for point in word["polygon"] for v in point)


def page_forms(page: Page) -> tuple[list[KeyValue], list[SelectionMark]]:
    """The pairs and marks a page shows: its own, else those of its PDF form fields."""
    if "key_values" in page or "selection_marks" in page:
        return list(page.get("key_values", [])), list(page.get("selection_marks", []))
    return field_forms(page.get("form_fields", []))


def form_blocks(page: Page, add: AddBlock, words: WordIds) -> list[str]:
    """Adds the page's ``KEY_VALUE_SET`` and ``SELECTION_ELEMENT`` blocks with ``add``; the ids of those the page
    block holds (the keys, the values and the marks)."""
    pairs, marks = page_forms(page)
    mark_ids = {_polygon_key(mark["polygon"]): _mark(add, mark)["Id"] for mark in marks}
    children = list(mark_ids.values())
    for pair in pairs:
        value = pair["value"]
        fields: dict[str, Any] = {}
        if value is not None and "state" in value:
            mark_id = mark_ids.get(_polygon_key(value["polygon"]))
            if mark_id is None:  # a value's mark that the page's marks lack: a block of its own
                mark_id = _mark(add, {"state": value["state"], "polygon": value["polygon"], "confidence": pair["confidence"]})["Id"]
                children.append(mark_id)
            fields["Relationships"] = [{"Type": "CHILD", "Ids": [mark_id]}]
        elif value is not None and value["words"]:
            fields["Relationships"] = [{"Type": "CHILD", "Ids": _word_ids(add, value, words)}]
        polygon = value["polygon"] if value is not None else pair["key"]["polygon"]
        value_block = add("KEY_VALUE_SET", polygon, Confidence=_confidence(pair["confidence"]), EntityTypes=["VALUE"], **fields)
        key_block = add("KEY_VALUE_SET", pair["key"]["polygon"], Confidence=_confidence(pair["confidence"]), EntityTypes=["KEY"],
                        Relationships=[{"Type": "VALUE", "Ids": [value_block["Id"]]}, {"Type": "CHILD", "Ids": _word_ids(add, pair["key"], words)}])
        children += [key_block["Id"], value_block["Id"]]
    return children


def _mark(add: AddBlock, mark: SelectionMark) -> dict[str, Any]:
    status = "SELECTED" if mark["state"] == SELECTED else "NOT_SELECTED"
    return add("SELECTION_ELEMENT", mark["polygon"], Confidence=_confidence(mark["confidence"]), SelectionStatus=status)


def _word_ids(add: AddBlock, text: FormText, words: WordIds) -> list[str]:
    ids = []
    for word in text["words"]:
        found = words.get(word_key(word))
        if found is None:
            found = add("WORD", word["polygon"], Confidence=_confidence(word["score"]), Text=word["text"], TextType="PRINTED")["Id"]
        ids.append(found)
    return ids


def _polygon_key(polygon: Sequence[Sequence[float]]) -> tuple[float, ...]:
    return tuple(round(float(v), 1) for point in polygon for v in point)


def _confidence(score: float) -> float:
    return round(max(0.0, min(1.0, float(score))) * 100, 2)
