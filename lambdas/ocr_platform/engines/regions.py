"""Page geometry for the layout substitute (``engines.local_structure``): layout regions and the OCR
lines in them, put in reading order and written as Markdown.

Reading order (``reading_order``): headers first, footers last; the other blocks by recursive XY-cut
with columns first: where a vertical gap runs through every block, the blocks split into columns, read
left to right; otherwise where a horizontal gap runs through every block, they split into bands, read
top to bottom; each part is split again the same way. So a two-column page with a full-width title and
a full-width table between the columns reads: title, left column top to bottom, right column, table, ...
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ocr_platform.core.markup import escape_text
from ocr_platform.core.results import Block, Line
from ocr_platform.core.tables import continuation_note

BBox = tuple[float, float, float, float]  # x0, y0, x1, y1 in page pixels

HEADER_LABELS = frozenset({"header"})
FOOTER_LABELS = frozenset({"footer"})
#: Page furniture that a page's Markdown leaves out, as PP-StructureV3's does (the ``markdown_ignore_labels`` of
#: PaddleX's PP-StructureV3 config); the blocks keep their text.
MARKDOWN_IGNORED_LABELS = frozenset({"header", "header_image", "footer", "footer_image", "number", "footnote", "aside_text"})
#: Labels of pictures: their block links the picture's crop (``image``) and keeps the text read inside it.
FIGURE_LABELS = frozenset({"figure", "image", "chart"})
#: The share of a picture region that its text lines cover from which it is read as text, not a picture
#: (a table or a form the layout model took for a figure).
MOSTLY_TEXT = 0.3


@dataclass
class Region:
    """A layout region on a page and the OCR lines that fell into it."""

    label: str
    bbox: BBox
    score: float = 1.0
    lines: list[Line] = field(default_factory=list)
    html: str | None = None


def line_bbox(line: Line) -> BBox:
    xs = [point[0] for point in line["polygon"]]
    ys = [point[1] for point in line["polygon"]]
    return min(xs), min(ys), max(xs), max(ys)


def _area(box: BBox) -> float:
    return max(0.0, box[2] - box[0]) * max(0.0, box[3] - box[1])


def overlap_area(a: Sequence[float], b: Sequence[float]) -> float:
    """The area two ``(x0, y0, x1, y1)`` boxes share (0 when apart)."""
    return _area((max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])))


def drop_nested(regions: list[Region], *, inside: float = 0.8) -> list[Region]:
    """The regions less those with at least ``inside`` of their area within a larger region.

    >>> [r.label for r in drop_nested([Region("table", (0, 0, 100, 100)), Region("text", (10, 10, 50, 20)), Region("title", (0, 120, 90, 140))])]
    ['table', 'title']
    """
    kept = []
    for region in regions:
        area = _area(region.bbox)
        nested = any(
            other is not region and _area(other.bbox) > area and overlap_area(region.bbox, other.bbox) >= inside * area
            for other in regions
        )
        if area > 0 and not nested:
            kept.append(region)
    return kept


def assign_lines(regions: list[Region], lines: list[Line], *, min_overlap: float = 0.5) -> list[Line]:
    """Put each line into the region that covers most of it (at least ``min_overlap`` of its box; on a
    tie the smaller region); return the lines no region covers."""
    leftover: list[Line] = []
    for line in lines:
        box = line_bbox(line)
        area = _area(box) or 1.0
        best: Region | None = None
        best_key = (min_overlap, 0.0)
        for region in regions:
            key = (overlap_area(box, region.bbox) / area, -_area(region.bbox))
            if key >= best_key:
                best, best_key = region, key
        if best is None:
            leftover.append(line)
        else:
            best.lines.append(line)
    return leftover


def relabel_text_figures(regions: list[Region], *, mostly_text: float = MOSTLY_TEXT) -> None:
    """Label ``text`` each picture region whose lines cover at least ``mostly_text`` of its area.

    >>> def line(x0, y0, x1, y1):
    ...     return {"text": "words", "polygon": [[x0, y0], [x1, y0], [x1, y1], [x0, y1]], "score": 1.0}
    >>> form = Region("figure", (0, 0, 100, 100), lines=[line(0, 0, 100, 20), line(0, 30, 100, 50)])
    >>> regions = [form, Region("figure", (0, 200, 100, 300), lines=[line(0, 290, 40, 300)])]
    >>> relabel_text_figures(regions)
    >>> [r.label for r in regions]
    ['text', 'figure']
    """
    for region in regions:
        area = _area(region.bbox)
        if region.label in FIGURE_LABELS and area > 0 and sum(_area(line_bbox(line)) for line in region.lines) >= mostly_text * area:
            region.label = "text"


def text_regions(lines: list[Line]) -> list[Region]:
    """``text`` regions for lines no layout region covered: a line joins the region above it when they
    overlap horizontally and the gap between them is under one line height.

    >>> def line(text, x0, y0, x1, y1):
    ...     return {"text": text, "polygon": [[x0, y0], [x1, y0], [x1, y1], [x0, y1]], "score": 1.0}
    >>> [r.bbox for r in text_regions([line("a", 0, 0, 100, 20), line("b", 0, 25, 80, 45), line("c", 0, 200, 50, 220)])]
    [(0, 0, 100, 45), (0, 200, 50, 220)]
    """
    regions: list[Region] = []
    for line in sorted(lines, key=lambda item: line_bbox(item)[1]):
        x0, y0, x1, y1 = line_bbox(line)
        for region in regions:
            rx0, ry0, rx1, ry1 = region.bbox
            if min(x1, rx1) > max(x0, rx0) and y0 - ry1 < (y1 - y0):
                region.bbox = (min(x0, rx0), ry0, max(x1, rx1), max(y1, ry1))
                region.lines.append(line)
                break
        else:
            regions.append(Region("text", (x0, y0, x1, y1), lines=[line]))
    return regions


def lines_text(lines: list[Line]) -> str:
    """The lines' text in reading order: rows top to bottom (a line whose middle lies within the row's
    first line is on that row), each row left to right, joined by spaces; rows joined by newlines.

    >>> def line(text, x0, y0, x1, y1):
    ...     return {"text": text, "polygon": [[x0, y0], [x1, y0], [x1, y1], [x0, y1]], "score": 1.0}
    >>> lines_text([line("world", 60, 2, 100, 22), line("next", 0, 30, 40, 50), line("hello", 0, 0, 50, 20)])
    'hello world\\nnext'
    """
    rows: list[list[Line]] = []
    for line in sorted(lines, key=lambda item: line_bbox(item)[1]):
        _, y0, _, y1 = line_bbox(line)
        middle = (y0 + y1) / 2
        if rows:
            _, ry0, _, ry1 = line_bbox(rows[-1][0])
            if ry0 <= middle <= ry1:
                rows[-1].append(line)
                continue
        rows.append([line])
    return "\n".join(" ".join(item["text"] for item in sorted(row, key=lambda item: line_bbox(item)[0])) for row in rows)


def reading_order(boxes: Sequence[BBox], *, slack: float = 4.0) -> list[int]:
    """Indices of ``boxes`` in reading order by recursive XY-cut, columns first (module docstring).

    Boxes that overlap by at most ``slack`` pixels still count as separated.

    >>> title, left_1, left_2, right, table = (0, 0, 600, 50), (0, 100, 280, 200), (0, 210, 280, 400), (320, 100, 600, 400), (0, 450, 600, 600)
    >>> reading_order([table, right, left_2, title, left_1])
    [3, 4, 2, 1, 0]
    """

    def split(indices: list[int], axis: int) -> list[list[int]]:
        ordered = sorted(indices, key=lambda i: boxes[i][axis])
        groups = [[ordered[0]]]
        reach = boxes[ordered[0]][axis + 2]
        for i in ordered[1:]:
            if boxes[i][axis] >= reach - slack:
                groups.append([i])
            else:
                groups[-1].append(i)
            reach = max(reach, boxes[i][axis + 2])
        return groups

    def cut(indices: list[int]) -> list[int]:
        if len(indices) <= 1:
            return indices
        for axis in (0, 1):  # 0: columns (x), left to right; 1: bands (y), top to bottom
            groups = split(indices, axis)
            if len(groups) > 1:
                return [i for group in groups for i in cut(group)]
        return sorted(indices, key=lambda i: (boxes[i][1], boxes[i][0]))

    return cut(list(range(len(boxes))))


def ordered_regions(regions: list[Region]) -> list[Region]:
    """Headers, then the body in reading order, then footers."""
    parts = [
        [r for r in regions if r.label in HEADER_LABELS],
        [r for r in regions if r.label not in HEADER_LABELS | FOOTER_LABELS],
        [r for r in regions if r.label in FOOTER_LABELS],
    ]
    return [part[i] for part in parts for i in reading_order([r.bbox for r in part])]


def page_markdown(blocks: list[Block]) -> str:
    """Markdown for blocks in reading order: the first block, when it is a title, as ``#``, later titles
    as ``##``, tables as their HTML, a picture as a link to its crop (its ``image``) followed by the text
    read inside it, other text as paragraphs. Left out, as PP-StructureV3's Markdown leaves them out: page
    furniture (``MARKDOWN_IGNORED_LABELS``: headers, footers, page numbers), whose text only its block keeps,
    and a table's part that continues a table of an earlier page (``continued_from``), which that page's
    Markdown holds whole (``core.tables``; a comment says so here). No other text of the page is left out, and
    all of it is escaped (``core.markup.escape_text``): a line that reads ``<script>`` stays text.

    >>> figure = {"label": "figure", "text": "Q1 Q2", "image": "figures/00001-01.png"}
    >>> page_markdown([{"label": "header", "text": "ACME"}, {"label": "title", "text": "Report"}, figure, {"label": "footer", "text": "3"}])
    '# Report\\n\\n![figure](figures/00001-01.png)\\n\\nQ1 Q2'
    """
    blocks = [block for block in blocks if block.get("label") not in MARKDOWN_IGNORED_LABELS]
    parts = []
    for index, block in enumerate(blocks):
        label, text = block.get("label", "text"), block.get("text", "").strip()
        if "continued_from" in block:
            parts.append(continuation_note(block["continued_from"]["page"]))
            continue
        if label in FIGURE_LABELS and block.get("image"):
            parts.append(f"![{label}]({block['image']})")
        if label == "table" and block.get("html"):
            parts.append(block["html"])
        elif label == "title" and text:
            parts.append(("# " if index == 0 else "## ") + escape_text(" ".join(text.split())))
        elif text:
            parts.append(escape_text(text))
    return "\n\n".join(parts)


def clip_box(box: Sequence[float], width: int, height: int) -> BBox:
    """The first four values of ``box`` as a box inside a ``width`` x ``height`` page.

    >>> clip_box((-3.0, 5.0, 120.0, 60.0, 0.9), 100, 50)
    (0.0, 5.0, 100.0, 50.0)
    """
    x0, y0, x1, y1 = box[:4]
    return max(0.0, x0), max(0.0, y0), min(float(width), x1), min(float(height), y1)


#: ``looks_like_table``: the least share of a page's lines that sit in a row beside another line, the least
#: number of such rows, and the most a line's width may be, as a share of the width all lines span (the
#: median line; prose lines span most of their column).
GRID_SHARE, GRID_ROWS, NARROW_LINES = 0.6, 2, 0.4


def text_rows(lines: list[Line]) -> list[list[BBox]]:
    """The lines' boxes in rows, top to bottom, left to right: a line joins the row whose boxes its vertical
    middle falls within.

    >>> def box(x0, y0, x1, y1):
    ...     return {"text": "w", "polygon": [[x0, y0], [x1, y0], [x1, y1], [x0, y1]], "score": 1.0}
    >>> [len(row) for row in text_rows([box(0, 0, 10, 10), box(50, 1, 60, 11), box(0, 20, 10, 30)])]
    [2, 1]
    """
    rows: list[list[BBox]] = []
    for bbox in sorted(map(line_bbox, lines), key=lambda b: (b[1] + b[3]) / 2):
        middle = (bbox[1] + bbox[3]) / 2
        if rows and min(b[1] for b in rows[-1]) <= middle <= max(b[3] for b in rows[-1]):
            rows[-1].append(bbox)
        else:
            rows.append([bbox])
    return [sorted(row) for row in rows]


def looks_like_table(lines: list[Line]) -> bool:
    """Whether a page's lines alone look like one table (the rule for reading a page the layout model found
    no table on as a table): at least ``GRID_ROWS`` rows hold two or more lines side by side, at least
    ``GRID_SHARE`` of all lines sit in such rows, and the median line is narrow, at most ``NARROW_LINES`` of
    the width all the lines span (cells are short; prose lines, even in two columns, are not).

    >>> def box(x0, y0, x1, y1):
    ...     return {"text": "w", "polygon": [[x0, y0], [x1, y0], [x1, y1], [x0, y1]], "score": 1.0}
    >>> grid = [box(x, y, x + 40, y + 10) for y in (0, 20, 40) for x in (0, 100, 200)]
    >>> prose = [box(0, y, 280, y + 10) for y in (0, 20, 40)]
    >>> two_columns = [box(x, y, x + 130, y + 10) for y in (0, 20, 40) for x in (0, 150)]
    >>> looks_like_table(grid), looks_like_table(prose), looks_like_table(two_columns)
    (True, False, False)
    """
    rows = text_rows(lines)
    wide_rows = [row for row in rows if len(row) >= 2]
    if len(wide_rows) < GRID_ROWS or sum(map(len, wide_rows)) < GRID_SHARE * len(lines):
        return False
    boxes = [b for row in rows for b in row]
    span = max(b[2] for b in boxes) - min(b[0] for b in boxes)
    widths = sorted(b[2] - b[0] for b in boxes)
    return span > 0 and widths[len(widths) // 2] <= NARROW_LINES * span
