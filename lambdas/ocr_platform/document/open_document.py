"""OpenDocument files (``.odt``, ``.ods``, ``.odp``, and their templates) told from their bytes and read from their
own content.

An OpenDocument package is a ZIP whose first part, ``mimetype``, names its type
(``application/vnd.oasis.opendocument.text`` …). Its content is one documented XML part, ``content.xml``,
parsed here by lxml (entities and network off) after the ZIP checks every Office file gets
(``ocr_platform.document.zip_safety``):

- **text**: headings (``text:h`` at their outline level), paragraphs, list items, tables (a table inside a cell
  read into it), frames' text boxes and a picture's title and description (marked ``Alt text``), notes
  (footnotes, marked ``Note``) and annotations (comments, marked ``Comment``), in document order; one page;
- **spreadsheet**: each sheet a page (``sheet``, its name), its cells as HTML table rows, each cell's text as
  the cell shows it (the ``text:p`` the application wrote, so numbers, dates and currencies as displayed);
  repeated rows and columns are expanded up to the last one with text;
- **presentation**: each ``draw:page`` a page (``slide``), its title frame (``presentation:class="title"``) as a
  heading, its other frames' text and tables in order, its speaker notes after them (``Notes:``).

Every character is escaped where it becomes Markdown (``ocr_platform.core.markup``). A cell, paragraph or sheet
past the file's work budget is ``document_too_large`` (``ocr_platform.document.work_budget``).
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.markup import escape_text
from ocr_platform.document.native_pages import NativePage, ReadNotes
from ocr_platform.document.work_budget import WorkBudget, over_budget

#: The ``mimetype`` of each OpenDocument kind (templates read as their documents).
MIME_KINDS = {
    "application/vnd.oasis.opendocument.text": "odt", "application/vnd.oasis.opendocument.text-template": "odt",
    "application/vnd.oasis.opendocument.spreadsheet": "ods", "application/vnd.oasis.opendocument.spreadsheet-template": "ods",
    "application/vnd.oasis.opendocument.presentation": "odp", "application/vnd.oasis.opendocument.presentation-template": "odp",
}
_NS = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0", "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0", "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
    "presentation": "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0", "svg": "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0",
}
_UNITS = {"odt": "document", "ods": "sheet", "odp": "slide"}


def _q(name: str) -> str:
    prefix, local = name.split(":")
    return f"{{{_NS[prefix]}}}{local}"


def odf_kind(archive: zipfile.ZipFile, names: set[str]) -> str | None:
    """``odt``, ``ods`` or ``odp`` for an OpenDocument package; ``None`` for any other ZIP."""
    if "mimetype" not in names:
        return None
    return MIME_KINDS.get(archive.read("mimetype")[:100].decode("ascii", errors="ignore").strip())


def _content(path: Path) -> Any:
    from lxml import etree

    try:
        with zipfile.ZipFile(path) as archive:
            data = archive.read("content.xml")
        return etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False))
    except (KeyError, zipfile.BadZipFile, OSError, EOFError, etree.XMLSyntaxError) as err:
        raise JobError(ErrorCode.CORRUPT_DOCUMENT, f"The OpenDocument file's content cannot be read: {err}") from None


def _units(root: Any, kind: str) -> list[Any]:
    body = root.find(f"{_q('office:body')}")
    if body is None:
        return []
    if kind == "ods":
        return list(body.iter(_q("table:table")))
    if kind == "odp":
        return list(body.iter(_q("draw:page")))
    return [body]


def unit_count(path: Path, kind: str) -> int:
    return max(1, len(_units(_content(path), kind))) if kind != "odt" else 1


def read_open_document(path: Path, kind: str, pages: list[int], notes: ReadNotes, budget: WorkBudget) -> list[NativePage]:
    """The selected ``pages`` of the OpenDocument file at ``path``."""
    units = _units(_content(path), kind) or [None]
    counter = _Cells(budget)
    result = []
    for number, unit in enumerate(units, start=1):
        if number not in pages or unit is None:
            continue
        if kind == "ods":
            name = unit.get(_q("table:name"), f"Sheet{number}")
            table = _table(unit, counter)
            markdown = f"## {escape_text(name)}" + (f"\n\n{table}" if table else "")
            result.append(NativePage(number, "sheet", markdown, name))
        else:
            result.append(NativePage(number, _UNITS[kind], "\n\n".join(_blocks(unit, counter)).strip()))  # type: ignore[arg-type]
    return result


class _Cells:
    def __init__(self, budget: WorkBudget) -> None:
        self.budget = budget
        self.count = 0

    def add(self, count: int) -> None:
        self.count += count
        if self.count > self.budget.max_cells:
            raise over_budget("The OpenDocument file has more cells than", self.budget.max_cells, "max_cells", self.budget.max_cells)


def _text(element: Any) -> str:
    """An element's text as shown: spaces (``text:s``), tabs and line breaks kept; notes and annotations left out
    (they are read apart)."""
    parts: list[str] = []

    def walk(node: Any) -> None:
        if node.text:
            parts.append(node.text)
        for child in node:
            tag = child.tag
            if tag == _q("text:s"):
                parts.append(" " * int(child.get(_q("text:c"), "1") or 1))
            elif tag == _q("text:tab"):
                parts.append("\t")
            elif tag == _q("text:line-break"):
                parts.append("\n")
            elif tag not in (_q("text:note"), _q("office:annotation")):
                walk(child)
            if child.tail:
                parts.append(child.tail)

    walk(element)
    return "".join(parts)


def _blocks(container: Any, counter: _Cells) -> list[str]:
    """The Markdown blocks of a text body, a slide or a frame, in document order."""
    blocks: list[str] = []
    notes_blocks: list[str] = []
    for child in container:
        tag = child.tag
        if tag == _q("text:h"):
            level = min(6, max(1, int(child.get(_q("text:outline-level"), "1") or 1)))
            text = " ".join(_text(child).split())
            if text:
                blocks.append(f"{'#' * level} {escape_text(text)}")
        elif tag == _q("text:p"):
            text = _text(child).strip()
            if text:
                blocks.append(escape_text(text))
        elif tag == _q("text:list"):
            items = [" ".join(_text(p).split()) for p in child.iter(_q("text:p"), _q("text:h"))]
            if any(items):
                blocks.append("\n".join(f"- {escape_text(item)}" for item in items if item))
        elif tag == _q("table:table"):
            table = _table(child, counter)
            if table:
                blocks.append(table)
        elif tag == _q("draw:frame") or tag == _q("draw:custom-shape") or tag == _q("draw:text-box") or tag == _q("draw:g"):
            blocks.extend(_frame(child, counter))
        elif tag == _q("presentation:notes"):
            notes_blocks = [f"Notes: {escape_text(' '.join(_text(p).split()))}" for p in child.iter(_q("text:p")) if _text(p).strip()]
        elif tag in (_q("text:section"), _q("office:text"), _q("text:list-item")):
            blocks.extend(_blocks(child, counter))
        for note in child.iter(_q("text:note"), _q("office:annotation")) if tag != _q("presentation:notes") else ():
            body = " ".join(" ".join(_text(p).split()) for p in note.iter(_q("text:p")))
            if body:
                blocks.append(f"{'Note' if note.tag == _q('text:note') else 'Comment'}: {escape_text(body)}")
    return blocks + notes_blocks


def _frame(frame: Any, counter: _Cells) -> list[str]:
    """A frame's text: a slide title as a heading, a text box's blocks, a picture's title and description."""
    if frame.get(_q("presentation:class")) == "title":
        text = " ".join(_text(frame).split())
        return [f"# {escape_text(text)}"] if text else []
    blocks: list[str] = []
    for child in frame:
        if child.tag in (_q("draw:text-box"), _q("draw:g"), _q("draw:frame"), _q("draw:custom-shape")):
            blocks.extend(_frame(child, counter) if child.tag != _q("draw:text-box") else _blocks(child, counter))
        elif child.tag in (_q("text:p"), _q("text:list"), _q("table:table"), _q("text:h")):
            blocks.extend(_blocks([child], counter))
        elif child.tag in (_q("svg:title"), _q("svg:desc")) and (child.text or "").strip():
            blocks.append(f"Alt text: {escape_text(' '.join(child.text.split()))}")
    return blocks


def _table(table: Any, counter: _Cells) -> str:
    """A table's rows of cells, each cell's text as shown; repeated rows and columns expanded up to the last text."""
    rows: list[list[str]] = []
    for row in table.iter(_q("table:table-row")):
        if row.getparent() is not None and _owning_table(row) is not table:
            continue
        cells: list[str] = []
        for cell in row:
            if cell.tag not in (_q("table:table-cell"), _q("table:covered-table-cell")):
                continue
            text = "<br>".join(escape_text(" ".join(_text(p).split())) for p in cell if p.tag in (_q("text:p"), _q("text:h")))
            nested = [_table(t, counter) for t in cell if t.tag == _q("table:table")]
            text = " ".join(part for part in [text, *nested] if part)
            repeat = int(cell.get(_q("table:number-columns-repeated"), "1") or 1)
            cells.extend([text] * (repeat if text or repeat <= 1024 else 1))
        while cells and not cells[-1]:
            cells.pop()
        repeat = int(row.get(_q("table:number-rows-repeated"), "1") or 1)
        for _ in range(repeat if cells else 1):
            counter.add(len(cells))
            rows.append(cells)
            if not cells:
                break
    while rows and not rows[-1]:
        rows.pop()
    if not rows:
        return ""
    width = max(len(row) for row in rows)
    return "<table>" + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row + [""] * (width - len(row))) + "</tr>" for row in rows) + "</table>"


def _owning_table(row: Any) -> Any:
    parent = row.getparent()
    while parent is not None and parent.tag != _q("table:table"):
        parent = parent.getparent()
    return parent
