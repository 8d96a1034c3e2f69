"""The work budget of one Office or HTML file: what reading it may cost, counted from what the file declares.

A small file can declare a huge task: one merged range ``A1:XFD1048576`` (17 billion cells), a table cell spanning
a million columns, 10,000 sheets that all point at one part, an HTML file of a million tags, a picture whose
header claims 80 million pixels. The readers (PaddleOCR's converter over openpyxl, python-docx and python-pptx;
Beautiful Soup and markdownify) would expand each of these in memory, cell by cell or node by node. So before any
of them runs, the file is walked cheaply (the ZIP's directory, then its XML parts streamed by
``lxml.etree.iterparse`` with entities and network off, elements dropped as they are passed) and its work counted
against ``WorkBudget`` (``ocr_platform.document.office_budget`` for Office files, ``check_html`` here). The first
count past its limit ends the walk with ``document_too_large``, one line naming the limit, the figure and the
setting that raises it. The defaults and their arithmetic are in ``ocr_platform.core.default_values`` and
``ocr_platform.core.limits`` (``max_office_cells``).

>>> try:
...     check_html(b"<html><body>" + b"<div>" * 300 + b"</body></html>", WorkBudget())
... except JobError as err:
...     print(err.code, err.message)  # doctest: +NORMALIZE_WHITESPACE
document_too_large The HTML file nests its elements 257 deep; the limit is 256 deep (max_html_depth,
OCR_MAX_HTML_DEPTH). Split the file, or raise the limit.
"""

from __future__ import annotations

import base64
import io
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import IO, Any

from ocr_platform.core import defaults
from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.settings import WORK_BUDGET_ENV

#: Each limit's environment variable, read by ``WorkBudget.from_env`` (the processor's ``PaddleSettings``): a user with a
#: legitimately large file raises it there, or through ``PlatformConfig.work_budget`` on a deployed stage.
BUDGET_ENV = WORK_BUDGET_ENV
_DATA_URI = re.compile(r"^\s*data:image/[\w.+-]+;base64,", re.IGNORECASE)
#: Enough of a data: URI's payload to hold any picture header Pillow reads the size from.
_HEADER_CHARS = 64 * 1024


@dataclass(frozen=True)
class WorkBudget:
    """What reading one Office or HTML file may cost.

    Attributes:
        max_units: sheets (XLSX) or slides (PPTX), hidden ones included.
        max_cells: cells of all sheets and tables of one file, a merged range or span counted as the cells it covers
            (a sheet as its used range: rows x columns up to its last cell).
        max_table_cells: the same, for one sheet or one table.
        max_paragraphs: a DOCX body's paragraphs (table cells' included).
        max_part_bytes: what any one part of an Office file may unpack to, whatever its name.
        max_xml_bytes: the XML an Office file's readers parse, a part counted each time it is used.
        max_html_nodes / max_html_depth: an HTML file's elements, and how deep they nest.
        max_picture_pixels: the pixels all pictures of one file declare (each is decoded in full before it is shrunk).
    """

    max_units: int = defaults.MAX_OFFICE_UNITS
    max_cells: int = defaults.max_office_cells()
    max_table_cells: int = defaults.max_office_cells()
    max_paragraphs: int = defaults.max_docx_paragraphs()
    max_part_bytes: int = defaults.MAX_PART_BYTES
    max_xml_bytes: int = defaults.MAX_PARSED_XML_BYTES
    max_html_nodes: int = defaults.MAX_HTML_NODES
    max_html_depth: int = defaults.MAX_HTML_DEPTH
    max_picture_pixels: int = defaults.MAX_PICTURE_PIXELS

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> WorkBudget:
        """The defaults, each replaced by its ``BUDGET_ENV`` variable where that is set.

        >>> WorkBudget.from_env({"OCR_MAX_OFFICE_UNITS": "5000"}).max_units
        5000
        """
        env = os.environ if environ is None else environ
        return replace(cls(), **{f.name: int(env[BUDGET_ENV[f.name]]) for f in fields(cls) if BUDGET_ENV[f.name] in env})


def over_budget(what: str, figure: int, limit_name: str, limit: int, unit: str = "") -> JobError:
    """The one-line ``document_too_large`` of a file whose ``what`` came to ``figure`` past ``limit``.

    >>> print(over_budget("The XLSX file's sheet 'S' spans", 20, "max_table_cells", 10, " cells").message)
    The XLSX file's sheet 'S' spans 20 cells; the limit is 10 cells (max_table_cells, OCR_MAX_TABLE_CELLS). Split the file, or raise the limit.
    """
    return JobError(ErrorCode.DOCUMENT_TOO_LARGE, f"{what} {figure:,}{unit}; the limit is {limit:,}{unit} ({limit_name}, "
                    f"{BUDGET_ENV[limit_name]}). Split the file, or raise the limit.")


class PictureCount:
    """The pixels a file's pictures declare, added up against ``max_picture_pixels`` as they are found."""

    def __init__(self, budget: WorkBudget, label: str) -> None:
        self.budget = budget
        self.label = label
        self.pixels = 0

    def add(self, header: bytes | IO[bytes]) -> None:
        """Add the picture whose first bytes (or stream) are ``header``; one Pillow cannot size counts nothing."""
        from PIL import Image

        try:
            source = io.BytesIO(header) if isinstance(header, bytes) else header
            with Image.open(source) as image:  # reads the header only
                self.pixels += image.width * image.height
        except Exception:  # noqa: BLE001 - a vector drawing or a damaged picture is not decoded later either
            return
        if self.pixels > self.budget.max_picture_pixels:
            raise over_budget(f"The {self.label} file's pictures declare", self.pixels, "max_picture_pixels",
                              self.budget.max_picture_pixels, " pixels")


def check_html(data: bytes, budget: WorkBudget) -> None:
    """Count the HTML file's elements, their depth and its embedded pictures' pixels; ``document_too_large`` past
    the budget. lxml's HTML parser runs as a stream here (``iterparse``), each element dropped once passed."""
    from lxml import etree

    nodes = depth = 0
    pictures = PictureCount(budget, "HTML")
    parser = etree.iterparse(io.BytesIO(data), events=("start", "end"), html=True, no_network=True,
                             resolve_entities=False, huge_tree=False, recover=True)
    try:
        for event, element in parser:
            if event == "end":
                depth -= 1
                drop_passed(element)
                continue
            nodes += 1
            depth += 1
            if nodes > budget.max_html_nodes:
                raise over_budget("The HTML file has more elements than", budget.max_html_nodes, "max_html_nodes",
                                  budget.max_html_nodes)
            if depth > budget.max_html_depth:
                raise over_budget("The HTML file nests its elements", depth, "max_html_depth", budget.max_html_depth, " deep")
            if element.tag == "img":
                _add_data_picture(str(element.get("src", "")), pictures)
    except etree.XMLSyntaxError:
        return  # nothing parsed: Beautiful Soup reads what it can, and says so


def _add_data_picture(src: str, pictures: PictureCount) -> None:
    found = _DATA_URI.match(src)
    if not found:
        return
    head = re.sub(r"\s+", "", src[found.end(): found.end() + _HEADER_CHARS])
    try:
        pictures.add(base64.b64decode(head[: len(head) - len(head) % 4]))
    except ValueError:
        return


def drop_passed(element: Any) -> None:
    """Free an element once passed, and the siblings before it, so the walk holds one path of the tree."""
    element.clear()
    parent = element.getparent()
    while parent is not None and element.getprevious() is not None:
        del parent[0]
