"""HTML files told from their bytes and read as the text they are: headings, lists, tables, pictures.

An HTML file is text that starts (after a byte-order mark and white space) with one of the tags by which browsers
sniff HTML (``<!DOCTYPE html``, ``<html``, ``<head``, ``<body``, ``<table``, ``<div``, ``<p``, ``<!--``, …) or with
another element an exported fragment starts with (``<section``, ``<aside``, ``<picture``, ``<em``, …), or is UTF-8
text whose first kilobyte holds a ``<br>``, a closing tag (``</p>``) or an escaped angle bracket (``&lt;``): a
fragment that starts with words. Text without any markup is no HTML file (``unsupported_type``).
It is parsed by Beautiful Soup over lxml and written as Markdown by markdownify (a well-kept HTML-to-Markdown
library), tables kept as HTML (only their rows, cells, ``colspan`` and ``rowspan``), the whole file one page
(``unit`` ``document``, ``ocr_platform.document.native_pages``). The page's text is escaped as it is written
(``ocr_platform.core.markup.escape_text``): markup written as text in the page (``&lt;script&gt;``) stays text.

Nothing in the file runs or is fetched: scripts, styles, frames, objects, forms and ``<head>`` are dropped before
conversion; a picture embedded in the file (a ``data:`` URI) is handed back for OCR, while a picture that only
points elsewhere keeps its ``alt`` text and is never downloaded; a link keeps its text and an ``http(s)`` or
``mailto`` target, others are dropped. A file larger than ``IntakeLimits.max_html_bytes`` is refused
(``document_too_large``) before it is parsed.

>>> looks_like_html(b"\\xef\\xbb\\xbf  <!DOCTYPE html><html><body>Hi</body></html>"), looks_like_html(b"%PDF-1.7")
(True, False)
>>> looks_like_html(b"# Notes<br>Exported as a fragment"), looks_like_html(b"Plain text, 1 < 2")
(True, False)
>>> page = read_html(b'<h1>Menu</h1><script>alert(1)</script><table><tr><th>Tea</th><td>4.50</td></tr></table>')
>>> print(page.markdown)
# Menu
<BLANKLINE>
<table><tr><th>Tea</th><td>4.50</td></tr></table>
"""

from __future__ import annotations

import base64
import binascii
import re
import warnings
from typing import Any

from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.markup import escape_text
from ocr_platform.document.native_pages import NativePage

#: The WHATWG MIME Sniffing standard's HTML rule (white space, then one of its tags or a comment, and a space or ">"),
#: with the other block elements an exported HTML fragment starts with, and XHTML's XML declaration before them.
_HTML_START = re.compile(
    rb"^(?:<\?xml[^>]*>\s*)?<(?:!doctype\s+html|html|head|script|iframe|h[1-6]|div|font|table|a|style|title|b|body|br|p|!--"
    rb"|section|article|main|header|footer|nav|aside|details|summary|picture|ul|ol|dl|pre|blockquote|figure|hr|span|img|meta|link"
    rb"|em|strong|i|u|code|small|sup|sub|center|address|tt|kbd)[\s>/]", re.IGNORECASE)
#: A text fragment exported as HTML that starts with words: its first bytes hold a line break, a closing tag or an
#: escaped angle bracket, which a plain text file does not.
_HTML_INSIDE = re.compile(rb"<br\s*/?>|</(?:p|div|a|span|b|i|em|strong|li|ul|ol|h[1-6]|code|pre|table|td|tr)>|&(?:lt|gt|amp|quot|nbsp);",
                          re.IGNORECASE)
_DROPPED = ("script", "style", "noscript", "template", "iframe", "frame", "frameset", "object", "embed", "applet", "link",
            "meta", "head", "svg", "canvas", "form", "input", "button", "select", "textarea", "audio", "video", "base")
_DATA_URI = re.compile(r"^data:image/(png|jpeg|jpg|gif|webp|bmp|tiff);base64,(.*)$", re.IGNORECASE | re.DOTALL)
_SAFE_LINK = re.compile(r"^(?:https?:|mailto:|#|/|[\w./-]+$)", re.IGNORECASE)
_TOKEN = "OCRPICTURE{:04d}X"
_TOKEN_PATTERN = re.compile(r"OCRPICTURE(\d{4})X")


def looks_like_html(head: bytes, *, fragments: bool = True) -> bool:
    """Whether the first bytes of a file are HTML markup (after a byte-order mark and white space); with
    ``fragments`` False, only a file that starts with markup (not a fragment that starts with words)."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        head = head[2:].decode("utf-16-le" if head[:2] == b"\xff\xfe" else "utf-16-be", errors="ignore").encode()
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    if b"\x00" in head:
        return False
    if _HTML_START.match(head.lstrip()):
        return True
    return fragments and bool(_HTML_INSIDE.search(head)) and _is_text(head)


def _is_text(head: bytes) -> bool:
    """Whether the bytes are UTF-8 text (the last character may be cut) without control characters but white space."""
    for cut in range(4):
        try:
            text = head[: len(head) - cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
        return not any(ord(c) < 32 and c not in "\t\n\r\f" for c in text)
    return False


def read_html(data: bytes) -> NativePage:
    """The HTML file's content as one page of Markdown with its embedded pictures; ``JobError`` if it cannot be read."""
    from bs4 import BeautifulSoup, Comment, XMLParsedAsHTMLWarning

    try:
        with warnings.catch_warnings():  # XHTML (an EPUB's chapters, exported pages) is read as HTML on purpose
            warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
            soup = BeautifulSoup(data, "lxml")
        for tag in soup.find_all(_DROPPED):
            tag.decompose()
        for comment in soup.find_all(string=lambda text: isinstance(text, Comment)):
            comment.extract()
        pictures = _take_pictures(soup)
        for link in soup.find_all("a"):
            if not _SAFE_LINK.match(str(link.get("href", "")).strip()):
                del link["href"]
        markdown = _converter_class()(heading_style="ATX", bullets="-", escape_underscores=False, escape_asterisks=False).convert_soup(soup)
    except RecursionError:
        raise JobError(ErrorCode.CORRUPT_DOCUMENT, "The HTML file is nested too deeply to be read.") from None
    refs = {f"{index:04d}": ref for index, ref in enumerate(pictures, start=1)}
    markdown = _TOKEN_PATTERN.sub(lambda m: f'<img src="{refs[m.group(1)]}">' if m.group(1) in refs else "", markdown)
    markdown = re.sub(r"\n{3,}", "\n\n", markdown).strip()
    return NativePage(1, "document", markdown, None, pictures)


def _take_pictures(soup: Any) -> dict[str, bytes]:
    """Replace each ``<img>`` by a token (a picture embedded as a ``data:`` URI) or its ``alt`` text (any other)."""
    pictures: dict[str, bytes] = {}
    for image in soup.find_all("img"):
        embedded = _DATA_URI.match(str(image.get("src", "")).strip())
        data = None
        if embedded:
            try:
                data = base64.b64decode(re.sub(r"\s+", "", embedded.group(2)), validate=True)
            except (binascii.Error, ValueError):
                data = None
        if data:
            ref = f"images/image{len(pictures) + 1}.{embedded.group(1).lower()}"  # type: ignore[union-attr]
            pictures[ref] = data
            image.replace_with(f" {_TOKEN.format(len(pictures))} ")
        else:
            image.replace_with(str(image.get("alt", "") or ""))
    return pictures


def _table_html(table: Any) -> str:
    """A table as result.json keeps tables: rows of ``th``/``td`` cells with their text, spans kept."""
    rows = []
    for row in table.find_all("tr"):
        if row.find_parent("table") is not table:
            continue  # a nested table's rows: their text is in the outer cell
        cells = []
        for cell in row.find_all(["th", "td"], recursive=False):
            spans = "".join(f' {name}="{int(cell[name])}"' for name in ("colspan", "rowspan")
                            if str(cell.get(name, "")).isdigit() and int(cell[name]) > 1)
            text = escape_text(" ".join(cell.get_text(" ").split()))
            cells.append(f"<{cell.name}{spans}>{text}</{cell.name}>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return f"<table>{''.join(rows)}</table>"


def _converter_class() -> type:
    from markdownify import MarkdownConverter

    class Converter(MarkdownConverter):
        """markdownify, with tables kept as HTML (as every route's Markdown has them)."""

        def convert_table(self, el: Any, text: str, parent_tags: Any) -> str:
            return f"\n\n{_table_html(el)}\n\n"

        def escape(self, text: str, parent_tags: Any) -> str:
            """The page's text escaped (``core.markup.escape_text``): an escaped ``&lt;img onerror=…&gt;`` stays text."""
            return escape_text(super().escape(text, parent_tags))  # type: ignore[misc]

    return Converter

