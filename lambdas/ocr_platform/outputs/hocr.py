"""hOCR: a result as one XHTML document in the hOCR 1.2 format (the hOCR Embedded OCR Workflow and Output Format
specification), which Tesseract writes and hOCR tools (hocr-tools' hocr-pdf, OCRmyPDF's renderer, hOCR viewers) read.

Each result page is an ``ocr_page`` (its ``image`` the job's page image ``pages/{page:05d}.jpg``, whose pixels
the boxes are in; ``ppageno`` from 0); each layout block an ``ocr_carea`` holding one ``ocr_par``, and a page
without blocks one of each around all its lines (``outputs.page_layout``); each line an ``ocr_line`` with its
``bbox`` (and ``textangle`` when it does not run left to right); each word an ``ocrx_word`` with its ``bbox``
and ``x_wconf`` (the word's score, 0-100). Boxes are whole pixels ``x0 y0 x1 y1``, on the page as submitted.

>>> from ocr_platform.core.results import EngineInfo, build_result
>>> line = {"text": "Total 4", "polygon": [[10, 10], [90, 10], [90, 30], [10, 30]], "score": 0.97}
>>> doc = build_result("j", "pp-ocrv5", EngineInfo(name="PP-OCRv5", models=[], version="3"),
...                    [{"page": 1, "width": 200, "height": 100, "scale": 1.0, "lines": [line]}])
>>> print(hocr_document(doc).split("<body>")[1].split("<p ")[0])
<div class="ocr_page" id="page_1" title="image pages/00001.jpg; bbox 0 0 200 100; ppageno 0"><div class="ocr_carea" id="block_1_1" title="bbox 10 10 90 30">
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from ocr_platform.core.results import Line, OcrResult, Page
from ocr_platform.core.s3_layout import page_image_name
from ocr_platform.outputs.page_layout import Box, ElementIds, box_of, clamped, regions, spaced_words

XHTML = "http://www.w3.org/1999/xhtml"
#: A line turned less than this from upright is skewed, not turned: it gets no ``textangle``.
SKEW_DEGREES = 3
CAPABILITIES = "ocr_page ocr_carea ocr_par ocr_line ocrx_word ocrp_wconf"
_DOCTYPE = '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">'


def hocr_document(result: OcrResult) -> str:
    """The hOCR document of ``result`` (see the module docstring)."""
    html = ET.Element("html", {"xmlns": XHTML, "xml:lang": "en", "lang": "en"})
    head = ET.SubElement(html, "head")
    ET.SubElement(head, "title").text = f"OCR result of job {result['job_id']}"
    ET.SubElement(head, "meta", {"http-equiv": "Content-Type", "content": "text/html;charset=utf-8"})
    engine = result["engine"]
    ET.SubElement(head, "meta", {"name": "ocr-system", "content": f"{engine['name']} {engine.get('version', '')}".strip()})
    ET.SubElement(head, "meta", {"name": "ocr-capabilities", "content": CAPABILITIES})
    ET.SubElement(head, "meta", {"name": "ocr-number-of-pages", "content": str(result["page_count"])})
    body = ET.SubElement(html, "body")
    for index, page in enumerate(result["pages"]):
        _page(body, page, index)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + _DOCTYPE + "\n" + ET.tostring(html, encoding="unicode") + "\n"


def _page(body: ET.Element, page: Page, index: int) -> None:
    number, width, height = page["page"], page["width"], page["height"]
    title = f"image {page_image_name(number)}; bbox 0 0 {width} {height}; ppageno {index}"
    attributes = {"class": "ocr_page", "id": f"page_{number}", "title": title}
    if page.get("language"):
        attributes["lang"] = str(page["language"])
    element = ET.SubElement(body, "div", attributes)
    next_id = ElementIds(number)

    for region in regions(page):
        if not region.lines:
            continue
        title = _bbox(region.box, width, height)
        area = ET.SubElement(element, "div", {"class": "ocr_carea", "id": next_id("block"), "title": title})
        paragraph = ET.SubElement(area, "p", {"class": "ocr_par", "id": next_id("par"), "title": title})
        for line in region.lines:
            _line(paragraph, line, width, height, next_id)


def _line(paragraph: ET.Element, line: Line, width: int, height: int, next_id: ElementIds) -> None:
    title = _bbox(box_of(line["polygon"]), width, height)
    angle = _text_angle(line["polygon"])
    if angle:
        title += f"; textangle {angle}"
    element = ET.SubElement(paragraph, "span", {"class": "ocr_line", "id": next_id("line"), "title": title})
    last: ET.Element | None = None
    for word, spaced in spaced_words(line):
        confidence = max(0, min(100, round(float(word["score"]) * 100)))
        title = f"{_bbox(box_of(word['polygon']), width, height)}; x_wconf {confidence}"
        last = ET.SubElement(element, "span", {"class": "ocrx_word", "id": next_id("word"), "title": title})
        last.text = word["text"]
        last.tail = " " if spaced else None


def _bbox(box: Box, width: float, height: float) -> str:
    x0, y0, x1, y1 = clamped(box, width, height)
    return f"bbox {math.floor(x0)} {math.floor(y0)} {math.ceil(x1)} {math.ceil(y1)}"


def _text_angle(polygon: list[list[float]]) -> int:
    """The line's reading direction in whole degrees counter-clockwise from left-to-right (0 for an upright line,
    and for one skewed by less than ``SKEW_DEGREES``).

    >>> _text_angle([[0, 100], [0, 0], [20, 0], [20, 100]]), _text_angle([[0, 0], [100, 1], [100, 21], [0, 20]])
    (90, 0)
    """
    (ax, ay), (bx, by) = polygon[0], polygon[1]
    angle = round(math.degrees(math.atan2(ay - by, bx - ax))) % 360
    return 0 if min(angle, 360 - angle) < SKEW_DEGREES else angle
