"""Textract-shaped JSON: a result as the response of Amazon Textract's GetDocumentAnalysis (and, for a result without
layout, GetDocumentTextDetection), so code written for Textract, and its libraries (amazon-textract-textractor,
amazon-textract-response-parser), read it unchanged. The block types, fields and relationships are Textract's
(https://docs.aws.amazon.com/textract/latest/dg/how-it-works-document-layout.html,
https://docs.aws.amazon.com/textract/latest/dg/API_Block.html):

- ``PAGE`` per result page, ``LINE`` per line, ``WORD`` per word (``TextType`` ``PRINTED``), each line's words its
  ``CHILD`` relationship; the page's children are its lines and its other top-level blocks.
- ``LAYOUT_*`` per layout block (``LAYOUT_TITLE``, ``LAYOUT_SECTION_HEADER``, ``LAYOUT_TEXT``, ``LAYOUT_TABLE``,
  ``LAYOUT_FIGURE``, ``LAYOUT_HEADER``, ``LAYOUT_FOOTER``, ``LAYOUT_PAGE_NUMBER``; ``LAYOUT_LABELS`` maps the
  engines' labels), whose children are the lines in it (``outputs.page_layout``).
- ``TABLE`` per table block with HTML, a ``CELL`` per grid position (``RowIndex``/``ColumnIndex`` from 1) whose
  children are the words of its text (``EntityTypes`` ``COLUMN_HEADER`` for a ``<th>``), and a ``MERGED_CELL``
  over the cells a spanning cell covers. A cell's geometry is its row's and column's band: the rows and columns are
  found from where the cells' words lie. A cell's ``Confidence`` is its words' mean score (the engines score no
  cell of a table's structure), the table's (its words' mean) for a cell without words and a merged cell.
- ``TABLE_TITLE`` and ``TABLE_FOOTER`` (children: their words; the table's ``TABLE_TITLE`` and ``TABLE_FOOTER``
  relationships) for a layout block labelled a table's caption (``TABLE_TITLE_LABELS``) or a footnote
  (``TABLE_FOOTER_LABELS``) next to a table (``table_captions``).
- ``KEY_VALUE_SET`` (a ``KEY`` and its ``VALUE``) per pair of the page's ``key_values`` and ``SELECTION_ELEMENT``
  (``SELECTED``/``NOT_SELECTED``) per mark of its ``selection_marks``, or of its PDF ``form_fields`` where it has
  no pairs of its own (``outputs.textract_forms``).

Geometry is normalised to the page as submitted (0-1 of its width and height): a ``BoundingBox`` and a 4-point
``Polygon`` in the same corner order as the result's polygons. ``Confidence`` is the score on Textract's 0-100
scale. Ids are UUIDs derived from the job id, so the same result gives the same document.

>>> from ocr_platform.core.results import EngineInfo, build_result
>>> line = {"text": "Total 4", "polygon": [[10, 10], [90, 10], [90, 30], [10, 30]], "score": 0.97}
>>> doc = textract_document(build_result("j", "pp-ocrv5", EngineInfo(name="PP-OCRv5", models=[], version="3"),
...                         [{"page": 1, "width": 200, "height": 100, "scale": 1.0, "lines": [line]}]))
>>> [(b["BlockType"], b.get("Text")) for b in doc["Blocks"]]
[('PAGE', None), ('LINE', 'Total 4'), ('WORD', 'Total'), ('WORD', '4')]
>>> doc["Blocks"][1]["Geometry"]["BoundingBox"], doc["Blocks"][1]["Confidence"]
({'Width': 0.4, 'Height': 0.2, 'Left': 0.05, 'Top': 0.1}, 97.0)
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from html.parser import HTMLParser
from typing import Any

from ocr_platform.core.results import Block, Line, OcrResult, Page
from ocr_platform.core.words import Word, word_spans
from ocr_platform.outputs.page_layout import Box, Region, box_of, line_words, regions, text_lines
from ocr_platform.outputs.textract_forms import form_blocks, page_forms, word_key

#: The engines' layout labels as Textract's layout block types (any other label is ``LAYOUT_TEXT``).
LAYOUT_LABELS = {
    "title": "LAYOUT_TITLE", "doc_title": "LAYOUT_TITLE",
    "paragraph_title": "LAYOUT_SECTION_HEADER", "section_header": "LAYOUT_SECTION_HEADER",
    "table": "LAYOUT_TABLE",
    "figure": "LAYOUT_FIGURE", "image": "LAYOUT_FIGURE", "chart": "LAYOUT_FIGURE", "seal": "LAYOUT_FIGURE",
    "header_image": "LAYOUT_FIGURE", "footer_image": "LAYOUT_FIGURE",
    "header": "LAYOUT_HEADER", "footer": "LAYOUT_FOOTER", "number": "LAYOUT_PAGE_NUMBER", "page_number": "LAYOUT_PAGE_NUMBER",
}
#: Layout labels of a table's caption (PP-DocLayout-L's ``table_title``, the CDLA layout model's ``table_caption``)
#: and of a note under it (``footnote``, ``vision_footnote``), which become a table's ``TABLE_TITLE`` and ``TABLE_FOOTER``.
TABLE_TITLE_LABELS = frozenset({"table_title", "table_caption"})
#: Captions of a figure or a table alike (PP-DocLayout_plus-L, PP-StructureV3's default layout model, labels both
#: ``figure_title``): a table's title where a table lies nearer than any picture.
SHARED_TITLE_LABELS = frozenset({"figure_title"})
_PICTURES = frozenset({"image", "figure", "chart"})
TABLE_FOOTER_LABELS = frozenset({"footnote", "vision_footnote", "table_footnote"})
#: How far from a table, in heights of the caption or note itself, a caption or note may lie and still be the table's.
CAPTION_REACH_HEIGHTS = 3.0
#: The routes that read text alone, as Textract's DetectDocumentText does.
TEXT_ROUTES = frozenset({"pp-ocrv5", "pp-ocrv6"})


def textract_document(result: OcrResult) -> dict[str, Any]:
    """The GetDocumentAnalysis-shaped response of ``result`` (see the module docstring)."""
    writer = _Writer(result["job_id"])
    for page in result["pages"]:
        writer.page(page)
    return {
        "DocumentMetadata": {"Pages": result["page_count"]},
        "JobStatus": "SUCCEEDED",
        model_version_key(result): "1.0",
        "Blocks": writer.blocks,
    }


def model_version_key(result: OcrResult) -> str:
    """The response's model-version key: the API the route stands for. The text-only routes answer as
    DetectDocumentText (``DetectDocumentTextModelVersion``); a route that finds layout or tables, or a result
    with form fields or forms, as AnalyzeDocument (``AnalyzeDocumentModelVersion``)."""
    analysed = result["model"] not in TEXT_ROUTES or any(page.get("blocks") or any(page_forms(page)) for page in result["pages"])
    return "AnalyzeDocumentModelVersion" if analysed else "DetectDocumentTextModelVersion"


class _Writer:
    def __init__(self, job_id: str) -> None:
        self.blocks: list[dict[str, Any]] = []
        self._namespace = uuid.uuid5(uuid.NAMESPACE_URL, f"ocr-platform/{job_id}")
        self._count = 0

    def _block(self, kind: str, page: Page, geometry: dict[str, Any], **fields: Any) -> dict[str, Any]:
        self._count += 1
        block = {"BlockType": kind, "Id": str(uuid.uuid5(self._namespace, str(self._count))), "Geometry": geometry, "Page": page["page"], **fields}
        self.blocks.append(block)
        return block

    def page(self, page: Page) -> None:
        width, height = float(page["width"]), float(page["height"])
        page_block = self._block("PAGE", page, _geometry(page_corners(page), width, height))
        children: list[str] = []
        line_ids: dict[int, str] = {}
        word_ids: dict[int, str] = {}
        for line in text_lines(page):
            line_id = self._line(page, line, word_ids, width, height)
            if line_id is not None:
                line_ids[id(line)] = line_id
                children.append(line_id)
        if page.get("blocks"):
            found = regions(page)
            tables: dict[int, dict[str, Any]] = {}
            for index, region in enumerate(found):
                lines = [line_ids[id(line)] for line in region.lines if id(line) in line_ids]
                if not lines:  # Textract's layout blocks always hold lines
                    continue
                kind = LAYOUT_LABELS.get(str(region.block.get("label", "text")), "LAYOUT_TEXT") if region.block else "LAYOUT_TEXT"
                scores = [line["score"] for line in region.lines]
                layout = self._block(kind, page, _box_geometry(region.box, width, height),
                                     Confidence=_confidence(sum(scores) / len(scores)), Relationships=[{"Type": "CHILD", "Ids": lines}])
                children.append(layout["Id"])
                if region.block is not None and region.block.get("html"):
                    words = [word for line in region.lines for word in line_words(line)]
                    table = self._table(page, region.block, region.box, words, word_ids, width, height)
                    if table is not None:
                        tables[index] = table
                        children.append(table["Id"])
            for index, (kind, table_index) in table_captions(found, set(tables)).items():
                self._caption(page, kind, found[index], tables[table_index], word_ids, width, height)
        words_by_key = {word_key(word): word_ids[id(word)] for line in text_lines(page) for word in line_words(line) if id(word) in word_ids}
        children += form_blocks(page, lambda kind, polygon, **fields: self._block(kind, page, _geometry(polygon, width, height), **fields), words_by_key)
        if children:
            page_block["Relationships"] = [{"Type": "CHILD", "Ids": children}]

    def _line(self, page: Page, line: Line, word_ids: dict[int, str], width: float, height: float) -> str | None:
        """A ``LINE`` and its ``WORD``s; its text is its words' joined by single spaces, as in Textract's responses."""
        words = [word for word in line_words(line) if word["text"].strip()]
        if not words:
            return None
        line_block = self._block("LINE", page, _geometry(line["polygon"], width, height), Confidence=_confidence(line["score"]),
                                 Text=" ".join(word["text"].strip() for word in words))
        ids = []
        for word in words:
            word_block = self._block("WORD", page, _geometry(word["polygon"], width, height),
                                     Confidence=_confidence(word["score"]), Text=word["text"].strip(), TextType="PRINTED")
            word_ids[id(word)] = word_block["Id"]
            ids.append(word_block["Id"])
        line_block["Relationships"] = [{"Type": "CHILD", "Ids": ids}]
        return str(line_block["Id"])

    def _caption(self, page: Page, kind: str, region: Region, table: dict[str, Any], word_ids: dict[int, str], width: float, height: float) -> None:
        """A ``TABLE_TITLE`` or ``TABLE_FOOTER`` of ``region``'s words, related to ``table`` as Textract relates them."""
        words = [word for line in region.lines for word in line_words(line) if id(word) in word_ids]
        if not words:
            return
        scores = [word["score"] for word in words]
        caption = self._block(kind, page, _box_geometry(region.box, width, height), Confidence=_confidence(sum(scores) / len(scores)),
                              Relationships=[{"Type": "CHILD", "Ids": [word_ids[id(word)] for word in words]}])
        table["Relationships"].append({"Type": kind, "Ids": [caption["Id"]]})

    def _table(self, page: Page, block: Block, box: Box, words: list[Word], word_ids: dict[int, str], width: float, height: float) -> dict[str, Any] | None:
        grid = table_grid(block.get("html", ""))
        if not grid:
            return None
        assigned = _assign_words(grid, words)
        rows = max(cell.row + cell.row_span - 1 for cell in grid)
        columns = max(cell.column + cell.column_span - 1 for cell in grid)
        row_bands = _bands([(cell.row, [box_of(w["polygon"])[1::2] for w in assigned[i]]) for i, cell in enumerate(grid) if cell.row_span == 1],
                           rows, (box[1], box[3]))
        column_bands = _bands([(cell.column, [box_of(w["polygon"])[0::2] for w in assigned[i]]) for i, cell in enumerate(grid) if cell.column_span == 1],
                              columns, (box[0], box[2]))
        scores = [w["score"] for w in words] or [1.0]
        confidence = _confidence(sum(scores) / len(scores))
        slots: dict[tuple[int, int], str] = {}
        cell_ids, merged_ids = [], []
        for index, cell in enumerate(grid):
            for row in range(cell.row, cell.row + cell.row_span):
                for column in range(cell.column, cell.column + cell.column_span):
                    (top, bottom), (left, right) = row_bands[row - 1], column_bands[column - 1]
                    fields: dict[str, Any] = {"Confidence": _mean_confidence(assigned[index], confidence),
                                              "RowIndex": row, "ColumnIndex": column, "RowSpan": 1, "ColumnSpan": 1}
                    origin = (row, column) == (cell.row, cell.column)
                    if origin and assigned[index]:
                        fields["Relationships"] = [{"Type": "CHILD", "Ids": [word_ids[id(w)] for w in assigned[index]]}]
                    if origin and cell.header:
                        fields["EntityTypes"] = ["COLUMN_HEADER"]
                    slot = self._block("CELL", page, _box_geometry((left, top, right, bottom), width, height), **fields)
                    slots[(row, column)] = slot["Id"]
                    cell_ids.append(slot["Id"])
            if cell.row_span > 1 or cell.column_span > 1:
                (top, _), (left, _) = row_bands[cell.row - 1], column_bands[cell.column - 1]
                (_, bottom), (_, right) = row_bands[cell.row + cell.row_span - 2], column_bands[cell.column + cell.column_span - 2]
                covered = [slots[(r, c)] for r in range(cell.row, cell.row + cell.row_span) for c in range(cell.column, cell.column + cell.column_span)]
                merged = self._block("MERGED_CELL", page, _box_geometry((left, top, right, bottom), width, height), Confidence=confidence,
                                     RowIndex=cell.row, ColumnIndex=cell.column, RowSpan=cell.row_span, ColumnSpan=cell.column_span,
                                     Relationships=[{"Type": "CHILD", "Ids": covered}])
                merged_ids.append(merged["Id"])
        relationships = [{"Type": "CHILD", "Ids": cell_ids}] + ([{"Type": "MERGED_CELL", "Ids": merged_ids}] if merged_ids else [])
        return self._block("TABLE", page, _box_geometry(box, width, height), Confidence=confidence,
                           EntityTypes=["STRUCTURED_TABLE"], Relationships=relationships)


def table_captions(found: Sequence[Region], tables: set[int]) -> dict[int, tuple[str, int]]:
    """Which regions are a table's caption (``TABLE_TITLE``, above or below it) or note (``TABLE_FOOTER``, below
    it): each to the table (of the region indexes ``tables``) it overlaps across and lies nearest to, within
    ``CAPTION_REACH_HEIGHTS`` of its own height; a caption of figures and tables alike only where no picture is nearer.

    >>> from ocr_platform.outputs.page_layout import Region
    >>> table = Region({"label": "table", "bbox": [0, 50, 100, 150]}, (0, 50, 100, 150))
    >>> title = Region({"label": "figure_title", "bbox": [0, 30, 80, 45]}, (0, 30, 80, 45))
    >>> note = Region({"label": "footnote", "bbox": [0, 900, 80, 915]}, (0, 900, 80, 915))
    >>> table_captions([title, table, note], {1})
    {0: ('TABLE_TITLE', 1)}
    """
    pictures = {index for index, region in enumerate(found) if _label(region) in _PICTURES}
    captions: dict[int, tuple[str, int]] = {}
    for index, region in enumerate(found):
        label = _label(region)
        kind = "TABLE_FOOTER" if label in TABLE_FOOTER_LABELS else "TABLE_TITLE" if label in TABLE_TITLE_LABELS | SHARED_TITLE_LABELS else None
        if kind is None:
            continue
        nearest = _nearest(region.box, [(i, found[i].box) for i in tables], footer=kind == "TABLE_FOOTER")
        if nearest is None:
            continue
        if label in SHARED_TITLE_LABELS:
            picture = _nearest(region.box, [(i, found[i].box) for i in pictures], footer=False)
            if picture is not None and picture[0] <= nearest[0]:
                continue
        captions[index] = (kind, nearest[1])
    return captions


def _label(region: Region) -> str:
    return str(region.block.get("label", "")) if region.block else ""


def _nearest(box: Box, candidates: Sequence[tuple[int, Box]], *, footer: bool) -> tuple[float, int] | None:
    """The gap to, and index of, the candidate ``box`` overlaps across and lies nearest to (above or below it; only
    above it for a ``footer``), within ``CAPTION_REACH_HEIGHTS`` of the box's height."""
    x0, y0, x1, y1 = box
    reach = CAPTION_REACH_HEIGHTS * max(y1 - y0, 1.0)
    gaps = []
    for index, (cx0, cy0, cx1, cy1) in candidates:
        below, above = y0 - cy1, cy0 - y1
        gap = below if footer else min(abs(below), abs(above))
        if min(x1, cx1) > max(x0, cx0) and -reach < gap <= reach and not (footer and y1 <= cy1):
            gaps.append((abs(gap), index))
    return min(gaps) if gaps else None


class TableCell:
    """One cell of an HTML table: its text, grid position (from 1) and spans."""

    def __init__(self, row: int, column: int, row_span: int, column_span: int, text: str, header: bool) -> None:
        self.row, self.column, self.row_span, self.column_span, self.text, self.header = row, column, row_span, column_span, text, header

    def __repr__(self) -> str:
        return f"TableCell({self.row}, {self.column}, {self.row_span}, {self.column_span}, {self.text!r})"


class _Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[list[Any]]] = []
        self._cell: list[Any] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            if not self.rows:
                self.rows.append([])
            spans = {name: value for name, value in attrs}
            self._cell = ["", _span(spans.get("rowspan")), _span(spans.get("colspan")), tag == "th"]
            self.rows[-1].append(self._cell)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th"):
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell[0] += data


def _span(value: str | None) -> int:
    try:
        return max(1, int(value or 1))
    except ValueError:
        return 1


def table_grid(html: str) -> list[TableCell]:
    """The cells of an HTML table in row-major order, placed on its grid as browsers place them (spans included).

    >>> table_grid("<table><tr><td rowspan=2>a</td><td>b</td></tr><tr><td>c</td></tr></table>")
    [TableCell(1, 1, 2, 1, 'a'), TableCell(1, 2, 1, 1, 'b'), TableCell(2, 2, 1, 1, 'c')]
    """
    parser = _Cells()
    parser.feed(html)
    parser.close()
    taken: set[tuple[int, int]] = set()
    cells: list[TableCell] = []
    for row_index, row in enumerate(parser.rows, start=1):
        column = 1
        for text, row_span, column_span, header in row:
            while (row_index, column) in taken:
                column += 1
            cells.append(TableCell(row_index, column, row_span, column_span, " ".join(text.split()), header))
            taken.update((r, c) for r in range(row_index, row_index + row_span) for c in range(column, column + column_span))
            column += column_span
    return cells


def _assign_words(grid: list[TableCell], words: list[Word]) -> list[list[Word]]:
    """Each cell's words: the table's words whose text its text holds, taken in reading order."""
    unused = list(range(len(words)))
    assigned: list[list[Word]] = []
    for cell in grid:
        mine: list[Word] = []
        for a, b in word_spans(cell.text):
            token = cell.text[a:b]
            match = next((i for i in unused if words[i]["text"] == token), None)
            if match is not None:
                unused.remove(match)
                mine.append(words[match])
        assigned.append(mine)
    return assigned


def _bands(spans: Sequence[tuple[int, list[Sequence[float]]]], count: int, extent: tuple[float, float]) -> list[tuple[float, float]]:
    """Where each of ``count`` rows (or columns) lies: from its cells' words (``(index, [(low, high), ...])``),
    split halfway between neighbours and stretched to the table's ``extent``; evenly when some has no words."""
    found: dict[int, list[float]] = {}
    for index, ranges in spans:
        for low, high in ranges:
            current = found.setdefault(index, [low, high])
            current[0], current[1] = min(current[0], low), max(current[1], high)
    start, end = extent
    if len(found) < count:
        step = (end - start) / count
        return [(start + i * step, start + (i + 1) * step) for i in range(count)]
    edges = [start] + [(found[i][1] + found[i + 1][0]) / 2 for i in range(1, count)] + [end]
    return [(edges[i], edges[i + 1]) for i in range(count)]


def page_corners(page: Page) -> list[list[float]]:
    """The ``PAGE`` block's polygon, starting at the corner that is top left once the page is upright: Textract's
    responses for pages turned 90 or 180 degrees turn their page polygon with the page (``rotation``: degrees
    clockwise the page was turned to read it).

    >>> page_corners({"page": 1, "width": 2, "height": 1, "scale": 1.0, "lines": [], "rotation": 90})
    [[0.0, 1.0], [0.0, 0.0], [2.0, 0.0], [2.0, 1.0]]
    """
    width, height = float(page["width"]), float(page["height"])
    corners = [[0.0, 0.0], [width, 0.0], [width, height], [0.0, height]]
    quarter = (int(page.get("rotation") or 0) // 90) % 4
    return corners[-quarter:] + corners[:-quarter] if quarter else corners


def _mean_confidence(words: Sequence[Word], otherwise: float) -> float:
    return _confidence(sum(word["score"] for word in words) / len(words)) if words else otherwise


def _confidence(score: float) -> float:
    return round(max(0.0, min(1.0, float(score))) * 100, 2)


def _geometry(polygon: Sequence[Sequence[float]], width: float, height: float) -> dict[str, Any]:
    points = [{"X": _unit(float(x) / width), "Y": _unit(float(y) / height)} for x, y in polygon]
    return {"BoundingBox": _bounding(box_of(polygon), width, height), "Polygon": points}


def _box_geometry(box: Box, width: float, height: float) -> dict[str, Any]:
    x0, y0, x1, y1 = box
    return _geometry([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], width, height)


def _bounding(box: Box, width: float, height: float) -> dict[str, float]:
    x0, y0, x1, y1 = (_unit(box[0] / width), _unit(box[1] / height), _unit(box[2] / width), _unit(box[3] / height))
    return {"Width": round(x1 - x0, 6), "Height": round(y1 - y0, 6), "Left": x0, "Top": y0}


def _unit(value: float) -> float:
    return round(max(0.0, min(1.0, value)), 6)
