"""The readers of an Office file, tried in turn until one finds its text: no silent empty, no false ``corrupt``.

Each kind has its chain (``readers``): a DOCX is read by PaddleOCR's converter (``paddleocr.doc2md_convert``), then
docx2python, then mammoth (``office_fallback``, ``office_mammoth``); a PPTX and an XLSX by python-pptx and
openpyxl used plainly (``office_fallback_decks``: slide titles as headings, shapes in reading order, alt texts and
notes; numbers as their cells show them, ``cell_format``), then by the converter. When a reader fails, whatever it
raises, or reads the file without finding any text or picture, the next one reads it. The first that reads every
unit and finds text gives the result, with a ``converter_fallback`` warning when it was not the first. When none
finds text, the file is read as empty (its units kept) and ``ReadNotes.seen`` says what each reader saw, for the
``no_text`` warning (``ocr_platform.engines.native_reading``); only a file that no reader opens is
``corrupt_document``.

>>> has_text([(None, '<img src="images/a.png">')], {"images/a.png": b"png"}), has_text([(None, "  ")], {})
(True, False)
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.document.native_pages import PICTURE, ReadNotes
from ocr_platform.document.office_fallback import FallbackRead, fallback_warning

Units = list[tuple[str | None, str]]
#: PaddleOCR's converter, as warnings name it.
CONVERTER = "PaddleOCR's converter"
#: What a reader must leave besides tags and markup characters to have read text.
_WORD = re.compile(r"\w")
_TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True)
class Reader:
    """A fallback reader: its ``name`` (as warnings say it), how it reads a file, and whether it reads the original
    file (a reader that escapes the text itself) rather than the copy whose text is escaped (``office_text``)."""

    name: str
    read: Callable[[Path], FallbackRead]
    original: bool = False


def readers(kind: str, converter: Callable[[Path], FallbackRead]) -> tuple[Reader, ...]:
    """The readers of a ``kind`` file, in the order they are tried: for a DOCX, PaddleOCR's converter (``converter``)
    then docx2python and mammoth; for a PPTX and an XLSX, python-pptx and openpyxl used plainly (slide titles as
    headings, shapes in reading order, alt text and notes; numbers as their cells show them), then the converter."""
    from ocr_platform.document.office_fallback import docx_markdown
    from ocr_platform.document.office_fallback_decks import pptx_markdown, xlsx_markdown
    from ocr_platform.document.office_mammoth import mammoth_markdown

    paddle = Reader(CONVERTER, converter)
    chains = {"docx": (paddle, Reader("docx2python", docx_markdown), Reader("mammoth", mammoth_markdown, original=True)),
              "pptx": (Reader("python-pptx", pptx_markdown), paddle), "xlsx": (Reader("openpyxl", xlsx_markdown), paddle)}
    return chains.get(kind, (paddle,))


def has_text(units: Units, pictures: dict[str, bytes]) -> bool:
    """Whether the units hold any text, or a picture whose text OCR may read."""
    for _, markdown in units:
        if any(ref in pictures for ref in PICTURE.findall(markdown)):
            return True
        if _WORD.search(html.unescape(_TAG.sub(" ", markdown))):
            return True
    return False


def read_in_turn(original: Path, escaped: Path, kind: str, unit_count: int, chain: tuple[Reader, ...], notes: ReadNotes,
                 *, strict: bool = False) -> tuple[Units, dict[str, bytes]]:
    """The units and pictures of the file: each reader of ``chain`` in turn until one reads every unit and finds
    text; the first empty read when none finds text (``notes.seen`` says why). ``corrupt_document`` (or
    ``unsupported_type`` for a Strict Open XML file) when no reader reads it at all."""
    empty: tuple[Units, dict[str, bytes]] | None = None
    why = ""
    for reader in chain:
        try:
            read = reader.read(original if reader.original else escaped)
        except Exception as err:  # python-docx, python-pptx, openpyxl and the converter raise many kinds: the next one tries
            notes.seen.append(f"{reader.name} failed ({type(err).__name__}: {str(err)[:200]})")
            why = why or f"{type(err).__name__}: {err}"
            continue
        units = [(html.unescape(name) if name else name, text) for name, text in read.units]  # names are read escaped
        if len(units) != unit_count:
            notes.seen.append(f"{reader.name} read {len(units)} of the file's {unit_count} {_plural(unit_count)}")
            why = why or f"{reader.name} read {len(units)} of {unit_count} {_plural(unit_count)}"
            continue
        if not has_text(units, read.pictures):
            notes.seen.append(f"{reader.name} read {len(units)} {_plural(len(units))} with no text")
            why = why or f"{reader.name} read no text"
            empty = empty or (units, read.pictures)
            continue
        if reader is not chain[0]:
            notes.warnings.append(fallback_warning(kind, reader.name, why, requested=chain[0].name))
        notes.unplaced_pictures += read.unplaced_pictures
        return units, read.pictures
    if empty is not None:
        return empty
    if strict:
        raise JobError(ErrorCode.UNSUPPORTED_TYPE, f"The {kind.upper()} file is saved as Strict Open XML, which is not read; "
                       "save it as Transitional Open XML (the default .docx, .pptx or .xlsx format of Word, PowerPoint and "
                       "Excel, not \"Strict Open XML\") and resubmit.")
    raise JobError(ErrorCode.CORRUPT_DOCUMENT, f"The {kind.upper()} file cannot be read by any reader: {'; '.join(notes.seen)}"[:1000])


def _plural(count: int) -> str:
    return "unit" if count == 1 else "units"
