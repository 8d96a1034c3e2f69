"""Pages of a file read from its own content (Office, HTML): Markdown in, result.json blocks and lines out.

``ocr_platform.document.office`` and ``ocr_platform.document.html_input`` turn a file into ``NativePage``s: each
a natural unit of the file (the flowing document, a slide, a sheet) as Markdown with tables as HTML, whose
embedded pictures stand as ``<img src="images/…">`` placeholders beside their bytes. Once the pictures are read
(``ocr_platform.engines.native_reading``), ``page_content`` puts each picture's text where the picture stands and
cuts the Markdown into blocks in reading order. The readers escape the file's text (``ocr_platform.core.markup``),
and a picture's text is escaped where it is put, so no text of the file becomes markup. There is no page geometry: blocks have no ``bbox`` and lines no
``polygon``.

>>> page = NativePage(1, "document", '# Report\\n\\nIntro text.\\n\\n<img src="images/image1.png">\\n\\n- one\\n- two')
>>> content = page_content(page, {"images/image1.png": "Total 4.50"})
>>> [(b["label"], b["text"]) for b in content.blocks]
[('doc_title', 'Report'), ('text', 'Intro text.'), ('image', 'Total 4.50'), ('list', 'one\\ntwo')]
>>> content.markdown.splitlines()[4]
'Total 4.50'
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any, Literal

from ocr_platform.core.markup import escape_text
from ocr_platform.core.results import Block, Line, ResultWarning

#: What one page of a natively read file is: the whole flowing document (DOCX, HTML, text), a slide, a sheet, an
#: EPUB's chapter, or a part of an email (the message, an attachment).
Unit = Literal["document", "slide", "sheet", "chapter", "part"]

#: A picture placeholder in a page's Markdown, as PaddleOCR's converters write it.
PICTURE = re.compile(r'<img\s+src="(images/[^"]+)"[^>]*>')
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_INLINE_TAG = re.compile(r"<[^>]+>")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"(\*\*|__|~~|`)")


@dataclass
class NativePage:
    """One unit of a file read natively.

    Attributes:
        number: its 1-based number in the file (the slide's or sheet's position; 1 for a flowing document).
        unit: ``document``, ``slide`` or ``sheet``.
        markdown: the unit as Markdown, tables as HTML, pictures as ``<img src="images/…">`` placeholders.
        name: a sheet's name, an email part's place; ``None`` otherwise.
        pictures: the embedded pictures' bytes by placeholder (``images/image1.png``), in the order they appear.
        part: for an email, where the page came from (``message``, ``attachment 1: invoice.pdf``).
        attachment: for an email's attachment, its bytes, read by its own reader and route
            (``ocr_platform.engines.attachment_reading``); ``markdown`` is then empty.
    """

    number: int
    unit: Unit
    markdown: str
    name: str | None = None
    pictures: dict[str, bytes] = field(default_factory=dict)
    part: str | None = None
    attachment: bytes | None = None

    def picture_refs(self) -> list[str]:
        """The placeholders of this page that have bytes, in reading order, each once."""
        return list(dict.fromkeys(ref for ref in PICTURE.findall(self.markdown) if ref in self.pictures))


@dataclass
class ReadNotes:
    """What reading a file natively adds to its result: warnings (``converter_fallback``: a fallback reader read
    it), the embedded pictures the reader could not place in the text (counted in ``pictures_unread``), and what
    each reader that found no text saw (the ``no_text`` warning's reason)."""

    warnings: list[ResultWarning] = field(default_factory=list)
    unplaced_pictures: int = 0
    seen: list[str] = field(default_factory=list)


@dataclass
class PageContent:
    """A native page as result.json has it: Markdown with the pictures' text in place, blocks, lines."""

    markdown: str
    blocks: list[Block]
    lines: list[Line]


def page_content(page: NativePage, picture_texts: dict[str, str], picture_lines: dict[str, list[Line]] | None = None) -> PageContent:
    """``page`` with each picture's text (``picture_texts``, by placeholder) where the picture stands.

    ``picture_lines`` are the OCR lines of each picture (their scores kept, polygons dropped: they are in the
    picture's pixels, not the page's); without them a picture's text becomes lines of score 1.0.
    """
    blocks: list[Block] = []
    lines: list[Line] = []
    markdown_parts: list[str] = []
    for chunk in _chunks(page.markdown):
        block, markdown = _block(chunk, picture_texts)
        if markdown:
            markdown_parts.append(markdown)
        if block is None:
            continue
        blocks.append(block)
        refs = PICTURE.findall(chunk)
        if block["label"] == "image" and picture_lines is not None:
            lines.extend({"text": line["text"], "score": line["score"]} for ref in refs for line in picture_lines.get(ref, []))
        else:
            lines.extend({"text": text, "score": 1.0} for text in block.get("text", "").splitlines() if text.strip())
    return PageContent("\n\n".join(markdown_parts), blocks, lines)


def _chunks(markdown: str) -> list[str]:
    """The Markdown's blocks: paragraphs between blank lines, an HTML table kept whole."""
    chunks: list[str] = []
    current: list[str] = []
    in_table = 0
    for line in markdown.splitlines():
        if not line.strip() and not in_table:
            if current:
                chunks.append("\n".join(current))
                current = []
            continue
        current.append(line)
        in_table += line.lower().count("<table") - line.lower().count("</table>")
        in_table = max(in_table, 0)
    if current:
        chunks.append("\n".join(current))
    return chunks


def _block(chunk: str, picture_texts: dict[str, str]) -> tuple[Block | None, str]:
    """One Markdown chunk as a block and as the page's Markdown, its pictures replaced by their text."""
    stripped = chunk.strip()
    if stripped in ("---", "***"):
        return None, ""
    bare = PICTURE.sub("", stripped.lstrip("> ")).strip()
    if not bare and PICTURE.search(stripped):  # a paragraph of pictures alone
        text = "\n".join(t for t in (picture_texts.get(ref, "") for ref in PICTURE.findall(stripped)) if t)
        return ({"label": "image", "text": text} if text else None), escape_text(text)
    if "<table" in stripped.lower():
        table = PICTURE.sub(lambda m: escape_text(picture_texts.get(m.group(1), "")), stripped)
        return {"label": "table", "html": table, "text": table_text(table)}, table
    markdown = PICTURE.sub(lambda m: escape_text(picture_texts.get(m.group(1), "")), stripped)
    heading = _HEADING.match(markdown)
    if heading:
        label = "doc_title" if len(heading.group(1)) == 1 else "paragraph_title"
        return {"label": label, "text": plain_text(heading.group(2))}, markdown
    if markdown.startswith("$$"):
        return {"label": "formula", "text": markdown.strip("$").strip()}, markdown
    rows = markdown.splitlines()
    if all(_LIST_ITEM.match(row) for row in rows):
        return {"label": "list", "text": "\n".join(plain_text(_LIST_ITEM.sub("", row)) for row in rows)}, markdown
    return {"label": "text", "text": "\n".join(plain_text(row.lstrip("> ")) for row in rows).strip()}, markdown


def plain_text(markdown: str) -> str:
    """A line of Markdown as plain text: links to their text, emphasis and inline HTML dropped, entities decoded.

    >>> plain_text('**Net** [total](https://example.com) <b>4.50</b> &amp; more')
    'Net total 4.50 & more'
    """
    text = _LINK.sub(r"\1", markdown)
    text = _INLINE_TAG.sub("", text)
    text = _EMPHASIS.sub("", text)
    return html.unescape(text.replace("\\", "")).strip()


class _TableCells(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th") and self.rows:
            self.rows[-1].append("")
        elif tag == "br" and self.rows and self.rows[-1]:
            self.rows[-1][-1] += " "

    def handle_data(self, data: str) -> None:
        if self.rows and self.rows[-1]:
            self.rows[-1][-1] += data


def table_text(table_html: str) -> str:
    """A table's text as result.json's blocks have it: cells joined by tabs, rows by newlines.

    >>> table_text("<table><tr><th>Item</th><th>Price</th></tr><tr><td> Tea </td><td>4.50</td></tr></table>")
    'Item\\tPrice\\nTea\\t4.50'
    """
    parser = _TableCells()
    parser.feed(table_html)
    parser.close()
    return "\n".join("\t".join(" ".join(cell.split()) for cell in row) for row in parser.rows if row)
