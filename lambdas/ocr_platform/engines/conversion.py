"""From PaddleOCR's result objects to result.json's lines, blocks and Markdown.

PaddleOCR's pipelines return PaddleX result objects: a mapping (``rec_texts``, ``rec_polys``,
``rec_scores`` for OCR) whose ``json["res"]`` is the serialisable form, plus ``markdown`` for the layout
pipelines (``parsing_res_list`` of blocks and ``overall_ocr_res`` of lines). These functions read only
those documented keys, so they run on plain dicts too.

>>> ocr_lines({"rec_texts": ["Total"], "rec_polys": [[[0, 0], [50, 0], [50, 9], [0, 9]]], "rec_scores": [0.987654]})
[{'text': 'Total', 'polygon': [[0.0, 0.0], [50.0, 0.0], [50.0, 9.0], [0.0, 9.0]], 'score': 0.9877}]
"""

from __future__ import annotations

import re
from typing import Any, TypedDict

from ocr_platform.core.markup import escape_foreign_tags, escape_text
from ocr_platform.core.results import Block, Line
from ocr_platform.core.tables import html_table_text
from ocr_platform.engines.regions import FIGURE_LABELS, MARKDOWN_IGNORED_LABELS, Region, assign_lines, lines_text

#: Labels whose region PP-StructureV3 writes as a picture, an ``<img>`` in its Markdown with no text (a formula and a
#: seal too, as their recognition is off); its block's content is empty or the OCR text in it.
PICTURE_LABELS = FIGURE_LABELS | {"seal", "formula", "header_image", "footer_image"}
#: Pictures that are page furniture: their text goes into the block only, as PP-StructureV3's Markdown leaves
#: them out (its ``markdown_ignore_labels``).
FURNITURE_PICTURES = PICTURE_LABELS & MARKDOWN_IGNORED_LABELS
#: The crop PaddleX names in a picture's Markdown: ``imgs/img_in_{label}_box_{x0}_{y0}_{x1}_{y1}.jpg``.
_PICTURE_SRC = re.compile(r"img_in_(\w+?)_box_(\d+)_(\d+)_(\d+)_(\d+)\.\w+")
#: The tags of a table's HTML as PaddleX writes it; any other ``<`` in it is the page's text.
TABLE_TAGS = frozenset({"html", "body", "table", "thead", "tbody", "tfoot", "tr", "td", "th", "br", "caption", "colgroup", "col"})
#: The tags PaddleX's layout Markdown holds of its own (tables, a picture in a centred ``div``, emphasis, sub- and
#: superscripts); any other ``<`` in it is the page's text.
LAYOUT_TAGS = TABLE_TAGS | {"div", "img", "b", "i", "em", "strong", "sup", "sub", "span", "p", "center"}


class PageContent(TypedDict, total=False):
    """What an engine read on one page: a result page less its number and size (``page_loop`` adds those)."""

    lines: list[Line]
    blocks: list[Block]
    markdown: str
    script: str
    language: str


def raw_result(res: Any) -> Any:
    """The JSON-serialisable form of a PaddleX result (its ``json["res"]``), for raw.json."""
    data = getattr(res, "json", None)
    if isinstance(data, dict):
        return data.get("res", data)
    return dict(res) if isinstance(res, dict) else str(res)


def ocr_lines(res: Any) -> list[Line]:
    """Lines from a PaddleOCR OCR result (``rec_texts``, ``rec_polys``, ``rec_scores``).

    A curved-text polygon (more than 4 points) becomes its bounding quadrilateral.
    """
    texts = list(res.get("rec_texts", []) or [])
    polys = list(res.get("rec_polys", []) or [])
    scores = list(res.get("rec_scores", []) or [])
    word_texts = list(res.get("text_word", []) or [])
    word_regions = list(res.get("text_word_region", []) or [])
    lines: list[Line] = []
    for index, (text, poly, score) in enumerate(zip(texts, polys, scores, strict=False)):
        points = [[round(float(x), 1), round(float(y), 1)] for x, y in (poly.tolist() if hasattr(poly, "tolist") else poly)]
        if len(points) != 4:
            xs, ys = [p[0] for p in points], [p[1] for p in points]
            points = [[min(xs), min(ys)], [max(xs), min(ys)], [max(xs), max(ys)], [min(xs), max(ys)]]
        line: Line = {"text": str(text), "polygon": points, "score": round(float(score), 4)}
        if index < len(word_texts) and index < len(word_regions) and len(word_texts[index]) == len(word_regions[index]):
            line["words"] = [
                {"text": str(word), "polygon": [[round(float(x), 1), round(float(y), 1)] for x, y in region], "score": line["score"]}
                for word, region in zip(word_texts[index], word_regions[index], strict=True)
            ]
        lines.append(line)
    return lines


def layout_blocks(parsing_res_list: list[dict[str, Any]]) -> list[Block]:
    """Blocks in reading order from a layout-parsing result's ``parsing_res_list`` (PP-StructureV3, PaddleOCR-VL).

    Blocks without a ``block_order`` keep their document order after the ordered ones; a table block
    keeps its HTML in ``html`` and its cell text, tab-separated, in ``text``.

    >>> blocks = layout_blocks([
    ...     {"block_label": "table", "block_content": "<table><tr><td>a</td><td>b</td></tr></table>", "block_bbox": [0, 50, 9, 60], "block_order": 2},
    ...     {"block_label": "doc_title", "block_content": "Report", "block_bbox": [0, 0, 9, 9], "block_order": 1},
    ... ])
    >>> [(b["label"], b["text"]) for b in blocks]
    [('doc_title', 'Report'), ('table', 'a\\tb')]
    """
    ordered = sorted(
        enumerate(parsing_res_list),
        key=lambda item: (item[1].get("block_order") is None, item[1].get("block_order") or 0, item[0]),
    )
    blocks: list[Block] = []
    for _, raw in ordered:
        label = str(raw.get("block_label", "text"))
        content = str(raw.get("block_content", "") or "")
        block: Block = {"label": label, "bbox": [round(float(v), 1) for v in list(raw.get("block_bbox", []))[:4]]}
        if label == "table" and "<table" in content.lower():
            block["html"] = escape_foreign_tags(content, TABLE_TAGS)
            block["text"] = html_table_text(content)
        else:
            block["text"] = content
        blocks.append(block)
    return blocks


def layout_page_content(res: Any) -> PageContent:
    """Lines, blocks and Markdown from a layout-parsing result (its ``json["res"]`` and ``markdown``).

    The Markdown is the pipeline's own, with every tag but its own (``LAYOUT_TAGS``) escaped, as PaddleX writes the
    page's text into it as read (``core.markup``); where it gave none, the blocks' HTML or escaped text joined by
    blank lines.
    """
    data = raw_result(res)
    blocks = layout_blocks(list(data.get("parsing_res_list", []) or []))
    lines = ocr_lines(data.get("overall_ocr_res", {}) or {})
    markdown = getattr(res, "markdown", None)
    text = escape_foreign_tags(markdown.get("markdown_texts", ""), LAYOUT_TAGS) if isinstance(markdown, dict) else ""
    return {
        "lines": lines,
        "blocks": blocks,
        "markdown": keep_picture_text(blocks, lines, text) if text else "\n\n".join(b.get("html") or escape_text(b.get("text", "")) for b in blocks),
    }


def keep_picture_text(blocks: list[Block], lines: list[Line], markdown: str) -> str:
    """Give each picture block without text (PP-StructureV3 may read none in an ``image``, ``chart`` or ``seal``
    region) the OCR lines that fall in it, and put a picture's text in ``markdown`` after the picture where the
    Markdown lacks it (PP-StructureV3 writes a picture as an ``<img>`` alone); the Markdown.

    Each of the page's OCR lines (``overall_ocr_res``, which holds every line) goes to the block that covers most
    of it (``regions.assign_lines``), so a line of a text block beside the picture stays there. The text follows
    the picture's ``<img>`` (found by the crop PaddleX names after the block's box). Where the Markdown has no
    ``<img>`` of it, text read here ends the Markdown, and a block's own text is left as the pipeline wrote it (a
    formula PaddleOCR-VL writes as LaTeX, say); a header or footer picture keeps its text in its block only.

    >>> image = {"label": "image", "bbox": [0.0, 100.0, 200.0, 300.0], "text": ""}
    >>> lines = [{"text": "Q1 sales", "polygon": [[10, 150], [90, 150], [90, 170], [10, 170]], "score": 0.9}]
    >>> picture = '<div><img src="imgs/img_in_image_box_0_100_200_300.jpg" /></div>'
    >>> keep_picture_text([image], lines, picture + "\\n\\nNext") == picture + "\\n\\nQ1 sales\\n\\nNext"
    True
    >>> image["text"]
    'Q1 sales'
    """
    regions = [Region(block.get("label", "text"), tuple(block["bbox"])) if len(block.get("bbox", [])) == 4 else None for block in blocks]  # type: ignore[arg-type]
    assign_lines([region for region in regions if region is not None], lines)
    for block, region in zip(blocks, regions, strict=True):
        if region is None or block.get("label") not in PICTURE_LABELS:
            continue
        read_here = not block.get("text", "").strip() and bool(region.lines)
        if read_here:
            block["text"] = lines_text(region.lines)
        text = escape_text(block.get("text", ""))
        if not text.strip() or block["label"] in FURNITURE_PICTURES or text in markdown:
            continue
        at = _after_picture(markdown, block)
        if at is not None:
            markdown = f"{markdown[:at]}\n\n{text}{markdown[at:]}"
        elif read_here:
            markdown = f"{markdown}\n\n{text}"
    return markdown


def _after_picture(markdown: str, block: Block) -> int | None:
    """Where the picture of ``block`` ends in ``markdown`` (after its ``<img>`` tag, or its ``</div>``), or ``None``."""
    bbox = block["bbox"]
    for match in _PICTURE_SRC.finditer(markdown):
        coords = [int(v) for v in match.groups()[1:]]
        if match.group(1) == block["label"] and all(abs(c - v) <= 1.5 for c, v in zip(coords, bbox, strict=True)):
            end = markdown.find(">", match.end()) + 1 or match.end()
            return end + len("</div>") if markdown.startswith("</div>", end) else end
    return None
