"""From PaddleOCR's result objects to result.json's lines, blocks and Markdown.

PaddleOCR's pipelines return PaddleX result objects: a mapping (``rec_texts``, ``rec_polys``,
``rec_scores`` for OCR) whose ``json["res"]`` is the serialisable form, plus ``markdown`` for the layout
pipelines (``parsing_res_list`` of blocks and ``overall_ocr_res`` of lines). These functions read only
those documented keys, so they run on plain dicts too.

>>> ocr_lines({"rec_texts": ["Total"], "rec_polys": [[[0, 0], [50, 0], [50, 9], [0, 9]]], "rec_scores": [0.987654]})
[{'text': 'Total', 'polygon': [[0.0, 0.0], [50.0, 0.0], [50.0, 9.0], [0.0, 9.0]], 'score': 0.9877}]
"""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any, TypedDict

from ocr_platform.core.results import Block, Line


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
            block["html"] = content
            block["text"] = html_table_text(content)
        else:
            block["text"] = content
        blocks.append(block)
    return blocks


def layout_page_content(res: Any) -> PageContent:
    """Lines, blocks and Markdown from a layout-parsing result (its ``json["res"]`` and ``markdown``).

    The Markdown is the pipeline's own; where it gave none, the blocks' HTML or text joined by blank lines.
    """
    data = raw_result(res)
    blocks = layout_blocks(list(data.get("parsing_res_list", []) or []))
    markdown = getattr(res, "markdown", None)
    text = markdown.get("markdown_texts", "") if isinstance(markdown, dict) else ""
    return {
        "lines": ocr_lines(data.get("overall_ocr_res", {}) or {}),
        "blocks": blocks,
        "markdown": text or "\n\n".join(b.get("html") or b.get("text", "") for b in blocks),
    }


class _TableCells(HTMLParser):
    """Collects the text of each ``<td>``/``<th>`` cell, row by row."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th") and self.rows:
            self.rows[-1].append("")

    def handle_data(self, data: str) -> None:
        if self.rows and self.rows[-1]:
            self.rows[-1][-1] += data


def html_table_text(html: str) -> str:
    """A table's text: cells joined by tabs, rows by newlines.

    >>> html_table_text("<table><tr><th>Item</th><th>Price</th></tr><tr><td> Tea </td><td>4.50</td></tr></table>")
    'Item\\tPrice\\nTea\\t4.50'
    """
    parser = _TableCells()
    parser.feed(html)
    parser.close()
    return "\n".join("\t".join(cell.strip() for cell in row) for row in parser.rows)
