"""An Office file's work counted against its ``WorkBudget`` before any reader opens it.

From the ZIP's directory: each part's unpacked size (whatever its name), the XML parts' sizes (told by the
package's own content types, not by their names), the pictures' declared pixels (their headers). Then the
structure, streamed part by part with ``lxml.etree.iterparse``, following the package's relationships from its
main part:

- XLSX: the workbook's ``<sheet>`` entries (hidden ones too); each sheet's used range (rows x columns up to its
  last ``<c>``, ``<row>`` or ``<mergeCell>``) and the cells its ``<mergeCell ref>`` ranges cover, which the
  converter expands one by one;
- PPTX: the presentation's ``<sldId>`` entries; each slide's tables, rows x columns with every ``gridSpan`` and
  ``rowSpan`` reaching as far as it says;
- DOCX: the body's paragraphs (the converter's cost grows with them, not with their text), and its tables (nested
  ones too), rows x the widest row, a ``gridSpan`` counted as the columns it spans (python-docx lays each row out
  on its grid).

A part used by several sheets or slides is counted each time it is used (the readers parse it each time); it is
walked once, its counts added again for each later use.
``check_office`` raises ``document_too_large`` (``work_budget.over_budget``) at the first count past its limit.
"""

from __future__ import annotations

import functools
import posixpath
import re
import zipfile
from typing import IO, Any, Literal

from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.document.work_budget import PictureCount, WorkBudget, drop_passed, over_budget

_CELL_REF = re.compile(r"^\$?([A-Za-z]{1,7})\$?(\d{1,9})$")
_IMAGE_TYPE = re.compile(r"^image/", re.IGNORECASE)
_UNITS = {"xlsx": ("sheet", "sheets"), "pptx": ("slide", "slides")}


class _Count:
    """The running totals of one file, each checked against the budget as it grows."""

    def __init__(self, archive: zipfile.ZipFile, kind: str, budget: WorkBudget) -> None:
        self.archive = archive
        self.kind = kind
        self.label = kind.upper()
        self.budget = budget
        self.infos = {info.filename: info for info in archive.infolist()}
        self.xml_bytes = 0
        self.cells = 0
        self.paragraphs = 0
        self.parts: dict[str, list[int]] = {}  # a part read once: the cells of each of its tables, for its later uses

    def parse(self, name: str, tags: tuple[str, ...] | None = None, events: tuple[Literal["start", "end"], ...] = ("start", "end")) -> Any:
        """Stream the part ``name``: the ``events`` of its ``tags`` (local names; default: all)."""
        from lxml import etree

        info = self.infos.get(name)
        if info is None:
            return iter(())
        wanted = [f"{{*}}{tag}" for tag in tags] if tags else None
        return etree.iterparse(self.archive.open(info), events=events, tag=wanted, resolve_entities=False,
                               no_network=True, huge_tree=False, load_dtd=False)

    def add_xml(self, size: int, name: str) -> None:
        self.xml_bytes += size
        if self.xml_bytes > self.budget.max_xml_bytes:
            raise over_budget(f"The {self.label} file's XML parts (up to {name!r}, a part counted each time it is used) "
                              "unpack to", self.xml_bytes, "max_xml_bytes", self.budget.max_xml_bytes, " bytes")

    def reuse(self, part: str, where: str) -> bool:
        """Count a part used again (its XML and its tables' cells as they were counted); whether it was."""
        if part not in self.parts:
            self.parts[part] = []
            return False
        self.add_xml(self.infos[part].file_size if part in self.infos else 0, part)
        for cells in self.parts[part]:
            self.table(where, cells)
        return True

    def paragraph(self) -> None:
        self.paragraphs += 1
        if self.paragraphs > self.budget.max_paragraphs:
            raise over_budget(f"The {self.label} file has more paragraphs than", self.budget.max_paragraphs, "max_paragraphs",
                              self.budget.max_paragraphs)

    def table(self, where: str, cells: int, kind: str = "spans", part: str | None = None) -> None:
        """Count one sheet's or table's ``cells``: past the per-table limit, or the file's, it is refused."""
        if part is not None:
            self.parts.setdefault(part, []).append(cells)
        if cells > self.budget.max_table_cells:
            raise over_budget(f"The {self.label} file's {where} {kind}", cells, "max_table_cells", self.budget.max_table_cells, " cells")
        self.cells += cells
        if self.cells > self.budget.max_cells:
            raise over_budget(f"The {self.label} file's sheets and tables (up to its {where}) hold", self.cells, "max_cells",
                              self.budget.max_cells, " cells")


def check_office(archive: zipfile.ZipFile, kind: str, main: str, budget: WorkBudget) -> None:
    """Count the work of the Office file in ``archive`` (``kind`` ``docx``/``pptx``/``xlsx``, main part ``main``)."""
    from lxml import etree

    try:
        _check(archive, kind, main, budget)
    except etree.XMLSyntaxError:
        return  # a damaged part: the readers refuse it (corrupt_document) as they would have
    except (zipfile.BadZipFile, OSError, EOFError) as err:  # a bad CRC, a truncated part
        raise JobError(ErrorCode.CORRUPT_DOCUMENT, f"A part of the Office file is damaged: {err}") from None


def _check(archive: zipfile.ZipFile, kind: str, main: str, budget: WorkBudget) -> None:
    count = _Count(archive, kind, budget)
    types = _content_types(archive)
    pictures = PictureCount(budget, count.label)
    for name, info in count.infos.items():
        if info.file_size > budget.max_part_bytes:
            raise over_budget(f"The {count.label} file's part {name!r} unpacks to", info.file_size, "max_part_bytes",
                              budget.max_part_bytes, " bytes")
        content_type = _type_of(types, name)
        if _IMAGE_TYPE.match(content_type):
            with archive.open(info) as stream:
                pictures.add(stream)
        elif "xml" in content_type.lower() or name.lower().endswith((".xml", ".rels")) or not content_type:
            count.add_xml(info.file_size, name)
    {"xlsx": _xlsx, "pptx": _pptx, "docx": _docx}[kind](count, main)


def _xlsx(count: _Count, main: str) -> None:
    sheets = [(element.get("name", "?"), _rid(element)) for element in _elements(count.parse(main), "sheet")]
    _check_units(count, len(sheets))
    targets = _targets(count, main)
    for name, rid in sheets:
        part = targets.get(rid or "")
        if part is not None and not count.reuse(part, f"sheet {name!r}"):
            _sheet(count, f"sheet {name!r}", part)


def _sheet(count: _Count, where: str, part: str) -> None:
    """Count one sheet: start events only (a cell's place is in its attributes), each passed row dropped."""
    row = column = last_row = last_column = merged = 0
    passed: Any = None
    for _, element in count.parse(part, ("row", "c", "mergeCell"), events=("start",)):
        tag = element.tag.rpartition("}")[2]
        if tag == "c":
            found = _CELL_REF.match(element.get("r", ""))
            column = _column(found.group(1)) if found else column + 1
            if found:
                row = int(found.group(2))
        else:
            if passed is not None:
                drop_passed(passed)
            passed = element
            if tag == "row":
                number = element.get("r", "")
                row, column = (int(number) if number.isdigit() else row + 1), 0
                continue
            first, _, last = element.get("ref", "").partition(":")
            top, bottom = _CELL_REF.match(first), _CELL_REF.match(last or first)
            if top is None or bottom is None:
                continue
            rows = abs(int(bottom.group(2)) - int(top.group(2))) + 1
            columns = abs(_column(bottom.group(1)) - _column(top.group(1))) + 1
            merged += rows * columns
            if merged > count.budget.max_table_cells:
                count.table(where, merged, "has merged ranges covering")
            row, column = max(int(bottom.group(2)), int(top.group(2))), max(_column(bottom.group(1)), _column(top.group(1)))
        if row > last_row or column > last_column:
            last_row, last_column = max(last_row, row), max(last_column, column)
            if last_row * last_column > count.budget.max_table_cells:
                count.table(where, last_row * last_column, "has a used range of")
    count.table(where, last_row * last_column + merged, "has a used range and merged ranges of", part)


def _pptx(count: _Count, main: str) -> None:
    slides = [_rid(element) for element in _elements(count.parse(main), "sldId")]
    _check_units(count, len(slides))
    targets = _targets(count, main)
    for number, rid in enumerate(slides, start=1):
        part = targets.get(rid or "")
        if part is not None and not count.reuse(part, f"slide {number}"):
            _tables(count, f"slide {number}", part)


def _docx(count: _Count, main: str) -> None:
    _tables(count, "body", main, paragraphs=True)


def _tables(count: _Count, where: str, part: str, *, paragraphs: bool = False) -> None:
    """Count each table of the part (DOCX ``w:tbl`` or DrawingML ``a:tbl``): rows x its widest reach."""
    stack: list[dict[str, int]] = []
    number = 0
    for event, element in count.parse(part, ("tbl", "tr", "tc", "gridCol", "gridSpan", "gridBefore", "gridAfter", "p")):
        tag = element.tag.rpartition("}")[2]
        if event == "end":
            if tag == "tbl" and stack:
                table = stack.pop()
                number += 1
                count.table(f"{where} table {number}", max(table["rows"], table["down"]) * max(table["width"], table["grid"]), part=part)
            elif tag == "tr" and stack:
                stack[-1]["width"] = max(stack[-1]["width"], stack[-1]["row_width"])
            if tag in ("tbl", "tr", "p") and not stack:
                drop_passed(element)
            continue
        if tag == "p" and paragraphs:
            count.paragraph()
        if tag == "tbl":
            stack.append({"rows": 0, "down": 0, "width": 0, "grid": 0, "row_width": 0, "column": 0})
            continue
        if not stack:
            continue
        table = stack[-1]
        if tag == "gridCol":
            table["grid"] += 1
        elif tag == "tr":
            table["rows"] += 1
            table["row_width"] = table["column"] = 0
        elif tag == "tc":
            across, down = _span(element.get("gridSpan")), _span(element.get("rowSpan"))
            table["row_width"] = max(table["row_width"], table["column"] + across, table["row_width"] + 1)
            table["column"] += across
            table["down"] = max(table["down"], table["rows"] + down - 1)
        elif tag in ("gridSpan", "gridBefore", "gridAfter"):  # DOCX: an element of w:tcPr / w:trPr
            extra = _span(element.get(_w("val"))) - (1 if tag == "gridSpan" else 0)
            table["row_width"] += extra
            table["column"] += extra
        else:
            continue
        reach = max(table["rows"], table["down"], 1) * max(table["row_width"], table["width"], table["grid"])
        if reach > count.budget.max_table_cells:
            count.table(f"{where} table {number + 1}", reach)


def _check_units(count: _Count, units: int) -> None:
    if units > count.budget.max_units:
        one, many = _UNITS[count.kind]
        raise over_budget(f"The {count.label} file declares {many} (hidden ones included, each read on its own):", units,
                          "max_units", count.budget.max_units, f" {many if units != 1 else one}")


def _elements(parser: Any, name: str) -> list[Any]:
    """The attributes of every ``name`` element of a small part (a workbook's sheets, a deck's slide list)."""
    found = []
    for event, element in parser:
        if event == "start" and element.tag.rpartition("}")[2] == name:
            found.append(dict(element.attrib))
    return found


def _rid(attributes: dict[str, str]) -> str | None:
    return next((value for key, value in attributes.items() if key.endswith("}id")), None)


def _targets(count: _Count, source: str) -> dict[str, str]:
    """``{relationship id: part name}`` of the internal relationships of the part ``source``."""
    folder, name = posixpath.split(source)
    rels = posixpath.join(folder, "_rels", f"{name}.rels")
    targets = {}
    for attributes in _elements(count.parse(rels), "Relationship"):
        if attributes.get("TargetMode") == "External":
            continue
        target = attributes.get("Target", "")
        part = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(folder, target))
        targets[attributes.get("Id", "")] = part
    return targets


def _content_types(archive: zipfile.ZipFile) -> tuple[dict[str, str], dict[str, str]]:
    """``(overrides by part name, defaults by extension)`` of the package's ``[Content_Types].xml``."""
    from lxml import etree

    overrides: dict[str, str] = {}
    extensions: dict[str, str] = {}
    try:
        stream: IO[bytes] = archive.open("[Content_Types].xml")
    except KeyError:
        return overrides, extensions
    try:
        for _, element in etree.iterparse(stream, resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False):
            tag = str(element.tag).rpartition("}")[2]
            if tag == "Override":
                overrides[element.get("PartName", "").lstrip("/").lower()] = element.get("ContentType", "")
            elif tag == "Default":
                extensions[element.get("Extension", "").lower()] = element.get("ContentType", "")
    except etree.XMLSyntaxError as err:
        raise JobError(ErrorCode.CORRUPT_DOCUMENT, f"The Office file's [Content_Types].xml is damaged: {err}") from None
    return overrides, extensions


def _type_of(types: tuple[dict[str, str], dict[str, str]], name: str) -> str:
    overrides, extensions = types
    return overrides.get(name.lower()) or extensions.get(posixpath.splitext(name)[1].lstrip(".").lower(), "")


@functools.lru_cache(maxsize=4096)
def _column(letters: str) -> int:
    number = 0
    for letter in letters.upper():
        number = number * 26 + ord(letter) - 64
    return number


def _span(value: str | None) -> int:
    return int(value) if value and value.isdigit() else 1


def _w(name: str) -> str:
    return f"{{http://schemas.openxmlformats.org/wordprocessingml/2006/main}}{name}"
