"""Legacy binary Office files (Word, Excel and PowerPoint 97-2003: ``.doc``, ``.xls``, ``.ppt``), read from their
own content.

Each is an OLE compound file (olefile lists and reads its streams). ``legacy_kind`` tells which from the streams it
holds: ``WordDocument`` (Word), ``Workbook``/``Book`` (Excel), ``PowerPoint Document`` (PowerPoint); an
``EncryptedPackage`` or a file whose own header says it is encrypted is ``encrypted_document``.

- **.xls**: xlrd (the well-kept reader of the BIFF format) reads each sheet's cells, one page per sheet, as an
  HTML table under its name; whole numbers without ``.0``, dates as dates.
- **.doc**: the document's text is where MS-DOC puts it: the piece table (``Clx``) in the table stream names where
  each run of characters lies in ``WordDocument`` (8-bit or UTF-16); the main text's paragraphs, its table cells
  (``\\x07`` marks) as HTML tables, its fields' shown results (not their codes). One page.
- **.ppt**: the text atoms (``TextCharsAtom``, ``TextBytesAtom``) of the ``PowerPoint Document`` stream's records
  (MS-PPT), slide by slide as the slide list holds them (with each slide's notes after it), or else as each slide's
  drawing holds them in its shapes; a title placeholder's text (``TextHeaderAtom`` type 0 or 6) as a heading; one
  page per slide.

No pure-Python library reads ``.doc`` or ``.ppt`` text (LibreOffice does, but adds about 600 MB to the image and
seconds of start-up: docs/using-it/more-formats.md); the two formats' text structures are small and documented.
Every character is escaped where it becomes Markdown (``ocr_platform.core.markup``).

>>> _doc_markdown("Title\\rFirst para \\x13 HYPERLINK x \\x14shown\\x15 end\\rA\\x07B\\x07\\x07C\\x07D\\x07\\x07\\r")
'Title\\n\\nFirst para shown end\\n\\n<table><tr><td>A</td><td>B</td></tr><tr><td>C</td><td>D</td></tr></table>'
"""

from __future__ import annotations

import datetime
import re
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.markup import escape_text
from ocr_platform.document.native_pages import NativePage, ReadNotes

_ENCRYPTED = JobError(ErrorCode.ENCRYPTED_DOCUMENT, "The Office file is password protected; remove the password (save it without one) and resubmit.")
_TEXT_CHARS, _TEXT_BYTES, _TEXT_HEADER, _SLIDE_PERSIST, _SLIDE_LIST, _SLIDE = 0x0FA0, 0x0FA8, 0x0F9F, 0x03F3, 0x0FF0, 0x03EE
_TITLE_TYPES = {0, 6}


def legacy_kind(streams: set[str]) -> str | None:
    """``doc``, ``xls`` or ``ppt`` for an OLE file holding ``streams``; ``None`` for any other."""
    if "EncryptionInfo" in streams or "EncryptedPackage" in streams:
        raise _ENCRYPTED
    if "WordDocument" in streams:
        return "doc"
    if "Workbook" in streams or "Book" in streams:
        return "xls"
    if "PowerPoint Document" in streams:
        return "ppt"
    return None


def unit_count(path: Path, kind: str) -> int:
    """How many pages the file has: its sheets (``.xls``), slides (``.ppt``), or 1 (``.doc``)."""
    if kind == "xls":
        return len(_workbook(path).sheet_names())
    if kind == "ppt":
        return max(1, len(_slides(path)))
    return 1


def read_legacy(path: Path, kind: str, pages: list[int], notes: ReadNotes) -> list[NativePage]:
    """The selected ``pages`` of the legacy file at ``path``."""
    wanted = set(pages)
    if kind == "xls":
        book = _workbook(path)
        return [NativePage(i, "sheet", _sheet_markdown(book, book.sheet_by_index(i - 1)), book.sheet_names()[i - 1])
                for i in range(1, book.nsheets + 1) if i in wanted]
    if kind == "ppt":
        slides = _slides(path) or [_Slide()]
        return [NativePage(i, "slide", slide.markdown()) for i, slide in enumerate(slides, start=1) if i in wanted]
    return [NativePage(1, "document", _doc_markdown(_doc_text(path)))] if 1 in wanted else []


def _workbook(path: Path) -> Any:
    import xlrd

    try:
        return xlrd.open_workbook(str(path), on_demand=False)
    except xlrd.XLRDError as err:
        if "encrypt" in str(err).lower():
            raise _ENCRYPTED from None
        raise JobError(ErrorCode.CORRUPT_DOCUMENT, f"The Excel 97-2003 file cannot be read: {err}") from None


def _sheet_markdown(book: Any, sheet: Any) -> str:
    import xlrd

    rows = []
    for r in range(sheet.nrows):
        cells = []
        for c in range(sheet.ncols):
            cell = sheet.cell(r, c)
            if cell.ctype == xlrd.XL_CELL_NUMBER:
                text = str(int(cell.value)) if float(cell.value).is_integer() else repr(cell.value)
            elif cell.ctype == xlrd.XL_CELL_DATE:
                text = _xls_date(cell.value, book.datemode)
            elif cell.ctype == xlrd.XL_CELL_BOOLEAN:
                text = "TRUE" if cell.value else "FALSE"
            elif cell.ctype == xlrd.XL_CELL_ERROR:
                text = xlrd.error_text_from_code.get(cell.value, "#ERROR")
            else:
                text = " ".join(str(cell.value).split())
            cells.append(f"<td>{escape_text(text)}</td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    while rows and rows[-1].replace("<td></td>", "") == "<tr></tr>":
        rows.pop()
    name = f"## {escape_text(sheet.name)}"
    return f"{name}\n\n<table>{''.join(rows)}</table>" if rows else name


def _xls_date(value: float, datemode: int) -> str:
    import xlrd

    try:
        moment = xlrd.xldate.xldate_as_datetime(value, datemode)
    except (ValueError, OverflowError, xlrd.xldate.XLDateError):
        return repr(value)
    return moment.date().isoformat() if moment.time() == datetime.time(0) else moment.isoformat(sep=" ")


def _stream(path: Path, name: str) -> bytes:
    import olefile

    with olefile.OleFileIO(str(path)) as ole:
        return bytes(ole.openstream(name).read()) if ole.exists(name) else b""


def _doc_text(path: Path) -> str:
    """The main text of a Word 97-2003 file, from its piece table (or, in an older file, its one run of text)."""
    word = _stream(path, "WordDocument")
    if len(word) < 0x1AA:
        raise JobError(ErrorCode.CORRUPT_DOCUMENT, "The Word 97-2003 file's WordDocument stream is too short to hold its header.")
    flags = struct.unpack_from("<H", word, 0x0A)[0]
    if flags & 0x0100:
        raise _ENCRYPTED
    ccp_text = struct.unpack_from("<i", word, 0x4C)[0]
    if not flags & 0x0004 and struct.unpack_from("<H", word, 0x02)[0] < 193:  # Word 6/95, not complex: one run of 8-bit text
        start, end = struct.unpack_from("<II", word, 0x18)
        return word[start:end].decode("cp1252", errors="replace")
    table = _stream(path, "1Table" if flags & 0x0200 else "0Table")
    fc_clx, lcb_clx = struct.unpack_from("<II", word, 0x1A2)
    clx = table[fc_clx: fc_clx + lcb_clx]
    at = 0
    while at < len(clx) and clx[at] == 0x01:  # Prc: property modifiers, skipped
        at += 3 + struct.unpack_from("<H", clx, at + 1)[0]
    if at + 5 > len(clx) or clx[at] != 0x02:
        raise JobError(ErrorCode.CORRUPT_DOCUMENT, "The Word 97-2003 file's piece table cannot be found.")
    lcb = struct.unpack_from("<I", clx, at + 1)[0]
    plc = clx[at + 5: at + 5 + lcb]
    count = (len(plc) - 4) // 12
    cps = struct.unpack_from(f"<{count + 1}i", plc, 0)
    parts = []
    for i in range(count):
        fc = struct.unpack_from("<I", plc, 4 * (count + 1) + 8 * i + 2)[0]
        start, end = cps[i], min(cps[i + 1], ccp_text)
        if end <= start:
            continue
        if fc & 0x40000000:
            offset = (fc & 0x3FFFFFFF) // 2
            parts.append(word[offset: offset + end - start].decode("cp1252", errors="replace"))
        else:
            parts.append(word[fc: fc + 2 * (end - start)].decode("utf-16-le", errors="replace"))
    return "".join(parts)


def _doc_markdown(text: str) -> str:
    """Word's text with its marks (paragraph ``\\r``, cell ``\\x07``, fields ``\\x13``…``\\x14``…``\\x15``) as Markdown."""
    shown, depth_codes = [], []
    for char in text:
        if char == "\x13":
            depth_codes.append(True)
        elif char == "\x14" and depth_codes:
            depth_codes[-1] = False
        elif char == "\x15" and depth_codes:
            depth_codes.pop()
        elif not (depth_codes and depth_codes[-1]):
            shown.append(char)
    cleaned = "".join(shown).replace("\x0b", "\n").replace("\x0c", "\r").replace("\x1e", "-")
    cleaned = "".join(c for c in cleaned if c in "\r\n\t\x07" or ord(c) >= 32)
    blocks: list[str] = []
    table: list[list[str]] = []
    row: list[str] = []
    cell: list[str] = []
    last = "\r"
    for text, mark in zip(*[iter(re.split(r"([\r\x07])", cleaned + "\r"))] * 2, strict=False):
        if mark == "\r" and row:
            cell.append(text)  # a cell's paragraph before its last
        elif mark == "\r":
            if table and text.strip():
                blocks.append(_table(table))
                table = []
            if text.strip():
                blocks.append(escape_text(text.strip()))
        elif text == "" and last == "\x07" and not cell:  # a row's end mark: an empty paragraph after a cell's end
            table.append(row)
            row = []
        else:
            row.append(" ".join(" ".join([*cell, text]).split()))
            cell = []
        last = mark
    if row:
        table.append(row)
    if table:
        blocks.append(_table(table))
    return "\n\n".join(blocks)


def _table(rows: list[list[str]]) -> str:
    body = "".join("<tr>" + "".join(f"<td>{escape_text(c)}</td>" for c in row) + "</tr>" for row in rows if row)
    return f"<table>{body}</table>"


@dataclass
class _Slide:
    title: str = ""
    body: list[str] | None = None
    notes: str = ""

    def markdown(self) -> str:
        parts = [f"# {escape_text(' '.join(self.title.split()))}"] if self.title.strip() else []
        parts += [escape_text(text.strip()).replace("\r", "\n") for text in self.body or [] if text.strip()]
        if self.notes.strip():
            parts.append(f"Notes: {escape_text(' '.join(self.notes.split()))}")
        return "\n\n".join(parts)


def _slides(path: Path) -> list[_Slide]:
    """Each slide's title and texts (and notes), as the presentation's slide lists hold them."""
    data = _stream(path, "PowerPoint Document")
    slides: list[_Slide] = []
    notes: list[str] = []
    for instance, records in _slide_lists(data):
        current: _Slide | None = None
        kind = 4
        for rec_type, payload in records:
            if rec_type == _SLIDE_PERSIST:
                current = _Slide(body=[])
                (slides if instance == 0 else []).append(current)
                if instance == 2:
                    notes.append("")
            elif rec_type == _TEXT_HEADER and len(payload) >= 4:
                kind = struct.unpack_from("<I", payload)[0]
            elif rec_type in (_TEXT_CHARS, _TEXT_BYTES) and current is not None:
                text = payload.decode("utf-16-le" if rec_type == _TEXT_CHARS else "latin-1", errors="replace")
                if instance == 2:
                    notes[-1] += " " + text
                elif kind in _TITLE_TYPES and not current.title:
                    current.title = text
                else:
                    current.body.append(text)  # type: ignore[union-attr]
    for slide, note in zip(slides, notes, strict=False):
        slide.notes = note
    if not any(slide.title or slide.body for slide in slides):  # the text is in each slide's drawing (its shapes)
        slides = [_drawn_slide(payload) for _, rec_type, payload in _records(data, 0, len(data)) if rec_type == _SLIDE]
    return slides


def _drawn_slide(container: bytes) -> _Slide:
    """A ``SlideContainer``'s text atoms, found in its drawing's shapes (``ClientTextbox``), in the order stored."""
    slide = _Slide(body=[])
    kind = 4
    for rec_type, payload in _atoms(container):
        if rec_type == _TEXT_HEADER and len(payload) >= 4:
            kind = struct.unpack_from("<I", payload)[0]
        elif rec_type in (_TEXT_CHARS, _TEXT_BYTES):
            text = payload.decode("utf-16-le" if rec_type == _TEXT_CHARS else "latin-1", errors="replace")
            if kind in _TITLE_TYPES and not slide.title:
                slide.title = text
            else:
                slide.body.append(text)  # type: ignore[union-attr]
    return slide


def _atoms(data: bytes, depth: int = 0) -> list[tuple[int, bytes]]:
    """Every atom under ``data``'s records, containers (record version 0xF) opened, in stream order."""
    found: list[tuple[int, bytes]] = []
    for ver_inst, rec_type, payload in _records(data, 0, len(data)):
        if ver_inst & 0xF == 0xF and depth < 16:
            found.extend(_atoms(payload, depth + 1))
        else:
            found.append((rec_type, payload))
    return found


def _slide_lists(data: bytes) -> list[tuple[int, list[tuple[int, bytes]]]]:
    """The ``SlideListWithText`` containers of the stream (instance 0: slides, 2: notes), each as its atoms."""
    found = []
    for _, rec_type, payload in _records(data, 0, len(data)):
        if rec_type == 0x03E8:  # DocumentContainer
            for inner_ver_inst, inner_type, inner in _records(payload, 0, len(payload)):
                if inner_type == _SLIDE_LIST:
                    found.append((inner_ver_inst >> 4, [(t, p) for _, t, p in _records(inner, 0, len(inner))]))
    return found


def _records(data: bytes, start: int, end: int) -> list[tuple[int, int, bytes]]:
    records = []
    at = start
    while at + 8 <= end:
        ver_inst, rec_type, length = struct.unpack_from("<HHI", data, at)
        records.append((ver_inst, rec_type, data[at + 8: min(end, at + 8 + length)]))
        at += 8 + length
    return records
