"""Office files (DOCX, PPTX, XLSX) told from their bytes and read from their own content, never rendered.

An Office Open XML file is a ZIP whose own description says what it is: ``_rels/.rels`` names its main part and
``[Content_Types].xml`` gives that part's type (``ocr_platform.document.office_package``). The ZIP is checked
first (``ocr_platform.document.zip_safety``). The text, headings, lists and tables come from PaddleOCR's own
converter (``paddleocr.doc2md_convert``, which reads the file with python-docx, python-pptx and openpyxl), its
embedded pictures separately, from a copy whose text is escaped (``ocr_platform.document.office_text``); when the
converter fails or finds no text, the fallback readers read it in turn (``ocr_platform.document.office_readers``,
a ``converter_fallback`` warning). ``read_office`` cuts that into the
file's natural units (``ocr_platform.document.native_pages``): the whole DOCX as one page, one page per slide, one
per sheet. A template (``.dotx``, ``.potx``, ``.xltx``) or slide show (``.ppsx``) is read like its plain twin.

Refused with a ``JobError`` (nothing is ever run, no macro, no link fetched):

- ``encrypted_document``: a password-protected Office file (an OLE container holding ``EncryptionInfo`` and
  ``EncryptedPackage`` in place of the ZIP);
- ``unsupported_type``: a legacy binary ``.doc``/``.xls``/``.ppt`` (OLE) file, or a ZIP that is no Office file;
- ``corrupt_document``: a ZIP no reader can read (its main part missing or damaged);
- ``unsupported_type`` too for a Strict Open XML file neither reader can read, saying to save it as Transitional;
- ``archive_too_large``: see ``zip_safety``;
- ``document_too_large``: more work than the file's ``WorkBudget`` (``ocr_platform.document.work_budget``), counted
  before any reader opens it.

A macro-enabled file (``.docm``, ``.pptm``, ``.xlsm``) is read like its plain twin: its content is read, its
``vbaProject.bin`` is left as it is and never executed, and ``macro_enabled`` says so (a result warning).

>>> OFFICE_EXTENSIONS["pptx"]
'pptx'
"""

from __future__ import annotations

import functools
import re
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.document.docx_extras import with_extras
from ocr_platform.document.native_pages import PICTURE, NativePage, ReadNotes, Unit
from ocr_platform.document.office_budget import check_office
from ocr_platform.document.office_fallback import FallbackRead
from ocr_platform.document.office_package import MainPart, main_part
from ocr_platform.document.office_readers import read_in_turn, readers
from ocr_platform.document.office_text import UnreadablePart, escaped_package
from ocr_platform.document.work_budget import WorkBudget
from ocr_platform.document.zip_safety import ZipLimits, checked_names

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
ZIP_MAGIC = b"PK\x03\x04"
#: The file extension PaddleOCR's converter expects for each Office type.
OFFICE_EXTENSIONS = {"docx": "docx", "pptx": "pptx", "xlsx": "xlsx"}
_UNITS: dict[str, Unit] = {"docx": "document", "pptx": "slide", "xlsx": "sheet"}
_LEGACY = {"WordDocument": "Word 97-2003 (.doc)", "Workbook": "Excel 97-2003 (.xls)", "Book": "Excel 5 (.xls)",
           "PowerPoint Document": "PowerPoint 97-2003 (.ppt)"}
_SLIDE_SEPARATOR = "\n\n---\n\n"
_MACRO_CONTENT_TYPE = re.compile(rb"application/vnd\.ms-(?:word|powerpoint|excel)\.\w+\.macroEnabled\.main\+xml", re.IGNORECASE)
#: The main-part types the libraries refuse though they read the content: macro-enabled twins, templates
#: (.dotx, .potx, .xltx) and slide shows (.ppsx), each rewritten as its family's plain document type.
_OTHER_MAIN_TYPE = re.compile(
    rb"application/vnd\.(?:ms-(word|powerpoint|excel)\.(?:document|template|presentation|slideshow|sheet)\.macroEnabled"
    rb"|openxmlformats-officedocument\.(wordprocessingml|presentationml|spreadsheetml)\.(?:template|slideshow))\.main\+xml", re.IGNORECASE)
_PLAIN_CONTENT_TYPES = {
    b"word": b"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
    b"powerpoint": b"application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml",
    b"excel": b"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
}
_FAMILIES = {b"wordprocessingml": b"word", b"presentationml": b"powerpoint", b"spreadsheetml": b"excel"}


@dataclass(frozen=True)
class OfficeFile:
    """An Office file whose ZIP passed the checks: its type (``docx``, ``pptx``, ``xlsx``) and whether it carries macros."""

    kind: str
    macro_enabled: bool
    unit_count: int
    strict: bool = False
    other_main_type: bool = False  # a macro-enabled twin, template or slide show: rewritten as the plain type

    @property
    def unit(self) -> Unit:
        return _UNITS[self.kind]


def office_kind(path: Path, limits: ZipLimits, budget: WorkBudget | None = None) -> OfficeFile:
    """Check the ZIP at ``path`` and tell which Office file it is; ``JobError`` when it is none, unsafe, or more work
    than ``budget`` allows (``document_too_large``, ``ocr_platform.document.office_budget``)."""
    names = checked_names(path, limits)
    with zipfile.ZipFile(path) as archive:
        main = main_part(archive, names)
        if main is None:
            raise JobError(ErrorCode.UNSUPPORTED_TYPE, "The file is a ZIP archive but not a DOCX, PPTX or XLSX file (no Word, "
                           "PowerPoint or Excel main part); send the document itself.")
        types = _read_part(archive, "[Content_Types].xml")
        macro = bool(_MACRO_CONTENT_TYPE.search(types)) or any(name.lower().endswith("vbaproject.bin") for name in names)
        refusal = _budget_refusal(str(path), path.stat().st_size, path.stat().st_mtime_ns, main.kind, main.name, budget or WorkBudget())
        if refusal is not None:
            raise refusal
        count = _unit_count(archive, main)
    return OfficeFile(main.kind, macro, count, main.strict, bool(_OTHER_MAIN_TYPE.search(types)))


@functools.lru_cache(maxsize=8)
def _budget_refusal(path: str, size: int, modified_ns: int, kind: str, main: str, budget: WorkBudget) -> JobError | None:
    """The file's work counted once per process (a job's intake asks up to three times), keyed by the file's
    identity; ``None`` when it is within ``budget``."""
    try:
        with zipfile.ZipFile(path) as archive:
            check_office(archive, kind, main, budget)
    except JobError as err:
        return err
    return None


def _read_part(archive: zipfile.ZipFile, name: str) -> bytes:
    try:
        return archive.read(name)
    except KeyError:
        return b""
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as err:  # a bad CRC, a truncated part
        raise JobError(ErrorCode.CORRUPT_DOCUMENT, f"The part {name!r} of the Office file is damaged: {err}") from None


def _unit_count(archive: zipfile.ZipFile, main: MainPart) -> int:
    if main.kind == "pptx":
        return len(re.findall(rb"<(?:\w+:)?sldId\b", _read_part(archive, main.name)))
    if main.kind == "xlsx":
        return len(re.findall(rb"<(?:\w+:)?sheet\b", _read_part(archive, main.name)))
    return 1


def refuse_ole(path: Path) -> JobError:
    """The error for an OLE compound file: a password-protected Office file, or a legacy binary one."""
    import olefile

    try:
        with olefile.OleFileIO(str(path)) as ole:
            streams = {"/".join(entry) for entry in ole.listdir(streams=True, storages=False)}
    except (OSError, ValueError, EOFError, olefile.olefile.OleFileError) as err:
        return JobError(ErrorCode.CORRUPT_DOCUMENT, f"The file looks like an Office file but cannot be read: {err}")
    if "EncryptionInfo" in streams or "EncryptedPackage" in streams:
        return JobError(ErrorCode.ENCRYPTED_DOCUMENT, "The Office file is password protected; remove the password "
                        "(save it without one) and resubmit.")
    legacy = next((name for stream, name in _LEGACY.items() if stream in streams), "a legacy binary Office file")
    return JobError(ErrorCode.UNSUPPORTED_TYPE, f"The file is {legacy}; save it as .docx, .pptx or .xlsx (or as PDF) and resubmit.")


def read_office(path: Path, office: OfficeFile, pages: list[int], notes: ReadNotes | None = None) -> list[NativePage]:
    """The ``pages`` (1-based units) of the Office file at ``path``, read from its content by PaddleOCR's converter,
    or by the fallback readers in turn (``ocr_platform.document.office_readers``) when it fails or finds no text:
    ``notes`` then gets the ``converter_fallback`` warning, the count of pictures the fallback could not place,
    and what each reader saw."""
    notes = notes if notes is not None else ReadNotes()
    with tempfile.TemporaryDirectory(prefix="office-") as tmp:
        named = Path(tmp) / f"document.{OFFICE_EXTENSIONS[office.kind]}"
        try:  # the readers read a copy whose text is escaped (office_text): no document text becomes markup
            escaped_package(path, named, _plain_content_types if office.macro_enabled or office.other_main_type else None)
        except (UnreadablePart, zipfile.BadZipFile, OSError, EOFError, ValueError) as err:
            raise JobError(ErrorCode.CORRUPT_DOCUMENT, f"The {office.kind.upper()} file cannot be read: a part is damaged ({err}).") from None

        def converter(escaped: Path) -> FallbackRead:
            converted = _convert(escaped, office.kind)
            markdown = with_extras(escaped, converted.markdown) if office.kind == "docx" else converted.markdown
            return FallbackRead(_split(office, markdown, converted.metadata), dict(converted.images))

        chain = readers(office.kind, converter)
        units, images = read_in_turn(path, named, office.kind, office.unit_count, chain, notes, strict=office.strict)
    wanted = set(pages)
    result = []
    for number, (name, markdown) in enumerate(units, start=1):
        if number in wanted:
            pictures = {ref: images[ref] for ref in PICTURE.findall(markdown) if ref in images}
            result.append(NativePage(number, office.unit, markdown, name, pictures))
    return result


def _convert(named: Path, kind: str) -> Any:
    from ocr_platform.document.doc2md import converter

    if kind == "pptx":
        _give_pptx_font_strike()
    return converter()(named)


def _plain_content_types(types: bytes) -> bytes:
    """The ``[Content_Types].xml`` of a macro-enabled file, template or slide show as its plain twin's, so the
    libraries accept it; ``vbaProject.bin`` stays an opaque part that nothing reads or runs."""
    return _OTHER_MAIN_TYPE.sub(lambda m: _PLAIN_CONTENT_TYPES[(m.group(1) or _FAMILIES[m.group(2).lower()]).lower()], types)


def _split(office: OfficeFile, markdown: str, metadata: dict[str, Any]) -> list[tuple[str | None, str]]:
    """The converter's Markdown cut into the file's units: ``(name, markdown)`` per slide, sheet or document."""
    if office.kind == "pptx":
        slides: list[tuple[str | None, str]] = [(None, slide) for slide in markdown.split(_SLIDE_SEPARATOR)]
        if len(slides) == office.unit_count:
            return slides
        whole: list[tuple[str | None, str]] = [(None, markdown)]
        return whole + [(None, "")] * (office.unit_count - 1)  # a slide's own "---": kept whole on page 1
    if office.kind == "xlsx":
        names = list(metadata.get("sheet_names") or [])
        starts = []
        position = 0
        for name in names:
            found = markdown.find(f"## {name}\n\n<table>", position)
            starts.append(found)
            if found >= 0:
                position = found + 1
        units = []
        for index, (name, start) in enumerate(zip(names, starts, strict=True)):
            if start < 0:
                units.append((name, ""))  # an empty sheet
                continue
            end = min([s for s in starts[index + 1:] if s >= 0] or [len(markdown)])
            units.append((name, markdown[start:end].strip()))
        return units or [(None, markdown)]
    return [(None, markdown)]


def _give_pptx_font_strike() -> None:
    """paddleocr 3.7's PPTX converter reads ``run.font.strike`` in table cells, which python-pptx 1.0's ``Font`` lacks,
    so every slide table with text failed (``AttributeError``). ``Font`` gets that property, read from the run's
    XML as the converter reads strikethrough outside tables (``sngStrike``/``dblStrike``)."""
    from pptx.text.text import Font

    if not hasattr(Font, "strike"):
        Font.strike = property(lambda font: font._rPr is not None and font._rPr.get("strike") in ("sngStrike", "dblStrike"))  # type: ignore[attr-defined]
