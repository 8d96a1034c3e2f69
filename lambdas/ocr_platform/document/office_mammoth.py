"""The last reader of a DOCX: mammoth, which reads the body's XML with few assumptions about the rest of the package.

Some DOCX files that Word, LibreOffice and markitdown open hold little beyond ``word/document.xml``: no styles, no
settings, relationships without the ``r`` namespace (Microsoft Teams' meeting transcripts, ``teams_chat.docx`` in
unstructured's examples). PaddleOCR's converter and docx2python both stop on them (``list index out of range``,
``KeyError: 'r'``). mammoth (a well-kept DOCX-to-HTML converter, the one markitdown uses) reads them: paragraphs,
headings by style, lists, tables (nested ones too), text boxes, footnotes, comments, hyperlinks and pictures with
their alt text. Its HTML is escaped by mammoth itself, so it reads the original file, not the escaped copy
(``ocr_platform.document.office_text``); the HTML becomes Markdown as an HTML file does
(``ocr_platform.document.html_input.read_html``), pictures as placeholders beside their bytes, comments after the
text, each headed ``Comment [n]``.
"""

from __future__ import annotations

from pathlib import Path

from ocr_platform.document.html_input import read_html
from ocr_platform.document.office_fallback import FallbackRead

#: mammoth's style map: a comment reference becomes a superscript mark (the comments then follow the body, each
#: headed ``Comment [n]``), and a ``Title`` paragraph a heading.
_STYLE_MAP = "comment-reference => sup\np[style-name='Title'] => h1:fresh"


def mammoth_markdown(path: Path) -> FallbackRead:
    """The DOCX at ``path`` read by mammoth: one unit of Markdown with its pictures."""
    import mammoth

    with path.open("rb") as handle:
        converted = mammoth.convert_to_html(handle, style_map=_STYLE_MAP)
    page = read_html(f"<html><body>{converted.value}</body></html>".encode())
    return FallbackRead([(None, page.markdown)], dict(page.pictures))
