"""hOCR: a result as one XHTML document in the hOCR 1.2 format (the hOCR Embedded OCR Workflow and Output Format
specification), which Tesseract writes and hOCR tools (hocr-tools' hocr-pdf, OCRmyPDF's renderer, hOCR viewers) read.

Each result page is an ``ocr_page`` (its ``image`` the job's page image ``pages/{page:05d}.jpg``, whose pixels
the boxes are in; ``ppageno`` the document's page index, from 0, so ``--pages 2,4`` gives 1 and 3; ``scan_res``
the dots per inch the page was read at, 72 x its ``scale``; ``lang`` the page's language as a BCP 47 tag where
the result names one, ``core.language_tags``); each layout block an ``ocr_carea`` holding one ``ocr_par``, and a
page without blocks one of each around all its lines (``outputs.page_layout``); each line an ``ocr_line`` with
its ``bbox`` and its ``baseline`` (slope and offset, as Tesseract writes them), or ``textangle`` for text turned
a quarter, half or three quarters (as Tesseract, which leaves skew to the baseline). A line skewed by at most
``MAX_LEVEL_SKEW_DEGREES`` (a scanner's skew) has a level baseline, at the height its bottom edge has under its
middle, as the searchable PDF draws it: OCRmyPDF's renderer draws each word along the baseline's slope, and
pdftotext then breaks a word drawn on a 4 degree slope into pieces of two or three letters (word F1 0.28 on a
skewed scan; 0.97 level). The words' boxes keep their true, stepped places. Each word an ``ocrx_word``
with its ``bbox`` and ``x_wconf`` (the word's score, 0-100). Lines and paragraphs of right-to-left text say
``dir="rtl"``. Boxes are whole pixels ``x0 y0 x1 y1``, on the page as submitted. A page without text is an
empty ``ocr_page``; no element is self-closing, so HTML5 and XML parsers read the same tree.

>>> from ocr_platform.core.results import EngineInfo, build_result
>>> line = {"text": "Total 4", "polygon": [[10, 10], [90, 10], [90, 30], [10, 30]], "score": 0.97}
>>> doc = build_result("j", "pp-ocrv5", EngineInfo(name="PP-OCRv5", models=[], version="3"),
...                    [{"page": 1, "width": 200, "height": 100, "scale": 1.0, "lines": [line]}])
>>> print(hocr_document(doc).split("<body>")[1].split("<p ")[0].replace("><", ">\\n<"))
<div class="ocr_page" id="page_1" title="image pages/00001.jpg; bbox 0 0 200 100; ppageno 0; scan_res 72 72">
<div class="ocr_carea" id="block_1_1" title="bbox 10 10 90 30">
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from ocr_platform.core.language_tags import bcp47, is_right_to_left
from ocr_platform.core.results import Line, OcrResult, Page
from ocr_platform.core.s3_layout import page_image_name
from ocr_platform.outputs.page_layout import Box, ElementIds, box_of, clamped, regions, spaced_words, text_angle
from ocr_platform.outputs.text_placement import MAX_LEVEL_SKEW_DEGREES

XHTML = "http://www.w3.org/1999/xhtml"
CAPABILITIES = "ocr_page ocr_carea ocr_par ocr_line ocrx_word ocrp_wconf ocrp_lang ocrp_dir"
_DOCTYPE = '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">'


def hocr_document(result: OcrResult) -> str:
    """The hOCR document of ``result`` (see the module docstring)."""
    tags = {page_language(page) for page in result["pages"]}
    common = tags.pop() if len(tags) == 1 else None
    html = ET.Element("html", {"xmlns": XHTML, **({"xml:lang": common, "lang": common} if common else {})})
    head = ET.SubElement(html, "head")
    ET.SubElement(head, "title").text = f"OCR result of job {result['job_id']}"
    ET.SubElement(head, "meta", {"http-equiv": "Content-Type", "content": "text/html;charset=utf-8"})
    engine = result["engine"]
    ET.SubElement(head, "meta", {"name": "ocr-system", "content": f"{engine['name']} {engine.get('version', '')}".strip()})
    ET.SubElement(head, "meta", {"name": "ocr-capabilities", "content": CAPABILITIES})
    ET.SubElement(head, "meta", {"name": "ocr-number-of-pages", "content": str(result["page_count"])})
    body = ET.SubElement(html, "body")
    for page in result["pages"]:
        _page(body, page)
    # No self-closing element but the void <meta>: an HTML5 parser reads <div/> as an open <div> (so the next page
    # would nest inside a blank one), and must build the same tree as an XML parser.
    markup = ET.tostring(html, encoding="unicode", short_empty_elements=False).replace("></meta>", " />")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + _DOCTYPE + "\n" + markup + "\n"


def page_language(page: Page) -> str | None:
    """The page's language as a BCP 47 tag, where the result names one."""
    return bcp47(str(page.get("language") or ""))


def _page(body: ET.Element, page: Page) -> None:
    number, width, height = page["page"], page["width"], page["height"]
    resolution = round(72 * float(page.get("scale") or 1.0))
    title = f"image {page_image_name(number)}; bbox 0 0 {width} {height}; ppageno {number - 1}; scan_res {resolution} {resolution}"
    attributes = {"class": "ocr_page", "id": f"page_{number}", "title": title}
    language = page_language(page)
    if language:
        attributes["lang"] = language
    element = ET.SubElement(body, "div", attributes)
    next_id = ElementIds(number)

    for region in regions(page):
        if not region.lines:
            continue
        title = _bbox(region.box, width, height)
        area = ET.SubElement(element, "div", {"class": "ocr_carea", "id": next_id("block"), "title": title})
        paragraph = ET.SubElement(area, "p", {"class": "ocr_par", "id": next_id("par"), "title": title})
        if language:
            paragraph.set("lang", language)
        if is_right_to_left(" ".join(line["text"] for line in region.lines)):
            paragraph.set("dir", "rtl")
        for line in region.lines:
            _line(paragraph, line, width, height, next_id)


def _line(paragraph: ET.Element, line: Line, width: int, height: int, next_id: ElementIds) -> None:
    box = box_of(line["polygon"])
    title = _bbox(box, width, height)
    angle = text_angle(line["polygon"])
    title += f"; textangle {angle}" if angle else f"; baseline {_baseline(line['polygon'], box)}"
    attributes = {"class": "ocr_line", "id": next_id("line"), "title": title}
    if is_right_to_left(line["text"]):
        attributes["dir"] = "rtl"
    element = ET.SubElement(paragraph, "span", attributes)
    for word, spaced in spaced_words(line):
        confidence = max(0, min(100, round(float(word["score"]) * 100)))
        title = f"{_bbox(box_of(word['polygon']), width, height)}; x_wconf {confidence}"
        last = ET.SubElement(element, "span", {"class": "ocrx_word", "id": next_id("word"), "title": title})
        last.text = word["text"]
        last.tail = " " if spaced else None


def _bbox(box: Box, width: float, height: float) -> str:
    x0, y0, x1, y1 = clamped(box, width, height)
    return f"bbox {math.floor(x0)} {math.floor(y0)} {math.ceil(x1)} {math.ceil(y1)}"


def _baseline(polygon: list[list[float]], box: Box) -> str:
    """hOCR's ``baseline`` of an upright or skewed line: the slope of its bottom edge and where that edge is at the
    box's left, in pixels from the box's bottom (0 or less), as Tesseract writes it; level, at the bottom edge's
    height under the box's middle, where the edge is skewed by ``MAX_LEVEL_SKEW_DEGREES`` or less.

    >>> _baseline([[0, 10], [100, 5], [100, 25], [0, 30]], (0, 5, 100, 30))
    '0 -2'
    >>> _baseline([[0, 30], [100, 0], [100, 20], [0, 50]], (0, 0, 100, 50))
    '-0.3 0'
    """
    (left_x, left_y), (right_x, right_y) = polygon[3], polygon[2]
    slope = (right_y - left_y) / (right_x - left_x) if right_x != left_x else 0.0
    if math.degrees(abs(math.atan(slope))) <= MAX_LEVEL_SKEW_DEGREES:
        at_middle = left_y + slope * ((box[0] + box[2]) / 2 - left_x)
        return f"0 {min(0, round(at_middle - box[3]))}"
    at_left = left_y + slope * (box[0] - left_x)
    return f"{round(slope, 4):g} {min(0, round(at_left - box[3]))}"
