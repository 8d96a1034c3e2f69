"""Text files told from their bytes and read as one page: CSV (and TSV), Markdown, plain text, and RTF.

A file is text when its first KiB decodes (UTF-8, or UTF-16/32 with a byte-order mark, else the encoding
charset-normalizer finds) to characters without control codes other than white space. Then:

- **CSV**: the first lines parse (Python's ``csv``) with one delimiter (``,``, ``;``, tab, ``|``) into rows of the
  same two or more fields; the file becomes one HTML table, its first row the header;
- **Markdown**: two or more Markdown constructs (ATX headings, list items, fenced code, links, pipe tables) in the
  first KiB; rendered by markdown-it-py (CommonMark with tables; raw HTML in the file stays text, a
  ``javascript:`` link is no link) and written back as the platform's Markdown by ``html_input``;
- **plain text**: anything else; its paragraphs (blank-line separated) as escaped text;
- **RTF**: a file starting ``{\\rtf``; its text taken out by striprtf and read as plain text.

Every character of the file is escaped where it becomes Markdown (``ocr_platform.core.markup``). A file that
decodes to nothing but white space is read as empty (a ``no_text`` warning).

>>> text_kind(b"name,price\\nTea,4.50\\nCake,3.00\\n"), text_kind(b"# Notes\\n\\n- one\\n- two\\n"), text_kind(b"Dear Sir,\\nThanks.")
('csv', 'md', 'txt')
>>> text_kind(b"%PDF-1.7 binary \\x00\\x01"), text_kind(b"{\\\\rtf1\\\\ansi Hello}")
(None, 'rtf')
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from pathlib import Path

from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.markup import escape_text
from ocr_platform.document.native_pages import NativePage, ReadNotes

_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
_MARKDOWN = re.compile(r"^(?:#{1,6}\s+\S|\s{0,3}[-*+]\s+\S|\s{0,3}\d+[.)]\s+\S|\s{0,3}```|\|.*\|\s*$|>\s)|\[[^\]\n]+\]\([^)\n]+\)", re.MULTILINE)
_DELIMITERS = (",", ";", "\t", "|")


def decode(data: bytes, *, cut: bool = False) -> str | None:
    """The text of ``data``, or ``None`` when it is no text (control characters, no encoding found); ``cut``: the
    bytes may end inside a character (the first KiB of a file)."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return _clean(data.decode(encoding, errors="ignore" if cut else "replace"))
    if b"\x00" in data:
        wide = wide_encoding(data)
        return _clean(data.decode(wide, errors="ignore" if cut else "replace")) if wide else None
    for trim in range(4 if cut else 1):
        try:
            return _clean(data[: len(data) - trim].decode("utf-8"))
        except UnicodeDecodeError:
            continue
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    return _clean(str(best)) if best is not None else None


def wide_encoding(data: bytes) -> str | None:
    """``utf-16-le`` or ``utf-16-be`` for UTF-16 text without a byte-order mark (mostly ASCII: every other byte
    zero), else ``None``."""
    sample = data[:512]
    half = len(sample) // 2
    if half and sample[1::2].count(0) >= 0.9 * half:
        return "utf-16-le"
    if half and sample[0::2].count(0) >= 0.9 * half:
        return "utf-16-be"
    return None


def _clean(text: str) -> str | None:
    return None if any(ord(c) < 32 and c not in "\t\n\r\f" for c in text) else text


def text_kind(head: bytes) -> str | None:
    """``csv``, ``md``, ``txt`` or ``rtf`` for a text file whose first bytes are ``head``; ``None`` for any other."""
    if head.lstrip().startswith(b"{\\rtf"):
        return "rtf"
    text = decode(head, cut=True)
    if text is None or not text.strip():
        return "txt" if text is not None else None
    if _csv_dialect(text) is not None:
        return "csv"
    return "md" if len(_MARKDOWN.findall(text)) >= 2 else "txt"


def _csv_dialect(text: str) -> str | None:
    lines = [line for line in text.splitlines()[:20] if line.strip()]
    if len(lines) < 2:
        return None
    if len(text) >= 1000 and len(lines) > 2:
        lines = lines[:-1]  # the last line of a cut head may be cut
    for delimiter in _DELIMITERS:
        widths = {len(row) for row in csv.reader(lines, delimiter=delimiter)}
        if len(widths) == 1 and widths.pop() >= 2:
            return delimiter
    return None


def read_text_file(path: Path, kind: str, notes: ReadNotes, max_cells: int) -> list[NativePage]:
    """The text file at ``path`` (``csv``, ``md``, ``txt``, ``rtf``) as one page of Markdown."""
    text = decode(path.read_bytes())
    if text is None:
        raise JobError(ErrorCode.CORRUPT_DOCUMENT, f"The {kind.upper()} file's bytes are not text in any encoding found.")
    if kind == "rtf":
        from striprtf.striprtf import rtf_to_text

        text = rtf_to_text(text, errors="ignore").replace("\n", "\n\n")  # each RTF paragraph (\\par) its own
        kind = "txt"
    if kind == "csv":
        markdown = _csv_table(text, max_cells)
    elif kind == "md":
        markdown = _markdown(text)
    else:
        markdown = "\n\n".join(escape_text(block.strip("\n")) for block in re.split(r"\n\s*\n", text.replace("\r\n", "\n")) if block.strip())
    if not markdown.strip():
        notes.seen.append(f"the {kind.upper()} file holds no text but white space")
    return [NativePage(1, "document", markdown)]


def _csv_table(text: str, max_cells: int) -> str:
    from ocr_platform.document.work_budget import over_budget

    delimiter = _csv_dialect(text[:1024]) or ","
    rows: list[list[str]] = []
    cells = 0
    for row in csv.reader(io.StringIO(text), delimiter=delimiter):
        cells += len(row)
        if cells > max_cells:
            raise over_budget("The CSV file has more cells than", max_cells, "max_table_cells", max_cells)
        rows.append(row)
    if not rows:
        return ""
    width = max(len(row) for row in rows)
    head = "".join(f"<th>{escape_text(cell.strip())}</th>" for cell in rows[0] + [""] * (width - len(rows[0])))
    body = "".join("<tr>" + "".join(f"<td>{escape_text(cell.strip())}</td>" for cell in row + [""] * (width - len(row))) + "</tr>"
                   for row in rows[1:])
    return f"<table><tr>{head}</tr>{body}</table>"


def _markdown(text: str) -> str:
    from markdown_it import MarkdownIt

    from ocr_platform.document.html_input import read_html

    rendered = MarkdownIt("commonmark", {"html": False}).enable("table").render(text)
    return read_html(f"<html><body>{rendered}</body></html>".encode()).markdown
