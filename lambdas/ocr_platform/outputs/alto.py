"""ALTO: a result as one ALTO 4.4 XML document (the schema the Library of Congress maintains; tests/schemas holds it),
the format libraries and archives keep OCR in and their viewers and full-text indexers read.

``MeasurementUnit`` is ``pixel``: positions are whole pixels of the page as submitted, as the result's
polygons (the page images ``pages/{page:05d}.jpg`` are in the same pixels). Each result page is a ``Page``
(``PHYSICAL_IMG_NR`` its number in the document) with a ``PrintSpace`` the size of the page; each layout block
a ``TextBlock`` tagged with its label (a ``LayoutTag``), and a page without blocks one ``TextBlock`` of all
its lines (``outputs.page_layout``); each line a ``TextLine``; each word a ``String`` with its ``CONTENT`` and
``WC`` (the word's score, 0 to 1), with an ``SP`` where the line's text has a space between two words. A page
says its ``ROTATION`` (degrees counter-clockwise its text is turned, the result's ``rotation``) and ``LANG`` (a
BCP 47 tag, ``core.language_tags``, where the result names the page's language); blocks and lines their
``BASEDIRECTION`` (``rtl`` for right-to-left text), and a block of turned lines its ``ROTATION`` in quarter turns
(ALTO 4.4 has none on ``TextLine``). A page
without text has an empty ``PrintSpace``.

>>> from ocr_platform.core.results import EngineInfo, build_result
>>> line = {"text": "Total 4", "polygon": [[10, 10], [90, 10], [90, 30], [10, 30]], "score": 0.97}
>>> doc = build_result("j", "pp-ocrv5", EngineInfo(name="PP-OCRv5", models=[], version="3"),
...                    [{"page": 1, "width": 200, "height": 100, "scale": 1.0, "lines": [line]}])
>>> print(alto_document(doc).split("<TextLine ")[1].split("<SP")[0].replace("><", ">\\n<"))
ID="line_1_1" HPOS="10" VPOS="10" WIDTH="80" HEIGHT="20" BASEDIRECTION="ltr">
<String ID="string_1_1" HPOS="10" VPOS="10" WIDTH="58" HEIGHT="20" CONTENT="Total" WC="0.97" />
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections import Counter

from ocr_platform.core.language_tags import bcp47, is_right_to_left
from ocr_platform.core.results import OcrResult, Page
from ocr_platform.core.s3_layout import page_image_name
from ocr_platform.outputs.page_layout import Box, ElementIds, box_of, clamped, regions, spaced_words, text_angle

ALTO_NAMESPACE = "http://www.loc.gov/standards/alto/ns-v4#"
ALTO_SCHEMA = "http://www.loc.gov/standards/alto/v4/alto-4-4.xsd"


def alto_document(result: OcrResult) -> str:
    """The ALTO XML document of ``result`` (see the module docstring)."""
    alto = ET.Element("alto", {
        "xmlns": ALTO_NAMESPACE,
        "xmlns:xsi": "http://www.w3.org/2001/XMLSchema-instance",
        "xsi:schemaLocation": f"{ALTO_NAMESPACE} {ALTO_SCHEMA}",
        "SCHEMAVERSION": "4.4",
    })
    description = ET.SubElement(alto, "Description")
    ET.SubElement(description, "MeasurementUnit").text = "pixel"
    if result["pages"]:
        source = ET.SubElement(description, "sourceImageInformation")
        ET.SubElement(source, "fileName").text = page_image_name(result["pages"][0]["page"])
    processing = ET.SubElement(description, "OCRProcessing", {"ID": "ocr_1"})
    step = ET.SubElement(processing, "ocrProcessingStep")
    software = ET.SubElement(step, "processingSoftware")
    engine = result["engine"]
    ET.SubElement(software, "softwareName").text = engine["name"]
    if engine.get("version"):
        ET.SubElement(software, "softwareVersion").text = str(engine["version"])
    labels = sorted({str(block.get("label", "text")) for page in result["pages"] for block in page.get("blocks", [])})
    if labels:
        tags = ET.SubElement(alto, "Tags")
        for label in labels:
            ET.SubElement(tags, "LayoutTag", {"ID": _tag_id(label), "LABEL": label})
    layout = ET.SubElement(alto, "Layout")
    for page in result["pages"]:
        _page(layout, page)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(alto, encoding="unicode") + "\n"


def _page(layout: ET.Element, page: Page) -> None:
    number, width, height = page["page"], page["width"], page["height"]
    element = ET.SubElement(layout, "Page", {"ID": f"page_{number}", "PHYSICAL_IMG_NR": str(number), "WIDTH": str(width), "HEIGHT": str(height),
                                             "ROTATION": str(int(page.get("rotation") or 0))})
    language = bcp47(str(page.get("language") or ""))
    if language:
        element.set("LANG", language)
    space = ET.SubElement(element, "PrintSpace", {"HPOS": "0", "VPOS": "0", "WIDTH": str(width), "HEIGHT": str(height)})
    next_id = ElementIds(number)

    for region in regions(page):
        if not region.lines:
            continue
        block = ET.SubElement(space, "TextBlock", {"ID": next_id("block"), **_position(region.box, width, height)})
        if region.block is not None:
            block.set("TAGREFS", _tag_id(str(region.block.get("label", "text"))))
        block.set("BASEDIRECTION", _direction(" ".join(line["text"] for line in region.lines)))
        turn = Counter(text_angle(line["polygon"]) for line in region.lines).most_common(1)[0][0]
        if turn:
            block.set("ROTATION", str(turn))
        for line in region.lines:
            text_line = ET.SubElement(block, "TextLine", {"ID": next_id("line"), **_position(box_of(line["polygon"]), width, height),
                                                          "BASEDIRECTION": _direction(line["text"])})
            for word, spaced in spaced_words(line):
                position = _position(box_of(word["polygon"]), width, height)
                ET.SubElement(text_line, "String", {
                    "ID": next_id("string"), **position,
                    "CONTENT": word["text"], "WC": str(round(max(0.0, min(1.0, float(word["score"]))), 4)),
                })
                if spaced:  # where the word ends
                    ET.SubElement(text_line, "SP", {"HPOS": str(int(position["HPOS"]) + int(position["WIDTH"])), "VPOS": position["VPOS"]})


def _direction(text: str) -> str:
    return "rtl" if is_right_to_left(text) else "ltr"


def _position(box: Box, width: float, height: float) -> dict[str, str]:
    x0, y0, x1, y1 = clamped(box, width, height)
    left, top = math.floor(x0), math.floor(y0)
    return {"HPOS": str(left), "VPOS": str(top), "WIDTH": str(math.ceil(x1) - left), "HEIGHT": str(math.ceil(y1) - top)}


def _tag_id(label: str) -> str:
    """The ``LayoutTag`` id of a block label (an XML id: letters, digits, '_' and '-')."""
    return "layout_" + "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in label)
