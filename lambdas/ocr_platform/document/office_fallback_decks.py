"""The first readers of a PPTX and an XLSX: the libraries PaddleOCR's converter stands on, used plainly
(``ocr_platform.document.office_readers`` tries the converter after them).

python-pptx reads each slide's shapes (groups opened) in reading order, the title first, then top to bottom and
left to right: a title placeholder as a heading, other text as paragraphs (a body placeholder's paragraphs and
indented ones as list items), tables as HTML, pictures as ``<img src="images/…">`` placeholders beside their bytes
followed by their alt text (``Alt text: …``), the slide's notes last (``Notes: …``). openpyxl reads each sheet's
cells (formulas as last calculated) as one HTML table under the sheet's name, each cell as it shows
(``ocr_platform.document.cell_format``: ``1,234.50``, ``12.5%``, ``5-Mar-24``), a picture in the cell it is anchored to.
One unit per slide or sheet. A picture whose bytes cannot be had (a linked one) is counted as not placed.
Both read the copy whose text is escaped (``ocr_platform.document.office_text``), so text goes into the Markdown
as they read it; an alt text, an attribute, is escaped here.

>>> _table_html([["Item", None], ["Tea &amp; cake", 4.5]])
'<table><tr><td>Item</td><td></td></tr><tr><td>Tea &amp; cake</td><td>4.5</td></tr></table>'
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ocr_platform.core.markup import escape_text
from ocr_platform.document.cell_format import shown
from ocr_platform.document.office_fallback import FallbackRead

#: The farthest row or column a picture's anchor cell may be for the picture to stand in the sheet's table.
_MAX_ANCHOR = 1000


def pptx_markdown(path: Path) -> FallbackRead:
    """The PPTX at ``path`` read by python-pptx: one unit of Markdown per slide."""
    from pptx import Presentation

    read = FallbackRead([])
    for number, slide in enumerate(Presentation(str(path)).slides, start=1):
        shapes = sorted(_shapes(slide.shapes), key=lambda s: (s.top or 0, s.left or 0))
        titles = [shape for shape in shapes if _is_title(shape)]
        blocks = [block for shape in titles + [s for s in shapes if s not in titles] if (block := _shape_block(shape, number, read))]
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            notes = " ".join(slide.notes_slide.notes_text_frame.text.split())
            if notes:
                blocks.append(f"Notes: {notes}")
        read.units.append((None, "\n\n".join(blocks)))
    return read


def _chart(chart: Any) -> str:
    """A chart as its title and its data: a table of categories by series (the values the chart caches)."""
    parts = []
    if chart.has_title and chart.chart_title.has_text_frame and chart.chart_title.text_frame.text.strip():
        parts.append(" ".join(chart.chart_title.text_frame.text.split()))
    try:
        plot = chart.plots[0]
        categories = [str(c) for c in plot.categories]
        rows: list[list[Any]] = [["", *categories]]
        rows += [[series.name, *[escape_text(shown(v, None)) if v is not None else "" for v in series.values]] for series in plot.series]
    except (IndexError, KeyError, ValueError, AttributeError):
        rows = []
    if len(rows) > 1:
        parts.append(_table_html(rows))
    return "\n\n".join(parts)


def _is_title(shape: Any) -> bool:
    from pptx.enum.shapes import PP_PLACEHOLDER

    return bool(shape.is_placeholder and shape.placeholder_format.type in (PP_PLACEHOLDER.TITLE, PP_PLACEHOLDER.CENTER_TITLE))


def _alt_text(shape: Any) -> str:
    """A shape's alt text (its ``descr``, else its ``title``), escaped here: the escaped copy escapes text, not attributes."""
    properties = shape._element.xpath("./*[1]/p:cNvPr")
    if not properties:
        return ""
    alt = " ".join((properties[0].get("descr") or properties[0].get("title") or "").split())
    return f"Alt text: {escape_text(alt)}" if alt else ""


def _shapes(shapes: Any) -> Iterator[Any]:
    for shape in shapes:
        if hasattr(shape, "shapes"):  # a group
            yield from _shapes(shape.shapes)
        else:
            yield shape


def _shape_block(shape: Any, slide: int, read: FallbackRead) -> str:
    from pptx.enum.shapes import MSO_SHAPE_TYPE, PP_PLACEHOLDER

    if getattr(shape, "has_table", False) and shape.has_table:
        return _table_html([[cell.text for cell in row.cells] for row in shape.table.rows])
    if getattr(shape, "has_chart", False) and shape.has_chart:
        return _chart(shape.chart)
    if shape.shape_type == MSO_SHAPE_TYPE.PICTURE:
        try:
            image = shape.image
        except (AttributeError, KeyError, ValueError):  # a linked picture: no bytes in the file
            read.unplaced_pictures += 1
            return ""
        ref = f"images/slide{slide}_{shape.shape_id}.{image.ext}"
        read.pictures[ref] = image.blob
        alt = _alt_text(shape)
        return f'<img src="{ref}">' + (f"\n\n{alt}" if alt else "")
    if not getattr(shape, "has_text_frame", False) or not shape.has_text_frame:
        return ""
    kind = shape.placeholder_format.type if shape.is_placeholder else None
    paragraphs = [(p.level, " ".join(p.text.split())) for p in shape.text_frame.paragraphs if p.text.strip()]
    if kind in (PP_PLACEHOLDER.TITLE, PP_PLACEHOLDER.CENTER_TITLE):
        return "# " + " ".join(text for _, text in paragraphs) if paragraphs else ""
    bulleted = kind in (PP_PLACEHOLDER.BODY, PP_PLACEHOLDER.OBJECT)
    return "\n".join(f"- {text}" if bulleted or level else text for level, text in paragraphs)


def xlsx_markdown(path: Path) -> FallbackRead:
    """The XLSX at ``path`` read by openpyxl: one unit per sheet, its values as a table under its name."""
    import openpyxl

    read = FallbackRead([])
    book = openpyxl.load_workbook(str(path), data_only=True)
    for name in book.sheetnames:
        sheet = book[name]
        rows = [[_cell_text(cell) for cell in row] for row in sheet.iter_rows()] if hasattr(sheet, "iter_rows") else []
        while rows and all(value is None for value in rows[-1]):
            rows.pop()
        after: list[str] = []
        for index, image in enumerate(getattr(sheet, "_images", []), start=1):
            try:
                data = image._data()
            except (AttributeError, OSError, ValueError):
                read.unplaced_pictures += 1
                continue
            ref = f"images/{name}_{index}.{image.format or 'png'}".replace(" ", "_")
            read.pictures[ref] = data
            if not _in_anchor_cell(rows, image, f'<img src="{ref}">'):
                after.append(f'<img src="{ref}">')
        width = max((i + 1 for row in rows for i, value in enumerate(row) if value is not None), default=0)
        parts = [f"## {name}", _table_html([row[:width] for row in rows])] if width else [f"## {name}"]
        parts += after
        read.units.append((name, "\n\n".join(parts) if width or len(parts) > 1 else ""))
    return read


def _in_anchor_cell(rows: list[list[str | None]], image: Any, placeholder: str) -> bool:
    """Put a picture's placeholder in the cell its top-left corner is anchored to (as the converter does), the
    sheet's rows grown to reach it within ``_MAX_ANCHOR`` cells; ``False`` when it has no such anchor."""
    marker = getattr(getattr(image, "anchor", None), "_from", None)
    if marker is None or marker.row > _MAX_ANCHOR or marker.col > _MAX_ANCHOR:
        return False
    while len(rows) <= marker.row:
        rows.append([])
    row = rows[marker.row]
    row.extend([None] * (marker.col + 1 - len(row)))
    row[marker.col] = " ".join(part for part in (row[marker.col], placeholder) if part)
    return True


def _cell_text(cell: Any) -> str | None:
    """A cell as it shows (``cell_format``): ``None`` when empty."""
    if cell.value is None:
        return None
    text = shown(cell.value, getattr(cell, "number_format", None))
    return text if isinstance(cell.value, str) else escape_text(text)  # a format's literal text is an attribute: not escaped


def _table_html(rows: Sequence[Sequence[Any]]) -> str:
    cells = ("".join(f"<td>{' '.join(str(v).split()) if v is not None else ''}</td>" for v in row)
             for row in rows)
    return "<table>" + "".join(f"<tr>{row}</tr>" for row in cells) + "</table>"
