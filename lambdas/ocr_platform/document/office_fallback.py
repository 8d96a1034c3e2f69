"""The second reader of a DOCX that PaddleOCR's converter could not read, though the package is well formed
(PPTX and XLSX: ``ocr_platform.document.office_fallback_decks``).

paddleocr's ``doc2md_convert`` reads a DOCX with python-docx, which stops on some files Word opens: a VML
picture (``<w:pict>``, ``<v:imagedata>``) the converter indexes wrongly, a relationship to a media part the file
does not hold, a package written as Strict Open XML. docx2python (a well-kept DOCX text reader that follows the
package's own relationships and skips what is missing) reads those; ``docx_markdown`` writes its paragraphs,
headings (``Heading 1`` … ``Title`` styles), list items and tables as the same Markdown the converter writes
(tables as HTML, pictures as ``<img src="images/…">`` placeholders beside their bytes). It reads the copy whose
text is escaped (``ocr_platform.document.office_text``), so the only tags in what it gets are its own.

The result then carries a ``converter_fallback`` warning naming why (``fallback_warning``); embedded pictures the
fallback cannot place in the text are counted in ``pictures_unread``.

>>> _list_item("1)\\tFirst"), _list_item("--\\tBullet"), _list_item("Plain")
('1. First', '- Bullet', None)
>>> _heading_level("Heading2"), _heading_level("Title"), _heading_level("Normal")
(2, 1, 0)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ocr_platform.core.results import ResultWarning

#: A result warning's ``code`` when an Office file was read by the fallback reader, not by PaddleOCR's converter.
CONVERTER_FALLBACK = "converter_fallback"
#: docx2python marks a picture in the text as ``----media/image1.png----`` (``----Image alt text---->…<`` aside).
_PICTURE_MARK = re.compile(r"----media/([^\s-][^-]*?)----")
_ORDERED = re.compile(r"^([0-9]+|[a-zA-Z]{1,4})\)\t")
_BULLET = re.compile(r"^(?:--|[•·▪■◦o\-*])\t")
_ANCHOR = re.compile(r'<a href="([^"]*)">(.*?)</a>', re.DOTALL)
_TAG = re.compile(r"<[^>]+>")


@dataclass
class FallbackRead:
    """What a fallback read: the units as ``(name, markdown)``, the pictures it placed (by placeholder), and how
    many embedded pictures it could not place."""

    units: list[tuple[str | None, str]]
    pictures: dict[str, bytes] = field(default_factory=dict)
    unplaced_pictures: int = 0


@dataclass(frozen=True)
class FallbackReader:
    """A fallback reader: its ``name`` (as the warning says it) and how it reads a file."""

    name: str
    read: Callable[[Path], FallbackRead]


def fallback_warning(kind: str, reader: str, why: str, *, requested: str = "PaddleOCR's converter") -> ResultWarning:
    """The ``converter_fallback`` warning of a ``kind`` file read by ``reader`` because the ``requested`` reader
    failed or found no text (``why``)."""
    return {
        "code": CONVERTER_FALLBACK, "requested": requested, "ran": reader, "reason": why[:300],
        "message": f"{requested} could not read this {kind.upper()} file, so {reader} read its text, headings, "
                   "lists and tables; formatting, equations and charts may be simpler than usual or missing.",
    }


def docx_markdown(path: Path) -> FallbackRead:
    """The DOCX at ``path`` read by docx2python: its body as Markdown, with the pictures it places."""
    from docx2python import docx2python

    with docx2python(str(path)) as document:
        images: dict[str, bytes] = dict(document.images)
        markdown = _markdown(document.body_pars)
        if not _PICTURE_MARK.sub("", markdown).strip():  # a body without text: what the page shows is in its header and footer
            markdown = "\n\n".join(m for m in (_markdown(document.header_pars), markdown, _markdown(document.footer_pars)) if m)
    placed: dict[str, bytes] = {}

    def picture(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in images:
            return ""
        placed[f"images/{name}"] = images[name]
        return f'<img src="images/{name}">'

    markdown = _PICTURE_MARK.sub(picture, markdown)
    return FallbackRead([(None, markdown)], placed, len(set(images) - {ref.removeprefix("images/") for ref in placed}))


def _markdown(tables: list[Any]) -> str:
    return "\n\n".join(block for block in (_table_or_paragraphs(table) for table in tables) if block)


def _table_or_paragraphs(table: list[list[list[Any]]]) -> str:
    """docx2python's body is a list of tables (rows of cells of paragraphs); text outside tables is a one-cell table.
    Consecutive list items stay one Markdown list."""
    paragraphs = [par for row in table for cell in row for par in cell]
    if not any(len(par.lineage) > 1 and par.lineage[1] == "tbl" for par in paragraphs):
        blocks: list[str] = []
        for text in (_paragraph(par) for par in paragraphs):
            if text and blocks and _is_item(text) and _is_item(blocks[-1].rsplit("\n", 1)[-1]):
                blocks[-1] += "\n" + text
            elif text:
                blocks.append(text)
        return "\n\n".join(blocks)
    rows = []
    for row in table:
        cells = []
        for cell in row:
            text = "<br>".join(t for t in (_cell_text(par) for par in cell) if t)
            cells.append(f"<td>{text}</td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return f"<table>{''.join(rows)}</table>"


def _text(par: Any) -> str:
    return "".join(run.text for run in par.runs)


def _paragraph(par: Any) -> str:
    text = "\n".join(line.strip() for line in _text(par).splitlines() if line.strip())
    text = _ANCHOR.sub(lambda m: f"[{m.group(2)}]({m.group(1)})" if m.group(1).startswith(("http", "mailto")) else m.group(2), text)
    text = _TAG.sub("", text).strip()  # docx2python's own tags (a symbol font's <span>); the text is escaped (office_text)
    if not text:
        return ""
    item = _list_item(text)
    if item is not None:
        return item
    level = _heading_level(str(par.style or ""))
    return f"{'#' * level} {' '.join(text.split())}" if level else text


def _cell_text(par: Any) -> str:
    return " ".join(_TAG.sub("", _text(par)).split())


def _is_item(markdown: str) -> bool:
    return bool(re.match(r"^(?:- |[0-9]+\. )", markdown))


def _list_item(text: str) -> str | None:
    """A docx2python list paragraph (``1)\\t``, ``a)\\t``, ``--\\t`` before its text) as a Markdown list item."""
    ordered = _ORDERED.match(text)
    if ordered:
        number = ordered.group(1)
        return f"{number if number.isdigit() else 1}. {text[ordered.end():].strip()}"
    bullet = _BULLET.match(text)
    return f"- {text[bullet.end():].strip()}" if bullet else None


def _heading_level(style: str) -> int:
    """The Markdown heading level of a paragraph style (``Heading1``, ``heading 2``, ``Title``); 0 for body text."""
    compact = style.replace(" ", "").lower()
    if compact == "title":
        return 1
    found = re.fullmatch(r"heading([1-6])", compact)
    return int(found.group(1)) if found else 0
