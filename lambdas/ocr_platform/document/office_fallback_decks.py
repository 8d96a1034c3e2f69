"""The second readers of a PPTX or XLSX that PaddleOCR's converter could not read, though the package is well formed.

The same libraries the converter stands on, used plainly: python-pptx reads each slide's shapes (groups opened)
in reading order, top to bottom then left to right: a title placeholder as a heading, other text as paragraphs
(a body placeholder's paragraphs and indented ones as list items), tables as HTML, pictures as
``<img src="images/…">`` placeholders beside their bytes; openpyxl reads each sheet's cell values (as last
calculated) as one HTML table under the sheet's name, its anchored pictures after it. One unit per slide or
sheet, as the converter's. A picture whose bytes cannot be had (a linked one) is counted as not placed.

Both read the copy whose text is escaped (``ocr_platform.document.office_text``), so text goes into the Markdown
as they read it.

>>> _table_html([["Item", None], ["Tea &amp; cake", 4.5]])
'<table><tr><td>Item</td><td></td></tr><tr><td>Tea &amp; cake</td><td>4.5</td></tr></table>'
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ocr_platform.document.office_fallback import FallbackRead


def pptx_markdown(path: Path) -> FallbackRead:
    """The PPTX at ``path`` read by python-pptx: one unit of Markdown per slide."""
    from pptx import Presentation

    read = FallbackRead([])
    for number, slide in enumerate(Presentation(str(path)).slides, start=1):
        shapes = sorted(_shapes(slide.shapes), key=lambda s: (s.top or 0, s.left or 0))
        blocks = [block for shape in shapes if (block := _shape_block(shape, number, read))]
        read.units.append((None, "\n\n".join(blocks)))
    return read


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
    if shape.shape_type == MSO_SHAPE_TYPE.PICTURE:
        try:
            image = shape.image
        except (AttributeError, KeyError, ValueError):  # a linked picture: no bytes in the file
            read.unplaced_pictures += 1
            return ""
        ref = f"images/slide{slide}_{shape.shape_id}.{image.ext}"
        read.pictures[ref] = image.blob
        return f'<img src="{ref}">'
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
        rows = [list(row) for row in sheet.iter_rows(values_only=True)] if hasattr(sheet, "iter_rows") else []
        while rows and all(value is None for value in rows[-1]):
            rows.pop()
        width = max((i + 1 for row in rows for i, value in enumerate(row) if value is not None), default=0)
        parts = [f"## {name}", _table_html([row[:width] for row in rows])] if width else [f"## {name}"]
        for index, image in enumerate(getattr(sheet, "_images", []), start=1):
            try:
                data = image._data()
            except (AttributeError, OSError, ValueError):
                read.unplaced_pictures += 1
                continue
            ref = f"images/{name}_{index}.{image.format or 'png'}".replace(" ", "_")
            read.pictures[ref] = data
            parts.append(f'<img src="{ref}">')
        read.units.append((name, "\n\n".join(parts) if width or len(parts) > 1 else ""))
    return read


def _table_html(rows: Sequence[Sequence[Any]]) -> str:
    cells = ("".join(f"<td>{' '.join(str(v).split()) if v is not None else ''}</td>" for v in row)
             for row in rows)
    return "<table>" + "".join(f"<tr>{row}</tr>" for row in cells) + "</table>"
