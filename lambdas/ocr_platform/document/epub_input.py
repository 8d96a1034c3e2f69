"""EPUB books told from their bytes and read chapter by chapter.

An EPUB is a ZIP whose first part, ``mimetype``, says ``application/epub+zip`` (checked like every ZIP,
``ocr_platform.document.zip_safety``). ebooklib (the well-kept EPUB reader) reads its package: the spine, the
reading order of its XHTML documents. Each spine document is a page (``unit`` ``chapter``), read as an HTML file
is (``ocr_platform.document.html_input``: headings, lists, tables, a picture's alt text; scripts dropped, nothing
fetched), each counted against the HTML work budget first (``ocr_platform.document.work_budget.check_html``).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.document.native_pages import NativePage, ReadNotes
from ocr_platform.document.work_budget import WorkBudget, check_html

EPUB_MIMETYPE = "application/epub+zip"


@functools.lru_cache(maxsize=4)
def _spine(path: str, size: int, modified_ns: int) -> tuple[bytes, ...]:
    """The spine's documents, in reading order (cached per file: intake asks for the count, then reads)."""
    import ebooklib
    from ebooklib import epub

    try:
        book: Any = epub.read_epub(path, options={"ignore_ncx": True})
    except Exception as err:  # ebooklib raises its own, KeyError and lxml's errors on a damaged package
        raise JobError(ErrorCode.CORRUPT_DOCUMENT, f"The EPUB file cannot be read: {type(err).__name__}: {err}") from None
    documents = []
    for idref, _linear in book.spine:
        item = book.get_item_with_id(idref)
        if item is not None and item.get_type() == ebooklib.ITEM_DOCUMENT:
            documents.append(item.get_content())
    return tuple(documents)


def spine(path: Path) -> tuple[bytes, ...]:
    stat = path.stat()
    return _spine(str(path), stat.st_size, stat.st_mtime_ns)


def read_epub(path: Path, pages: list[int], notes: ReadNotes, budget: WorkBudget) -> list[NativePage]:
    """The selected chapters (1-based, spine order) of the EPUB at ``path``."""
    from ocr_platform.document.html_input import read_html

    result = []
    for number, document in enumerate(spine(path), start=1):
        if number in pages:
            check_html(document, budget)
            page = read_html(document)
            result.append(NativePage(number, "chapter", page.markdown, None, page.pictures))
    return result
