"""The files read as page images (PDF and raster images), told by their first bytes (magic numbers), and the names
of every type the platform reads, as a refusal and the command line's help give them (``SUPPORTED_TYPES``; a module
this light, so that ``ocr-platform --help`` need not import intake).

>>> page_kind(b"%PDF-1.7"), page_kind(b"\\x89PNG\\r\\n\\x1a\\n...."), page_kind(b"Dear Sir")
('pdf', 'png', None)
"""

from __future__ import annotations

#: The types a refusal names.
SUPPORTED_TYPES = ("a PDF, an image (PNG, JPEG, TIFF, BMP, WEBP), an Office file (DOCX, PPTX, XLSX, DOC, XLS, PPT), an OpenDocument "
                   "file (ODT, ODS, ODP), HTML, an email (EML, MSG), RTF, EPUB, CSV, Markdown or plain text")


def page_kind(head: bytes) -> str | None:
    """``pdf``, ``png``, ``jpeg``, ``tiff``, ``bmp`` or ``webp`` for a file whose first bytes are ``head``; else ``None``."""
    if b"%PDF-" in head[:1024]:
        return "pdf"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if head.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if head[:4] in (b"II*\x00", b"MM\x00*"):
        return "tiff"
    if head.startswith(b"BM"):
        return "bmp"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "webp"
    return None
