"""The formats read from their own content besides DOCX, PPTX, XLSX and HTML: one place that tells them from their
bytes and hands each to its reader.

- a ZIP whose ``mimetype`` part names an EPUB (``ocr_platform.document.epub_input``) or an OpenDocument file
  (``ocr_platform.document.open_document``);
- an OLE compound file holding a Word, Excel or PowerPoint 97-2003 document (``ocr_platform.document.legacy_office``)
  or an Outlook message (``ocr_platform.document.email_msg``);
- an email's header block (``ocr_platform.document.email_input``), checked before HTML;
- text that is no HTML (and no PDF or image): RTF, CSV, Markdown or plain text (``ocr_platform.document.plain_text``).

Each kind's units: a document (1), sheets, slides, an EPUB's chapters, an email's parts (the message, then each
attachment; a forwarded message's parts after it). A text file or email larger than ``max_text_bytes`` is
``document_too_large`` before it is parsed.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path

from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.document.native_pages import NativePage, ReadNotes, Unit
from ocr_platform.document.work_budget import WorkBudget

TEXT_KINDS = ("rtf", "csv", "md", "txt")
EMAIL_KINDS = ("eml", "msg")


@dataclass(frozen=True)
class Probe:
    """A file told to be one of these formats: its kind, what a page of it is, and how many it has."""

    kind: str
    unit: Unit
    unit_count: int


def probe_zip(path: Path, names: set[str]) -> Probe | None:
    """An EPUB or OpenDocument file (by its ``mimetype`` part); ``None`` for any other ZIP."""
    from ocr_platform.document import epub_input, open_document

    with zipfile.ZipFile(path) as archive:
        if "mimetype" not in names:
            return None
        mimetype = archive.read("mimetype")[:100].decode("ascii", errors="ignore").strip()
        kind = open_document.odf_kind(archive, names)
    if mimetype == epub_input.EPUB_MIMETYPE:
        return Probe("epub", "chapter", max(1, len(epub_input.spine(path))))
    if kind is not None:
        unit: Unit = {"odt": "document", "ods": "sheet", "odp": "slide"}[kind]  # type: ignore[assignment]
        return Probe(kind, unit, open_document.unit_count(path, kind))
    return None


def probe_ole(path: Path) -> Probe | None:
    """A legacy Word, Excel or PowerPoint file, or an Outlook message; ``None`` for any other OLE file
    (``encrypted_document`` for an encrypted one)."""
    import olefile

    from ocr_platform.document import legacy_office
    from ocr_platform.document.email_msg import is_msg

    try:
        with olefile.OleFileIO(str(path)) as ole:
            streams = {"/".join(entry) for entry in ole.listdir(streams=True, storages=False)}
    except (OSError, ValueError, EOFError, olefile.olefile.OleFileError) as err:
        raise JobError(ErrorCode.CORRUPT_DOCUMENT, f"The file looks like an Office file but cannot be read: {err}") from None
    kind = legacy_office.legacy_kind(streams)
    if kind is not None:
        units: dict[str, Unit] = {"doc": "document", "xls": "sheet", "ppt": "slide"}
        return Probe(kind, units[kind], legacy_office.unit_count(path, kind))
    if is_msg(streams):
        return Probe("msg", "part", len(_mail_pages(path, "msg")[0]))
    return None


def probe_text(path: Path, head: bytes, max_text_bytes: int, *, html_fragment: bool = False) -> Probe | None:
    """An email, or a text file (RTF, CSV, Markdown, plain text); ``None`` for any other file, and for plain text
    that reads as an HTML fragment (``html_fragment``: words, then a closing tag or an escaped ``&lt;``)."""
    from ocr_platform.document.email_input import looks_like_email
    from ocr_platform.document.magic import page_kind
    from ocr_platform.document.plain_text import text_kind

    if page_kind(head) is not None:
        return None
    kind = "eml" if looks_like_email(head) else text_kind(head)
    if kind is None or (html_fragment and kind == "txt"):
        return None
    size = path.stat().st_size
    if size > max_text_bytes:
        raise JobError(ErrorCode.DOCUMENT_TOO_LARGE, f"The {kind.upper()} file is {size:,} bytes; such files are read up to "
                       f"{max_text_bytes:,} bytes. Split it, or print it to PDF.")
    if kind == "eml":
        return Probe("eml", "part", len(_mail_pages(path, "eml")[0]))
    return Probe(kind, "document", 1)


def read_other(path: Path, kind: str, pages: list[int], notes: ReadNotes, budget: WorkBudget) -> list[NativePage]:
    """The selected ``pages`` (1-based units) of the file at ``path`` of one of these ``kind``\\ s."""
    wanted = set(pages)
    if kind in TEXT_KINDS:
        from ocr_platform.document.plain_text import read_text_file

        return read_text_file(path, kind, notes, budget.max_table_cells) if 1 in wanted else []
    if kind in EMAIL_KINDS:
        units, skipped = _mail_pages(path, kind)
        if skipped:
            notes.seen.append(f"attachments nested too deeply: {', '.join(skipped)}")
        return [unit for unit in units if unit.number in wanted]
    if kind == "epub":
        from ocr_platform.document.epub_input import read_epub

        return read_epub(path, pages, notes, budget)
    if kind in ("odt", "ods", "odp"):
        from ocr_platform.document.open_document import read_open_document

        return read_open_document(path, kind, pages, notes, budget)
    from ocr_platform.document.legacy_office import read_legacy

    return read_legacy(path, kind, pages, notes)


def _mail_pages(path: Path, kind: str) -> tuple[list[NativePage], list[str]]:
    from ocr_platform.document.email_input import mail_pages, read_eml
    from ocr_platform.document.email_msg import read_msg

    mail = read_eml(path.read_bytes()) if kind == "eml" else read_msg(path)
    return mail_pages(mail)
