"""A PDF page's drawing instructions counted before pdfium parses them.

A page's content streams (and the form XObjects it draws) may be compressed a thousand to one: a 26 KB PDF whose
one page holds a million small rectangles took pdfium 398 MB and 1.6 s to render, so a few hundred kilobytes
would take the processor past its memory. pdfium parses a page's content in full when the page is loaded, so the
content is counted first, with pypdf (already in the image for searchable PDFs): each stream's declared filter is
undone in bounded steps (``zlib.decompressobj`` with ``max_length``), nothing held, and the count stops at the
limit. A page past ``max_page_content_bytes`` fails alone (``page_too_large``, a page of the job's
``pages_failed``), before pdfium loads it. Filters other than Flate are counted by their encoded size.

Pictures need no such check: pdfium draws an image at the size it takes on the page (a 40,000 x 40,000 picture on
a page rendered in 0.8 s, 207 MB), and page sizes are bounded by the page pixel budget (``intake.fit_scale``).
"""

from __future__ import annotations

import logging
import zlib
from pathlib import Path
from typing import IO, Any

from ocr_platform.core.errors import ErrorCode, JobError

_CHUNK = 1024 * 1024
_MAX_FORM_DEPTH = 8


class PdfContentBudget:
    """Counts the content of a PDF's pages against ``max_bytes``; opened once per document, used per page."""

    def __init__(self, source: Path | IO[bytes], max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._reader: Any = None
        try:
            from pypdf import PdfReader

            logging.getLogger("pypdf").setLevel(logging.ERROR)
            self._reader = PdfReader(source if not isinstance(source, Path) else str(source))
        except Exception:  # noqa: BLE001 - a PDF pypdf cannot read is left to pdfium, which decides
            self._reader = None

    def check(self, number: int) -> None:
        """``page_too_large`` when page ``number`` (1-based) holds more content than the budget."""
        if self._reader is None:
            return
        try:
            page = self._reader.pages[number - 1]
            self._forms(page.get("/Resources"), self._count(page.get("/Contents"), 0), 0, set())
        except JobError as err:
            raise JobError(err.code, f"Page {number}: {err.message}") from None
        except Exception:  # noqa: BLE001 - pypdf trips on a damaged page pdfium may still render
            return

    def _count(self, contents: Any, total: int) -> int:
        if contents is None:
            return total
        contents = contents.get_object()
        streams = list(contents) if isinstance(contents, list) else [contents]
        for stream in streams:
            total = self._stream(stream.get_object(), total)
        return total

    def _forms(self, resources: Any, total: int, depth: int, seen: set[int]) -> int:
        """Add the form XObjects of ``resources`` (and theirs, a few levels deep), each counted once."""
        if resources is None or depth > _MAX_FORM_DEPTH:
            return total
        xobjects = resources.get_object().get("/XObject")
        if xobjects is None:
            return total
        for reference in xobjects.get_object().values():
            key = getattr(reference, "idnum", None) or id(reference)
            form = reference.get_object()
            if key in seen or form.get("/Subtype") != "/Form":
                continue
            seen.add(key)
            total = self._stream(form, total)
            total = self._forms(form.get("/Resources"), total, depth + 1, seen)
        return total

    def _stream(self, stream: Any, total: int) -> int:
        raw = getattr(stream, "_data", b"") or b""
        filters = stream.get("/Filter")
        names = [str(f) for f in (filters if isinstance(filters, list) else [filters] if filters is not None else [])]
        if names and names[0] in ("/FlateDecode", "/Fl"):
            return self._inflate(raw, total)
        return self._add(total, len(raw))

    def _inflate(self, raw: bytes, total: int) -> int:
        inflater = zlib.decompressobj()
        data = raw
        try:
            while data:
                total = self._add(total, len(inflater.decompress(data, _CHUNK)))
                data = inflater.unconsumed_tail
            return self._add(total, len(inflater.flush()))
        except zlib.error:
            return total  # damaged: pdfium reads what it can

    def _add(self, total: int, size: int) -> int:
        total += size
        if total > self.max_bytes:
            raise JobError(ErrorCode.PAGE_TOO_LARGE, f"The page's drawing instructions unpack to more than {self.max_bytes:,} bytes "
                           "(max_page_content_bytes, OCR_MAX_PAGE_CONTENT_BYTES); it is not read.")
        return total
