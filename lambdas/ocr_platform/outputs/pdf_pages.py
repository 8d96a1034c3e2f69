"""A PDF's pages numbered as pdfium numbers them, for the outputs that copy source pages with pypdf.

The page loop reads pages through pdfium, and a result's ``page`` numbers are pdfium's: every leaf of the
page tree, in order. pypdf agrees on every sound file, but leaves out a leaf whose ``/Type`` is not ``/Page``
(a damaged page object, which pdfium cannot load and the page loop fails alone, ``core.page_failures``), so
every page after it would shift by one. ``numbered_pages`` walks the tree as pdfium does in that case only.

>>> import io, pypdf
>>> writer = pypdf.PdfWriter()
>>> _ = [writer.add_blank_page(612, 792) for _ in range(3)]
>>> buffer = io.BytesIO(); _ = writer.write(buffer)
>>> len(numbered_pages(pypdf.PdfReader(buffer), 3))
3
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: Page attributes a page inherits from its ``/Pages`` ancestors (PDF 32000-1, table 30).
_INHERITED = ("/Resources", "/MediaBox", "/CropBox", "/Rotate")


def pdfium_page_count(path: Path) -> int:
    """How many pages pdfium finds in the PDF at ``path`` (what the page loop numbered)."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        return len(pdf)
    finally:
        pdf.close()


def numbered_pages(reader: Any, page_count: int) -> Sequence[Any]:
    """``reader``'s pages (pypdf ``PageObject``s) such that index ``n - 1`` is pdfium's page ``n``, given pdfium's
    ``page_count``: ``reader.pages`` when the two agree, else every leaf of the page tree."""
    pages = reader.pages
    if len(pages) == page_count:
        return pages
    from pypdf import PageObject

    found: list[Any] = []

    def walk(node: Any, inherited: dict[str, Any]) -> None:
        obj = node.get_object()
        if obj.get("/Type") == "/Pages" or ("/Kids" in obj and obj.get("/Type") != "/Page"):
            here = {**inherited, **{key: obj[key] for key in _INHERITED if key in obj}}
            for kid in obj["/Kids"]:
                walk(kid, here)
            return
        page = PageObject(reader, getattr(node, "indirect_reference", None) or node)
        page.update({**inherited, **obj})
        found.append(page)

    walk(reader.trailer["/Root"].raw_get("/Pages"), {})
    return found
